"""The report's model, collected from what a build and a push leave: descriptors (sizes,
shared layers), size records (budgets), build records (time, staging hit) and the local
publish history; a registry that cannot be asked falls back to the history, and says so."""

from __future__ import annotations

import json
from pathlib import Path

from tools.oci.digest import digest_of
from tools.registry import history, report
from tools.staging.clients import Clients
from tools.staging.descriptor import Descriptor
from tools.tagconf import budget
from tools.tagconf import catalog as catalog_mod
from tools.tagconf.spec import image_spec
from tools.tagconf.tags import resolve_values

CATALOG = catalog_mod.load("images/catalog.toml")
REGISTRY = "127.0.0.1:9/ns"  # nothing listens on port 9


def layer(n: int, size: int) -> dict:
    return {"digest": f"sha256:{n:064x}", "size": size, "mediaType": "x"}


def write_image(tmp: Path, target: str, arch, layers, parents=None):
    """spec, descriptor, size record and build record of one image, as Bazel leaves them."""
    t = CATALOG.target(target)
    name = f"{target}.{arch}" if arch else target
    spec = image_spec(CATALOG, t, arch, resolve_values(CATALOG), REGISTRY)
    (tmp / f"{name}.spec.json").write_text(json.dumps(spec))
    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "config": {"digest": "sha256:" + "c" * 64, "size": 1000},
            "layers": layers,
        }
    )
    digest = digest_of(manifest.encode())
    d = Descriptor(
        target=target,
        arch=arch,
        repository=t.repository,
        digest=digest,
        media_type="application/vnd.oci.image.manifest.v1+json",
        manifest=manifest.encode(),
        config={},
        staging_registry="127.0.0.1:5480/staging",
        staging_name=f"staging/{t.repository}",
        staging_tag="c-x",
        embedded=True,
        parents=parents or {},
    )
    d.write(tmp / f"{name}.json")
    record = budget.check(spec, json.loads((tmp / f"{name}.json").read_text()), name)
    (tmp / f"{name}.size.json").write_text(json.dumps(record))
    return {
        "target": target,
        "arch": arch,
        "spec": str(tmp / f"{name}.spec.json"),
        "descriptor": str(tmp / f"{name}.json"),
        "size": str(tmp / f"{name}.size.json"),
        "log": f"bazel-out/logs/images/{name}.log",
        "parents": list((parents or {}).keys()),
    }, digest


def family(tmp: Path):
    runtime, rd = write_image(tmp, "rocm-runtime", "gfx950", [layer(1, 5_000_000)])
    base, bd = write_image(
        tmp,
        "pytorch-base",
        "gfx950",
        [layer(1, 5_000_000), layer(2, 300_000)],
        {"rocm-runtime": rd},
    )
    plan = tmp / "plan.json"
    plan.write_text(json.dumps({"images": [runtime, base], "label": "//images:report"}))
    logs = tmp / "ws" / "bazel-out" / "logs" / "images"
    logs.mkdir(parents=True)
    (logs / "rocm-runtime.gfx950.build-record.json").write_text(
        json.dumps({"digest": rd, "staging_hit": True, "seconds": 0.4})
    )
    (logs / "pytorch-base.gfx950.build-record.json").write_text(
        json.dumps({"digest": "sha256:" + "9" * 64, "staging_hit": False, "seconds": 27.5})
    )
    return plan, rd, bd


def test_the_model_of_a_build_with_its_publish_history(tmp_path):
    plan, _, _ = family(tmp_path)
    entries = report.read_plan(plan, None)
    where = tmp_path / "history" / "publish.jsonl"
    spec = json.loads(Path(entries[0].image.spec).read_text())
    history.append(
        [
            history.record(
                push_id=f"2026-11-0{k}T00:00:00Z",
                registry=REGISTRY,
                repository="rocm-runtime",
                target="rocm-runtime",
                arch="gfx950",
                tags=[spec["tags"]["versioned"]],
                digest=f"sha256:{k:064x}",
                size=4_000_000 + k,
                layers=1,
                action="pushed",
                attested=False,
                signed=False,
            )
            for k in (1, 2)
        ],
        where,
    )
    records, _ = report.load_history(where)
    model = report.collect(
        entries,
        logs_root=tmp_path / "ws",
        records=records,
        ask=None,
        title="t",
        archs=["gfx950"],
        history_note=report.history_note(where, records),
    )
    runtime, base = model["images"]
    assert runtime["id"] == "rocm-runtime.gfx950" and base["id"] == "pytorch-base.gfx950"
    assert base["parents"] == ["rocm-runtime.gfx950"]
    assert runtime["size"] == 5_001_000
    assert base["size"] == 5_301_000
    assert (base["shared_bytes"], base["shared_layers"], base["layers"]) == (5_000_000, 1, 2)
    assert base["from"] == ["rocm-runtime.gfx950"] and runtime["from"] == []
    # nothing asked for what the push attaches: a missing signature is not an error here
    assert model["expected"] == {"signatures": False, "sboms": False, "provenances": False}
    assert runtime["budget_bytes"] == 8192 << 20
    assert runtime["build"] == {
        "seconds": 0.4,
        "staging_hit": True,
        "finished": None,
        "current": True,
    }
    assert base["build"]["current"] is False  # the record is of another digest
    assert runtime["published"]["digest"] == f"sha256:{2:064x}"
    assert runtime["published"]["size"] == 4_000_002
    assert runtime["published"]["source"] == "publish history, 2026-11-02T00:00:00Z"
    assert [h["size"] for h in runtime["history"]] == [4_000_001, 4_000_002]
    assert base["published"] is None and base["history"] == []
    assert model["sources"]["history"] == f"2 records in {where}"


def test_a_registry_that_does_not_answer_falls_back_to_the_history(tmp_path):
    plan, _, _ = family(tmp_path)
    entries = report.read_plan(plan, None)
    clients = Clients(retries=0, backoff=0.01)
    try:
        model = report.collect(
            entries,
            logs_root=tmp_path / "ws",
            records=[],
            ask=lambda image: report.ask_registry(clients, image),
            title="t",
            archs=["gfx950"],
            history_note="none",
        )
    finally:
        clients.close()
    runtime = model["images"][0]
    assert runtime["published"]["digest"] is None
    assert "127.0.0.1:9" in runtime["published"]["error"]
    assert runtime["supply"] == {"error": runtime["published"]["error"]}


def test_a_child_that_only_copies_from_a_parent_is_told_apart_from_one_built_on_it(tmp_path):
    runtime, rd = write_image(tmp_path, "rocm-runtime", "gfx950", [layer(1, 5_000_000)])
    base, bd = write_image(
        tmp_path, "pytorch-base", "gfx950", [layer(1, 5_000_000), layer(2, 300)],
        {"rocm-runtime": rd},
    )  # fmt: skip
    # FROM pytorch-base, COPY --from rocm-runtime of a file: starts with base's layers only
    # (rocm-runtime's are base's first, so it starts with those too)
    child, _ = write_image(
        tmp_path, "pytorch", "gfx950", [layer(1, 5_000_000), layer(2, 300), layer(3, 10)],
        {"pytorch-base": bd},
    )  # fmt: skip
    # a wheel image: FROM scratch, COPY --from pytorch-base of what it built
    wheel, _ = write_image(
        tmp_path, "torchvision-wheel", "gfx950", [layer(9, 70)], {"pytorch-base": bd}
    )
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"images": [runtime, base, child, wheel]}))
    model = report.collect(
        report.read_plan(plan, None),
        logs_root=tmp_path,
        records=[],
        ask=None,
        title="t",
        archs=["gfx950"],
        history_note="none",
        expect=("signatures", "sboms"),
    )
    by_id = {i["id"]: i for i in model["images"]}
    assert by_id["pytorch.gfx950"]["from"] == ["pytorch-base.gfx950"]
    assert by_id["torchvision-wheel.gfx950"]["from"] == []
    assert by_id["torchvision-wheel.gfx950"]["parents"] == ["pytorch-base.gfx950"]
    assert model["expected"] == {"signatures": True, "sboms": True, "provenances": False}


def test_a_family_over_its_budget_gets_its_report_and_then_the_report_fails(tmp_path, capsys):
    """The page is written (the image over budget marked), then the command fails naming it:
    the report rule takes no size record, whose action would fail the build first."""
    from tools.registry.cli import main

    plan, _, _ = family(tmp_path)
    spec_file = Path(json.loads(plan.read_text())["images"][1]["spec"])
    spec = json.loads(spec_file.read_text())
    spec["budget"] = {"mib": 0.25, "from": "tests budget_mib.pytorch-base"}
    spec_file.write_text(json.dumps(spec))
    page = tmp_path / "report.html"
    code = main(
        ["report", "--plan", str(plan), "--offline", "--out", str(page),
         "--logs-root", str(tmp_path / "ws"), "--history", str(tmp_path / "none.jsonl")]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1, err
    assert page.is_file() and 'class="node over"' in page.read_text()
    (line,) = [x for x in err.splitlines() if x.startswith("registry: error:")]
    assert line == (
        "registry: error: 1 image over budget: pytorch-base.gfx950 (5.1 MiB of 0.2 MiB); the"
        f" report shows them ({page}); shrink them or raise their budgets in the catalogue"
    )
