"""`python -m tools.wheelhouse` entry point."""

import sys

from tools.wheelhouse.cli import main

if __name__ == "__main__":
    sys.exit(main())
