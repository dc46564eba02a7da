"""tools/bazel: a push target's `-- --help` runs its `.help` target; all else unchanged."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

WRAPPER = Path(os.environ["TOOLS_BAZEL"]).resolve()


@pytest.fixture
def real(tmp_path: Path) -> Path:
    """A stand-in Bazel: one argument per line on stdout."""
    exe = tmp_path / "bazel-real"
    exe.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    exe.chmod(0o755)
    return exe


def run(real: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "BAZEL_REAL": str(real)}
    return subprocess.run(
        [str(WRAPPER), *args], capture_output=True, text=True, env=env, check=False
    )


REWRITTEN = [
    (
        "the main command's help",
        "run //images:push_default --define arch=gfx950 -- --help",
        "run //images:push_default.help --define arch=gfx950",
    ),
    (
        "startup options, a config, -h among other arguments",
        "--output_base=/tmp/ob run --config=rehearsal //tests/e2e:push_default -- --dry-run -h",
        "--output_base=/tmp/ob run --config=rehearsal //tests/e2e:push_default.help",
    ),
    ("a group's push", "run //images:push_serving -- --help", "run //images:push_serving.help"),
    ("a target's push", "run //images:vllm.push -- -h", "run //images:vllm.push.help"),
    ("the family report", "run //images:report -- --help", "run //images:report.help"),
    ("a relative label", "run images:push_wheels -- --help", "run images:push_wheels.help"),
    ("a label in the package", "run :push_default -- --help", "run :push_default.help"),
    (
        "the main repository named",
        "run @@//images:push_default -- --help",
        "run @@//images:push_default.help",
    ),
]

UNCHANGED = [
    ("the push itself", "run //images:push_default --define arch=gfx950"),
    ("its other options", "run //images:push_default -- --dry-run --json"),
    ("--help before --: Bazel's own", "run --help //images:push_default"),
    ("build, not run", "build //images:push_default -- --help"),
    ("not a push target", "run //images:vllm -- --help"),
    ("the plan reads its own --help", "run //images:push_default.plan -- --help"),
    ("push_all has no help: it fails in one line", "run //images:push_all -- --help"),
    ("tests", "test //tests/..."),
    ("a space-separated startup option", "--output_base /tmp/ob run //images:push_default -- -h"),
    ("another command", "version"),
]


@pytest.mark.parametrize(("desc", "given", "want"), REWRITTEN, ids=[r[0] for r in REWRITTEN])
def test_a_push_targets_help_runs_its_help_target(real, desc, given, want):
    proc = run(real, *given.split())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:-1] == want.split()
    assert proc.stderr == f"tools/bazel: --help of a push target: running bazel {want}" + (
        " (builds no image)\n"
    )


@pytest.mark.parametrize(("desc", "given"), UNCHANGED, ids=[r[0] for r in UNCHANGED])
def test_every_other_command_line_passes_through_unchanged(real, desc, given):
    proc = run(real, *given.split())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:-1] == given.split()
    assert proc.stderr == ""


def test_arguments_with_spaces_and_empty_ones_pass_through_intact(real):
    args = ["run", "//images:push_default", "--image_registry=a b", "", "-- x"]
    proc = run(real, *args)
    assert proc.stdout.split("\n")[:-1] == args


def test_without_bazel_real_it_says_how_to_run_bazel(real):
    proc = subprocess.run(
        [str(WRAPPER), "run", "//images:push_default"],
        capture_output=True,
        text=True,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr == (
        "tools/bazel: BAZEL_REAL is not set: run `bazel` (bazelisk, or the one"
        " tools/bootstrap.sh writes), not this script\n"
    )
