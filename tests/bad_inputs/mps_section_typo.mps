NAME        T
OBJSENS
  MAX
ROWS
 N  Obj
 L  r0
COLUMNS
    x0        Obj       3
    x0        r0        2
RHS
    RHS_V     r0        5
BOUNDS
 UP BND       x0        1
ENDATA
