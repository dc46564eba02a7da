"""Size budgets: the catalogue's `budget_mib` of each image against its built size.

The image rule's ImageSize action runs `tagconf size` on every image it builds:
it reads the image's descriptor (the manifest's layer and config sizes, no
blob bytes) and the budget in the image's spec, writes `<image>.size.json`, and
fails the build in one line when the image is over its budget. The check is not
part of the image build: a new budget re-runs this check only, never BuildKit.

An image's size is what a registry stores for it and a node pulls at most: its
compressed layers plus its config (the manifest itself aside). MiB are 2**20 bytes.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from pathlib import Path

from tools.tagconf.errors import TagconfError

MiB = 1 << 20


class OverBudget(TagconfError):
    """An image grew past its budget."""


def load_overrides(path: Path) -> dict[str, tuple[float, str]]:
    """A budgets file (`[budget_mib]`, target = MiB): target -> (MiB, where it is set).

    The fixture family's images are KBs where the real ones are GBs: it keeps its
    own budgets in such a file (tests/e2e/budgets.toml) in place of the catalogue's.
    """
    where = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise TagconfError(where, f"cannot read budgets ({e})", "fix the file") from None
    table = data.get("budget_mib")
    if not isinstance(table, dict) or set(data) != {"budget_mib"}:
        raise TagconfError(where, "want one [budget_mib] table", "write [budget_mib] target = MiB")
    out = {}
    for name, value in table.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise TagconfError(
                f"{where}: budget_mib.{name}", f"must be a number of MiB > 0, got {value!r}"
            )
        out[name] = (value, f"{where} budget_mib.{name}")
    return out


def image_size(descriptor: Mapping) -> dict[str, int]:
    """{"size": layers + config bytes, "layers": N, "config": bytes} of a descriptor's manifest."""
    manifest = json.loads(descriptor["manifest"])
    layers = [int(layer["size"]) for layer in manifest.get("layers") or []]
    config = int(manifest["config"]["size"])
    return {"size": sum(layers) + config, "layers": len(layers), "config": config}


def mib(n: float) -> str:
    return f"{n / MiB:,.1f} MiB"


def record(spec: Mapping, descriptor: Mapping) -> dict[str, object]:
    """The size record of one image: its size, layers and budget (None without one)."""
    size = image_size(descriptor)
    budget = spec.get("budget")
    out: dict[str, object] = {
        "target": spec["target"],
        "arch": spec.get("arch"),
        "digest": descriptor["digest"],
        **size,
        "budget_bytes": None,
        "budget_from": None,
    }
    if budget:
        out["budget_bytes"] = int(budget["mib"] * MiB)
        out["budget_from"] = budget["from"]
    return out


def over_budget(spec: Mapping, rec: Mapping, label: str) -> OverBudget | None:
    """The one-line error of an image over its budget, None within it (or without one)."""
    limit, size = rec.get("budget_bytes"), rec["size"]
    if not isinstance(limit, int) or not isinstance(size, int) or size <= limit:
        return None
    budget = spec["budget"]
    return OverBudget(
        "",
        f"image over budget: {label} ({spec['target']}, {spec.get('arch') or 'noarch'})"
        f" is {mib(size)} ({size:,} bytes), its budget"
        f" {budget['mib']:g} MiB ({budget['from']}): {mib(size - limit)} over",
        "shrink the image or raise the budget in the catalogue",
    )


def check(spec: Mapping, descriptor: Mapping, label: str) -> dict[str, object]:
    """The size record of one image; OverBudget (one line) when it is over its budget."""
    rec = record(spec, descriptor)
    error = over_budget(spec, rec, label)
    if error:
        raise error
    return rec
