"""python3 -m tools.imagecheck IMAGE: see check.py."""

import sys

from tools.imagecheck.check import main

sys.exit(main())
