"""What a change does to each image: size, layers, build time, against main's; the size gate.

    python3 -m tools.report.delta --report now.json --baseline main.json --out delta.md

`now.json` is the family report's data (`bazel run //images:report -- --json`,
or the fixture family's, //tests/e2e:report), `main.json` the same of main's
last build (CI keeps it: docs/ci.md). Without `--baseline` the sizes compare
with each image's last publish, which the report read from the registry or
the publish history (layers and seconds then have nothing to compare with).

Per image: compressed size now and before and the growth, the layer count,
ImageBuild seconds, staging hit, the compiler cache's hit rate where the
build compiled. The markdown table goes to `--out`, to $GITHUB_STEP_SUMMARY
when set, and to stdout.

**The gate.** An image that grew more than 5 % or 200 MiB fails, naming the
image, the growth and its budget, unless its budget changed in the same
change (the baseline says the budget it had): a deliberate growth raises
the budget in images/catalog.toml with it. A new image has nothing to grow
from. Exit 1 when the gate fails, 2 on unreadable input, else 0.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from tools.report.render import MiB, mib, signed_mib

GROWTH_RATIO = 0.05
GROWTH_BYTES = 200 * MiB


@dataclass(frozen=True)
class Row:
    id: str
    size: int
    before: int | None  # bytes, None: a new image (or no baseline for it)
    layers: int
    layers_before: int | None
    seconds: float | None
    seconds_before: float | None
    staging_hit: bool | None
    hit_rate: float | None  # the compiler cache's, where the build compiled
    budget: int | None
    budget_before: int | None
    budget_changed: bool

    @property
    def growth(self) -> int:
        return 0 if self.before is None else self.size - self.before

    @property
    def too_big(self) -> bool:
        """Past the gate: more than 5 % or 200 MiB larger, its budget unchanged."""
        if self.before is None or self.budget_changed or self.growth <= 0:
            return False
        return self.growth > GROWTH_BYTES or self.growth > GROWTH_RATIO * self.before


class DeltaError(Exception):
    """Input the comparison cannot read: one line naming it."""


def _build(image: dict) -> dict:
    return image.get("build") or {}


def rows(now: dict, baseline: dict | None) -> list[Row]:
    """One row per image of ``now``, against the same image id of ``baseline``
    (else its last publish)."""
    before = {i["id"]: i for i in (baseline or {}).get("images", [])}
    out = []
    for image in now.get("images", []):
        old = before.get(image["id"])
        build = _build(image)
        hits, misses = build.get("compile_hits"), build.get("compile_misses")
        if old is not None:
            size_before = old.get("size")
            layers_before = old.get("layers")
            seconds_before = _build(old).get("seconds")
            budget_before = old.get("budget_bytes")
        else:
            # no baseline: its last publish; a baseline without it: a new image
            published = (image.get("published") or {}) if baseline is None else {}
            size_before = published.get("size")
            layers_before = seconds_before = None
            budget_before = image.get("budget_bytes")
        out.append(
            Row(
                id=image["id"],
                size=int(image["size"]),
                before=None if size_before is None else int(size_before),
                layers=int(image.get("layers", 0)),
                layers_before=layers_before,
                seconds=build.get("seconds"),
                seconds_before=seconds_before,
                staging_hit=build.get("staging_hit") if build else None,
                hit_rate=hits / (hits + misses) if hits is not None and (hits + misses) else None,
                budget=image.get("budget_bytes"),
                budget_before=budget_before,
                budget_changed=old is not None
                and old.get("budget_bytes") != image.get("budget_bytes"),
            )
        )
    return out


def failures(table: list[Row]) -> list[str]:
    """One line per image past the gate: its growth and its budget."""
    lines = []
    for r in table:
        if r.too_big:
            pct = 100 * r.growth / r.before
            budget = f"its budget {mib(r.budget)}" if r.budget else "no budget"
            lines.append(
                f"{r.id} grew {signed_mib(r.growth)} ({pct:+.1f} %, {mib(r.before)} ->"
                f" {mib(r.size)}), past the gate of 5 % or 200 MiB, {budget} unchanged;"
                " shrink it, or raise its budget in images/catalog.toml in the same change"
            )
    return lines


def markdown(table: list[Row], against: str) -> str:
    head = (
        f"#### Images against {against}\n\n"
        "| image | size | change | layers | ImageBuild | staging hit | compile cache | budget |\n"
        "|---|---:|---:|---:|---:|---|---:|---:|\n"
    )
    lines = []
    for r in table:
        if r.before is None:
            change = "new"
        else:
            pct = f" ({100 * r.growth / r.before:+.1f} %)" if r.before else ""
            change = signed_mib(r.growth) + pct + (" **past the gate**" if r.too_big else "")
        layers = str(r.layers) + (
            "" if r.layers_before in (None, r.layers) else f" (was {r.layers_before})"
        )
        seconds = "—" if r.seconds is None else f"{r.seconds:,.1f} s"
        if r.seconds is not None and r.seconds_before is not None:
            seconds += f" (was {r.seconds_before:,.1f} s)"
        hit = {True: "yes", False: "no", None: "—"}[r.staging_hit]
        rate = "—" if r.hit_rate is None else f"{100 * r.hit_rate:.1f} %"
        budget = mib(r.budget) + (f" (was {mib(r.budget_before)})" if r.budget_changed else "")
        lines.append(
            f"| {r.id} | {mib(r.size)} | {change} | {layers} | {seconds} | {hit} | {rate}"
            f" | {budget} |"
        )
    return head + "\n".join(lines) + "\n"


def _load(path: Path, what: str) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise DeltaError(f"{what} {path}: {e}; give a report's --json output") from None
    if not isinstance(data, dict) or not isinstance(data.get("images"), list):
        raise DeltaError(f"{what} {path}: no `images` list; give a report's --json output")
    return data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m tools.report.delta", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--report", type=Path, required=True, help="this change's report JSON")
    parser.add_argument("--baseline", type=Path, help="main's report JSON (default: last publish)")
    parser.add_argument("--out", type=Path, help="write the markdown table here too")
    args = parser.parse_args(argv)
    try:
        now = _load(args.report, "--report")
        baseline = _load(args.baseline, "--baseline") if args.baseline else None
    except DeltaError as e:
        print(f"delta: error: {e}", file=sys.stderr)
        return 2
    table = rows(now, baseline)
    against = f"main's ({args.baseline.name})" if baseline else "their last publish"
    text = markdown(table, against)
    failed = failures(table)
    if failed:
        text += "\n" + "".join(f"- **FAIL**: {line}\n" for line in failed)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as f:
            f.write(text)
    print(text, end="")
    for line in failed:
        print(f"FAIL: {line}")
    print(f"delta: {len(table)} images, {len(failed)} past the size gate")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
