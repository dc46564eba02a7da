"""python3 -m tools.workflows: see cli.py."""

import sys

from tools.workflows.cli import main

sys.exit(main())
