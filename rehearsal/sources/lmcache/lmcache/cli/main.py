"""The `lmcache` command: `lmcache --version`, `lmcache describe` (kernels, settings)."""

import argparse
import json
import sys

from lmcache import __version__


def main() -> None:
    parser = argparse.ArgumentParser(prog="lmcache", description="LMCache (rehearsal stand-in)")
    parser.add_argument("--version", action="version", version=__version__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("describe", help="the kernels' archs and the settings from LMCACHE_*")
    args = parser.parse_args()
    if args.command == "describe":
        from dataclasses import asdict

        from lmcache import c_ops
        from lmcache.v1.config import LMCacheEngineConfig

        info = {
            "version": __version__,
            "archs": [a for a in c_ops.archs().split(";") if a],
            "config": asdict(LMCacheEngineConfig.from_env()),
        }
        json.dump(info, sys.stdout, indent=2)
        print()
