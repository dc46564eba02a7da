"""tools/bazel: a push target's `-- --help` runs its `.help` target when Bazel knows one;
all else unchanged."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

WRAPPER = Path(os.environ["TOOLS_BAZEL"]).resolve()


# The `.help` targets the stand-in Bazel knows (image_family makes them for its pushes and
# its report); every other label is "no such target", as Bazel answers it.
HELP_TARGETS = [
    "//images:push_default.help",
    "//tests/e2e:push_default.help",
    "//images:push_serving.help",
    "//images:vllm.push.help",
    "//images:report.help",
    "images:push_wheels.help",
    ":push_default.help",
    "@@//images:push_default.help",
]


@pytest.fixture
def real(tmp_path: Path) -> Path:
    """A stand-in Bazel: one argument per line on stdout; a `query` is logged to
    $QUERY_LOG (its arguments on one line) and answers whether its label is in
    $HELP_TARGETS (a file, one a line)."""
    (tmp_path / "help-targets").write_text("".join(f"{t}\n" for t in HELP_TARGETS))
    exe = tmp_path / "bazel-real"
    exe.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do\n'
        '  if [ "$a" = query ]; then\n'
        '    echo "$*" >>"$QUERY_LOG"\n'
        '    for last in "$@"; do :; done\n'
        '    if grep -qxF -- "$last" "$HELP_TARGETS"; then echo "$last"; exit 0; fi\n'
        "    echo \"ERROR: no such target '$last'\" >&2\n"
        "    exit 7\n"
        "  fi\n"
        "done\n"
        'printf "%s\\n" "$@"\n'
    )
    exe.chmod(0o755)
    return exe


def run(real: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "BAZEL_REAL": str(real),
        "HELP_TARGETS": str(real.parent / "help-targets"),
        "QUERY_LOG": str(real.parent / "queries"),
    }
    return subprocess.run(
        [str(WRAPPER), *args], capture_output=True, text=True, env=env, check=False
    )


def queries(real: Path) -> list[str]:
    log = real.parent / "queries"
    return log.read_text().splitlines() if log.exists() else []


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
    # image_push targets outside an image_family, and tests, have no .help sibling
    ("an image_push of its own", "run //tests/e2e:push_default_e2e_archs -- --help"),
    ("a test named push_*", "run //tests/registry:push_race_test -- --help"),
    ("a package Bazel does not know", "run //nowhere:push_default -- -h"),
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


def test_bazel_is_asked_whether_the_help_target_exists_with_the_same_startup_options(real):
    proc = run(real, "--output_base=/tmp/ob", "run", "//images:push_default", "--", "--help")
    assert proc.returncode == 0, proc.stderr
    assert queries(real) == [
        "--output_base=/tmp/ob query --noshow_progress //images:push_default.help"
    ]
    proc = run(real, "run", "//tests/registry:push_race_test", "--", "--help")
    assert proc.stdout.split("\n")[:-1] == [
        "run",
        "//tests/registry:push_race_test",
        "--",
        "--help",
    ]
    assert queries(real)[1:] == ["query --noshow_progress //tests/registry:push_race_test.help"]


def test_a_command_line_without_a_push_targets_help_asks_bazel_nothing(real):
    for given in (
        "run //images:push_default -- --dry-run",
        "run //images:vllm -- --help",
        "version",
    ):
        assert run(real, *given.split()).returncode == 0
    assert queries(real) == []
