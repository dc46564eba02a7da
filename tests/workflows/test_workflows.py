"""The workflow files: generated from the catalogue, calling only what exists; the GPU smoke."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tools import places
from tools.tagconf import catalog as catalog_mod
from tools.workflows import cli, miniyaml, offline, render, smoke

GITHUB = Path(".github")
REAL = Path("images/catalog.toml")
FIXTURE = Path("tests/fixtures/catalog.toml")


def test_the_checked_in_files_are_what_the_catalogue_generates(capsys):
    assert cli.main(["--catalog", str(REAL), "generate", "--check", str(GITHUB)]) == 0, (
        capsys.readouterr().err
    )


def test_a_stale_file_is_named_with_the_command_that_regenerates_it(tmp_path, capsys):
    assert cli.main(["--catalog", str(REAL), "generate", "--out", str(tmp_path)]) == 0
    weekly = tmp_path / "workflows/weekly.yml"
    weekly.write_text(weekly.read_text() + "# edited by hand\n")
    assert cli.main(["--catalog", str(REAL), "generate", "--check", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "workflows/weekly.yml" in err and "bazel run //tools/workflows:update" in err


def test_the_choices_come_from_the_catalogue():
    catalog = catalog_mod.load(FIXTURE)
    weekly = render.weekly(catalog)
    for variant in catalog.variants:
        assert f"          - {variant}\n" in weekly
    for group in catalog.groups:
        assert f"          - {group}\n" in weekly
    real = catalog_mod.load(REAL)
    assert "gfx110X" in catalog.variants and "gfx1030" not in catalog.variants
    assert "- gfx1030\n" not in weekly and "- gfx1030\n" in render.weekly(real)


def _jobs_steps(text: str) -> list[str]:
    return re.findall(r"^\s+run: (.+)$", text, re.M)


def test_every_ci_run_part_a_job_calls_exists():
    parts = subprocess.run(
        ["bash", ".ci/run", "--list"], capture_output=True, text=True, check=True
    ).stdout.split()
    called = set()
    for path in sorted((GITHUB / "workflows").glob("*.yml")):
        for line in _jobs_steps(path.read_text()):
            if line.startswith(".ci/run"):
                called.update(line.split()[1:])
    assert called, "no job calls .ci/run"
    assert called <= set(parts), f"unknown parts: {sorted(called - set(parts))}"


def test_actions_are_pinned_by_commit_and_secrets_reach_only_publish():
    for path in sorted((GITHUB / "workflows").glob("*.yml")):
        text = path.read_text()
        for uses in re.findall(r"uses: (\S+)", text):
            assert re.fullmatch(r"[\w-]+/[\w-]+(/[\w-]+)*@[0-9a-f]{40}", uses), f"{path}: {uses}"
        assert "permissions: {}" in text, f"{path}: no least default permissions"
        for job in re.split(r"\n  (?=[\w-]+:\n)", text.split("\njobs:\n", 1)[1]):
            assert "timeout-minutes:" in job, f"{path}: a job without a timeout: {job[:40]}"
            if "secrets." in job:
                assert path.name == "weekly.yml" and job.startswith("publish:"), (path, job[:40])


def test_weekly_matrix_is_one_arch_or_every_variant(capsys):
    assert cli.main(["--catalog", str(FIXTURE), "matrix", "--arch", "gfx110X"]) == 0
    assert capsys.readouterr().out == 'variants=["gfx110X"]\n'
    assert cli.main(["--catalog", str(FIXTURE), "matrix", "--arch", "scheduled"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out.split("=", 1)[1]) == list(catalog_mod.load(FIXTURE).variants)
    assert cli.main(["--catalog", str(FIXTURE), "matrix", "--arch", "gfx951"]) == 2
    err = capsys.readouterr().err
    assert "--arch gfx951: not an arch or family of the catalogue; known: scheduled, gfx942" in err


# ---- the GPU smoke --------------------------------------------------------------

PUSH = {
    "ok": True,
    "refs": [
        {"ref": "h:5000/fixture/pytorch:4.5.6-9.8.7-full-gfx950", "digest": "sha256:" + "a" * 64},
        {"ref": "h:5000/fixture/pytorch:latest-gfx950", "digest": "sha256:" + "a" * 64},
        {"ref": "h:5000/fixture/rocm-runtime:latest-gfx950", "digest": "sha256:" + "b" * 64},
        {"ref": "h:5000/fixture/pytorch-wheel:latest-gfx950", "digest": "sha256:" + "c" * 64},
        {"ref": "h:5000/fixture/triton-wheel:latest", "digest": "sha256:" + "d" * 64},
        {"ref": "h:5000/fixture/vllm:latest-gfx950", "digest": None, "action": "refused"},
    ],
}


def test_the_images_that_run_each_once_by_digest():
    got = smoke.runnable(PUSH, catalog_mod.load(FIXTURE))
    assert got == [
        ("pytorch", "h:5000/fixture/pytorch@sha256:" + "a" * 64),
        ("rocm-runtime", "h:5000/fixture/rocm-runtime@sha256:" + "b" * 64),
    ]


def test_no_kfd_skips_in_one_line(tmp_path, capsys, monkeypatch):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    push = tmp_path / "push.json"
    push.write_text(json.dumps(PUSH))
    code = smoke.smoke("gfx950", push, catalog_mod.load(FIXTURE), dev=tmp_path / "dev")
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert out == [
        f"gpu-smoke: skipped: no {tmp_path}/dev/kfd on this runner: not a GPU host"
        " (label GPU hosts only)"
    ]
    assert summary.read_text() == f"- {out[0]}\n"


def _fake_docker(tmp_path: Path, torch: bool) -> Path:
    """A docker CLI that answers version, `import torch` (as `torch` says) and rocminfo (gfx950)."""
    docker = tmp_path / "docker"
    docker.write_text(f"""#!/usr/bin/env python3
import sys
args = " ".join(sys.argv[1:])
if args.startswith("version"):
    print("28.0.0")
elif args.endswith("import torch"):
    sys.exit(0 if {torch} else 1)
elif "rocminfo" in args:
    print("  Name:                    gfx950")
""")
    docker.chmod(0o755)
    return docker


def test_health_then_each_image_on_the_device(tmp_path, monkeypatch):
    dev = tmp_path / "dev"
    (dev / "dri").mkdir(parents=True)
    (dev / "kfd").write_text("")
    (dev / "dri/renderD128").write_text("")
    docker = _fake_docker(tmp_path, torch=True)
    skipped, results = smoke.health(dev, str(docker))
    assert skipped is None and all(r.ok for r in results), results
    calls = []
    monkeypatch.setattr(smoke, "_run", lambda cmd: (calls.append(cmd), (True, "ok"))[1])
    results = smoke.device_checks("h/f/pytorch@sha256:" + "a" * 64, ("gfx950",), str(docker))
    assert [r.name.split(":")[0] for r in results] == [
        "imagecheck h/f/pytorch@sha256",
        "PyTorch on the device",
    ]
    assert calls[0][1:] == [
        "-m",
        "tools.imagecheck",
        "--pull",
        "--arch",
        "gfx950",
        "h/f/pytorch@sha256:" + "a" * 64,
    ]
    device = calls[2]
    assert device[:2] == [str(docker), "run"] and "/dev/kfd" in device and device[-1] == "gfx950"


def test_an_image_without_torch_is_checked_with_rocminfo(tmp_path, monkeypatch):
    docker = _fake_docker(tmp_path, torch=False)
    monkeypatch.setattr(smoke.sys, "executable", "true")  # imagecheck: passes
    results = smoke.device_checks(
        "h/f/rocm-runtime@sha256:" + "b" * 64, ("gfx942", "gfx950"), str(docker)
    )
    assert results[-1].ok and results[-1].detail == "agents of gfx950", results
    results = smoke.device_checks("h/f/rocm-runtime@sha256:" + "b" * 64, ("gfx1201",), str(docker))
    assert not results[-1].ok and "no agent of gfx1201" in results[-1].detail


@pytest.mark.parametrize("bad", ["not json", ""])
def test_an_unreadable_push_record_is_one_line(tmp_path, bad):
    push = tmp_path / "push.json"
    push.write_text(bad)
    with pytest.raises(
        smoke.SmokeError, match=r"--push .*push.json: .*give the push's --json output"
    ):
        smoke.smoke("gfx950", push, catalog_mod.load(FIXTURE), dev=tmp_path)


# ---- the files read without PyYAML, as the offline run reads them --------------


def _as_pyyaml(value):
    """PyYAML's answer with `on` as the key it is (YAML 1.1 reads it as True)."""
    if isinstance(value, dict):
        return {("on" if k is True else k): _as_pyyaml(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_pyyaml(v) for v in value]
    return value


@pytest.mark.parametrize(
    "path",
    [*sorted((GITHUB / "workflows").glob("*.yml")), GITHUB / "actionlint.yaml"],
    ids=lambda p: p.name,
)
def test_miniyaml_reads_every_file_as_pyyaml_does(path):
    text = path.read_text()
    assert miniyaml.loads(text) == _as_pyyaml(yaml.safe_load(text))


MORE_YAML = """\
# a comment
a: plain text  # and a comment after it
b: 'it''s # not a comment'
c: "tab\\there"
d: [x, 'y z', "w"]
e: {}
f: 12
g: false
h: ~
folded: >-
  one
  two

  three
literal: |
  keep
    this
seq:
  - one
  - k: v
    m:
      - n
  -
    deep: 1
"""


def test_miniyaml_reads_the_yaml_render_may_write():
    assert miniyaml.loads(MORE_YAML) == yaml.safe_load(MORE_YAML)


@pytest.mark.parametrize(
    "text, problem",
    [
        ("a: *anchor\n", "line 1: '*anchor' is YAML this reader does not take"),
        ("a: [x, [y]]\n", "line 1: nested flow collections are not taken"),
        ("a: 1\na: 2\n", "line 2: 'a' given twice"),
        ("a:\n    b: 1\n  c: 2\n", "line 3: indented 2, expected 0"),
        ("a: 'open\n", "line 1: unterminated single-quoted string"),
    ],
)
def test_miniyaml_refuses_the_rest_naming_the_line(text, problem):
    with pytest.raises(miniyaml.YamlError, match=re.escape(problem)):
        miniyaml.loads(text)


# ---- the offline run ---------------------------------------------------------------

WORKFLOW = """\
on:
  workflow_dispatch:
    inputs:
      who:
        type: string
        default: world
jobs:
  first:
    runs-on: [self-hosted, linux, x64, rocm-pytorch-ci]
    outputs:
      greeting: ${{ steps.say.outputs.greeting }}
    env:
      WHO: ${{ inputs.who || 'nobody' }}
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
      - run: echo "LATER=from-env" >> "$GITHUB_ENV"
      - id: say
        run: |
          echo "greeting=hello $WHO, $LATER" >> "$GITHUB_OUTPUT"
          echo "### said hello" >> "$GITHUB_STEP_SUMMARY"
      - run: printf 'FAIL: one check\\n3 passed, 1 failed\\n'
  secret:
    runs-on: [self-hosted, linux, x64, rocm-pytorch-ci]
    steps:
      - run: echo never
        env:
          KEY: ${{ secrets.KEY }}
  build-host:
    runs-on: [self-hosted, linux, x64, rocm-pytorch-build]
    steps:
      - run: echo never
  failing:
    runs-on: [self-hosted, linux]
    steps:
      - run: exit 3
      - run: echo not reached > reached
"""


def test_the_offline_run_runs_steps_in_order_with_the_runners_files(tmp_path):
    workflow = tmp_path / "w.yml"
    workflow.write_text(WORKFLOW)
    logged = []
    tally = offline.run_workflow(workflow, {}, [], tmp_path, logged.append)
    assert tally.outputs == {"first": {"greeting": "hello world, from-env"}}
    assert list(tally.summaries.values()) == ["### said hello\n"]
    # 3 steps of `first` (one reports 3 passed, 1 failed), `failing`'s first step
    assert (tally.passed, tally.failed) == (2 + 3, 1 + 1)
    assert "FAIL: one check" in tally.lines
    assert "FAIL: failing step 1 (exit 3): exit 3" in tally.lines
    assert not (tmp_path / "reached").exists(), "a job stops at its failed step"
    assert tally.not_run == [
        "w.yml secret: secret step 1 (echo never) needs a secret",
        "w.yml build-host: needs a runner labelled rocm-pytorch-build"
        " (this machine stands in for a CI host)",
    ]


def test_an_input_given_wins_over_its_default(tmp_path):
    workflow = tmp_path / "w.yml"
    workflow.write_text(WORKFLOW)
    tally = offline.run_workflow(workflow, {"who": "team"}, ["first"], tmp_path, lambda _: None)
    assert tally.outputs["first"]["greeting"] == "hello team, from-env"


def test_weekly_offline_runs_its_matrix_and_lists_what_needs_other_hosts():
    logged = []
    tally = offline.run_workflow(
        GITHUB / "workflows/weekly.yml", {}, [], places.workspace(), logged.append
    )
    assert "matrix" in tally.outputs, "\n".join(logged + tally.lines)
    variants = json.loads(tally.outputs["matrix"]["variants"])
    assert variants == list(catalog_mod.load(REAL).variants)
    assert tally.failed == 0 and tally.passed == 1
    assert [line.split(":")[0] for line in tally.not_run] == [
        "weekly.yml publish",
        "weekly.yml gpu-smoke",
    ]
    assert "rocm-pytorch-build" in tally.not_run[0] and "rocm-pytorch-gpu" in tally.not_run[1]


def test_an_expression_it_cannot_evaluate_stops_the_job():
    with pytest.raises(offline.NotHere, match="not evaluable offline"):
        offline.evaluate("fromJSON(needs.matrix.outputs.variants)", {})
    assert offline.evaluate("inputs.arch || 'scheduled'", {"inputs": {}}) == "scheduled"
    assert offline.evaluate("inputs.arch || 'scheduled'", {"inputs": {"arch": "gfx950"}}) == (
        "gfx950"
    )
