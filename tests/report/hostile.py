"""Hostile values for every field of the report's model.

Each one tries to become markup (open a tag with an event handler), leave the
attribute it is put in, end the page's JSON <script> early or run a script of
its own; each names itself in its `alert(...)`. test_hostile.py puts them in a
catalogue's specs, a registry's answers and a publish history and collects the
model as `registry report` does; test_escape.py puts them straight in a model.
Standard library only (test_escape.py runs under a bare `python3 -m pytest`).
"""

from __future__ import annotations

TITLE = 'Family report </title><script>alert("title")</script>'
GENERATED = "2026-12-05<img src=x onerror=alert('generated')>"
REGISTRY = "127.0.0.1:9/ns\"><iframe src=x onload=alert('registry')>"
TARGET = 'rocm<svg onload=alert("target")>'  # a target name (the catalogue)
ARCH = "gfx<img src=x onerror=alert('arch')>"
# an id that would end the page's JSON <script> early or make the HTML parser
# swallow the page's own script (`<!--<script>` in a script element)
CHILD = "base<!--<script></script><script>alert('json')</script>"
ATTR = 'src" onmouseover="alert(\'attr\')" x="'  # leaves a double-quoted attribute, no `<`
REPOSITORY = 'repo"><script>alert("repository")</script>'
TAG = '1.0"><script>alert("tag")</script>'
DIGEST = 'sha256:<img src=x onerror=alert("digest")>'  # a publish history line's
REGISTRY_DIGEST = "<svg/onload=alert('registry digest')>"  # a registry's answer
TIME = '2026-11-02T00:00:00Z<script>alert("time")</script>'
SIZE = "12 MB<img src=x onerror=alert('size')>"  # a size that is not a number
ERROR = "HTTP 500 from 127.0.0.1:9: \"><img src=x onerror=alert('error')>"
BUDGET_FROM = 'targets.<b onclick=alert("budget")>x</b>.budget_mib'
PARENT = "<marquee onstart=alert('parent')>"  # a parent not in the report: a note
HISTORY_DIR = "hist<b onclick=alert('path')>ory"  # the publish history's directory

ALL = {
    name: value
    for name, value in globals().items()
    if name.isupper() and name != "ALL" and isinstance(value, str)
}

# What the page may be made of: an element of any other kind came from a value.
ELEMENTS = {
    *"html head meta title style body h1 h2 div span b i br code ul li".split(),
    *"table tbody tr th td script".split(),
    *"details summary ol".split(),  # the RUNs a build executed (test_runs_cell.py)
    *"svg g path rect text circle polyline line".split(),
}
