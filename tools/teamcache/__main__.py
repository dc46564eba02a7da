"""`python3 -m tools.teamcache` entry point."""

import sys

from tools.teamcache.cli import main

if __name__ == "__main__":
    sys.exit(main())
