"""The rooms of tools/ depend one way: no package cycle, and tools/oci at the bottom.

A package is a top-level folder of tools/ (or a module beside them, such as
tools/daemon.py). Every import counts, wherever it stands: at the top of a
module, inside a function (a lazy import is still a dependency), or under
TYPE_CHECKING.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from itertools import pairwise
from pathlib import Path

TOOLS = Path("tools")  # the test's working directory is the workspace (or its runfiles)
LOWEST = "oci"

Edges = dict[str, dict[str, list[str]]]  # package -> imported package -> where ("file:line")


def _package(tools: Path, path: Path) -> str:
    first = path.relative_to(tools).parts[0]
    return first.removesuffix(".py")


def _modules(tools: Path, path: Path, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The dotted modules ``node`` names, relative imports made absolute."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        parts = ["tools", *path.relative_to(tools).parent.parts]
        base = parts[: len(parts) - (node.level - 1)]
    else:
        base = []
    module = [*base, *(node.module.split(".") if node.module else [])]
    # `from tools import daemon` names tools.daemon; `from tools.x import f` names tools.x
    return [".".join([*module, alias.name]) for alias in node.names] + [".".join(module)]


def import_graph(tools: Path) -> Edges:
    """Package -> the other packages of ``tools`` it imports, with where."""
    packages = {_package(tools, p) for p in tools.iterdir() if p.is_dir() or p.suffix == ".py"}
    edges: Edges = defaultdict(lambda: defaultdict(list))
    for path in sorted(tools.rglob("*.py")):
        source = _package(tools, path)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for module in _modules(tools, path, node):
                parts = module.split(".")
                if parts[0] == "tools" and len(parts) > 1 and parts[1] in packages:
                    if parts[1] != source:
                        where = f"{path}:{node.lineno}"
                        if where not in edges[source][parts[1]]:
                            edges[source][parts[1]].append(where)
    return edges


def find_cycle(edges: Edges) -> list[str]:
    """One cycle of packages, first package repeated at the end ([] if there is none)."""
    state: dict[str, str] = {}  # "open" while on the path, "done" after
    path: list[str] = []

    def visit(package: str) -> list[str]:
        state[package] = "open"
        path.append(package)
        for target in sorted(edges.get(package, {})):
            if state.get(target) == "open":
                return [*path[path.index(target) :], target]
            if target not in state and (cycle := visit(target)):
                return cycle
        path.pop()
        state[package] = "done"
        return []

    for package in sorted(edges):
        if package not in state and (cycle := visit(package)):
            return cycle
    return []


def describe(edges: Edges, cycle: list[str]) -> str:
    steps = [f"  {a} -> {b} ({', '.join(edges[a][b])})" for a, b in pairwise(cycle)]
    return f"package cycle {' -> '.join(cycle)}:\n" + "\n".join(steps)


def test_the_packages_of_tools_form_no_cycle():
    edges = import_graph(TOOLS)
    assert edges, f"no imports read under {TOOLS.resolve()}"
    cycle = find_cycle(edges)
    assert not cycle, describe(edges, cycle)


def test_the_oci_client_imports_nothing_else_of_the_project():
    edges = import_graph(TOOLS)
    assert (TOOLS / LOWEST / "client.py").is_file()
    assert dict(edges.get(LOWEST, {})) == {}


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / "tools" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path / "tools"


def test_a_lazy_import_that_closes_a_loop_is_named_with_its_file_and_line(tmp_path):
    tools = _tree(
        tmp_path,
        {
            "a/__init__.py": "",
            "a/x.py": "from tools.b import y\n",
            "b/__init__.py": "",
            "b/y.py": "def f():\n    from tools.c.z import g\n",
            "c/z.py": "import tools.a.x\n",
            "daemon.py": "",
            "d/w.py": "from tools import daemon\nfrom . import v\n",
        },
    )
    edges = import_graph(tools)
    cycle = find_cycle(edges)
    assert cycle == ["a", "b", "c", "a"]
    assert f"b -> c ({tools}/b/y.py:2)" in describe(edges, cycle)
    assert dict(edges["d"]) == {"daemon": [f"{tools}/d/w.py:1"]}  # `from . import v`: itself


def test_imports_that_run_one_way_are_no_cycle(tmp_path):
    tools = _tree(
        tmp_path,
        {
            "low/m.py": "import json\n",
            "mid/m.py": "from tools.low import m\n",
            "top.py": "import tools.mid.m\nimport tools.low\n",
        },
    )
    edges = import_graph(tools)
    assert {a: sorted(b) for a, b in edges.items()} == {"mid": ["low"], "top": ["low", "mid"]}
    assert find_cycle(edges) == []
