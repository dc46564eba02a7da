"""`tagconf bake`: the family as a `docker buildx bake` file (what plain bake would build).

On the tests' own catalogue (tests/fixtures/catalog.toml)."""

from __future__ import annotations

import json

import pytest


def bake(run, *argv: str) -> tuple[dict, str]:
    result = run("bake", *argv)
    assert result.code == 0, result.err
    return json.loads(result.out), result.err


def test_a_target_comes_with_every_parent_as_a_target_context(run, tmp_path):
    out = tmp_path / "bake.json"
    result = run("bake", "--target", "vllm", "--arch", "gfx1100", "--output", str(out))
    assert result.code == 0, result.err
    data = json.loads(out.read_text())
    assert data["group"] == {"default": {"targets": ["vllm-gfx1100"]}}
    vllm = data["target"]["vllm-gfx1100"]
    assert vllm["dockerfile"] == "docker/Dockerfile.vllm" and vllm["target"] == "vllm"
    assert vllm["context"] == "." and vllm["network"] == "host"
    absent = tmp_path / "bake.json.absent" / "aiter-wheel-gfx1100"
    assert vllm["contexts"] == {
        "aiter-wheel": str(absent),  # not built for gfx1100: NOT-BUILT, as the image build has it
        "pytorch": "target:pytorch-gfx1100",
        "triton-wheel": "target:triton-wheel",
    }
    assert (absent / "NOT-BUILT").read_text().startswith("aiter-wheel is not built for gfx1100")
    # the closure: every target: context names a target of the file, arch-free ones once
    names = set(data["target"])
    for entry in data["target"].values():
        for value in entry.get("contexts", {}).values():
            assert not value.startswith("target:") or value[7:] in names, value
    assert "aiter-wheel-gfx1100" not in names and "triton-wheel" in names


def test_each_target_carries_the_specs_args_labels_and_refs(run):
    data, _ = bake(run, "--group", "default", "--arch", "gfx950,gfx942", "--set", "VCS_REF=abc1234")
    assert data["target"]["pytorch-gfx950"]["tags"][-1].endswith("-gabc1234")
    for name, entry in data["target"].items():
        target, _, arch = name.partition("-gfx")
        archs = ["--arch", f"gfx{arch}"] if arch else []
        spec = run("spec", "--target", target, *archs, "--set", "VCS_REF=abc1234")
        spec = json.loads(spec.out)
        assert entry["args"] == spec["build_args"], name
        assert entry["labels"] == spec["labels"], name
        assert entry["tags"] == spec["refs"], name
    default = data["group"]["default"]["targets"]
    assert "pytorch-gfx950" in default and "pytorch-gfx942" in default
    assert len(default) == len(set(default))


def test_secrets_upstream_and_network_reach_every_target(run, tmp_path):
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    for name in ("apt-mirror", "pip.conf"):
        (secrets / name).write_text("x\n")
    data, _ = bake(
        run,
        "--target", "rocm-runtime", "--arch", "gfx950", "--network", "none",
        "--secrets-dir", str(secrets), "--upstream", "127.0.0.1:5480/staging/up@sha256:" + "a" * 64,
    )  # fmt: skip
    entry = data["target"]["rocm-runtime-gfx950"]
    assert entry["network"] == "none"
    assert entry["secret"] == [
        f"id=apt-mirror,src={secrets / 'apt-mirror'}",
        f"id=pip.conf,src={secrets / 'pip.conf'}",
    ]
    assert entry["contexts"] == {
        "fixture/dev-upstream:9.8.7-full": "docker-image://127.0.0.1:5480/staging/up@sha256:"
        + "a" * 64
    }


def test_a_family_of_twins_on_a_target_upstream(run):
    data, _ = bake(
        run, "--target", "pytorch-base", "--arch", "gfx950",
        "--dockerfile-dir", "tests/e2e/docker", "--upstream", "target:upstream",
    )  # fmt: skip
    base = data["target"]["pytorch-base-gfx950"]
    assert base["dockerfile"] == "tests/e2e/docker/Dockerfile.base"
    # the upstream named as the catalogue has it: UPSTREAM_IMAGE:ROCM_VERSION
    assert base["contexts"]["fixture/dev-upstream:9.8.7-full"] == "target:upstream"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--target", "vllm", "--arch", "gfx1100"],
            "vllm-gfx1100: its optional parent aiter-wheel is not built for gfx1100; pass"
            " --absent-dir DIR",
        ),
        (["--network", "bridge"], "--network bridge: unknown network; use host, none or default"),
        (["--secrets-dir", "/nonexistent"], "--secrets-dir /nonexistent: not a directory"),
        (["--target", "aiter-wheel", "--arch", "gfx1100"], "--target aiter-wheel"),
    ],
)
def test_errors_are_one_line(run, argv, message):
    result = run("bake", *argv)
    assert result.code == 2
    assert result.err.startswith("tagconf: error: ") and message in result.err, result.err
    assert result.err.count("\n") == 1 and result.out == ""


def test_optional_args_reach_every_target_as_bakes_set_would(run, tmp_path):
    ref = "60d3c2cf0cb7c481636b6299a233f161cf49c4bc"  # the rehearsal's pin (pins.bazelrc)
    group = ["--group", "default", "--arch", "gfx1100", "--absent-dir", str(tmp_path)]
    data, _ = bake(
        run, *group,
        "--arg", f"TRITON_KERNELS_REF={ref}", "--arg", "FLASH_ATTN_REF=abc",
    )  # fmt: skip
    for name, entry in data["target"].items():
        assert entry["args"]["TRITON_KERNELS_REF"] == ref, name
        assert entry["args"]["FLASH_ATTN_REF"] == "abc", name
    # the catalogue's own args are untouched
    plain, _ = bake(run, *group)
    for name, entry in data["target"].items():
        extra = {"TRITON_KERNELS_REF", "FLASH_ATTN_REF"}
        rest = {k: v for k, v in entry["args"].items() if k not in extra}
        assert rest == plain["target"][name]["args"], name


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        ("ROCM_VERSION=1", "--arg ROCM_VERSION=1: ROCM_VERSION is a catalogue key"),
        ("lower=1", "--arg lower=1: expected NAME=VALUE"),
    ],
)
def test_optional_args_refuse_catalogue_keys(run, arg, message):
    result = run("bake", "--target", "rocm-runtime", "--arg", arg)
    assert result.code == 2 and message in result.err, result.err
