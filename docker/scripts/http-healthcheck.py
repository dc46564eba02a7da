"""HEALTHCHECK of the serving images: exit 0 when the server answers /health.

Usage: python http-healthcheck.py   (port from HEALTHCHECK_PORT, default 8000)

Python rather than curl because the serving images carry Python anyway and
no curl; the port is an environment variable so `docker run -e
HEALTHCHECK_PORT=9000 ... --port 9000` keeps the check truthful.
"""

import os
import sys
import urllib.request


def main() -> int:
    port = os.environ.get("HEALTHCHECK_PORT", "8000")
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as response:
            return 0 if response.status == 200 else 1
    except OSError as error:
        print(f"unhealthy: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
