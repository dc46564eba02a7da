"""A start whose daemon exits: tried again, or a failure that names it; nothing left behind.

Fake containerd and dockerd (Python scripts on PATH, no Docker): containerd
binds its socket and, as told by a plan file, exits before or after that;
dockerd answers GET /_ping once containerd has said it is ready, and waits
otherwise. They run through the real launcher, detached, like the real ones.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tools import engine
from tools.engine import lifecycle
from tools.process import daemon

FAKE_CONTAINERD = """#!{python}
import os, re, socket, sys, time
from pathlib import Path
if "--version" in sys.argv:
    print("containerd fake v2.1.0")
    sys.exit(0)
plan = Path(os.environ["FAKE_ENGINE_PLAN"])
starts = plan / "containerd.starts"
starts.write_text(starts.read_text() + "x" if starts.exists() else "x")
what = plan.joinpath("containerd").read_text().split()[len(starts.read_text()) - 1]
config = Path(sys.argv[sys.argv.index("--config") + 1]).read_text()
if what == "exit-at-once":
    print("fake containerd: failed to load plugins", flush=True)
    sys.exit(1)
s = socket.socket(socket.AF_UNIX)
s.bind(re.search(r"address = '([^']+)'", config).group(1))
s.listen()
print("fake containerd: containerd successfully booted", flush=True)
if what == "vanish":
    time.sleep(0.5)
    print("fake containerd: gone", flush=True)
    sys.exit(2)
(plan / "containerd.ready").touch()
time.sleep(600)
"""

FAKE_DOCKERD = """#!{python}
import os, socketserver, sys, time
from pathlib import Path
plan = Path(os.environ["FAKE_ENGINE_PLAN"])
host = sys.argv[sys.argv.index("--host") + 1].removeprefix("unix://")
print("fake dockerd: starting up", flush=True)
while not (plan / "containerd.ready").exists():
    time.sleep(0.05)

class Ping(socketserver.StreamRequestHandler):
    def handle(self):
        while self.rfile.readline() not in (b"\\r\\n", b"\\n", b""):
            pass
        self.wfile.write(b"HTTP/1.0 200 OK\\r\\n\\r\\nOK")

socketserver.UnixStreamServer(host, Ping).serve_forever()
"""


@pytest.fixture
def fakes(scratch, monkeypatch):
    """Fake daemons on PATH; write the plan: containerd's behaviour per start."""
    if os.geteuid() != 0:
        pytest.fail("the private engine starts only as root; run the engine tests as root")
    bindir, plan = scratch / "bin", scratch / "plan"
    bindir.mkdir()
    plan.mkdir()
    for name, text in (("containerd", FAKE_CONTAINERD), ("dockerd", FAKE_DOCKERD)):
        (bindir / name).write_text(text.format(python=sys.executable))
        (bindir / name).chmod(0o755)
    (bindir / "runc").write_text("#!/bin/sh\n")
    (bindir / "runc").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_ENGINE_PLAN", str(plan))
    monkeypatch.setenv(lifecycle.TIMEOUT_ENV, "30")

    def containerd(*behaviour: str) -> None:
        (plan / "containerd").write_text(" ".join(behaviour))

    yield containerd
    engine.stop(log=lambda _m: None)


def daemons(state: Path) -> list[int]:
    """Live processes started for this state dir (its configs on their command lines)."""
    out = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        names = {str(state / "daemon.json").encode(), str(state / "containerd.toml").encode()}
        if names & set(cmdline) and daemon.alive(int(proc.name)):
            out.append(int(proc.name))
    return out


def test_a_containerd_that_exits_at_start_is_started_again(scratch, fakes):
    fakes("exit-at-once", "stay")
    said: list[str] = []
    env = engine.ensure(scope="lasting", log=said.append)
    state = scratch / "engine"
    assert env["DOCKER_HOST"] == f"unix://{state}/docker.sock"
    assert engine.answers(env["DOCKER_HOST"])
    text = "\n".join(said)
    # should say what went wrong the first time, with containerd's own words
    assert "did not start (attempt 1 of 2: containerd (pid " in text
    assert "exited before its socket was up" in text
    assert "fake containerd: failed to load plugins" in text
    assert "starting it again" in text and "ready in" in text
    assert len((state / "log" / "starts.log").read_text().splitlines()) == 1


def test_a_containerd_that_vanishes_after_booting_fails_precisely_and_leaves_nothing(
    scratch, fakes
):
    fakes("vanish", "vanish")
    t0 = time.monotonic()
    with pytest.raises(engine.EngineError) as e:
        engine.ensure(scope="lasting", log=lambda _m: None)
    # should fail at once, not at the deadline
    assert time.monotonic() - t0 < 25
    message = str(e.value)
    state = scratch / "engine"
    # should name the daemon that exited, say who was still starting, for both attempts
    for attempt in (1, 2):
        assert f"attempt {attempt} of 2: containerd (pid " in message
    assert "s after the launch, while dockerd (pid " in message
    assert ") was still starting" in message
    # and the logs' last lines: containerd's boot and exit, dockerd's start
    assert f"--- {state}/log/containerd.log:" in message
    assert "fake containerd: containerd successfully booted" in message
    assert "fake containerd: gone" in message
    assert "fake dockerd: starting up" in message
    # no dockerd waits for a containerd that has gone
    assert daemons(state) == []
    assert not (state / "docker.sock").exists()


def test_a_stop_ends_a_daemon_the_launcher_forked_but_has_not_exec_d_yet(scratch):
    """On a loaded machine the launcher's fork can take seconds to exec dockerd; until then
    its command line is the launcher's, and a stop (of a failed start) must still end it."""
    state = engine.paths()
    state.root.mkdir(parents=True)
    fork = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)", lifecycle.LAUNCHER, str(state.root)]
    )
    try:
        # Popen returns at the fork: until the child execs, its command line is pytest's
        # (the very race the stop handles for the launcher, one level down).
        cmdline = Path(f"/proc/{fork.pid}/cmdline")
        deadline = time.monotonic() + 60
        while lifecycle.LAUNCHER.encode() not in cmdline.read_bytes():
            assert time.monotonic() < deadline, "the stand-in fork never exec'd"
            time.sleep(0.01)
        state.pid_file("dockerd").write_text(f"{fork.pid}\n")
        assert lifecycle.stop_engine(state, lambda _m: None) == [f"dockerd {fork.pid}"]
        assert fork.wait(timeout=10) is not None
        assert not state.pid_file("dockerd").exists()
    finally:
        fork.kill()
        fork.wait()
