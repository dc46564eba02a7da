"""The report on a laptop (1400 x 900) and on a phone (390 x 844), in headless chromium.

A family shaped like the real one (16 images, arch-free sources, the wheels
and serving images, one image over its budget, one changed) is rendered and
opened at each size: the page never scrolls sideways, no element runs past
the right edge of the window (the graph and the plots scale to their box; a
wide table scrolls inside its own box, not the page), and on the phone the
table's rows are cards with what changed visible.
"""

from __future__ import annotations

import pytest

from tests.report import browser
from tests.report.test_render import MiB, image
from tools.report.render import render

SIZES = {"laptop": (1400, 900), "phone": (390, 844)}

# (name, parents) of a family shaped like images/catalog.toml's
FAMILY = [
    ("rocm-runtime.gfx950", []),
    ("base.gfx950", ["rocm-runtime.gfx950"]),
    ("pytorch-src", []),
    ("triton-wheel", ["base.gfx950"]),
    ("pytorch-wheel.gfx950", ["base.gfx950", "pytorch-src"]),
    ("pytorch.gfx950", ["base.gfx950", "pytorch-wheel.gfx950", "triton-wheel"]),
    ("torchvision-wheel.gfx950", ["pytorch.gfx950"]),
    ("runtime.gfx950", ["rocm-runtime.gfx950", "pytorch-wheel.gfx950", "triton-wheel"]),
    ("pytorch-test.gfx950", ["pytorch.gfx950", "pytorch-src"]),
    ("aiter-wheel.gfx950", ["pytorch.gfx950"]),
    ("cupy-wheel.gfx950", ["pytorch.gfx950"]),
    ("nixl-wheel.gfx950", ["pytorch.gfx950"]),
    ("vllm-wheel.gfx950", ["pytorch.gfx950", "aiter-wheel.gfx950"]),
    ("vllm.gfx950", ["runtime.gfx950", "vllm-wheel.gfx950", "nixl-wheel.gfx950"]),
    ("lmcache-wheel.gfx950", ["pytorch.gfx950"]),
    ("lmcache.gfx950", ["vllm.gfx950", "lmcache-wheel.gfx950"]),
]


# the parents each image copies files from and does not start FROM
COPIES = {"pytorch-src", "triton-wheel", "pytorch-wheel.gfx950", "vllm-wheel.gfx950",
          "nixl-wheel.gfx950", "lmcache-wheel.gfx950", "aiter-wheel.gfx950"}  # fmt: skip
UNSIGNED = {"signatures": 0, "sboms": 1, "provenances": 1}


def family_model(expected: dict | None = None) -> dict:
    images = []
    for n, (ident, parents) in enumerate(FAMILY):
        extra = {
            "size": (n + 1) * 1024 * MiB,
            # a wheel image is built FROM scratch: it starts from no parent
            "from": []
            if ident.split(".")[0].endswith("-wheel")
            else [p for p in parents if p not in COPIES],
            "supply": UNSIGNED,
        }
        if ident == "pytorch.gfx950":
            extra["size"] = 31 * 1024 * MiB  # over its budget
        if ident == "vllm.gfx950":
            extra["published"] = {"digest": "sha256:" + "e" * 64, "size": 20 * 1024 * MiB,
                                  "source": "registry"}  # fmt: skip
            extra["history"] = [
                {"time": f"2026-11-{d:02d}T00:00:00Z", "size": (18 + d) * 1024 * MiB,
                 "digest": "sha256:" + str(d % 10) * 64}
                for d in (1, 8, 15)
            ]  # fmt: skip
        images.append(image(ident, parents, budget=30 * 1024 * MiB, **extra))
    return {
        "title": "Family report: //images:push_default",
        "generated": "2026-12-06 12:00:00 UTC",
        "registry": "registry.example.internal:5000/rocm-pytorch-images/nightly",
        "archs": ["gfx950"],
        "sources": {"published": "the registry", "history": "3 records"},
        "notes": ["a note"],
        "expected": expected or {},
        "images": images,
    }


# What runs past the window's right edge: elements whose box ends right of it,
# unless a scrolling box of their own holds them (the table's wrapper).
OVERFLOW = """() => {
  const w = document.documentElement.clientWidth;
  const scrolls = e => {
    for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
      const s = getComputedStyle(p).overflowX;
      if (s === 'auto' || s === 'scroll') return true;
    }
    return false;
  };
  const name = e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
    + (typeof e.className === 'string' && e.className ? '.' + e.className.replace(/ /g, '.') : '');
  const cut = [];
  document.querySelectorAll('body *').forEach(e => {
    const r = e.getBoundingClientRect();
    if (r.width && r.right > w + 1 && !scrolls(e))
      cut.push(`${name(e)} ends at ${Math.round(r.right)} of ${w}`);
  });
  return {page: document.documentElement.scrollWidth, window: w, cut: cut.slice(0, 12)};
}"""


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    page = tmp_path_factory.mktemp("layout") / "report.html"
    page.write_text(render(family_model()), encoding="utf-8")
    return page


@pytest.mark.parametrize("size", SIZES)
def test_nothing_is_cut_and_the_page_does_not_scroll_sideways(page, size):
    facts = browser.inspect(page, probe=OVERFLOW, viewport=SIZES[size])
    assert browser.problems(facts, images=len(FAMILY)) == []
    seen = facts.probe
    assert seen["page"] <= seen["window"], seen
    assert seen["cut"] == [], seen


# The phone's table: rows as cards, the head row hidden, each cell labelled, what
# changed right under the image's name.
CARDS = """() => {
  const row = document.querySelector('tr.image[data-id="vllm.gfx950"]');
  const cell = c => row.querySelector('td.' + c).getBoundingClientRect();
  return {row: getComputedStyle(row).display,
    head: getComputedStyle(document.querySelector('tr.head')).display,
    label: getComputedStyle(row.querySelector('td.since'), '::before').content,
    order: [cell('name').top, cell('since').top, cell('num').top],
    changed: row.querySelector('td.since .badge').textContent,
    graph: document.querySelector('svg#family-graph').getBoundingClientRect().width,
    window: document.documentElement.clientWidth};
}"""


def test_on_a_phone_the_rows_are_cards_with_what_changed_first(page):
    facts = browser.inspect(page, probe=CARDS, viewport=SIZES["phone"])
    seen = facts.probe
    assert (seen["row"], seen["head"]) == ("flex", "none"), seen
    assert seen["label"] == '"since the last publish"', seen
    name, since, size = seen["order"]
    assert name < since < size, seen  # the name, then what changed, then the rest
    assert seen["changed"] == "changed"
    assert seen["graph"] <= seen["window"], seen  # the graph scales to its box


def test_on_a_laptop_the_table_stays_a_table(page):
    facts = browser.inspect(page, probe=CARDS, viewport=SIZES["laptop"])
    assert (facts.probe["row"], facts.probe["head"]) == ("table-row", "table-row")


EDGES = """() => Array.from(document.querySelectorAll('path.edge')).map(p => [
  p.dataset.from + '>' + p.dataset.to, p.dataset.kind, getComputedStyle(p).strokeDasharray])"""


def test_edges_tell_a_from_parent_from_one_it_only_copies_from(page):
    edges = {e: (kind, dash) for e, kind, dash in browser.inspect(page, probe=EDGES).probe}
    assert edges["base.gfx950>pytorch.gfx950"] == ("from", "none")
    kind, dash = edges["pytorch-wheel.gfx950>pytorch.gfx950"]
    assert kind == "copy" and dash != "none"
    assert edges["base.gfx950>triton-wheel"][0] == "copy"  # a wheel image: FROM scratch


BADGES = """() => Array.from(document.querySelectorAll(
  'tr.image[data-id="vllm.gfx950"] [data-kind]')).map(b => [b.dataset.kind, b.className])"""


@pytest.mark.parametrize(
    ("expected", "unsigned"),
    [({}, "badge none"), ({"signatures": True, "sboms": True}, "badge bad")],
)
def test_an_unsigned_image_is_red_only_when_the_push_signs(tmp_path, expected, unsigned):
    page = tmp_path / "report.html"
    page.write_text(render(family_model(expected)), encoding="utf-8")
    badges = dict(browser.inspect(page, probe=BADGES).probe)
    assert badges == {"signatures": unsigned, "sboms": "badge ok", "provenances": "badge ok"}
