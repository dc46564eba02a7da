"""tools/process/daemon.py: detached starts, start-once, pid files, stop; Bazel's spawn limit."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tools.process import daemon

ROOT = Path(daemon.__file__).resolve().parents[2]  # where `tools` is importable from


def stat_fields(pid: int) -> list[str]:
    """/proc/PID/stat after the command name: state, ppid, pgrp, session, ..."""
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()


def gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while daemon.alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture
def sleeper(tmp_path):
    """spawn(sleep) with a config-like argument, ended after the test."""
    config = tmp_path / "sleeper.conf"
    pids = []

    def start() -> int:
        argv = [sys.executable, "-c", "import time; time.sleep(300)", str(config)]
        pids.append(daemon.spawn(argv, tmp_path / "log" / "sleeper.log"))
        return pids[-1]

    start.config = config  # type: ignore[attr-defined]
    yield start
    for pid in pids:
        if daemon.alive(pid):
            daemon.terminate(pid, 5)


def test_spawn_detaches_the_daemon_from_its_caller(tmp_path, sleeper):
    pid = sleeper()
    state, ppid, pgrp, session = stat_fields(pid)[:4]
    assert state != "Z" and daemon.alive(pid)
    assert int(ppid) != os.getpid()  # nobody's child: its launcher has exited
    assert int(session) == pid == int(pgrp)  # its own session and process group
    assert os.readlink(f"/proc/{pid}/cwd") == "/"
    assert os.readlink(f"/proc/{pid}/fd/0") == "/dev/null"
    assert os.readlink(f"/proc/{pid}/fd/1") == str(tmp_path / "log" / "sleeper.log")


def test_spawn_appends_the_output_to_the_log(tmp_path):
    log = tmp_path / "echo.log"
    log.write_text("before\n")
    pid = daemon.spawn(["sh", "-c", "echo out; echo err >&2"], log)
    assert gone(pid)
    assert log.read_text() == "before\nout\nerr\n"


def test_spawn_of_a_missing_program_names_it():
    with pytest.raises(OSError, match=r"could not launch /nonexistent/registry: .*No such file"):
        daemon.spawn(["/nonexistent/registry", "serve"], Path("/dev/null"))


def test_a_pid_file_names_the_daemon_only_while_its_command_line_names_the_config(
    tmp_path, sleeper
):
    pid = sleeper()
    pid_file = tmp_path / "sleeper.pid"
    pid_file.write_text(f"{pid}\n")
    assert daemon.running(pid_file, sleeper.config) == pid
    assert daemon.running(pid_file, tmp_path / "other.conf") is None  # a recycled pid
    daemon.terminate(pid, 5)
    assert not daemon.alive(pid)
    assert daemon.running(pid_file, sleeper.config) is None
    pid_file.write_text("garbage\n")
    assert daemon.running(pid_file, sleeper.config) is None


def test_terminate_kills_what_ignores_sigterm(tmp_path):
    pid = daemon.spawn(["sh", "-c", "trap '' TERM; sleep 300 & wait"], tmp_path / "log")
    t0 = time.monotonic()
    daemon.terminate(pid, 0.5, kill_wait=5)
    assert not daemon.alive(pid) and time.monotonic() - t0 < 5


def test_concurrent_callers_start_one_daemon_and_share_it(tmp_path):
    lock, started, results = tmp_path / "lock", [], []

    def answering() -> int | None:
        return started[0] if started else None

    def start() -> int:
        time.sleep(0.2)  # a slow start: the others wait on the lock, then share it
        started.append(len(started) + 100)
        return started[-1]

    threads = [
        threading.Thread(target=lambda: results.append(daemon.start_once(lock, answering, start)))
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert started == [100] and results == [100] * 4


def test_wait_ready_reports_a_daemon_that_died_and_a_deadline():
    assert daemon.wait_ready(lambda: True, lambda: None, time.monotonic() + 1) is None
    assert daemon.wait_ready(lambda: True, lambda: "it exited", time.monotonic() + 1) == (
        "it exited"
    )
    with pytest.raises(TimeoutError):
        daemon.wait_ready(lambda: False, lambda: None, time.monotonic() + 0.2)


def bazel_process_wrapper() -> str | None:
    """The process-wrapper binary of the Bazel that runs this test (an ancestor, or the
    sibling of the linux-sandbox that is), or None outside Bazel."""
    pid = os.getpid()
    while pid > 1:
        pid = int(stat_fields(pid)[1])
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            continue
        name = os.path.basename(exe)
        if name in ("process-wrapper", "linux-sandbox"):
            wrapper = os.path.join(os.path.dirname(exe), "process-wrapper")
            return wrapper if os.access(wrapper, os.X_OK) else None
    return None


SPAWN_SLEEPER = """
import sys
from pathlib import Path
from tools.process import daemon
print(daemon.spawn(["sleep", "300"], Path(sys.argv[1])), flush=True)
"""


def test_no_daemon_outlives_a_bazel_spawn(tmp_path):
    """Why a staging registry (or engine) that a build action starts ends with the action:
    Bazel's process-wrapper is a child subreaper and kills every process the spawn left,
    detached or not (docs/staging.md). If this fails, a Bazel upgrade let daemons out:
    starting the embedded registry once from a build would then last."""
    wrapper = bazel_process_wrapper()
    if not wrapper:
        pytest.skip("not run by Bazel (no process-wrapper among the ancestors)")
    child = subprocess.run(
        [wrapper, "--", sys.executable, "-c", SPAWN_SLEEPER, str(tmp_path / "log")],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    )
    pid = int(child.stdout)
    # the same spawn outside the wrapper outlives its caller: test_spawn_detaches_...
    assert gone(pid, within=5), f"pid {pid} outlived the Bazel spawn that started it"
