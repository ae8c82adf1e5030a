"""``python -m optsched`` and the ``optsched`` command: the CLI, with a Ctrl-C while its modules
load (numpy, the registries: about half a second) the same one line as later."""

import sys


def main() -> int:
    try:
        from optsched.cli import main as run
    except KeyboardInterrupt:
        print("optsched: interrupted", file=sys.stderr)
        return 130
    return run()


if __name__ == "__main__":
    sys.exit(main())
