"""No test names the real catalogue's values, except the seed-golden tests.

    python3 .ci/catalogue_values.py          # the checkout's tests and CI checks
    python3 .ci/catalogue_values.py --list   # every hit, not just the count per file

A test that spells the catalogue's PYTORCH_VERSION or ROCM_VERSION breaks on
every version bump of images/catalog.toml although nothing it tests changed.
Tests of the tag rules, plans, pushes and reports run on
tests/fixtures/catalog.toml, and what a test must know of the real catalogue
it reads from it (tools/tagconf). Only the tests that hold the real catalogue
to the seed's tables (SEED_GOLDEN) name its values.

The values: every non-empty [defaults] value of the real catalogue (versions
and refs) and its registry, each matched as a whole word (a PYTHON_VERSION of
`3.21` matches `"3.21"`, not `python3.21` or `3.21.1`). The files: `git ls-files
tests .ci`. Standard library only (.ci runs it under the host's python3, lint.sh
calls it).
Prints one line per offending file and `N files name the real catalogue's
values`; exits 1 when any does.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CATALOG = "images/catalog.toml"
# The tests that check the real catalogue against the seed's tag and group
# tables: the only ones that may spell its values.
SEED_GOLDEN = {
    "tests/tagconf/testdata/seed_tags.txt",
    "tests/tagconf/testdata/seed_groups.txt",
}
# Keys whose values are no version: an empty VCS_REF, the upstream's name.
NOT_VERSIONS = {"VCS_REF", "UPSTREAM_IMAGE"}


def catalogue_values(text: str) -> dict[str, str]:
    """{what: value} of the catalogue text: [defaults] versions and the registry host."""
    data = tomllib.loads(text)
    values = {
        key: str(value)
        for key, value in data.get("defaults", {}).items()
        if key not in NOT_VERSIONS and str(value)
    }
    registry = str(data.get("registry", ""))
    if registry:
        values["registry"] = registry.split("/", 1)[0]
    return values


def pattern(values: dict[str, str]) -> re.Pattern[str]:
    alternatives = sorted({re.escape(v) for v in values.values()}, key=len, reverse=True)
    return re.compile(r"(?<![\w.])(?:" + "|".join(alternatives) + r")(?![\w]|\.\w)")


def offenders(files: dict[str, str], values: dict[str, str]) -> dict[str, list[str]]:
    """{path: ["line: text", ...]}: the files (path: text) outside SEED_GOLDEN naming a value."""
    found: dict[str, list[str]] = {}
    regex = pattern(values)
    for path, text in sorted(files.items()):
        if path in SEED_GOLDEN:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if regex.search(line):
                found.setdefault(path, []).append(f"{number}: {line.strip()[:120]}")
    return found


def tracked(root: Path) -> dict[str, str]:
    out = subprocess.run(
        ["git", "ls-files", "-z", "tests", ".ci"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    files = {}
    for path in filter(None, out.split("\0")):
        try:
            files[path] = (root / path).read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError):
            continue
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="print every hit")
    args = parser.parse_args(argv)
    values = catalogue_values((ROOT / CATALOG).read_text(encoding="utf-8"))
    found = offenders(tracked(ROOT), values)
    for path, hits in found.items():
        print(f"{path}: {len(hits)} lines name the real catalogue's values ({hits[0]})")
        if args.list:
            for hit in hits[1:]:
                print(f"    {hit}")
    print(
        f"{len(found)} files name the real catalogue's values"
        f" ({', '.join(sorted(set(values.values())))}); read them from {CATALOG}"
        " or use tests/fixtures/catalog.toml"
    )
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
