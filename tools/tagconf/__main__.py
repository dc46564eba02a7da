"""`python -m tools.tagconf` entry point; the ImageSpec actions' persistent worker too."""

import sys

from tools.process import worker
from tools.tagconf.cli import main

if __name__ == "__main__":
    sys.exit(worker.run(main))
