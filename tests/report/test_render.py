"""The report page in headless chromium: the DOM and layout a reader gets, not its text.

A small family (an arch-free root, a chain, a child of two parents, one image over
its budget, one changed since its last publish with three publishes of history) is
rendered by tools/report/render.py and opened in Debian's chromium through
Playwright; and pages broken on purpose are found broken by the same checks.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.report import browser
from tools.report import render as render_mod
from tools.report.render import render

MiB = 1 << 20


def image(ident, parents=(), size=10 * MiB, budget=20 * MiB, **extra):
    base = {
        "id": ident,
        "target": ident.split(".")[0],
        "arch": ident.split(".")[1] if "." in ident else None,
        "repository": ident.split(".")[0],
        "parents": list(parents),
        "digest": "sha256:" + format(abs(hash(ident)), "x").rjust(64, "0")[:64],
        "size": size,
        "layers": 3,
        "budget_bytes": budget,
        "budget_from": f"targets.{ident.split('.')[0]}.budget_mib",
        "shared_bytes": 4 * MiB if parents else 0,
        "shared_layers": 2 if parents else 0,
        "tags": [f"127.0.0.1:5000/ns/{ident.split('.')[0]}:1.0", "127.0.0.1:5000/ns/x:latest"],
        "build": {"seconds": 2.5, "staging_hit": False, "finished": "t", "current": True},
        "published": None,
        "supply": None,
        "history": [],
    }
    base.update(extra)
    return base


def model():
    changed = image(
        "lib.gfx950",
        parents=["base.gfx950"],
        size=12 * MiB,
        published={"digest": "sha256:" + "e" * 64, "size": 11 * MiB, "source": "registry"},
        supply={"signatures": 1, "sboms": 1, "provenances": 0},
        history=[
            {"time": "2026-11-01T00:00:00Z", "size": 9 * MiB, "digest": "sha256:" + "1" * 64},
            {"time": "2026-11-08T00:00:00Z", "size": 10 * MiB, "digest": "sha256:" + "2" * 64},
            {"time": "2026-11-15T00:00:00Z", "size": 11 * MiB, "digest": "sha256:" + "e" * 64},
        ],
    )
    return {
        "title": "Family report: //tests:fixture",
        "generated": "2026-12-05 12:00:00 UTC",
        "registry": "127.0.0.1:5000/ns",
        "archs": ["gfx950"],
        "sources": {"published": "the registry", "history": "3 records"},
        "notes": ["a note"],
        "images": [
            image("src", size=1 * MiB, budget=None),
            image("base.gfx950"),
            changed,
            image(
                "app.gfx950",
                parents=["lib.gfx950", "src"],
                size=30 * MiB,
                build={"seconds": 0.2, "staging_hit": True, "finished": "t", "current": True},
            ),
            image("wheel.gfx950", parents=["base.gfx950"], size=MiB // 2, build=None),
        ],
    }


@pytest.fixture(scope="module")
def facts(tmp_path_factory):
    page = tmp_path_factory.mktemp("page") / "report.html"
    page.write_text(render(model()), encoding="utf-8")
    return browser.inspect(page, hover="lib.gfx950")


def test_the_page_holds_up_in_the_browser(facts):
    assert browser.problems(facts, images=5) == []
    assert facts.console == []
    assert facts.requests == [facts.url]  # the page itself, nothing else


def test_the_graph_has_every_image_and_every_parent_edge(facts):
    assert sorted(facts.nodes) == ["app.gfx950", "base.gfx950", "lib.gfx950", "src", "wheel.gfx950"]
    edges = sorted((e["from"], e["to"]) for e in facts.edges)
    assert edges == [
        ("base.gfx950", "lib.gfx950"),
        ("base.gfx950", "wheel.gfx950"),
        ("lib.gfx950", "app.gfx950"),
        ("src", "app.gfx950"),
    ]


def test_children_sit_in_later_columns_than_their_parents(facts):
    x = {n: b["x"] for n, b in facts.nodes.items()}
    assert x["src"] == x["base.gfx950"]  # roots: the first column
    assert x["base.gfx950"] < x["lib.gfx950"] < x["app.gfx950"]
    assert x["wheel.gfx950"] == x["lib.gfx950"]  # depth 1 both
    y = {n: b["y"] for n, b in facts.nodes.items()}
    assert y["lib.gfx950"] < y["wheel.gfx950"]  # one column: the model's order, top down


def test_the_image_over_budget_is_marked_in_the_graph_and_its_bar_is_full(facts):
    assert facts.over == ["app.gfx950"]
    bar = facts.bars["app.gfx950"]
    assert "over" in bar["classes"]
    assert bar["share"] == pytest.approx(1.5)
    assert bar["fill"] == pytest.approx(bar["outer"], abs=1)
    half = facts.bars["base.gfx950"]
    assert half["fill"] == pytest.approx(half["outer"] / 2, abs=1)
    assert "none" in facts.bars["src"]["classes"]  # no budget: no fill
    assert facts.cards["over budget"] == "1"


def test_the_changed_image_and_its_size_history(facts):
    assert facts.changed == ["lib.gfx950"]
    assert facts.cards["changed since last publish"] == "1"
    points = facts.points["lib.gfx950"]
    assert len(points) == 4  # three publishes, then this build
    assert [p["now"] for p in points] == [False, False, False, True]
    xs = [p["x"] for p in points]
    assert xs == sorted(xs)
    ys = [p["y"] for p in points]
    assert ys == sorted(ys, reverse=True)  # 9, 10, 11, 12 MiB: each one higher
    assert all(len(v) == 1 for k, v in facts.points.items() if k != "lib.gfx950")


def test_time_per_image_has_a_bar_per_built_image_hits_apart(facts):
    bars = {t["id"]: t for t in facts.times}
    assert sorted(bars) == ["app.gfx950", "base.gfx950", "lib.gfx950", "src"]
    assert bars["app.gfx950"]["hit"] and not bars["lib.gfx950"]["hit"]
    assert bars["app.gfx950"]["w"] == pytest.approx(bars["lib.gfx950"]["w"] * 0.2 / 2.5, abs=1)


def test_signature_and_sbom_state(facts):
    assert facts.supply["lib.gfx950"] == ["signatures:yes", "sboms:yes", "provenances:no"]
    assert facts.supply["src"] == []  # never published


def test_hovering_a_node_lights_its_edges_and_its_row(facts):
    hover = facts.cards["hover"]
    assert sorted(hover["edges"]) == ["base.gfx950>lib.gfx950", "lib.gfx950>app.gfx950"]
    assert hover["rows"] == ["lib.gfx950"]


def broken(tmp_path, old, new):
    text = render(model())
    assert old in text
    page = tmp_path / "broken.html"
    page.write_text(text.replace(old, new, 1), encoding="utf-8")
    return browser.inspect(page)


def test_a_page_that_fetches_is_caught(tmp_path):
    # without the page's Content-Security-Policy the request goes out: recorded
    no_csp = render(model()).split('<meta http-equiv="Content-Security-Policy"', 1)
    text = no_csp[0] + no_csp[1].split(">", 1)[1]
    page = tmp_path / "fetches.html"
    page.write_text(text.replace("<body>", '<body><img src="http://127.0.0.1:9/x.png">'))
    found = browser.problems(browser.inspect(page))
    assert "network request: http://127.0.0.1:9/x.png" in found


def test_the_pages_policy_refuses_a_fetch_and_both_are_caught(tmp_path):
    # with it the browser asks and refuses (Content-Security-Policy): both are problems
    facts = broken(tmp_path, "<body>", '<body><img src="http://127.0.0.1:9/x.png">')
    found = browser.problems(facts)
    assert "network request: http://127.0.0.1:9/x.png" in found
    assert any(p.startswith("console error") and "Content Security Policy" in p for p in found)


def test_overlapping_nodes_and_a_detached_edge_are_caught(tmp_path):
    facts = broken(
        tmp_path,
        'data-id="wheel.gfx950" transform="translate(',
        'data-id="wheel.gfx950" transform="translate(5 5) translate(',
    )
    found = browser.problems(facts)
    assert any("overlap" in p for p in found) or any("does not end at wheel" in p for p in found)
    assert any("edge base.gfx950 -> wheel.gfx950 does not end at wheel.gfx950" in p for p in found)


def test_a_script_error_is_caught(tmp_path, monkeypatch):
    # the page's policy names its script by hash: break the script render embeds
    monkeypatch.setattr(
        render_mod,
        "JS",
        render_mod.JS.replace("(function () {", "(function () { undefinedCall();", 1),
    )
    page = tmp_path / "script-error.html"
    page.write_text(render(model()), encoding="utf-8")
    found = browser.problems(browser.inspect(page))
    assert any(p.startswith("page error:") and "undefinedCall" in p for p in found)
    assert "the page's script did not run" in found


def test_a_script_the_policy_does_not_name_is_refused_and_caught(tmp_path):
    # changed after rendering: its hash is not the policy's, chromium does not run it
    facts = broken(tmp_path, "(function () {", "(function () { undefinedCall();")
    found = browser.problems(facts)
    assert not any(p.startswith("page error:") for p in found)
    assert any(p.startswith("console error") and "Content Security Policy" in p for p in found)
    assert "the page's script did not run" in found


def test_check_page_says_ok_or_names_the_problems(tmp_path):
    good = tmp_path / "good.html"
    good.write_text(render(model()), encoding="utf-8")
    tool = os.environ["CHECK_PAGE_BIN"]
    ok = subprocess.run([tool, str(good), "--images", "5"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.startswith("report page ok: 5 images, 4 edges, 8 plot points, 4 time bars")
    wrong = subprocess.run(
        [tool, str(good), "--images", "6", "--built-images"], capture_output=True, text=True
    )
    assert wrong.returncode == 1
    assert wrong.stdout.splitlines() == [
        "check_page: 5 graph nodes, want 6",
        "check_page: wheel.gfx950 has no bar in the time plot",
    ]
