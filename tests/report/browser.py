"""The family report in a real headless browser: Debian's chromium, driven by Playwright.

`inspect(page_file)` opens the page from disk and reads back what a reader sees:
the graph's nodes and edges with their laid-out boxes, the budget bars, the size
plots' points, the time bars, the cards, every console message, page error,
dialog (`alert()`) and network request. `problems(facts)` lists what is wrong
with it. The tests use both; `check_page` (the rehearsal's hook) prints them.

Playwright's own browsers are never downloaded: it launches /usr/bin/chromium
(the bootstrap tree's `chromium` package).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM = os.environ.get("REPORT_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

# Read in the page: boxes in CSS pixels of the viewport (scrolled to the top).
READ = """() => {
  const box = e => { const r = e.getBoundingClientRect();
    return {x: r.x, y: r.y, w: r.width, h: r.height}; };
  const svg = document.querySelector('svg#family-graph');
  const out = {ready: document.documentElement.getAttribute('data-ready'),
    graph: svg ? box(svg) : null, nodes: {}, edges: [], rows: [], bars: {}, points: {},
    times: [], cards: {}, changed: [], over: [], supply: {}};
  document.querySelectorAll('svg#family-graph g.node').forEach(g => {
    out.nodes[g.dataset.id] = {...box(g.querySelector('rect')),
      classes: Array.from(g.classList), text: g.textContent};
    if (g.classList.contains('changed')) out.changed.push(g.dataset.id);
    if (g.classList.contains('over')) out.over.push(g.dataset.id);
  });
  document.querySelectorAll('svg#family-graph path.edge').forEach(p => {
    const len = p.getTotalLength();
    const m = p.getScreenCTM();
    const at = t => { const q = p.getPointAtLength(t);
      return {x: q.x * m.a + q.y * m.c + m.e, y: q.x * m.b + q.y * m.d + m.f}; };
    out.edges.push({from: p.dataset.from, to: p.dataset.to, start: at(0), end: at(len)});
  });
  document.querySelectorAll('table#images tr.image').forEach(tr => out.rows.push(tr.dataset.id));
  document.querySelectorAll('.budget').forEach(b => {
    const fill = b.querySelector('.fill');
    out.bars[b.dataset.id] = {outer: box(b).w, fill: fill ? box(fill).w : null,
      share: b.dataset.share ? parseFloat(b.dataset.share) : null,
      classes: Array.from(b.classList)};
  });
  document.querySelectorAll('svg.sizes').forEach(s => {
    out.points[s.dataset.id] = Array.from(s.querySelectorAll('circle.point')).map(c => {
      const r = c.getBoundingClientRect();
      return {x: r.x, y: r.y, now: c.classList.contains('now')};
    });
  });
  document.querySelectorAll('svg#build-times rect.bar').forEach(r => out.times.push(
    {id: r.dataset.id, w: r.getBoundingClientRect().width, hit: r.classList.contains('hit')}));
  document.querySelectorAll('.card').forEach(c => {
    out.cards[c.dataset.card] = c.querySelector('b').textContent; });
  document.querySelectorAll('tr.image').forEach(tr => {
    out.supply[tr.dataset.id] = Array.from(tr.querySelectorAll('[data-kind]')).map(
      b => b.dataset.kind + ':' + (b.classList.contains('ok') ? 'yes' : 'no'));
  });
  return out;
}"""


@dataclass
class Facts:
    """What the browser shows of one report page."""

    url: str
    ready: str | None = None
    graph: dict | None = None
    nodes: dict = field(default_factory=dict)
    edges: list = field(default_factory=list)
    rows: list = field(default_factory=list)
    bars: dict = field(default_factory=dict)
    points: dict = field(default_factory=dict)
    times: list = field(default_factory=list)
    cards: dict = field(default_factory=dict)
    changed: list = field(default_factory=list)
    over: list = field(default_factory=list)
    supply: dict = field(default_factory=dict)
    console: list = field(default_factory=list)  # (type, text)
    errors: list = field(default_factory=list)  # uncaught page errors
    requests: list = field(default_factory=list)  # every URL the page asked for
    dialogs: list = field(default_factory=list)  # alert/confirm/prompt: (type, message)
    probe: object = None  # what ``inspect(probe=...)`` read


# The node with this data-id, whatever characters it holds (no selector built from it).
FIND_NODE = """id => Array.from(document.querySelectorAll('svg#family-graph g.node'))
  .findIndex(g => g.getAttribute('data-id') === id)"""


def _dialog(facts: Facts, dialog) -> None:
    facts.dialogs.append((dialog.type, dialog.message))
    dialog.dismiss()


def inspect(
    page_file: Path,
    hover: str | None = None,
    probe: str | None = None,
    viewport: tuple[int, int] = (1600, 1000),
) -> Facts:
    """Open ``page_file`` in chromium and read it; with ``hover``, hover that node first
    and also record which edges and rows it highlights (``Facts.cards['hover']``);
    with ``probe`` (a JS function), also its result on the loaded page (``Facts.probe``);
    ``viewport``: the window's width and height in CSS pixels."""
    from playwright.sync_api import sync_playwright

    url = page_file.absolute().as_uri()
    facts = Facts(url)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
            page.on("console", lambda m: facts.console.append((m.type, m.text)))
            page.on("pageerror", lambda e: facts.errors.append(str(e)))
            page.on("request", lambda r: facts.requests.append(r.url))
            page.on("dialog", lambda d: _dialog(facts, d))
            page.goto(url, wait_until="load")
            read = page.evaluate(READ)
            for key, value in read.items():
                setattr(facts, key, value)
            if probe:
                facts.probe = page.evaluate(probe)
            if hover:
                found = page.evaluate(FIND_NODE, hover)
                assert found >= 0, f"no graph node {hover!r} to hover"
                # its box (a long name's text runs past it, under the edges)
                page.locator("svg#family-graph g.node").nth(found).locator("rect").hover()
                facts.cards["hover"] = page.evaluate(
                    """() => ({edges: Array.from(document.querySelectorAll('path.edge.hl'))
                        .map(p => p.dataset.from + '>' + p.dataset.to),
                      rows: Array.from(document.querySelectorAll('tr.image.hl'))
                        .map(r => r.dataset.id)})"""
                )
        finally:
            browser.close()
    return facts


def problems(facts: Facts, images: int | None = None) -> list[str]:
    """Everything wrong with the page as shown: each a sentence naming what."""
    out = []
    bad_console = [f"{t}: {m}" for t, m in facts.console if t in ("error", "warning")]
    out += [f"console {m}" for m in bad_console]
    out += [f"page error: {e}" for e in facts.errors]
    out += [f"dialog ({t}): {m}" for t, m in facts.dialogs]
    out += [f"network request: {u}" for u in facts.requests if u != facts.url]
    if facts.ready != "1":
        out.append("the page's script did not run")
    if facts.graph is None:
        return [*out, "no svg#family-graph"]
    if images is not None and len(facts.nodes) != images:
        out.append(f"{len(facts.nodes)} graph nodes, want {images}")
    if sorted(facts.nodes) != sorted(facts.rows):
        out.append(
            f"graph nodes and table rows differ: {sorted(set(facts.nodes) ^ set(facts.rows))}"
        )
    g = facts.graph
    boxes = list(facts.nodes.items())
    for name, b in boxes:
        if b["w"] <= 0 or b["h"] <= 0:
            out.append(f"node {name} has no size")
        if b["x"] < g["x"] - 0.5 or b["x"] + b["w"] > g["x"] + g["w"] + 0.5:
            out.append(f"node {name} lies outside the graph")
    for k, (a, ba) in enumerate(boxes):
        for c, bc in boxes[k + 1 :]:
            if (
                ba["x"] < bc["x"] + bc["w"]
                and bc["x"] < ba["x"] + ba["w"]
                and ba["y"] < bc["y"] + bc["h"]
                and bc["y"] < ba["y"] + ba["h"]
            ):
                out.append(f"nodes {a} and {c} overlap")
    for e in facts.edges:
        parent, child = facts.nodes.get(e["from"]), facts.nodes.get(e["to"])
        if parent is None or child is None:
            out.append(f"edge {e['from']} -> {e['to']} names a missing node")
            continue
        if abs(e["start"]["x"] - (parent["x"] + parent["w"])) > 1.5 or not (
            parent["y"] - 1 <= e["start"]["y"] <= parent["y"] + parent["h"] + 1
        ):
            out.append(f"edge {e['from']} -> {e['to']} does not start at {e['from']}")
        if abs(e["end"]["x"] - child["x"]) > 1.5 or not (
            child["y"] - 1 <= e["end"]["y"] <= child["y"] + child["h"] + 1
        ):
            out.append(f"edge {e['from']} -> {e['to']} does not end at {e['to']}")
        if child["x"] <= parent["x"]:
            out.append(f"{e['to']} is not right of its parent {e['from']}")
    for name in facts.rows:
        bar = facts.bars.get(name)
        if bar is None:
            out.append(f"{name} has no budget bar")
        elif bar["share"] is not None:
            want = min(bar["share"], 1) * bar["outer"]
            if bar["fill"] is None or abs(bar["fill"] - want) > 1.5:
                out.append(
                    f"{name}'s budget bar shows {bar['fill']}px of {bar['outer']}, want {want:.1f}"
                )
        if not facts.points.get(name):
            out.append(f"{name} has no size plot points")
    return out
