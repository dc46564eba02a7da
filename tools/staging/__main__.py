"""`python3 -m tools.staging` entry point."""

import sys

from tools.staging.cli import main

if __name__ == "__main__":
    sys.exit(main())
