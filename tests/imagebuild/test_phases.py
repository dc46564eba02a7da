"""The phase timings imagebuild appends to BuildKit's log of each image."""

from __future__ import annotations

import re

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


def test_the_process_age_is_read_from_proc():
    age = build.process_age()
    # this interpreter started before the test ran, and not hours ago
    assert 0 < age < 3600
    assert re.fullmatch(r"\d+\.\d+", f"{age:.2f}")
