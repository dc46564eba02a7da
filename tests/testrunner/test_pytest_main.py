"""tools/pytest/pytest_main.py reads ROCM_PYTORCH_TEST_ENGINE as a switch (tools/envvars.py)."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import pytest

import tools

MAIN = Path("tools/pytest/pytest_main.py")  # the test's working directory is the workspace


@pytest.fixture
def run(monkeypatch):
    """pytest_main.main() with ROCM_PYTORCH_TEST_ENGINE set to a value (None: unset), a
    stand-in tools.engine that records apply(), and pytest.main answering 0."""
    spec = importlib.util.spec_from_file_location("pytest_main_under_test", MAIN)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    applied: list[bool] = []
    engine = types.ModuleType("tools.engine")
    engine.EngineError = type("EngineError", (Exception,), {})  # type: ignore[attr-defined]
    engine.apply = lambda: applied.append(True)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tools.engine", engine)
    monkeypatch.setattr(tools, "engine", engine, raising=False)
    monkeypatch.setattr(module.pytest, "main", lambda args: 0)
    monkeypatch.setattr(sys, "argv", ["pytest_main"])

    def main(value: str | None) -> tuple[int, bool]:
        if value is None:
            monkeypatch.delenv("ROCM_PYTORCH_TEST_ENGINE", raising=False)
        else:
            monkeypatch.setenv("ROCM_PYTORCH_TEST_ENGINE", value)
        applied.clear()
        return module.main(), bool(applied)

    return main


@pytest.mark.parametrize("value", ["1", "true", "YES", " on "])
def test_on_puts_the_engine_in_the_environment(run, value):
    assert run(value) == (0, True)


@pytest.mark.parametrize("value", [None, "", "0", "false", "No", "off"])
def test_off_or_unset_leaves_the_engine_alone(run, value):
    # `0` and `false` were read by truthiness: "on"
    assert run(value) == (0, False)


def test_a_value_that_is_no_switch_stops_in_one_line(run, capsys):
    assert run("maybe") == (2, False)
    assert capsys.readouterr().err == (
        "pytest_main: error: ROCM_PYTORCH_TEST_ENGINE='maybe' is neither on nor off;"
        " write 0 or 1 (or false/true, no/yes, off/on)\n"
    )
