"""A report of hostile values, in headless chromium: they show as text, never as markup.

Three images whose catalogue names, arch and budget source are hostile
(tests/report/hostile.py), a registry that answers with a hostile digest and
hostile errors, and a publish history (in a hostile directory) with a hostile
digest, time and a size that is no number: collected into the model as
`registry report` does (tools/registry/report.py), rendered, opened. A hostile
registry, repository or tag does not get that far (the reference grammar
refuses it when the model is collected); they are put in the collected model's
tags and registry, so the page does not rely on that.

No element or attribute comes from a value, every value is on the page as
text, nothing ran but the page's own script (which still lays out the graph and
lights a hovered node's edges, even the hostile one's), no dialog.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.report import browser, hostile
from tools.oci.digest import digest_of
from tools.oci.reference import BadReference
from tools.registry import history, report
from tools.registry.report import Published
from tools.report.render import render
from tools.staging.descriptor import Descriptor
from tools.tagconf import budget
from tools.tagconf import catalog as catalog_mod
from tools.tagconf.spec import image_spec
from tools.tagconf.tags import resolve_values

CATALOG = catalog_mod.load("images/catalog.toml")

A = f"{hostile.TARGET}.{hostile.ARCH}"  # the root, published before (history, registry error)
B = f"{hostile.CHILD}.gfx950"  # its child, changed in the registry
C = hostile.ATTR  # arch-free, the registry errs and there is no history

# Read on the page: what elements and attributes it is made of, all its text
# and attribute values (outside <script> and <style>), its scripts and SVGs.
PROBE = """() => {
  const text = [], attrs = [], on = [];
  const walk = document.createTreeWalker(document.documentElement, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const p = n.parentElement ? n.parentElement.tagName.toLowerCase() : '';
    if (p !== 'script' && p !== 'style') text.push(n.data);
  }
  const all = Array.from(document.querySelectorAll('*'));
  all.forEach(e => Array.from(e.attributes).forEach(a => {
    attrs.push(a.value);
    if (/^on/i.test(a.name)) on.push(e.tagName.toLowerCase() + '[' + a.name + ']');
  }));
  return {
    text: text.join('\\n'), attrs: attrs, on: on,
    elements: Array.from(new Set(all.map(e => e.tagName.toLowerCase()))).sort(),
    scripts: Array.from(document.scripts).map(s => s.type || 'classic'),
    svgs: Array.from(document.querySelectorAll('svg')).map(s =>
      s.id || s.getAttribute('class') || s.parentElement.getAttribute('class')),
    title: document.title,
    data: (() => { const d = document.getElementById('report-data');
      try { return JSON.parse(d.textContent); } catch (e) { return String(e); } })(),
  };
}"""


def write_image(tmp: Path, name: str, real: str, fields: dict, layers: list, parents: dict):
    """An image as Bazel leaves it (spec, descriptor, size record, build record), its
    spec written by tagconf for the catalogue target ``real``, then given ``fields``."""
    t = CATALOG.target(real)
    spec = image_spec(CATALOG, t, "gfx950" if t.arch else None, resolve_values(CATALOG))
    spec.update({k: v for k, v in fields.items() if k not in ("tag", "budget_from")})
    spec["tags"]["versioned"] = fields["tag"]
    if spec.get("budget"):
        spec["budget"]["from"] = fields.get("budget_from", spec["budget"]["from"])
    (tmp / f"{name}.spec.json").write_text(json.dumps(spec))
    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "config": {"digest": "sha256:" + "c" * 64, "size": 1000},
            "layers": [
                {"digest": f"sha256:{n:064x}", "size": size, "mediaType": "x"} for n, size in layers
            ],
        }
    ).encode()
    digest = digest_of(manifest)
    Descriptor(
        target=spec["target"],
        arch=spec["arch"],
        repository=spec["repository"],
        digest=digest,
        media_type="application/vnd.oci.image.manifest.v1+json",
        manifest=manifest,
        config={},
        staging_registry="127.0.0.1:5480/staging",
        staging_name=f"staging/{real}",
        staging_tag="c-x",
        embedded=True,
        parents=parents,
    ).write(tmp / f"{name}.json")
    record = budget.check(spec, json.loads((tmp / f"{name}.json").read_text()), name)
    (tmp / f"{name}.size.json").write_text(json.dumps(record))
    logs = tmp / "ws" / "bazel-out" / "logs" / "images"
    logs.mkdir(parents=True, exist_ok=True)
    (logs / f"{name}.build-record.json").write_text(
        json.dumps({"digest": digest, "staging_hit": name == "a", "seconds": 3.5})
    )
    entry = {
        "spec": str(tmp / f"{name}.spec.json"),
        "descriptor": str(tmp / f"{name}.json"),
        "size": str(tmp / f"{name}.size.json"),
        "log": f"bazel-out/logs/images/{name}.log",
    }
    return entry, spec, digest


REGISTRY, REPOSITORY = "127.0.0.1:9/ns", "repo"


def hostile_model(tmp: Path, reference: dict | None = None) -> dict:
    """The model `registry report` collects from hostile specs, registry and history
    (``reference``: the root's registry, repository or tag instead of a good one)."""
    common = {"registry": REGISTRY, "repository": REPOSITORY}
    a, spec_a, digest_a = write_image(
        tmp,
        "a",
        "rocm-runtime",
        {
            **common,
            "tag": "a-1.0",
            **(reference or {}),
            "target": hostile.TARGET,
            "arch": hostile.ARCH,
            "budget_from": hostile.BUDGET_FROM,
        },
        [(1, 5_000_000)],
        {},
    )
    b, _, _ = write_image(
        tmp,
        "b",
        "pytorch-base",
        {**common, "target": hostile.CHILD, "arch": "gfx950", "tag": "b-1.0"},
        [(1, 5_000_000), (2, 300_000)],
        {hostile.TARGET: digest_a, hostile.PARENT: "sha256:" + "0" * 64},
    )
    c, _, _ = write_image(
        tmp,
        "c",
        "pytorch-src",
        {**common, "target": hostile.ATTR, "arch": None, "tag": "c-1.0"},
        [(3, 100_000)],
        {},
    )
    plan = tmp / "plan.json"
    plan.write_text(json.dumps({"images": [a, b, c], "label": "//images:report"}))
    entries = report.read_plan(plan, None)
    assert [e.id for e in entries] == [A, B, C]

    where = tmp / hostile.HISTORY_DIR / "publish.jsonl"
    history.append(
        [
            history.record(
                push_id=push_id,
                registry=common["registry"],
                repository=common["repository"],
                target=hostile.TARGET,
                arch=hostile.ARCH,
                tags=[spec_a["tags"]["versioned"]],
                digest=digest,
                size=size,
                layers=1,
                action="pushed",
                attested=False,
                signed=False,
            )
            for push_id, digest, size in (
                ("2026-11-01T00:00:00Z", "sha256:" + "1" * 64, 4_000_000),
                (hostile.TIME, hostile.DIGEST, hostile.SIZE),  # the last: "published"
            )
        ],
        where,
    )
    records, _ = report.load_history(where)

    def ask(image):  # the registry: an error for A and C, a hostile digest for B
        if image.target == hostile.CHILD:
            return Published(hostile.REGISTRY_DIGEST, 123, {"signatures": 1, "sboms": 0})
        return Published(None, None, None, hostile.ERROR)

    return report.collect(
        entries,
        logs_root=tmp / "ws",
        records=records,
        ask=ask,
        title=hostile.TITLE,
        archs=[hostile.ARCH, "gfx950"],
        history_note=report.history_note(where, records),
    )


@pytest.mark.parametrize(
    "field, value",
    [("registry", hostile.REGISTRY), ("repository", hostile.REPOSITORY), ("tag", hostile.TAG)],
)
def test_a_hostile_reference_is_refused_when_the_model_is_collected(tmp_path, field, value):
    with pytest.raises(BadReference):
        hostile_model(tmp_path, {field: value})


@pytest.fixture(scope="module")
def shown(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile")
    model = hostile_model(tmp)
    # past the reference grammar anyway (a model from elsewhere): the page escapes them
    model["registry"] = hostile.REGISTRY
    for i in model["images"]:
        i["tags"].append(f"{hostile.REGISTRY}/{hostile.REPOSITORY}:{hostile.TAG}")
    page = tmp / "report.html"
    page.write_text(render(model), encoding="utf-8")
    return model, browser.inspect(page, hover=A, probe=PROBE)


def test_the_model_holds_the_hostile_values(shown):
    # the collection passes them on as they are: escaping is the page's job
    model, _ = shown
    a, b, c = model["images"]
    assert (a["id"], b["id"], c["id"]) == (A, B, C)
    assert b["parents"] == [A]
    assert a["published"]["digest"] == hostile.DIGEST
    assert a["published"]["size"] == hostile.SIZE
    assert hostile.TIME in a["published"]["source"] and hostile.ERROR in a["published"]["source"]
    assert [h["time"] for h in a["history"]] == ["2026-11-01T00:00:00Z", hostile.TIME]
    assert a["budget_from"] == hostile.BUDGET_FROM
    assert b["published"]["digest"] == hostile.REGISTRY_DIGEST
    assert c["published"]["error"] == hostile.ERROR
    assert any(hostile.PARENT in n for n in model["notes"])


def test_no_element_or_attribute_comes_from_a_value(shown):
    _, facts = shown
    seen = facts.probe
    assert set(seen["elements"]) <= hostile.ELEMENTS, set(seen["elements"]) - hostile.ELEMENTS
    assert seen["on"] == []  # no onerror, onload, onmouseover, ... anywhere
    assert seen["scripts"] == ["application/json", "classic"]  # the data and the page's own
    assert set(seen["svgs"]) == {"family-graph", "build-times", "sizes", "budget ok"}


def test_every_value_is_on_the_page_as_text(shown):
    _, facts = shown
    seen = facts.probe
    text, attrs = seen["text"], "\n".join(seen["attrs"])
    missing = [
        name
        for name, value in hostile.ALL.items()
        if name != "GENERATED"  # the collection stamps its own time
        and value not in text
        and value not in attrs
    ]
    assert missing == []
    assert seen["title"] == hostile.TITLE
    # the ids in the page's data are the model's, exactly: JSON.parse reads them back
    assert seen["data"]["images"] == [A, B, C]


def test_nothing_ran_but_the_pages_own_script(shown):
    _, facts = shown
    assert facts.dialogs == []
    assert facts.errors == []
    assert facts.console == []  # no Content-Security-Policy violation either
    assert facts.requests == [facts.url]
    assert facts.ready == "1"  # the page's own script ran
    assert browser.problems(facts, images=3) == []


def test_the_pages_script_works_on_hostile_ids(shown):
    _, facts = shown
    assert sorted(facts.nodes) == sorted([A, B, C])
    assert [(e["from"], e["to"]) for e in facts.edges] == [(A, B)]
    assert facts.nodes[A]["x"] < facts.nodes[B]["x"]
    assert facts.cards["hover"] == {"edges": [f"{A}>{B}"], "rows": [A]}
    assert facts.changed == [A, B]  # a digest from the history, one from the registry
