"""`python -m tools.registry` entry point."""

import sys

from tools.registry.cli import main

if __name__ == "__main__":
    sys.exit(main())
