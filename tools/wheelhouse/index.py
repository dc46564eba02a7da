"""A PEP 503 simple index over a directory of wheels: pure rendering plus one writer.

Layout (OUT is the wheelhouse):

    OUT/<wheel files>
    OUT/simple/index.html               one link per project
    OUT/simple/<project>/index.html     one link per file: ../../<file>#sha256=<hex>

so that ``pip install --index-url file://OUT/simple torch`` finds the wheels.
Hrefs are relative, so the directory can be moved or served over HTTP as is.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from tools.wheelhouse.errors import WheelhouseError

# PEP 427 file name: {distribution}-{version}(-{build})?-{python}-{abi}-{platform}.whl
WHEEL_RE = re.compile(
    r"(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._]*[A-Za-z0-9])?)"
    r"-(?P<version>[A-Za-z0-9_.!+]+)"
    r"(?:-(?P<build>\d[A-Za-z0-9_.]*))?"
    r"-(?P<python>[A-Za-z0-9_.]+)-(?P<abi>[A-Za-z0-9_.]+)-(?P<platform>[A-Za-z0-9_.]+)\.whl"
)


def normalize(name: str) -> str:
    """PEP 503 normalized project name: runs of -_. become -, lowercase."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class WheelFile:
    filename: str
    sha256: str

    @property
    def project(self) -> str:
        return project_of(self.filename)

    @property
    def version(self) -> str:
        return parse_filename(self.filename)["version"]


def parse_filename(filename: str) -> dict[str, str]:
    """The PEP 427 fields of a wheel file name; a bad name is a user error."""
    m = WHEEL_RE.fullmatch(filename)
    if not m:
        raise WheelhouseError(
            f"{filename!r} is not a wheel file name (PEP 427: NAME-VERSION-PY-ABI-PLATFORM.whl)",
            "fix the image's /wheels/ contents",
        )
    return {k: v for k, v in m.groupdict().items() if v is not None}


def project_of(filename: str) -> str:
    return normalize(parse_filename(filename)["name"])


def _page(title: str, links: Iterable[str]) -> str:
    body = "\n".join(f"    {link}<br/>" for link in links)
    return (
        "<!DOCTYPE html>\n<html>\n  <head>\n"
        '    <meta name="pypi:repository-version" content="1.0">\n'
        f"    <title>{html.escape(title)}</title>\n  </head>\n  <body>\n"
        f"    <h1>{html.escape(title)}</h1>\n{body}\n  </body>\n</html>\n"
    )


def render_root(projects: Iterable[str]) -> str:
    """simple/index.html: one link per (normalized) project."""
    links = [f'<a href="{quote(p)}/">{html.escape(p)}</a>' for p in sorted(set(projects))]
    return _page("Simple index", links)


def render_project(project: str, files: Iterable[WheelFile]) -> str:
    """simple/<project>/index.html: a link per file, relative, with its sha256."""
    links = [
        f'<a href="../../{quote(f.filename)}#sha256={f.sha256}">{html.escape(f.filename)}</a>'
        for f in sorted(files, key=lambda f: f.filename)
    ]
    return _page(f"Links for {project}", links)


def group(files: Iterable[WheelFile]) -> Mapping[str, list[WheelFile]]:
    projects: dict[str, list[WheelFile]] = {}
    for f in files:
        projects.setdefault(f.project, []).append(f)
    return projects


def write_index(out: Path, files: Iterable[WheelFile]) -> Path:
    """Write OUT/simple/ for ``files`` (already in OUT); returns OUT/simple."""
    projects = group(files)
    simple = out / "simple"
    simple.mkdir(parents=True, exist_ok=True)
    (simple / "index.html").write_text(render_root(projects), encoding="utf-8")
    for project, project_files in projects.items():
        (simple / project).mkdir(exist_ok=True)
        (simple / project / "index.html").write_text(
            render_project(project, project_files), encoding="utf-8"
        )
    return simple
