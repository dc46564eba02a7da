"""The family report as one self-contained HTML page: inline CSS, SVG and a little JS.

``render(model)`` is pure: the model (tools/registry/report.py collects it) in,
the page's text out. Nothing on the page is fetched: no external style sheet,
script, font or image, so it opens the same from a CI artifact, a mail or a
disk with no network. Every value of the model is escaped for where it lands
(``esc`` for HTML and SVG text and attributes, ``script_json`` for the JSON in a
<script>), and the page's Content-Security-Policy (``policy``) runs no script
and applies no style but the page's own, named by the SHA-256 of their text.

The model::

    {"title": str, "generated": ISO time, "registry": str, "archs": [str],
     "sources": {"published": str, "history": str},   # where the data came from
     "notes": [str],
     "expected": {"signatures", "sboms", "provenances": bool},  # what the push attaches
     "images": [{
        "id": "pytorch.gfx950", "target", "arch" (or None), "repository",
        "parents": [ids], "from": [the parents whose layers it starts with] (optional),
        "digest", "size", "layers", "budget_bytes" (or None),
        "budget_from", "shared_bytes", "shared_layers", "tags": [str],
        "build": {"seconds", "staging_hit", "finished", "current",
                  "compile_hits", "compile_misses" (only when known),
                  "executed_runs": [{"stage", "step", "seconds", "why", "failed"?}],
                  "runs_total" (both only when known)} or None,
        "published": {"digest", "size", "source", "error"} or None,
        "supply": {"signatures", "sboms", "provenances", "error"} or None,
        "history": [{"time", "size", "digest"}],         # oldest first
     }]}

Everything a test or a reader looks for has a stable hook: the graph is
``svg#family-graph`` with ``g.node[data-id]`` and ``path.edge[data-from][data-to]``
(``[data-kind]``: ``from``, ``copy`` or ``parent``), the table's cells ``td[data-label]``
(cards below 600 px),
budget bars ``.budget[data-id]`` (``.over`` past the budget), the size plots
``svg.sizes[data-id]`` with one ``circle.point`` per publish (and the current
build), the time plot ``svg#build-times`` with one ``rect.bar`` per image, the
compiler cache's hit rate next to a build's seconds ``span.compile[data-hits][data-misses]``,
the RUNs that executed in it ``details.runs[data-ran]`` (one ``li`` per RUN: stage, step,
why; ``span.runs[data-ran="0"]`` when all came from BuildKit's cache).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
from collections.abc import Mapping, Sequence

MiB = 1 << 20

NODE_W, NODE_H, COL_GAP, ROW_GAP, PAD = 190, 46, 70, 14, 20

CSS = """
:root { --fg:#1d2330; --mute:#667085; --line:#d0d5dd; --ok:#12805c; --warn:#b54708;
  --bad:#c01048; --hit:#2e90fa; --build:#7a5af8; --bg:#fcfcfd; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg);
  margin: 0; padding: 20px 28px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; }
.meta { color: var(--mute); }
.cards { display: flex; gap: 12px; flex-wrap: wrap; margin: 14px 0; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 8px 14px; background: #fff; }
.card b { display: block; font-size: 20px; }
.scroll { overflow-x: auto; border: 1px solid var(--line); border-radius: 8px; background: #fff; }
svg text { font: 12px system-ui, sans-serif; fill: var(--fg); }
.node rect { fill: #fff; stroke: #98a2b3; rx: 6; }
.node.over rect { stroke: var(--bad); stroke-width: 2; }
.node.changed rect { fill: #fff8e6; }
.node.hl rect, tr.hl { outline: 2px solid var(--hit); }
.node .sub { fill: var(--mute); font-size: 11px; }
.edge { fill: none; stroke: #98a2b3; stroke-width: 1.3; }
.edge.hl { stroke: var(--hit); stroke-width: 2.4; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { border-bottom: 1px solid var(--line); padding: 6px 8px; text-align: left;
  vertical-align: top; }
th { font-size: 12px; color: var(--mute); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
code { font-size: 12px; }
.tags code { display: block; }
.budget { position: relative; width: 160px; height: 14px; background: #eef2f6;
  border-radius: 7px; overflow: hidden; }
.budget svg { display: block; }
.budget .fill { fill: var(--ok); }
.budget.near .fill { fill: var(--warn); } .budget.over .fill { fill: var(--bad); }
.budget.none { background: repeating-linear-gradient(45deg,#eef2f6,#eef2f6 4px,#fff 4px,#fff 8px); }
span.compile { white-space: nowrap; }
details.runs summary { cursor: pointer; white-space: nowrap; }
details.runs ol { margin: 4px 0; padding-left: 20px; max-width: 560px; font-size: 12px; }
.badge { display: inline-block; border-radius: 10px; padding: 0 8px; font-size: 12px;
  border: 1px solid var(--line); white-space: nowrap; }
.badge.ok { color: var(--ok); border-color: var(--ok); }
.badge.bad { color: var(--bad); border-color: var(--bad); }
.badge.warn { color: var(--warn); border-color: var(--warn); }
.badge.hit { color: var(--hit); border-color: var(--hit); }
.sizes .line { fill: none; stroke: var(--build); stroke-width: 1.5; }
.sizes .point { fill: var(--build); } .sizes .point.now { fill: var(--bad); }
.sizes .cap { stroke: var(--bad); stroke-dasharray: 3 2; }
#build-times .bar { fill: var(--build); } #build-times .bar.hit { fill: var(--hit); }
.legend span { margin-right: 14px; } .legend i { display: inline-block; width: 10px;
  height: 10px; margin-right: 4px; }
.legend i.build { background: var(--build); } .legend i.hit { background: var(--hit); }
ul.notes { color: var(--mute); }
svg#family-graph, svg#build-times { display: block; max-width: 100%; height: auto; }
.edge.copy { stroke-dasharray: 5 4; }
.legend i.from, .legend i.copy { width: 22px; height: 0; border-top: 2px solid #98a2b3;
  vertical-align: middle; }
.legend i.copy { border-top-style: dashed; }
@media (max-width: 600px) {
  body { padding: 12px; }
  .scroll.rows { overflow-x: visible; border: 0; background: none; }
  table#images, table#images tbody, table#images td { display: block; width: 100%; }
  table#images tr.head { display: none; }
  table#images tr.image { display: flex; flex-direction: column; margin: 0 0 12px;
    border: 1px solid var(--line); border-radius: 8px; background: #fff; }
  table#images td { border: 0; padding: 4px 12px; text-align: left; }
  table#images td.name { order: -2; } table#images td.since { order: -1; }
  table#images td::before { content: attr(data-label); display: block; font-size: 11px;
    color: var(--mute); font-weight: 600; }
  table#images td.name::before { content: none; }
  code { overflow-wrap: anywhere; }
}
"""

JS = """
(function () {
  function all(sel) { return Array.prototype.slice.call(document.querySelectorAll(sel)); }
  function mark(id, on) {
    all('[data-id]').forEach(function (e) {
      if (e.getAttribute('data-id') === id) { e.classList.toggle('hl', on); }
    });
    all('path.edge').forEach(function (p) {
      if (p.getAttribute('data-from') === id || p.getAttribute('data-to') === id) {
        p.classList.toggle('hl', on);
      }
    });
  }
  all('g.node, tr.image').forEach(function (e) {
    var id = e.getAttribute('data-id');
    e.addEventListener('mouseenter', function () { mark(id, true); });
    e.addEventListener('mouseleave', function () { mark(id, false); });
  });
  all('g.node').forEach(function (g) {
    g.addEventListener('click', function () {
      var row = document.getElementById('row-' + g.getAttribute('data-id'));
      if (row) { row.scrollIntoView({block: 'center'}); }
    });
  });
  document.documentElement.setAttribute('data-ready', '1');
})();
"""


# -- escaping and the page's policy ------------------------------------------------
#
# Every value of the model is data, whoever wrote it: names, tags and archs come
# from the catalogue, digests, sizes, times and errors from the registry and the
# publish history (a file anyone may append to when it is a shared directory).
# Each goes into the page through one of these, for where it lands; the page's
# policy runs no script and applies no style but its own (hashes, no
# 'unsafe-inline'), so a value that slipped through would still not run.


def esc(text: object) -> str:
    """Text for HTML (and SVG) text and for a double-quoted attribute: `& < > " '` as
    character references, so a value can neither open a tag nor leave its attribute."""
    return html.escape(str(text), quote=True)


# JSON inside <script>: `<`, `>` and `&` never literal (no `</script>`, no `<!--`
# that would change how the element ends), nor U+2028/2029.
_SCRIPT_JSON = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def script_json(value: object) -> str:
    """``value`` as JSON to put between `<script type="application/json">` and
    `</script>`: the same value to JSON.parse, no character the HTML parser reads."""
    return json.dumps(value, ensure_ascii=True).translate(_SCRIPT_JSON)


def csp_hash(text: str) -> str:
    """The policy's source for an inline <script> or <style> element of exactly ``text``."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def policy(script: str, style: str) -> str:
    """The page's Content-Security-Policy: nothing from anywhere, and nothing inline but
    the page's own <script> and <style>, by the hash of their exact text (an injected
    <script>, <style>, style="" or on...="" is refused; no 'unsafe-inline')."""
    return (
        f"default-src 'none'; script-src {csp_hash(script)}; style-src {csp_hash(style)};"
        " base-uri 'none'; form-action 'none'"
    )


def is_number(n: object) -> bool:
    """A size or share the page can compute with (a history line may hold anything)."""
    return isinstance(n, int | float) and not isinstance(n, bool) and math.isfinite(n)


def mib(n: object) -> str:
    if n is None:
        return "—"
    if not is_number(n):
        return f"{n} (not a size)"
    if abs(n) < MiB:
        return f"{n / 1024:,.1f} KiB"
    return f"{n / MiB:,.1f} MiB"


def signed_mib(n: int) -> str:
    return ("+" if n > 0 else "-" if n < 0 else "±") + mib(abs(n))


def short(digest: object) -> str:
    """A digest's first 12 hex digits, as text (escape it: it may be anything)."""
    return str(digest).removeprefix("sha256:")[:12] if digest else "—"


def digest_code(digest: object) -> str:
    """A digest as HTML: its short form, the whole one on hover; both escaped."""
    if not digest:
        return "<code>—</code>"
    return f'<code title="{esc(digest)}">{esc(short(digest))}</code>'


# -- the graph ------------------------------------------------------------------


def layout(images: Sequence[Mapping]) -> dict[str, tuple[float, float]]:
    """Top-left corner of each node: columns by depth (longest path from a root),
    rows in the model's order within a column."""
    ids = [i["id"] for i in images]
    parents = {i["id"]: [p for p in i["parents"] if p in ids] for i in images}
    depth: dict[str, int] = {}

    def d(n: str, seen: tuple[str, ...] = ()) -> int:
        if n not in depth:
            if n in seen:  # a cycle cannot come from the catalogue; do not loop on one
                return 0
            depth[n] = 1 + max((d(p, (*seen, n)) for p in parents[n]), default=-1)
        return depth[n]

    rows: dict[int, int] = {}
    out = {}
    for n in ids:
        col = d(n)
        row = rows.get(col, 0)
        rows[col] = row + 1
        out[n] = (PAD + col * (NODE_W + COL_GAP), PAD + row * (NODE_H + ROW_GAP))
    return out


def graph(images: Sequence[Mapping]) -> str:
    pos = layout(images)
    width = max((x for x, _ in pos.values()), default=0) + NODE_W + PAD
    height = max((y for _, y in pos.values()), default=0) + NODE_H + PAD
    edges, nodes = [], []
    for i in images:
        for p in i["parents"]:
            if p not in pos:
                continue
            (px, py), (cx, cy) = pos[p], pos[i["id"]]
            x1, y1, x2, y2 = px + NODE_W, py + NODE_H / 2, cx, cy + NODE_H / 2
            mid = (x1 + x2) / 2
            kind, how = edge_kind(i, p)
            edges.append(
                f'<path class="edge {kind}" data-from="{esc(p)}" data-to="{esc(i["id"])}"'
                f' data-kind="{kind}"'
                f' d="M{x1:.1f},{y1:.1f} C{mid:.1f},{y1:.1f} {mid:.1f},{y2:.1f} {x2:.1f},{y2:.1f}">'
                f"<title>{esc(p)} → {esc(i['id'])}: {esc(how)}</title></path>"
            )
    for i in images:
        x, y = pos[i["id"]]
        classes = ["node"]
        if over(i):
            classes.append("over")
        if changed(i):
            classes.append("changed")
        sub = mib(i["size"])
        if i.get("budget_bytes"):
            sub += f" · {100 * i['size'] / i['budget_bytes']:.0f}% of budget"
        nodes.append(
            f'<g class="{" ".join(classes)}" data-id="{esc(i["id"])}"'
            f' transform="translate({x},{y})">'
            f'<rect width="{NODE_W}" height="{NODE_H}"></rect>'
            f'<text x="8" y="18">{esc(i["id"])}</text>'
            f'<text class="sub" x="8" y="36">{esc(sub)}</text>'
            f"<title>{esc(i['id'])}: {esc(sub)}</title></g>"
        )
    return (
        f'<svg id="family-graph" xmlns="http://www.w3.org/2000/svg" width="{width}"'
        f' height="{height}" viewBox="0 0 {width} {height}" role="img"'
        f' aria-label="the family: parents to children">'
        + "".join(edges)
        + "".join(nodes)
        + "</svg>"
    )


def edge_kind(i: Mapping, parent: str) -> tuple[str, str]:
    """("from", ...) when ``i`` starts from ``parent``'s layers, ("copy", ...) when it only
    copies files from it, ("parent", ...) when the model does not say (``from``: the
    parents whose layers ``i`` starts with, tools/registry/report.py)."""
    starts = i.get("from")
    if not isinstance(starts, list):
        return "parent", "a parent"
    if parent in starts:
        return "from", "FROM: shares its layers"
    return "copy", "copies files from it (COPY --from), shares no layers"


# -- per image ------------------------------------------------------------------


def over(i: Mapping) -> bool:
    return bool(i.get("budget_bytes")) and i["size"] > i["budget_bytes"]


def changed(i: Mapping) -> bool:
    p = i.get("published")
    return bool(p and p.get("digest") and p["digest"] != i["digest"])


def budget_bar(i: Mapping) -> str:
    limit = i.get("budget_bytes")
    if not limit:
        return f'<div class="budget none" data-id="{esc(i["id"])}" title="no budget"></div>'
    share = i["size"] / limit
    state = "over" if share > 1 else "near" if share > 0.9 else "ok"
    title = f"{mib(i['size'])} of {mib(limit)} ({i.get('budget_from') or 'budget'})"
    # an SVG bar, not a style="width: ...": the policy applies no inline style attribute
    return (
        f'<div class="budget {state}" data-id="{esc(i["id"])}" data-share="{share:.4f}"'
        f' title="{esc(title)}"><svg width="100%" height="100%">'
        f'<rect class="fill" width="{min(share, 1) * 100:.1f}%" height="100%"></rect></svg>'
        f"</div><div>{100 * share:.0f}% of {esc(mib(limit))}</div>"
    )


def shared(i: Mapping) -> str:
    if not i["parents"]:
        return "—"
    own = i["size"] - i["shared_bytes"]
    return (
        f"{mib(i['shared_bytes'])} in {i['shared_layers']} of {i['layers']} layers; own {mib(own)}"
    )


def since(i: Mapping) -> str:
    p = i.get("published")
    if not p:
        return '<span class="badge">never published</span>'
    if p.get("error"):
        return f'<span class="badge warn" title="{esc(p["error"])}">unknown</span>'
    if not p.get("digest"):
        return f'<span class="badge">not in {esc(p.get("source", "registry"))}</span>'
    where = esc(p.get("source", ""))
    if p["digest"] == i["digest"]:
        return f'<span class="badge ok">unchanged</span> {digest_code(i["digest"])} ({where})'
    delta = ""
    if is_number(p.get("size")):
        delta = f" {signed_mib(i['size'] - p['size'])}"
    elif p.get("size") is not None:
        delta = f" (published size: {mib(p['size'])})"
    return (
        f'<span class="badge warn">changed</span>{esc(delta)}<br>'
        f"{digest_code(p['digest'])} → {digest_code(i['digest'])} ({where})"
    )


def compile_counts(b: Mapping) -> tuple[int, int] | None:
    """The compiler cache's (hits, misses) of a build record, None without compiles."""
    hits, misses = b.get("compile_hits"), b.get("compile_misses")
    if not all(type(n) is int and n >= 0 for n in (hits, misses)) or not hits + misses:
        return None
    return hits, misses


def compile_rate(hits: int, misses: int) -> str:
    """`97.6 % hits`: hits per compile in per cent, one decimal rounded half up (as
    docker/scripts/build-env.sh prints it)."""
    tenths = (2000 * hits + hits + misses) // (2 * (hits + misses))
    return f"{tenths // 10}.{tenths % 10} % hits"


def compile_note(b: Mapping) -> str:
    """` · compile 97.6 % hits (812/832)` after a build's seconds, or nothing."""
    counts = compile_counts(b)
    if not counts:
        return ""
    hits, misses = counts
    text = f"compile {compile_rate(hits, misses)} ({hits}/{hits + misses})"
    return (
        f' · <span class="compile" data-hits="{esc(hits)}" data-misses="{esc(misses)}"'
        f' title="the compiler cache in the compiling steps">{esc(text)}</span>'
    )


def runs_note(b: Mapping) -> str:
    """The RUNs a BuildKit build executed (the record's `executed_runs`, from
    tools/imagebuild/executed.py): ` · 0 of 7 RUNs ran (all cached)`, or how many
    ran with each one's stage, step, why and seconds in a <details>; nothing for a
    staging hit (its badge says it) or a record without the list."""
    runs = b.get("executed_runs")
    if b.get("staging_hit") or not isinstance(runs, list):
        return ""
    total = b.get("runs_total")
    of = f" of {total}" if type(total) is int and total >= len(runs) else ""
    if not runs:
        return f' · <span class="runs" data-ran="0">0{esc(of)} RUNs ran (all cached)</span>'
    items = []
    for r in runs:
        if not isinstance(r, Mapping):
            items.append(f"<li>{esc(r)}</li>")
            continue
        secs = r.get("seconds")
        took = "failed" if r.get("failed") is True else f"{secs:.1f} s" if is_number(secs) else "?"
        items.append(
            f"<li><b>[{esc(r.get('stage'))}]</b> <code>{esc(r.get('step'))}</code>:"
            f" {esc(r.get('why'))} ({esc(took)})</li>"
        )
    return (
        f' <details class="runs" data-ran="{len(runs)}"><summary>{len(runs)}{esc(of)}'
        f" RUN{'' if len(runs) == 1 and not of else 's'} ran</summary>"
        f"<ol>{''.join(items)}</ol></details>"
    )


def build_cell(i: Mapping) -> str:
    b = i.get("build")
    if not b:
        return '<span class="badge">no record</span>'
    kind = (
        '<span class="badge hit">staging hit</span>'
        if b["staging_hit"]
        else '<span class="badge">BuildKit</span>'
    )
    stale = "" if b.get("current", True) else ' <span class="badge warn">older build</span>'
    return f"{b['seconds']:.2f} s{compile_note(b)} {kind}{stale}{runs_note(b)}"


def supply_cell(i: Mapping, expected: Mapping | None = None) -> str:
    """The published digest's signatures, SBOMs and provenance: green when attached; a
    missing one red only when ``expected`` says the push attaches it (``--sign``: all three;
    ``--attest``: SBOM and provenance), else grey."""
    expected = expected or {}
    s = i.get("supply")
    if not s:
        return '<span class="badge">not published</span>'
    if s.get("error"):
        return f'<span class="badge warn" title="{esc(s["error"])}">unknown</span>'
    parts = []
    for key, yes, no in (
        ("signatures", "signed", "unsigned"),
        ("sboms", "SBOM", "no SBOM"),
        ("provenances", "provenance", "no provenance"),
    ):
        n = s.get(key, 0)
        state = "ok" if n else "bad" if expected.get(key) else "none"
        parts.append(f'<span class="badge {state}" data-kind="{key}">{yes if n else no}</span>')
    return " ".join(parts)


def sizes_plot(i: Mapping) -> str:
    """Sizes over the last publishes, then the current build (red); a publish whose
    size is not a number is left off the plot and named in its title."""
    history = i.get("history", [])
    points = [(h["time"], h["size"]) for h in history if is_number(h["size"])]
    points.append(("this build", i["size"]))
    odd = "; ".join(f"{h['time']}: {mib(h['size'])}" for h in history if not is_number(h["size"]))
    note = f"<title>left off: {esc(odd)}</title>" if odd else ""
    w, h, pad = 180, 46, 5
    top = max([s for _, s in points] + [i.get("budget_bytes") or 0]) or 1
    step = (w - 2 * pad) / max(len(points) - 1, 1)
    xy = [(pad + k * step, h - pad - (h - 2 * pad) * s / top) for k, (_, s) in enumerate(points)]
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
    cap = ""
    if i.get("budget_bytes"):
        y = h - pad - (h - 2 * pad) * i["budget_bytes"] / top
        cap = f'<line class="cap" x1="0" x2="{w}" y1="{y:.1f}" y2="{y:.1f}"></line>'
    dots = "".join(
        f'<circle class="point{" now" if k == len(xy) - 1 else ""}" cx="{x:.1f}" cy="{y:.1f}"'
        f' r="3"><title>{esc(t)}: {esc(mib(s))}</title></circle>'
        for k, ((x, y), (t, s)) in enumerate(zip(xy, points, strict=True))
    )
    return (
        f'<svg class="sizes" data-id="{esc(i["id"])}" xmlns="http://www.w3.org/2000/svg"'
        f' width="{w}" height="{h}" viewBox="0 0 {w} {h}">{note}{cap}'
        f'<polyline class="line" points="{line}"></polyline>{dots}</svg>'
    )


def times_plot(images: Sequence[Mapping]) -> str:
    """One bar per image: the seconds its last build took (blue: a staging hit), with
    the compiler cache's hit rate where its compiling steps printed one."""
    rows = [i for i in images if i.get("build")]
    label_w, bar_w, row_h = 200, 420, 18
    # room right of the longest bar for its seconds, and the compile hit rate if any
    room = 230 if any(compile_counts(i["build"]) for i in rows) else 80
    top = max((i["build"]["seconds"] for i in rows), default=0) or 1
    height = PAD + row_h * max(len(rows), 1) + PAD
    parts = []
    for k, i in enumerate(rows):
        b = i["build"]
        y = PAD + k * row_h
        w = max(bar_w * b["seconds"] / top, 1)
        counts = compile_counts(b)
        label = f"{b['seconds']:.2f} s"
        if counts:
            label += f" · compile {compile_rate(*counts)}"
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 13}" text-anchor="end">{esc(i["id"])}</text>'
            f'<rect class="bar{" hit" if b["staging_hit"] else ""}" data-id="{esc(i["id"])}"'
            f' x="{label_w}" y="{y + 3}" width="{w:.1f}" height="{row_h - 6}">'
            f"<title>{esc(i['id'])}: {esc(label)}</title></rect>"
            f'<text x="{label_w + w + 6:.1f}" y="{y + 13}">{esc(label)}</text>'
        )
    if not rows:
        parts.append(f'<text x="{PAD}" y="{PAD + 12}">no build records</text>')
    width = label_w + bar_w + room
    return (
        f'<svg id="build-times" xmlns="http://www.w3.org/2000/svg" width="{width}"'
        f' height="{height}" viewBox="0 0 {width} {height}">' + "".join(parts) + "</svg>"
    )


COLUMNS = [
    ("name", "image"),
    ("num", "size"),
    ("budget", "budget"),
    ("shared", "shared with parents"),
    ("since", "since the last publish"),
    ("plot", "sizes over publishes"),
    ("build", "last build"),
    ("supply", "signature / SBOM"),
    ("tags", "tags"),
]


def table(images: Sequence[Mapping], expected: Mapping | None = None) -> str:
    head = '<tr class="head">' + "".join(f"<th>{esc(t)}</th>" for _, t in COLUMNS) + "</tr>"
    rows = []
    for i in images:
        tags = "".join(f"<code>{esc(t)}</code>" for t in i["tags"])
        cells = [
            f"<b>{esc(i['id'])}</b><br>{digest_code(i['digest'])}",
            f"{esc(mib(i['size']))}<br>{esc(i['layers'])} layers",
            budget_bar(i),
            esc(shared(i)),
            since(i),
            sizes_plot(i),
            build_cell(i),
            supply_cell(i, expected),
            tags,
        ]
        rows.append(
            f'<tr class="image" id="row-{esc(i["id"])}" data-id="{esc(i["id"])}">'
            + "".join(
                f'<td class="{cls}" data-label="{esc(title)}">{cell}</td>'
                for (cls, title), cell in zip(COLUMNS, cells, strict=True)
            )
            + "</tr>"
        )
    return f'<table id="images">{head}{"".join(rows)}</table>'


def cards(images: Sequence[Mapping]) -> str:
    total = sum(i["size"] for i in images)
    built = [i for i in images if i.get("build")]
    values = [
        ("images", str(len(images))),
        ("total size", mib(total)),
        ("over budget", str(sum(over(i) for i in images))),
        ("changed since last publish", str(sum(changed(i) for i in images))),
        ("staging hits", f"{sum(bool(i['build']['staging_hit']) for i in built)}/{len(built)}"),
        ("build time (last builds)", f"{sum(i['build']['seconds'] for i in built):.1f} s"),
    ]
    return (
        '<div class="cards">'
        + "".join(
            f'<div class="card" data-card="{esc(k)}">{esc(k)}<b>{esc(v)}</b></div>'
            for k, v in values
        )
        + "</div>"
    )


def render(model: Mapping) -> str:
    images = model["images"]
    notes = "".join(f"<li>{esc(n)}</li>" for n in model.get("notes", []))
    sources = model.get("sources", {})
    csp = policy(JS, CSS)  # of the very texts below
    data = script_json({"images": [i["id"] for i in images], "generated": model.get("generated")})
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{esc(csp)}">
<title>{esc(model["title"])}</title><style>{CSS}</style></head>
<body>
<h1>{esc(model["title"])}</h1>
<div class="meta">generated {esc(model.get("generated", ""))} · registry
<code>{esc(model.get("registry", ""))}</code> · archs {esc(", ".join(model.get("archs", [])))}</div>
<div class="meta">The figures below describe the image each target builds now (its
descriptor) and the last run of each image's build action (its build record), which
may be an earlier Bazel run than this one for an image this run found up to date.</div>
{cards(images)}
<h2>The family</h2>
<div class="meta legend">parents → children:
<span><i class="from"></i>FROM: the child starts from the parent's layers</span>
<span><i class="copy"></i>copies files from it (COPY --from), shares no layers</span>
red border: over budget; yellow: changed since the last publish. Hover a node to see its
edges and row.</div>
<div class="scroll">{graph(images)}</div>
<h2>Images</h2>
<div class="meta">size: compressed layers + config, as the registry stores it. Last publish:
{esc(sources.get("published", ""))}. Publish history: {esc(sources.get("history", ""))}.</div>
<div class="scroll rows">{table(images, model.get("expected"))}</div>
<h2>Time per image</h2>
<div class="meta legend"><span><i class="build"></i>built by BuildKit</span>
<span><i class="hit"></i>staging hit</span> (the last run of each image's
build action)</div>
<div class="scroll">{times_plot(images)}</div>
{f'<h2>Notes</h2><ul class="notes">{notes}</ul>' if notes else ""}
<script type="application/json" id="report-data">{data}</script>
<script>{JS}</script>
</body></html>
"""
