"""The family report, written by Bazel and opened in headless chromium: a check of the CI
scripts. .ci/rehearsal_checks.py runs it on the rehearsal family after its push (every
published image unchanged since that publish), .ci/e2e_checks.py on the fixture family.

`check_family_report` runs `bazel run <report> <defines> -- --out PAGE --json` (the
images are built already: no ImageBuild may run), reads the model it prints, then
`bazel run //tests/report:check_page -- PAGE --images N --built-images` (Debian's
chromium through Playwright: graph nodes and edges laid out, budget bars, plot points,
no console error, no network request). Python 3.11, stdlib only.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

Bazel = Callable[..., subprocess.CompletedProcess]


def check_family_report(
    bazel: Bazel,
    target: str,
    defines: list[str],
    out: Path,
    images: int,
    extra: tuple[str, ...] = (),
    unchanged: list[str] | None = None,
) -> str:
    """Write the report of ``target`` and check it in the browser; a one-line summary, or
    AssertionError naming what is wrong. ``unchanged``: images that must be published
    under their tags on the digest just built (after a push)."""
    proc = bazel("run", target, *defines, "--", "--out", str(out), "--json", *extra)
    model = json.loads(proc.stdout)
    got = [i["id"] for i in model["images"]]
    assert len(got) == images, f"{len(got)} images in the report, want {images}: {got}"
    assert out.is_file(), f"{out} was not written"
    over = [i["id"] for i in model["images"] if i["budget_bytes"] and i["size"] > i["budget_bytes"]]
    assert not over, f"over budget: {over}"
    if unchanged is not None:
        moved = [
            i["id"]
            for i in model["images"]
            if i["id"] in unchanged and (i["published"] or {}).get("digest") != i["digest"]
        ]
        assert not moved, f"not published on the digest built: {moved}"
    page = bazel(
        "run",
        "//tests/report:check_page",
        *defines,  # the same flags: Bazel keeps its analysis cache
        "--",
        str(out),
        "--images",
        str(images),
        "--built-images",
        check=False,
    )
    lines = (page.stdout + page.stderr).strip().splitlines()
    assert page.returncode == 0, "; ".join(line for line in lines if "check_page" in line)[:2000]
    ok = next(line for line in lines if line.startswith("report page ok"))
    return f"{out.name}: {ok}"
