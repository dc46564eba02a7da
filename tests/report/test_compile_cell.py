"""The compiler cache's hit rate next to each image's build seconds in the report.

The build record (tools/imagebuild/build.py) keeps the hits and misses of the
image's compiling steps; `registry report` takes them into the model only when
they are counts, and the page shows `compile 97.6 % hits (812/832)` in the build
column and after the bar of the time plot, escaped, and nothing without
compiles. Last, the page in chromium: the longer labels stay inside the plot.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.report import browser, hostile
from tools.registry.report import build_record
from tools.report import render as r

MiB = 1 << 20
DIGEST = "sha256:" + "d" * 64


def record(tmp_path, **fields):
    """The build record of `images/pytorch.gfx950.log` as the model takes it."""
    logs = tmp_path / "bazel-out" / "logs" / "images"
    logs.mkdir(parents=True, exist_ok=True)
    body = {"digest": DIGEST, "staging_hit": False, "seconds": 412.3, **fields}
    (logs / "pytorch.gfx950.build-record.json").write_text(json.dumps(body))
    return build_record("bazel-out/logs/images/pytorch.gfx950.log", tmp_path, DIGEST)


def test_the_model_takes_the_records_compile_counts(tmp_path):
    b = record(tmp_path, compile_hits=812, compile_misses=20)
    assert b["compile_hits"] == 812 and b["compile_misses"] == 20
    assert b["seconds"] == 412.3 and b["current"] is True


@pytest.mark.parametrize(
    "fields",
    [
        {},  # a record of before, or of a build without compiler cache lines
        {"compile_hits": 812},
        {"compile_hits": "812", "compile_misses": "20"},
        {"compile_hits": True, "compile_misses": 0},
        {"compile_hits": -1, "compile_misses": 20},
        {"compile_hits": 8.5, "compile_misses": 20},
        {"compile_hits": hostile.SIZE, "compile_misses": hostile.ERROR},
    ],
)
def test_a_record_without_two_counts_has_none_in_the_model(tmp_path, fields):
    b = record(tmp_path, **fields)
    assert b == {"seconds": 412.3, "staging_hit": False, "finished": None, "current": True}


def build(**extra):
    return {"seconds": 412.3, "staging_hit": False, "finished": "t", "current": True, **extra}


def test_the_build_cell_shows_the_hit_rate_beside_the_seconds():
    cell = r.build_cell({"build": build(compile_hits=812, compile_misses=20)})
    assert cell == (
        '412.30 s · <span class="compile" data-hits="812" data-misses="20"'
        ' title="the compiler cache in the compiling steps">compile 97.6 % hits (812/832)'
        '</span> <span class="badge">BuildKit</span>'
    )
    cold = r.build_cell({"build": build(compile_hits=0, compile_misses=120)})
    assert "compile 0.0 % hits (0/120)" in cold


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"compile_hits": 0, "compile_misses": 0},  # no compiles
        {"compile_hits": hostile.SIZE, "compile_misses": 3},  # a model from elsewhere
        {"compile_hits": None, "compile_misses": None},
    ],
)
def test_without_compiles_the_build_cell_is_as_before(extra):
    assert r.build_cell({"build": build(**extra)}) == '412.30 s <span class="badge">BuildKit</span>'
    assert "compile" not in r.times_plot([{"id": "x", "build": build(**extra)}])


def test_the_rate_is_rounded_half_up_as_build_env_prints_it():
    # build-env.sh: tenths = (2000*H + H+M) / (2*(H+M)), integer division
    assert r.compile_rate(1, 15) == "6.3 % hits"  # 6.25
    assert r.compile_rate(812, 20) == "97.6 % hits"
    assert r.compile_rate(1, 0) == "100.0 % hits"
    assert r.compile_rate(0, 7) == "0.0 % hits"
    assert r.compile_rate(1, 1999) == "0.1 % hits"  # 0.05
    assert r.compile_rate(1, 2001) == "0.0 % hits"


def test_the_time_plot_labels_the_bar_with_the_rate_and_makes_room_for_it():
    plain = r.times_plot([{"id": "base.gfx950", "build": build()}])
    both = r.times_plot(
        [
            {"id": "base.gfx950", "build": build()},
            {"id": "pytorch.gfx950", "build": build(compile_hits=812, compile_misses=20)},
        ]
    )
    assert ">412.30 s · compile 97.6 % hits</text>" in both
    assert "<title>pytorch.gfx950: 412.30 s · compile 97.6 % hits</title>" in both
    width = lambda svg: int(re.search(r'<svg id="build-times"[^>]* width="(\d+)"', svg)[1])  # noqa: E731
    assert width(both) > width(plain)


def image(ident, build_record):
    return {
        "id": ident,
        "target": ident.split(".")[0],
        "arch": "gfx950",
        "repository": ident.split(".")[0],
        "parents": [],
        "digest": DIGEST,
        "size": 10 * MiB,
        "layers": 3,
        "budget_bytes": 20 * MiB,
        "budget_from": "targets.x.budget_mib",
        "shared_bytes": 0,
        "shared_layers": 0,
        "tags": [f"127.0.0.1:5000/ns/{ident.split('.')[0]}:1.0"],
        "build": build_record,
        "published": None,
        "supply": None,
        "history": [],
    }


LABEL_BOXES = """() => Array.from(document.querySelectorAll('svg#build-times text')).map(t => {
  const svg = t.ownerSVGElement.getBoundingClientRect(), b = t.getBoundingClientRect();
  return {text: t.textContent, inside: b.left >= svg.left - 0.5 && b.right <= svg.right + 0.5};
})"""


def test_the_page_with_compile_rates_holds_up_in_the_browser(tmp_path):
    model = {
        "title": "Family report",
        "generated": "2026-12-05 12:00:00 UTC",
        "registry": "127.0.0.1:5000/ns",
        "archs": ["gfx950"],
        "sources": {"published": "the registry", "history": "none"},
        "notes": [],
        "images": [
            # the longest build: its bar is the whole width, its label the longest
            image("pytorch.gfx950", build(seconds=12345.67, compile_hits=8120, compile_misses=20)),
            image("vllm.gfx950", build(compile_hits=0, compile_misses=120)),
            image("base.gfx950", build(seconds=3.5)),
        ],
    }
    page = tmp_path / "report.html"
    page.write_text(r.render(model), encoding="utf-8")
    facts = browser.inspect(page, probe=LABEL_BOXES)
    assert browser.problems(facts, images=3) == []
    labels = {x["text"]: x["inside"] for x in facts.probe}
    assert labels["12345.67 s · compile 99.8 % hits"] is True
    assert labels["412.30 s · compile 0.0 % hits"] is True
    assert all(labels.values()), labels
