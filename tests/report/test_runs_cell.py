"""The RUNs each image's build executed, beside its build seconds in the report.

The build record (tools/imagebuild/build.py, executed.py) lists the RUN steps that ran
(`executed_runs`: stage, step, seconds, why) and how many RUN steps the build had
(`runs_total`); the build column shows `2 of 7 RUNs ran` in a <details> that lists each
with its stage and why, `0 of 7 RUNs ran (all cached)` when BuildKit's cache had them
all, and nothing for a staging hit or a record without the list. Every value is text:
the page runs no script of its own beyond its hashed one (no inline handler).
"""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from tests.report import hostile
from tools.report import render as r

RUNS = [
    {
        "stage": "pytorch-build",
        "step": 'RUN /opt/build/build-pytorch.sh --version "4.5.6" /src/pytorch /wheels',
        "seconds": 9877.0,
        "why": "mounts pytorch-src, which is new (sha256:aaaaaaaaaaaa… → sha256:bbbbbbbbbbbb…)",
    },
    {
        "stage": "pytorch",
        "step": "RUN /opt/build/install-wheels.sh /tmp/triton-wheels /tmp/torch-wheels",
        "seconds": 41.25,
        "why": "mounts pytorch-build, which ran",
    },
]


def build(**extra):
    return {"seconds": 412.3, "staging_hit": False, "finished": "t", "current": True, **extra}


def test_the_build_cell_lists_the_runs_that_ran_with_why():
    cell = r.build_cell({"build": build(executed_runs=RUNS, runs_total=7)})
    assert cell == (
        '412.30 s <span class="badge">BuildKit</span> <details class="runs" data-ran="2">'
        "<summary>2 of 7 RUNs ran</summary><ol>"
        "<li><b>[pytorch-build]</b> <code>RUN /opt/build/build-pytorch.sh --version"
        " &quot;4.5.6&quot; /src/pytorch /wheels</code>: mounts pytorch-src, which is new"
        " (sha256:aaaaaaaaaaaa… → sha256:bbbbbbbbbbbb…) (9877.0 s)</li>"
        "<li><b>[pytorch]</b> <code>RUN /opt/build/install-wheels.sh /tmp/triton-wheels"
        " /tmp/torch-wheels</code>: mounts pytorch-build, which ran (41.2 s)</li></ol></details>"
    )


def test_all_cached_a_failed_run_and_no_total():
    assert r.build_cell({"build": build(executed_runs=[], runs_total=7)}) == (
        '412.30 s <span class="badge">BuildKit</span> ·'
        ' <span class="runs" data-ran="0">0 of 7 RUNs ran (all cached)</span>'
    )
    failed = {**RUNS[0], "seconds": 3.4, "failed": True}
    cell = r.build_cell({"build": build(executed_runs=[failed])})
    assert "<summary>1 RUN ran</summary>" in cell and "(failed)</li>" in cell


@pytest.mark.parametrize(
    "extra",
    [
        {},  # a record of before the list
        {"staging_hit": True, "executed_runs": []},  # no BuildKit: the badge says so
        {"executed_runs": "3"},
        {"executed_runs": None},
    ],
)
def test_without_the_list_the_cell_is_as_before(extra):
    assert r.runs_note(build(**extra)) == ""
    cell = r.build_cell({"build": build(**extra)})
    assert "RUN" not in cell and "details" not in cell


def test_the_seconds_and_total_that_are_no_numbers():
    cell = r.build_cell(
        {"build": build(executed_runs=[{**RUNS[0], "seconds": "12"}, 7], runs_total="7")}
    )
    assert "<summary>2 RUNs ran</summary>" in cell
    assert "(?)</li>" in cell and "<li>7</li>" in cell


class _Elements(HTMLParser):
    def __init__(self, text):
        super().__init__()
        self.elements, self.attrs, self.text = set(), set(), []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.elements.add(tag)
        self.attrs |= {name for name, _ in attrs}

    def handle_data(self, data):
        self.text.append(data)


def test_hostile_values_stay_text():
    bad = [
        {
            "stage": hostile.TARGET,
            "step": hostile.ATTR,
            "seconds": hostile.SIZE,
            "why": hostile.ERROR,
            "failed": hostile.TIME,
        },
        hostile.CHILD,
    ]
    cell = r.build_cell({"build": build(executed_runs=bad, runs_total=hostile.REPOSITORY)})
    parsed = _Elements(cell)
    assert parsed.elements <= hostile.ELEMENTS, parsed.elements - hostile.ELEMENTS
    assert parsed.attrs <= {"class", "data-ran"}, parsed.attrs
    text = "".join(parsed.text)
    for value in (hostile.TARGET, hostile.ATTR, hostile.ERROR, hostile.CHILD):
        assert value in text
    page = r.render(
        {
            "title": "t",
            "images": [
                {
                    "id": "pytorch.gfx950",
                    "target": "pytorch",
                    "arch": "gfx950",
                    "repository": "pytorch",
                    "parents": [],
                    "digest": "sha256:" + "d" * 64,
                    "size": 1 << 20,
                    "layers": 3,
                    "budget_bytes": None,
                    "budget_from": None,
                    "shared_bytes": 0,
                    "shared_layers": 0,
                    "tags": [],
                    "build": build(executed_runs=bad),
                    "published": None,
                    "supply": None,
                    "history": [],
                }
            ],
        }
    )
    whole = _Elements(page)
    assert whole.elements <= hostile.ELEMENTS, whole.elements - hostile.ELEMENTS
    assert not [a for a in whole.attrs if a.startswith("on")], whole.attrs


def test_the_model_takes_the_records_runs(tmp_path):
    import json

    from tools.registry.report import build_record

    logs = tmp_path / "bazel-out" / "logs" / "images"
    logs.mkdir(parents=True)
    digest = "sha256:" + "d" * 64
    body = {"digest": digest, "seconds": 1.0, "executed_runs": RUNS, "runs_total": 7}
    (logs / "pytorch.gfx950.build-record.json").write_text(json.dumps(body))
    b = build_record("bazel-out/logs/images/pytorch.gfx950.log", tmp_path, digest)
    assert b["executed_runs"] == RUNS and b["runs_total"] == 7
    # not a list, not an int: left out, as any field the model cannot trust
    body.update(executed_runs="x", runs_total="7")
    (logs / "pytorch.gfx950.build-record.json").write_text(json.dumps(body))
    b = build_record("bazel-out/logs/images/pytorch.gfx950.log", tmp_path, digest)
    assert "executed_runs" not in b and "runs_total" not in b
