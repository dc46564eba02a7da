"""`python3 -m tools.engine` entry point (and `bazel run //tools/engine`)."""

import sys

from tools.engine.cli import main

if __name__ == "__main__":
    sys.exit(main())
