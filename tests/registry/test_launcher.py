"""The launchers of push, plan, verify and load targets (images/private/push.bzl), run the
ways a user runs them: `bazel run`, by a relative path from the workspace root
(`bazel-bin/tests/e2e/push_default.sh` failed with rc 127, `registry_launch.sh: No such
file or directory`), by an absolute path, and from another directory.

All four rules share one launcher; the plan target's builds no image, so this test
needs no engine and no registry.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tools.tagconf import catalog as catalog_mod
from tools.tagconf.spec import upstream_ref
from tools.tagconf.tags import render_many, resolve_values

# //tests/e2e's family is the real catalogue's: what its launchers say, read from it
CATALOG = catalog_mod.load("images/catalog.toml")
LAUNCHER = Path(os.environ["PLAN_DEFAULT_BIN"])  # tests/e2e/push_default.plan.sh
RUNFILES = Path(os.environ.get("RUNFILES_DIR") or os.environ["TEST_SRCDIR"]).absolute()


def run(argv: list[str], cwd: Path, runfiles_dir: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUNFILES_")}
    if runfiles_dir is not None:
        env["RUNFILES_DIR"] = runfiles_dir
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=120
    )


@pytest.fixture
def workspace(tmp_path):
    """A workspace root whose bazel-bin holds the launcher and its `<launcher>.runfiles`
    tree, as `bazel build` leaves them (this test's runfiles hold all of the launcher's)."""
    root = tmp_path / "ws"
    bin_dir = root / "bazel-bin/tests/e2e"
    bin_dir.mkdir(parents=True)
    shutil.copy(LAUNCHER, bin_dir / LAUNCHER.name)
    (bin_dir / f"{LAUNCHER.name}.runfiles").symlink_to(RUNFILES)
    (tmp_path / "elsewhere").mkdir()
    return root


@pytest.fixture
def expected():
    """What the launcher prints when run as `bazel run` runs it (RUNFILES_DIR set)."""
    r = run([str(LAUNCHER.absolute())], Path.cwd(), runfiles_dir=str(RUNFILES))
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("\n") > 10  # the default group's refs
    return r.stdout


def test_the_launcher_runs_by_relative_and_absolute_path_from_any_directory(
    workspace, expected, tmp_path
):
    relative = f"bazel-bin/tests/e2e/{LAUNCHER.name}"
    elsewhere = tmp_path / "elsewhere"
    ways = {
        "relative, from the workspace root": ([relative], workspace),
        "relative, from its own directory": (
            [f"./{LAUNCHER.name}"],
            workspace / relative[: -len(LAUNCHER.name) - 1],
        ),
        "relative, from another directory": ([f"../ws/{relative}"], elsewhere),
        "absolute, from another directory": ([str(workspace / relative)], elsewhere),
        "by bash, relative": (["bash", relative], workspace),
    }
    for way, (argv, cwd) in ways.items():
        r = run(argv, cwd)
        assert (r.returncode, r.stderr.count("error")) == (0, 0), f"{way}: {r.stderr}"
        assert r.stdout == expected, way


def test_a_relative_runfiles_dir_is_found_after_the_cd(workspace, expected):
    relative = f"bazel-bin/tests/e2e/{LAUNCHER.name}"
    r = run([relative], workspace, runfiles_dir=f"{relative}.runfiles")
    assert r.returncode == 0, r.stderr
    assert r.stdout == expected


def test_a_launcher_without_its_runfiles_says_so_in_one_line(tmp_path):
    lone = tmp_path / LAUNCHER.name
    shutil.copy(LAUNCHER, lone)
    r = run([f"./{LAUNCHER.name}"], tmp_path)
    assert r.returncode == 2
    (line,) = r.stderr.splitlines()
    assert "cannot find" in line and line.endswith("run it with bazel run")


def test_the_plan_says_what_it_plans_in_a_header_on_stderr(expected):
    # `bazel run //tests/e2e:push_default.plan`, no --define: the default arch
    r = run([str(LAUNCHER.absolute())], Path.cwd(), runfiles_dir=str(RUNFILES))
    assert r.returncode == 0, r.stderr
    refs = r.stdout.splitlines()
    # should keep stdout one ref a line, and count them in the header
    assert all(ref.count(":") >= 1 and not ref.startswith("#") for ref in refs)
    registry = refs[0].rsplit("/", 1)[0]
    # the default group for the default arch: its images, a versioned and a floating tag each
    arch, values = CATALOG.default_arch, resolve_values(CATALOG)
    n = len(render_many(CATALOG, CATALOG.group("default"), [arch], values))
    assert len(refs) == 2 * n, refs
    assert r.stderr.splitlines() == [
        f"# //tests/e2e:push_default for {arch}: {n} images, {2 * n} tags -> {registry}",
        # the image the family starts FROM, and whether images/upstream.lock pins it
        f"upstream: {upstream_ref(values)}, not locked: the builds take what the"
        " tag names when they run (a release refuses; `bazel run //images:upstream_lock`"
        " locks it)",
    ]


def test_the_help_target_prints_the_push_options_targets_registry_and_groups():
    # `bazel run //tests/e2e:push_default.help`: it depends on no image (.ci/e2e_checks.py
    # checks with aquery that no ImageBuild or ImageSpec is under it)
    launcher = Path(os.environ["HELP_DEFAULT_BIN"]).absolute()
    r = run([str(launcher)], Path.cwd(), runfiles_dir=str(RUNFILES))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert out.startswith("usage: bazel run //tests/e2e:push_default [--define arch=A[,B...]]")
    # should say what it pushes, for which arch, where, how to change both
    targets = CATALOG.group("default")
    assert (
        f"//tests/e2e:push_default builds, then pushes {len(targets)} targets: {targets[0]}," in out
    )
    assert (
        f"archs:    {CATALOG.default_arch} (the catalogue's default); choose with --define arch="
        in out
    )
    assert (
        f"registry: {CATALOG.registry} (the catalogue's"
        " registry); publish elsewhere with --image_registry=" in out
    )
    # the groups, and every option of the push
    assert "groups (there is no all group; one target: //tests/e2e:<target>.push):" in out
    for group in ["push_default", "push_wheels", "push_serving"]:
        assert f"  //tests/e2e:{group} " in out
    for option in ["--dry-run", "--json", "--jobs", "--registry", "--insecure", "--sign"]:
        assert f"  {option}" in out, option


def test_the_report_help_target_prints_the_reports_own_help():
    # `bazel run //tests/e2e:report.help`: the report's usage, --defines and options, not
    # the tool's (no --plan, which the launcher gives; no push-only --chunk-size)
    launcher = Path(os.environ["HELP_REPORT_BIN"]).absolute()
    r = run([str(launcher)], Path.cwd(), runfiles_dir=str(RUNFILES))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert out.startswith(
        "usage: bazel run //tests/e2e:report [--define arch=A[,B...]] [--image_registry=...]"
        " -- [options]\n"
    ), out
    assert "//tests/e2e:report: the family report, one self-contained HTML page" in out
    assert (
        f"archs:    {CATALOG.default_arch} (the catalogue's default); choose with --define arch="
        in out
    )
    assert f"registry: {CATALOG.registry} (the catalogue's" in out
    assert "--define KEY=VALUE" in out and "--config=rehearsal" in out
    options = [line.split()[0] for line in out.split("options:\n", 1)[1].splitlines()]
    options = [o.rstrip(",") for o in options if o.startswith("-")]
    assert options == [
        "-h",
        "--registry",
        "--out",
        "--offline",
        "--history",
        "--logs-root",
        "--title",
        "--json",
        "--insecure",
        "--ca-file",
        "--retries",
        "--backoff",
        "--timeout",
    ], options
    assert "--plan" not in out and "--chunk-size" not in out and "usage: registry" not in out


def test_the_report_takes_no_chunk_size(capsys):
    from tools.registry import cli

    # should refuse it as argparse does any unknown option: the report uploads nothing
    try:
        cli.main(["report", "--plan", "p.json", "--chunk-size", "8"])
    except SystemExit as e:
        assert e.code == 2
    assert "unrecognized arguments: --chunk-size 8" in capsys.readouterr().err


def test_help_of_a_broken_help_file_is_one_line(tmp_path, capsys):
    from tools.registry import cli

    about = tmp_path / "about.json"
    about.write_text("{}")
    # should refuse in one line naming the file and the fix
    assert cli.main(["about", "--about", str(about)]) == 1
    err = capsys.readouterr().err
    assert (
        err == f"registry: error: {about}: not a .help target's file (no 'catalog'); rebuild it\n"
    )


def test_help_names_the_defines_it_was_built_with(tmp_path, capsys):
    from tools.registry import cli

    about = tmp_path / "about.json"
    about.write_text(
        '{"label": "//images:vllm.push", "targets": ["vllm"], "catalog": "images/catalog.toml",'
        ' "arch": "gfx942,gfx1201", "registry": "reg.example:5000/team"}'
    )
    assert cli.main(["about", "--about", str(about)]) == 0
    out = capsys.readouterr().out
    assert "//images:vllm.push builds, then pushes 1 target: vllm\n" in out
    assert "  archs:    gfx942,gfx1201; choose with" in out
    assert "  registry: reg.example:5000/team; publish elsewhere with" in out
