"""tools/imagebuild/workdir.py: a build's private directory, and what a killed one left.

Without BuildKit: a child process takes a build directory and is SIGKILLed (its
lock dies with it); a live holder's directory is never touched.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys

import pytest

from tools.imagebuild import workdir

HOLD = """
import sys, time
from pathlib import Path
from tools.imagebuild import workdir
with workdir.build_dir(Path(sys.argv[1])) as d:
    (d / "secrets").mkdir(mode=0o700)
    (d / "secrets" / "mirror-netrc").write_text("machine m login u password p\\n")
    print(d, flush=True)
    time.sleep(600)
"""


def holder(base):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(base)], env=env, stdout=subprocess.PIPE, text=True
    )
    return proc, proc.stdout.readline().strip()


def test_a_killed_builds_dir_goes_at_the_next_start_a_live_ones_stays(tmp_path):
    base = tmp_path / "imagebuild"
    live, live_dir = holder(base)
    dead, dead_dir = holder(base)
    try:
        assert stat.S_IMODE(base.stat().st_mode) == 0o700
        for d in (live_dir, dead_dir):
            assert stat.S_IMODE(os.stat(d).st_mode) == 0o700
        os.kill(dead.pid, signal.SIGKILL)
        dead.wait()
        assert os.path.isdir(dead_dir)  # nothing of its own ran
        # should remove the dead build's dir, and leave the running one's alone
        assert [str(p) for p in workdir.sweep(base)] == [dead_dir]
        assert os.path.isdir(live_dir) and not os.path.exists(dead_dir)
    finally:
        live.kill()
        live.wait()
    with workdir.build_dir(base) as mine:
        assert sorted(p.name for p in base.iterdir()) == [".lock", mine.name]
    assert sorted(p.name for p in base.iterdir()) == [".lock"]


def test_the_dir_goes_when_the_build_fails(tmp_path):
    with pytest.raises(RuntimeError), workdir.build_dir(tmp_path) as d:
        (d / "secret").write_text("x")
        raise RuntimeError
    assert sorted(p.name for p in tmp_path.iterdir()) == [".lock"]


def test_an_open_base_is_made_private_and_anothers_is_refused(tmp_path, monkeypatch):
    base = tmp_path / "imagebuild"
    base.mkdir(mode=0o755)
    base.chmod(0o755)
    workdir.sweep(base)
    assert stat.S_IMODE(base.stat().st_mode) == 0o700
    uid = os.getuid()
    monkeypatch.setattr(workdir.os, "getuid", lambda: uid + 1)
    with pytest.raises(workdir.WorkDirError, match="is not a directory of this user"):
        workdir.sweep(base)


def test_the_root_follows_the_users_cache_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("TEST_TMPDIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert workdir.root() == tmp_path / ".cache/rocm-pytorch-images/imagebuild"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert workdir.root() == tmp_path / "xdg/rocm-pytorch-images/imagebuild"


def test_killed_before_the_lock_holds_nothing_back(tmp_path):
    # a holder that was killed while starting leaves at most an empty dir: it goes too
    (tmp_path / "123-abc").mkdir()
    assert [p.name for p in workdir.sweep(tmp_path)] == ["123-abc"]
