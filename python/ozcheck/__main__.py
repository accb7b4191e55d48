"""The ``ozcheck`` command: the same program as the cargo binary, run in the extension."""

import sys

from ozcheck._ozcheck import run_cli


def main() -> "int":
    """Runs ``ozcheck`` with this process's arguments and exits with its status."""
    sys.stdout.flush()
    sys.stderr.flush()
    return run_cli(["ozcheck", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
