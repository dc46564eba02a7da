"""The report's escaping and its Content-Security-Policy, in Python: no browser.

The helpers of tools/report/render.py one by one (HTML text and attributes, JSON
in a <script>, a short digest, a size that is no number, the policy's hashes),
then a model with a hostile value in every field (tests/report/hostile.py)
rendered and read back by Python's HTML parser: no element, attribute or script
comes from a value, each value is there as text. test_hostile.py does the same
in chromium, with the model collected as `registry report` collects it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser

import pytest

from tests.report import hostile
from tools.report import render as r

MiB = 1 << 20
A = f"{hostile.TARGET}.{hostile.ARCH}"
B = f"{hostile.CHILD}.gfx950"
C = hostile.ATTR


def image(ident, parents=(), **extra):
    base = {
        "id": ident,
        "parents": list(parents),
        "digest": "sha256:" + "a" * 64,
        "size": 10 * MiB,
        "layers": 2,
        "budget_bytes": 20 * MiB,
        "budget_from": "targets.x.budget_mib",
        "shared_bytes": 0,
        "shared_layers": 0,
        "tags": [f"{hostile.REGISTRY}/{hostile.REPOSITORY}:{hostile.TAG}"],
        "build": {"seconds": 1.5, "staging_hit": False, "finished": None, "current": True},
        "published": None,
        "supply": None,
        "history": [],
    }
    base.update(extra)
    return base


def hostile_model():
    source = f"publish history, {hostile.TIME} (registry: {hostile.ERROR})"
    return {
        "title": hostile.TITLE,
        "generated": hostile.GENERATED,
        "registry": hostile.REGISTRY,
        "archs": [hostile.ARCH],
        "sources": {"published": "the registry", "history": f"2 records in {hostile.HISTORY_DIR}"},
        "notes": [f"{B}: parents {hostile.PARENT} are not in this report"],
        "images": [
            image(
                A,
                budget_from=hostile.BUDGET_FROM,
                published={"digest": hostile.DIGEST, "size": hostile.SIZE, "source": source},
                supply={"error": hostile.ERROR},
                history=[
                    {"time": "2026-11-01T00:00:00Z", "size": 9 * MiB, "digest": "sha256:1"},
                    {"time": hostile.TIME, "size": hostile.SIZE, "digest": hostile.DIGEST},
                ],
            ),
            image(
                B,
                parents=[A],
                published={"digest": hostile.REGISTRY_DIGEST, "size": 123, "source": "registry"},
                supply={"signatures": 1, "sboms": 0, "provenances": 0},
            ),
            image(
                C,
                published={
                    "digest": None,
                    "size": None,
                    "source": "registry",
                    "error": hostile.ERROR,
                },
                supply={"error": hostile.ERROR},
            ),
        ],
    }


class Page(HTMLParser):
    """A page as Python's HTML parser reads it: elements, attributes, text, scripts."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.elements: set[str] = set()
        self.handlers: list[str] = []
        self.attrs: list[str] = []
        self.text: list[str] = []
        self.scripts: list[tuple[dict, str]] = []
        self.styles: list[str] = []
        self.csp = None
        self._in: tuple[str, dict] | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.elements.add(tag)
        a = dict(attrs)
        self.handlers += [f"{tag}[{k}]" for k in a if k.startswith("on")]
        self.attrs += [v for v in a.values() if v]
        if tag == "meta" and a.get("http-equiv") == "Content-Security-Policy":
            self.csp = a["content"]
        if tag in ("script", "style"):
            self._in = (tag, a)

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        if self._in and self._in[0] == "script":
            self.scripts.append((self._in[1], data))
        elif self._in and self._in[0] == "style":
            self.styles.append(data)
        else:
            self.text.append(data)


def sha256_source(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def directives(policy: str) -> dict[str, list[str]]:
    out = {}
    for part in policy.split(";"):
        words = part.split()
        if words:
            out[words[0]] = words[1:]
    return out


# -- the helpers ----------------------------------------------------------------------


def test_esc_leaves_no_tag_and_no_quote():
    assert r.esc("<a href=\"x\" onclick='y'>&") == (
        "&lt;a href=&quot;x&quot; onclick=&#x27;y&#x27;&gt;&amp;"
    )
    for value in hostile.ALL.values():
        assert not set("<>\"'") & set(r.esc(value))


@pytest.mark.parametrize(
    "value",
    [
        *hostile.ALL.values(),
        "</script><script>alert(1)</script>",
        "</SCRIPT",
        "<!--<script>",
        "a\u2028b\u2029c",
        "&lt;",
        {"nested": ["</script>", "\u2028"]},
    ],
)
def test_script_json_cannot_end_or_bend_its_script(value):
    out = r.script_json(value)
    assert not set("<>&\u2028\u2029") & set(out)
    assert json.loads(out) == value  # the same value to JSON.parse


def test_csp_hash_is_the_specs():
    # the example of the CSP spec (w3.org/TR/CSP3, "hash-source")
    assert r.csp_hash("alert('Hello, world.');") == (
        "'sha256-qznLcsROx4GACP2dm0UCKCzCG+HiZ1guq6ZZDob/Tng='"
    )


def test_short_digest_and_a_size_that_is_no_number():
    assert r.short("sha256:" + "ab" * 32) == "ab" * 6
    assert r.short(None) == "—"
    assert r.short(12) == "12"  # anything a history line holds: text
    code = r.digest_code(hostile.DIGEST)
    assert "<img" not in code
    assert code == (f'<code title="{r.esc(hostile.DIGEST)}">&lt;img src=x o</code>')
    assert r.mib(hostile.SIZE) == f"{hostile.SIZE} (not a size)"
    assert r.mib(True) == "True (not a size)"
    assert r.mib(3 * MiB) == "3.0 MiB"


def test_a_size_that_is_no_number_is_left_off_the_plot():
    a = hostile_model()["images"][0]
    plot = r.sizes_plot(a)
    assert plot.count("<circle") == 2  # the numeric publish and this build
    assert f"<title>left off: {r.esc(hostile.TIME)}: {r.esc(r.mib(hostile.SIZE))}</title>" in plot
    assert "changed" in r.since(a) and r.esc(f"(published size: {hostile.SIZE}") in r.since(a)


# -- the page ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def page():
    text = r.render(hostile_model())
    return text, Page(text)


def test_the_policy_runs_the_pages_own_script_and_style_only(page):
    text, parsed = page
    assert parsed.csp, "no Content-Security-Policy"
    policy = directives(parsed.csp)
    assert "'unsafe-inline'" not in parsed.csp and "'unsafe-eval'" not in parsed.csp
    assert policy["default-src"] == ["'none'"]
    classic = [body for attrs, body in parsed.scripts if "type" not in attrs]
    assert len(classic) == 1 and len(parsed.styles) == 1
    assert policy["script-src"] == [sha256_source(classic[0])]
    assert policy["style-src"] == [sha256_source(parsed.styles[0])]
    assert policy["base-uri"] == ["'none'"]
    assert " style=" not in text  # a style attribute would need 'unsafe-inline'


def test_no_element_or_attribute_comes_from_a_value(page):
    _, parsed = page
    assert parsed.elements <= hostile.ELEMENTS, parsed.elements - hostile.ELEMENTS
    assert parsed.handlers == []
    assert [attrs.get("type", "classic") for attrs, _ in parsed.scripts] == [
        "application/json",
        "classic",
    ]


def test_every_value_is_on_the_page_as_text(page):
    _, parsed = page
    text, attrs = "\n".join(parsed.text), "\n".join(parsed.attrs)
    missing = [n for n, v in hostile.ALL.items() if v not in text and v not in attrs]
    assert missing == []


def test_the_pages_data_is_the_models_and_cannot_end_its_script(page):
    text, parsed = page
    data = [body for attrs, body in parsed.scripts if attrs.get("id") == "report-data"]
    assert len(data) == 1
    assert json.loads(data[0])["images"] == [A, B, C]
    inside = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', text)
    assert inside and not set("<>&") & set(inside.group(1))
