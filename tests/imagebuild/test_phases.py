"""The phase timings imagebuild appends to BuildKit's log of each image."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from tools.imagebuild import build


def test_the_timing_line_names_each_phase_and_adds_the_process_start(monkeypatch):
    clock = iter([100.0, 100.5, 103.0])
    monkeypatch.setattr(build.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(build, "process_age", lambda: 0.25)
    phases = build.Phases()
    phases.done("builder")
    phases.done("docker buildx build")
    # should say how long each part took, and the total since the process started
    assert phases.line() == (
        "# imagebuild: start 0.25s, builder 0.50s, docker buildx build 2.50s; total 3.25s\n"
    )


def test_the_process_age_counts_from_the_start_of_the_process():
    # a child that waits before it asks: its age holds the wait and its own start-up,
    # and no more than the parent saw it live (plus the clock's 10 ms ticks)
    code = (
        "import time; time.sleep(0.5); from tools.imagebuild.build import process_age;"
        " print(process_age())"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    lived = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr
    age = float(proc.stdout)
    assert 0.5 <= age <= lived + 0.05, (age, lived)
