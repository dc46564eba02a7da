"""`registry report`: collect the family report's model and write its HTML page.

`bazel run //images:report --define arch=...` builds the family's images for
those archs (and checks their budgets), then runs this on its plan, which
names for every image its spec (tags, budget), descriptor (digest, layers)
and the path of its build log. It reads:

- each image's **descriptor**: its size (compressed layers + config) and the
  layers it shares with its parents' (by digest);
- each image's **build record** (`bazel-out/logs/<package>/<name>.build-record.json`,
  written by the last run of its ImageBuild action next to its log): seconds,
  staging hit or BuildKit build, the compiler cache's hits and misses (when
  its compiling steps printed them); marked "older build" when its digest is
  not the descriptor's (the action last ran for another build);
- **the last publish of the same tags**: the registry's current manifest of the
  image's versioned tag (read with the project's registry client, HEAD then GET,
  nothing written), so "changed" means "a push now would move this tag";
  with `--offline`, or when the registry cannot be asked, the last record of
  the local publish history (tools/registry/history.py) instead, and the page
  says which;
- **signature and SBOM state** of the published digest: the artifacts attached to
  it (cosign bundles, CycloneDX SBOMs, in-toto provenance: the referrers API or
  its fallback tag), as counted, not verified (`<push>.verify` verifies);
- the **publish history** (sizes over the last publishes, for the plots).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tools import places
from tools.oci.errors import RegistryError
from tools.registry import history
from tools.registry.plan import PlannedImage, planned_image
from tools.staging.descriptor import DescriptorError, load
from tools.tagconf import budget

HISTORY_POINTS = 10  # publishes per image on its size plot


@dataclass(frozen=True)
class Entry:
    """One image of the report's plan, as the report rule wrote it."""

    id: str
    image: PlannedImage
    log: str | None


def read_plan(path: Path, registry: str | None) -> list[Entry]:
    try:
        entries = json.loads(path.read_text())["images"]
        out = []
        seen = set()
        for e in entries:
            image = planned_image(
                Path(e["spec"]), Path(e["descriptor"]), e.get("parents", []), registry
            )
            ident = e.get("id") or (f"{image.target}.{image.arch}" if image.arch else image.target)
            if ident in seen:  # an arch-free image shared by every arch's entries
                continue
            seen.add(ident)
            out.append(Entry(ident, image, e.get("log")))
        return out
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise RegistryError(
            f"{path}: not a report plan ({type(e).__name__}: {e}); rebuild the report target"
        ) from None


def build_record(log: str | None, root: Path, digest: str) -> dict | None:
    """The last run of the image's build action (its record next to its log), or None."""
    if not log:
        return None
    path = root / log
    path = path.with_name(path.name.removesuffix(".log") + ".build-record.json")
    try:
        r = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    record = {
        "seconds": float(r.get("seconds", 0)),
        "staging_hit": bool(r.get("staging_hit")),
        "finished": r.get("finished"),
        "current": r.get("digest") == digest,
    }
    # the compiler cache's counts of its compiling steps, when the log had them
    hits, misses = r.get("compile_hits"), r.get("compile_misses")
    if all(type(n) is int and n >= 0 for n in (hits, misses)):
        record["compile_hits"] = hits
        record["compile_misses"] = misses
    # the RUNs that executed and why (tools/imagebuild/executed.py), when it ran BuildKit
    runs = r.get("executed_runs")
    if isinstance(runs, list):
        record["executed_runs"] = runs
        if type(r.get("runs_total")) is int:
            record["runs_total"] = r["runs_total"]
    return record


def _size_record(entry: Entry, descriptor) -> dict:
    """Its size and budget, from the spec and the descriptor (what `tagconf size`
    reads): the report is made for a family over its budget too, which it shows."""
    try:
        spec = json.loads(Path(entry.image.spec).read_text())
        raw = json.loads(Path(entry.image.descriptor).read_text())
        return budget.record(spec, raw)
    except (OSError, ValueError, KeyError, TypeError):
        layers = descriptor.layers
        return {
            "size": sum(x.size for x in layers) + descriptor.config_blob.size,
            "layers": len(layers),
            "budget_bytes": None,
            "budget_from": None,
        }


def over_budget(model: dict) -> list[str]:
    """The images of ``model`` past their budget: `ID (SIZE of BUDGET)` each."""
    return [
        f"{i['id']} ({budget.mib(i['size'])} of {budget.mib(i['budget_bytes'])})"
        for i in model["images"]
        if i.get("budget_bytes") and i["size"] > i["budget_bytes"]
    ]


@dataclass
class Published:
    """What the registry holds now under one image's versioned tag."""

    digest: str | None
    size: int | None
    supply: dict | None
    error: str = ""


def ask_registry(clients, image: PlannedImage) -> Published:
    """The versioned tag's current manifest (digest, size) and what is attached to it."""
    from tools.oci.referrers import Referrers
    from tools.registry import provenance, sbom
    from tools.registry.attest import BUNDLE_TYPES

    client = clients(image.host)
    try:
        digest = client.manifest_digest(image.name, image.tags[0])
        if digest is None:
            return Published(None, None, None)
        body, _media, _ = client.get_manifest(image.name, digest)
        manifest = json.loads(body)
        size = int(manifest["config"]["size"]) + sum(
            int(x["size"]) for x in manifest.get("layers") or []
        )
        listed = Referrers(client).list(image.name, digest)
        kinds = [x.get("artifactType") for x in listed]
        supply = {
            "signatures": sum(k in BUNDLE_TYPES for k in kinds),
            "sboms": kinds.count(sbom.CYCLONEDX),
            "provenances": kinds.count(provenance.IN_TOTO),
        }
        return Published(digest, size, supply)
    except (RegistryError, ValueError, KeyError, TypeError) as e:
        return Published(None, None, None, str(e))


def collect(
    entries: list[Entry],
    *,
    logs_root: Path,
    records: list[dict],
    ask: Callable[[PlannedImage], Published] | None,
    title: str,
    archs: list[str],
    history_note: str,
    expect: tuple[str, ...] = (),
) -> dict:
    """The report's model (tools/report/render.py): one entry per image, parents first;
    ``expect``: what the push of this configuration attaches to each image
    (``signatures``, ``sboms``, ``provenances``)."""
    descriptors = {}
    for e in entries:
        try:
            descriptors[e.id] = load(e.image.descriptor)
        except DescriptorError as err:
            raise RegistryError(f"{e.image.label()}: {err}") from None
    by_digest = {d.digest: ident for ident, d in descriptors.items()}
    notes: list[str] = []
    images = []
    for e in entries:
        d = descriptors[e.id]
        size = _size_record(e, d)
        parents = [by_digest[p] for p in d.parents.values() if p in by_digest]
        missing = [n for n, p in d.parents.items() if p not in by_digest]
        if missing:
            notes.append(f"{e.id}: parents {', '.join(missing)} are not in this report")
        parent_layers = {x.digest for p in parents for x in descriptors[p].layers}
        shared = [x for x in d.layers if x.digest in parent_layers]
        # a parent it starts FROM: its layers begin with all of the parent's
        starts = [
            p
            for p in parents
            if [x.digest for x in d.layers[: len(descriptors[p].layers)]]
            == [x.digest for x in descriptors[p].layers]
        ]
        mine = [
            r
            for r in records
            if r.get("repository") == e.image.repository
            and r.get("registry") == e.image.registry
            and e.image.tags[0] in r.get("tags", [])
        ]
        last = mine[-1] if mine else None
        published = None
        supply = None
        if ask is not None:
            p = ask(e.image)
            if p.error:
                published = {"digest": None, "size": None, "source": "registry", "error": p.error}
                if last:
                    published = {
                        "digest": last["digest"],
                        "size": last["size"],
                        "source": f"publish history, {last['time']} (registry: {p.error})",
                    }
                supply = {"error": p.error}
            else:
                published = {"digest": p.digest, "size": p.size, "source": "registry"}
                supply = p.supply
        elif last:
            published = {
                "digest": last["digest"],
                "size": last["size"],
                "source": f"publish history, {last['time']}",
            }
        images.append(
            {
                "id": e.id,
                "target": e.image.target,
                "arch": e.image.arch,
                "repository": e.image.repository,
                "parents": parents,
                "from": starts,
                "digest": d.digest,
                "size": int(size["size"]),
                "layers": len(d.layers),
                "budget_bytes": size.get("budget_bytes"),
                "budget_from": size.get("budget_from"),
                "shared_bytes": sum(x.size for x in shared),
                "shared_layers": len(shared),
                "tags": list(e.image.refs),
                "build": build_record(e.log, logs_root, d.digest),
                "published": published,
                "supply": supply,
                "history": [
                    {"time": r["time"], "size": r["size"], "digest": r["digest"]}
                    for r in mine[-HISTORY_POINTS:]
                ],
            }
        )
    if not any(i["build"] for i in images):
        notes.append(
            f"no build records under {logs_root}/bazel-out/logs: run the report with bazel run"
            " from the workspace (or give --logs-root)"
        )
    registries = sorted({e.image.registry for e in entries})
    return {
        "title": title,
        "generated": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "registry": ", ".join(registries),
        "archs": archs,
        "sources": {
            "published": (
                "the registry's current manifest of each image's versioned tag"
                if ask is not None
                else "the local publish history (--offline: the registry was not asked)"
            ),
            "history": history_note,
        },
        "notes": notes,
        # what the push of this configuration attaches (--expect: the launcher's, from
        # --sign / attest=1): a missing one is red only then
        "expected": {k: k in expect for k in ("signatures", "sboms", "provenances")},
        "images": images,
    }


def default_out(label: str, archs: list[str]) -> Path:
    """`bazel-report/<target>-<archs>.html` in the workspace (``places.workspace()``)."""
    root = places.workspace()
    name = label.rpartition(":")[2] or "report"
    return root / "bazel-report" / f"{name}-{'+'.join(archs) or 'noarch'}.html"


def logs_root() -> Path:
    """Where `bazel-out/logs/...` of the image builds is: the workspace's `bazel-out` link."""
    return places.workspace()


def history_note(where: Path, records: list[dict]) -> str:
    return f"{len(records)} records in {where}" if records else f"none yet ({where})"


def load_history(where: Path | None) -> tuple[list[dict], Path]:
    path = where or history.path()
    return history.read(path), path
