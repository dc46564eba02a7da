"""`python3 -m tools.mirrors` entry point."""

import sys

from tools.mirrors.cli import main

if __name__ == "__main__":
    sys.exit(main())
