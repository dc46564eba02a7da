"""What runs under the host's python3 imports only the standard library.

The benches (`python3 bench/X.py`), the CI checks (`python3 .ci/X.py`) and the
commands the docs run as `python3 -m tools.X` start before any Bazel-made
virtualenv exists, on a machine whose python3 has no httpx or
dockerfile-parse. An import of either on their path fails there and nowhere
else, so each is imported (a script as a module, a command with `--help`)
behind an import hook that refuses every module outside the standard library
and the project.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = ("tools", "bench", "tests")

HOOK = """
import importlib.abc, os, sys
allowed = set(sys.stdlib_module_names) | {"__future__", *%r}
class StandardLibraryOnly(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] not in allowed:
            raise ImportError(f"{name} is not in the standard library")
sys.meta_path.insert(0, StandardLibraryOnly())
sys.path[:] = [p for p in sys.path if "site-packages" not in p and "pypi" not in p]
sys.path.insert(0, os.getcwd())
"""

SCRIPT = """
import importlib.util
path = sys.argv[1]
here = os.path.dirname(os.path.abspath(path))
sys.path.insert(0, here)  # as `python3 path` has it
allowed.update(f[:-3] for f in os.listdir(here) if f.endswith(".py"))
spec = importlib.util.spec_from_file_location("host_script", path)
module = sys.modules["host_script"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
"""

COMMAND = """
import runpy
sys.argv = [sys.argv[1], "--help"]
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""

# `python3 -m tools.X` as README.md, docs/ and .ci/ run them
COMMANDS = [
    "tools.client_env",
    "tools.engine",
    "tools.imagecheck",
    "tools.mirrors",
    "tools.registry",
    "tools.registry.cli",
    "tools.rehearsal.check",
    "tools.report.delta",
    "tools.rehearsal.sources",
    "tools.staging",
    "tools.stop",
    "tools.tagconf",
    "tools.teamcache",
    "tools.workflows",
]
SCRIPTS = sorted(str(p) for d in ("bench", ".ci") for p in Path(d).glob("*.py"))


def run(code: str, arg: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "-S", "-c", HOOK % (PROJECT,) + code, arg],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )


def test_the_host_scripts_are_found():
    assert "bench/compile_cache.py" in SCRIPTS and ".ci/run_checks.py" not in SCRIPTS
    assert ".ci/e2e_checks.py" in SCRIPTS, SCRIPTS


@pytest.mark.parametrize("path", SCRIPTS)
def test_a_host_script_imports_only_the_standard_library(path):
    proc = run(SCRIPT, path)
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.parametrize("module", COMMANDS)
def test_a_host_command_imports_only_the_standard_library(module):
    proc = run(COMMAND, module)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "usage" in proc.stdout.lower(), proc.stdout


def test_the_hook_refuses_a_third_party_import(tmp_path):
    script = tmp_path / "uses_httpx.py"
    script.write_text("import json\nimport httpx\n")
    proc = run(SCRIPT, str(script))
    assert proc.returncode == 1
    assert "httpx is not in the standard library" in proc.stderr
