"""`python -m tools.tagconf` entry point."""

import sys

from tools.tagconf.cli import main

if __name__ == "__main__":
    sys.exit(main())
