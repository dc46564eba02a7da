"""docgen: write Markdown API docs from a `starlark_doc_extract` textproto.

    python3 -m tools.docgen --textproto defs_doc.textproto --output docs/rules.md \
        --title "..." --source images/defs.bzl --update "bazel run //docs:update"

`bazel run //docs:update` rewrites docs/rules.md in the source tree;
//tests/generated:rules_md_test fails with a diff while it is stale.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from tools.docgen.render import render
from tools.docgen.textproto import TextprotoError, parse


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="docgen", description=__doc__.splitlines()[0])
    p.add_argument("--textproto", type=Path, required=True, help="starlark_doc_extract output")
    p.add_argument(
        "--output",
        required=True,
        help="Markdown file to write; relative paths are in the source tree under bazel run",
    )
    p.add_argument("--title", required=True, help="the page's heading")
    p.add_argument("--source", required=True, help="the .bzl file documented (for the header)")
    p.add_argument("--update", required=True, help="the command that regenerates the page")
    args = p.parse_args(argv)
    try:
        module = parse(args.textproto.read_text(encoding="utf-8"))
    except (OSError, TextprotoError) as e:
        print(f"docgen: error: {args.textproto}: {e}", file=sys.stderr)
        return 1
    output = Path(args.output)
    workspace = os.environ.get("BUILD_WORKSPACE_DIRECTORY")
    if workspace and not output.is_absolute():
        output = Path(workspace) / output
    output.write_text(render(module, args.title, args.source, args.update), encoding="utf-8")
    if workspace:
        print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
