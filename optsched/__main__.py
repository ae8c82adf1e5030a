import sys

try:  # a Ctrl-C while the command's modules load is the same one line as later
    from optsched.cli import main
except KeyboardInterrupt:
    print("optsched: interrupted", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
