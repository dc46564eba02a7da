"""Shared fixtures: a catalogue, a CLI runner, catalogue mutations.

`catalog`, `run` and `mutated` use the tests' own catalogue
(tests/fixtures/catalog.toml): the tag rules, errors and commands are tested
on its values, so a version bump of images/catalog.toml edits no test. The
`real_` ones read images/catalog.toml: only for the tests that hold the real
catalogue to the seed's tables (testdata/) or check what only it has (its
arch families, its targets' archs), never spelling its values.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest

from tools.tagconf import catalog as catalog_mod
from tools.tagconf.cli import main

# runfiles paths (cwd is the runfiles root)
CATALOG = Path("tests/fixtures/catalog.toml")  # the tests' own
REAL_CATALOG = Path("images/catalog.toml")


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture(scope="session")
def catalog():
    """The tests' own catalogue."""
    return catalog_mod.load(CATALOG)


@pytest.fixture(scope="session")
def real_catalog():
    """images/catalog.toml: for the seed-golden tests and the real family's shape."""
    return catalog_mod.load(REAL_CATALOG)


@pytest.fixture(scope="session")
def catalog_text() -> str:
    return CATALOG.read_text(encoding="utf-8")


def _runner(default: Path):
    def _run(*argv: str, catalog: Path | None = default) -> Result:
        out, err = io.StringIO(), io.StringIO()
        full = (["--catalog", str(catalog)] if catalog else []) + list(argv)
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = main(full)
            except SystemExit as e:  # argparse errors and --help
                code = e.code if isinstance(e.code, int) else 1
        return Result(code, out.getvalue(), err.getvalue())

    return _run


@pytest.fixture
def run():
    """Call tagconf's main() in-process with the tests' own catalogue by default."""
    return _runner(CATALOG)


@pytest.fixture
def real_run():
    """Call tagconf's main() in-process with images/catalog.toml by default."""
    return _runner(REAL_CATALOG)


@pytest.fixture
def run_binary():
    """Run the real `//tools/tagconf` py_binary as a subprocess."""
    binary = os.environ["TAGCONF_BIN"]

    def _run(*argv: str) -> Result:
        proc = subprocess.run([binary, *argv], capture_output=True, text=True, check=False)
        return Result(proc.returncode, proc.stdout, proc.stderr)

    assert Path(binary).exists(), binary
    return _run


@pytest.fixture
def mutated(tmp_path, catalog_text):
    """Write the tests' own catalogue with one textual replacement applied."""

    def _mutate(old: str, new: str, count: int = 1) -> Path:
        assert old in catalog_text, f"fixture text not in catalogue: {old!r}"
        path = tmp_path / "catalog.toml"
        path.write_text(catalog_text.replace(old, new, count), encoding="utf-8")
        return path

    return _mutate


__all__ = ["Result", "sys"]
