"""The wheelhouse CLI, called in-process, and a fake staging registry."""

from __future__ import annotations

import pytest

from tests.wheelhouse.fakes import FakeStaging
from tools.wheelhouse.cli import main


@pytest.fixture
def run(capsys):
    """Run `wheelhouse ARGV...`; return (exit code, stdout, stderr)."""

    def run(*argv) -> tuple[int, str, str]:
        rc = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return rc, out, err

    return run


@pytest.fixture
def staging():
    """A fake staging registry on a free loopback port (see fakes.FakeStaging)."""
    s = FakeStaging()
    yield s
    s.stop()
