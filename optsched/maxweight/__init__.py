"""Max-weight scheduling of stochastic real-time jobs on unreliable workers (paper 004)."""
