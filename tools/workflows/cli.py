"""python3 -m tools.workflows: the workflow files of .github/workflows and their jobs' steps.

    python3 -m tools.workflows generate                    # rewrite the workspace's
    python3 -m tools.workflows generate --out DIR          # ... or DIR's
    python3 -m tools.workflows generate --check .github    # stale? exit 1
    python3 -m tools.workflows matrix --arch scheduled            # weekly's matrix
    python3 -m tools.workflows gpu-smoke --arch gfx950 --push push-gfx950.json
    bazel run //tools/workflows -- offline .github/workflows/presubmit.yml  # run it here

`bazel run //tools/workflows:update` is `generate` into the workspace's .github.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tools import places
from tools.tagconf import catalog as catalog_mod
from tools.tagconf.errors import CatalogError
from tools.workflows import offline, render, smoke


def _catalog(args):
    return catalog_mod.load(args.catalog or places.workspace() / "images/catalog.toml")


def _generate(args) -> int:
    files = render.render_all(_catalog(args))
    if args.check:
        stale = [
            name
            for name, text in files.items()
            if not (args.check / name).is_file()
            or (args.check / name).read_text(encoding="utf-8") != text
        ]
        if stale:
            print(
                f"workflows: {', '.join(stale)} in {args.check} stale;"
                " run: bazel run //tools/workflows:update",
                file=sys.stderr,
            )
            return 1
        print(f"workflows: {len(files)} files in {args.check} up to date")
        return 0
    out = places.user_path(str(args.out)) if args.out else places.workspace() / ".github"
    for name, text in files.items():
        places.write_atomic(out / name, text)
    print(f"workflows: wrote {len(files)} files to {out}")
    return 0


def _matrix(args) -> int:
    catalog = _catalog(args)
    if args.arch == render.SCHEDULED:
        variants = list(catalog.variants)
    elif args.arch in catalog.variants:
        variants = [args.arch]
    else:
        print(
            f"workflows: --arch {args.arch}: not an arch or family of the catalogue;"
            f" known: {render.SCHEDULED}, {', '.join(catalog.variants)}",
            file=sys.stderr,
        )
        return 2
    print(f"variants={json.dumps(variants, separators=(',', ':'))}")
    return 0


def _gpu_smoke(args) -> int:
    return smoke.smoke(args.arch, args.push, _catalog(args))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="workflows", description=__doc__.splitlines()[0].split(": ", 1)[1]
    )
    parser.add_argument(
        "--catalog", type=Path, help="the catalogue (default: the workspace's images/catalog.toml)"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    gen = sub.add_parser("generate", help="write the workflow files, or check them")
    where = gen.add_mutually_exclusive_group()
    where.add_argument(
        "--out",
        type=Path,
        help="the .github directory to write them into (default: the workspace's)",
    )
    where.add_argument("--check", type=Path, help="the .github directory that must be current")
    gen.set_defaults(run=_generate)
    mat = sub.add_parser(
        "matrix", help="print `variants=[...]` (for $GITHUB_OUTPUT): weekly's archs and families"
    )
    mat.add_argument(
        "--arch", required=True, help=f"an arch or family, or {render.SCHEDULED} (every one)"
    )
    mat.set_defaults(run=_matrix)
    gpu = sub.add_parser(
        "gpu-smoke", help="on a GPU host: its health, then each pushed image on the device"
    )
    gpu.add_argument("--arch", required=True, help="the arch or family the images are for")
    gpu.add_argument("--push", type=Path, required=True, help="the push's --json output")
    gpu.set_defaults(run=_gpu_smoke)
    offline.add_parser(sub)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (CatalogError, smoke.SmokeError) as e:
        print(f"workflows: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
