"""The wheelhouse CLI, called in-process."""

from __future__ import annotations

import pytest

from tools.wheelhouse.cli import main


@pytest.fixture
def run(capsys):
    """Run `wheelhouse ARGV...`; return (exit code, stdout, stderr)."""

    def run(*argv) -> tuple[int, str, str]:
        rc = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return rc, out, err

    return run
