"""check_page: open a family report in headless chromium and say whether it holds up.

    bazel run //tests/report:check_page -- PAGE.html [--images N] [--built-images]

Prints one line per problem (console errors, network requests, graph nodes that
overlap or do not match the table, edges that do not join their nodes, budget
bars that do not show the share, missing plots) and exits 1, or prints one
`report page ok: ...` line and exits 0. `--built-images`: every image must
also have a build record and a bar in the time plot. .ci/rehearsal_checks.py
runs it on the rehearsal family's report.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tests.report import browser


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="check_page", description=__doc__.splitlines()[0])
    p.add_argument("page", type=Path, help="the report's HTML file")
    p.add_argument("--images", type=int, help="the number of images the graph must show")
    p.add_argument(
        "--built-images", action="store_true", help="every image has a bar in the time plot"
    )
    args = p.parse_args(argv)
    if not args.page.is_file():
        print(f"check_page: error: {args.page}: no such file", file=sys.stderr)
        return 2
    facts = browser.inspect(args.page.absolute())
    found = browser.problems(facts, args.images)
    if args.built_images:
        timed = {t["id"] for t in facts.times}
        found += [f"{n} has no bar in the time plot" for n in facts.rows if n not in timed]
    for line in found:
        print(f"check_page: {line}")
    if found:
        print(f"check_page: error: {len(found)} problems in {args.page}", file=sys.stderr)
        return 1
    print(
        f"report page ok: {len(facts.nodes)} images, {len(facts.edges)} edges,"
        f" {sum(len(v) for v in facts.points.values())} plot points, {len(facts.times)} time bars,"
        f" no console errors, no network requests"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
