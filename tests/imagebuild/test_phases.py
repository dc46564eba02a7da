"""The phase timings imagebuild appends to BuildKit's log of each image."""

from __future__ import annotations

import json
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


def test_the_build_record_sits_next_to_the_log_with_hit_and_seconds(tmp_path, monkeypatch):
    clock = iter([10.0, 10.25, 12.0])
    monkeypatch.setattr(build.time, "monotonic", lambda: next(clock))
    phases = build.Phases(started=0.5)
    phases.done("staging checks")
    phases.done("docker buildx build")
    log = tmp_path / "logs" / "images" / "pytorch.gfx950.log"
    log.parent.mkdir(parents=True)
    build.write_record(log, "sha256:" + "d" * 64, "sha256:" + "k" * 64, False, phases)
    record = json.loads((log.parent / "pytorch.gfx950.build-record.json").read_text())
    assert record["digest"] == "sha256:" + "d" * 64
    assert record["staging_hit"] is False
    assert record["seconds"] == 2.5
    assert record["phases"] == {"staging checks": 0.25, "docker buildx build": 1.75}
    assert record["finished"].endswith("Z")
