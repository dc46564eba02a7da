"""`registry load`: images from staging into the local Docker engine under their real refs.

Needs a Docker engine (tools/engine finds or starts one): the engine pulls from
a loopback staging registry this test starts (dockerd treats 127.0.0.0/8 as
insecure).
"""

from __future__ import annotations

import json
import subprocess
import uuid

import httpx
import pytest

from tests.registry.fixtures import Registry
from tests.registry.staging_images import family, registry_tool, write_plan


@pytest.fixture
def staging(tmp_path):
    r = Registry(tmp_path / "staging")
    yield r
    r.stop()


@pytest.fixture
def namespace():
    """A registry/namespace of this run only; its images are removed afterwards."""
    ns = f"load-{uuid.uuid4().hex[:8]}.example/rocm-pytorch"
    yield ns
    names = docker("image", "ls", "--format", "{{.Repository}}:{{.Tag}}").stdout.split()
    mine = [n for n in names if n.startswith(ns)]
    if mine:
        docker("image", "rm", *mine)


def docker(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["docker", *args], capture_output=True, text=True, check=False)


def image_id(ref: str) -> str:
    r = docker("image", "inspect", "--format", "{{.Id}}", ref)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def spec_refs(image, namespace: str) -> list[str]:
    spec = json.loads(image.spec.read_text())
    return [f"{namespace}/{spec['repository']}:{t}" for t in filter(None, spec["tags"].values())]


def test_load_tags_the_image_with_every_ref_of_its_spec(tmp_path, staging, namespace):
    _, child = family(staging.host, tmp_path / "images", vcs_ref="abc1234")
    args = ["--descriptor", str(child.path), "--spec", str(child.spec), "--registry", namespace]
    result = registry_tool("load", *args)
    assert result.code == 0, result.err
    want = spec_refs(child, namespace)
    assert len(want) == 3  # versioned, floating, immutable
    assert result.out.splitlines() == [f"loaded {ref}" for ref in want]
    # should be the very image of the descriptor under each ref
    for ref in want:
        assert image_id(ref) == child.descriptor.digest
    labels = docker("image", "inspect", "--format", "{{json .Config.Labels}}", want[0]).stdout
    assert json.loads(labels) == {"test.target": "pytorch-base"}
    # should not leave the staging name behind
    staged = f"{staging.host}/{child.descriptor.staging_name}@{child.descriptor.digest}"
    assert docker("image", "inspect", staged).returncode != 0


def test_load_of_a_plan_loads_every_image(tmp_path, staging, namespace):
    images = family(staging.host, tmp_path / "images")
    plan = write_plan(tmp_path, images)
    result = registry_tool("load", "--plan", str(plan), "--registry", namespace)
    assert result.code == 0, result.err
    want = [ref for i in images for ref in spec_refs(i, namespace)]
    assert result.out.splitlines() == [f"loaded {ref}" for ref in want]
    for image in images:
        for ref in spec_refs(image, namespace):
            assert image_id(ref) == image.descriptor.digest


def test_load_without_an_engine_names_docker_host(tmp_path, staging):
    (image, _) = family(staging.host, tmp_path / "images")
    host = f"unix://{tmp_path}/no-such.sock"
    args = ["--descriptor", str(image.path), "--spec", str(image.spec)]
    result = registry_tool("load", *args, env={"DOCKER_HOST": host})
    assert result.code == 1
    (line,) = result.err.splitlines()
    assert line.startswith(f"registry: error: cannot reach the Docker engine (DOCKER_HOST={host}):")
    assert line.endswith("start it, or point DOCKER_HOST at a running one")


def test_load_of_content_staging_lost_names_image_and_fix(tmp_path, staging):
    (image, _) = family(staging.host, tmp_path / "images")
    d = image.descriptor
    r = httpx.delete(f"http://{staging.host}/v2/{d.staging_name}/manifests/{d.digest}")
    assert r.status_code == 202
    result = registry_tool("load", "--descriptor", str(image.path), "--spec", str(image.spec))
    assert result.code == 1
    assert result.err.splitlines()[-1].startswith(
        f"registry: error: staging has lost rocm-runtime (gfx950) {d.digest}"
    )
