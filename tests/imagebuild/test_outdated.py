"""tools/imagebuild/outdated.py: descriptors of an upgraded builder are forgotten, others kept."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tools.imagebuild import outdated
from tools.oci.digest import digest_of
from tools.staging import descriptor as desc

INSPECT = """\
Name:          hostb
Driver:        docker

Nodes:
Name:             hostb
Endpoint:         hostb
Status:           running
BuildKit version: v0.0.0+unknown
"""

OLD = {
    "name": "hostb",
    "driver": "docker",
    "endpoints": ["ssh://hostb"],
    "buildkit": ["v0.0.0+unknown"],
    "engine": "28.5.2",
}


def write(path: Path, builder: dict | str) -> Path:
    manifest = b'{"schemaVersion":2,"config":{"digest":"sha256:00","size":2},"layers":[]}'
    d = desc.Descriptor(
        target="rocm-runtime",
        arch="gfx1201",
        repository="rocm-runtime",
        digest=digest_of(manifest),
        media_type="application/vnd.oci.image.manifest.v1+json",
        manifest=manifest,
        config={},
        staging_registry="127.0.0.1:5480/staging",
        staging_name="staging/rocm-runtime",
        staging_tag="c-00",
        embedded=True,
    )
    data = d.to_json()
    data["builder"] = builder
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def fake_docker(tmp_path, monkeypatch, engine_version: str, hostc_up: bool) -> str:
    scenario = tmp_path / "scenario.json"
    exe = tmp_path / "docker"
    exe.write_text(f"#!{sys.executable}\n" + (Path(__file__).parent / "fake_docker.py").read_text())
    exe.chmod(0o755)
    monkeypatch.setenv("FAKE_DOCKER_SCENARIO", str(scenario))
    down = "Name: hostc\nDriver: \nError: Cannot connect to the Docker daemon at ssh://hostc\n"
    scenario.write_text(
        json.dumps(
            {
                "context inspect hostb --format {{.Endpoints.docker.Host}}": {"out": "ssh://hostb"},
                "--context hostb buildx inspect": {"out": INSPECT},
                "--context hostb version --format {{.Server.Version}}": {"out": engine_version},
                "context inspect hostc --format {{.Endpoints.docker.Host}}": {"out": "ssh://hostc"},
                "--context hostc buildx inspect": {
                    "out": INSPECT.replace("hostb", "hostc") if hostc_up else down
                },
                "--context hostc version --format {{.Server.Version}}": {"out": "28.5.2"},
            }
        )
    )
    return str(exe)


def test_descriptors_of_an_upgraded_builder_are_forgotten(tmp_path, monkeypatch, capsys):
    out = tmp_path / "bazel-out"
    old = write(out / "a/rocm-runtime.gfx1201.json", OLD)
    new = write(out / "b/pytorch.gfx1201.json", dict(OLD, engine="29.0.1"))
    legacy = write(out / "c/triton-wheel.json", "default")
    docker = fake_docker(tmp_path, monkeypatch, "29.0.1\n", hostc_up=True)
    code = outdated.main(["--descriptors", str(out), "--docker", docker])
    assert code == 0
    assert not old.exists(), "made by the engine before the upgrade: forgotten"
    assert new.exists(), "made by the engine as it is now: kept"
    assert not legacy.exists(), "no version recorded: forgotten"
    text = capsys.readouterr().out
    assert (
        "hostb (docker, BuildKit v0.0.0+unknown, engine 29.0.1): 1 of 2 descriptors older" in text
    )
    assert text.rstrip().endswith(
        "3 descriptors, forgot 2 made by an older or re-pointed builder: the next build"
        " rebuilds those images"
    )


def test_a_builder_that_does_not_answer_keeps_its_descriptors(tmp_path, monkeypatch, capsys):
    out = tmp_path / "bazel-out"
    kept = write(out / "rocm-runtime.gfx1201.json", dict(OLD, name="hostc"))
    docker = fake_docker(tmp_path, monkeypatch, "28.5.2\n", hostc_up=False)
    assert outdated.main(["--descriptors", str(out), "--docker", docker, "--dry-run"]) == 0
    assert kept.exists()
    text = capsys.readouterr().out
    assert "hostc: builder hostc (for arch any) is down or unreachable" in text
    assert text.rstrip().endswith(
        "would forget 0 made by an older or re-pointed builder: the next build rebuilds those"
        " images; not answering: hostc"
    )
