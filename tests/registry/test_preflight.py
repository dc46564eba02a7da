"""`registry check` (tools/registry/preflight.py): the registry a push writes to answers
and takes a write, checked in seconds before anything is built (#42 2.2). Before, a wrong
registry was found when the push started, after the whole build."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.registry.fixtures import Registry, docker_config, free_port
from tests.registry.staging_images import registry_tool


def spec(tmp_path: Path, registry: str, repository: str, target: str = "pytorch") -> Path:
    """A tagconf spec (the fields the push reads)."""
    path = tmp_path / f"{target}.spec.json"
    path.write_text(
        json.dumps(
            {
                "target": target,
                "arch": "gfx950",
                "registry": registry,
                "repository": repository,
                "tags": {"versioned": "4.5.6", "floating": "latest", "immutable": None},
            }
        )
    )
    return path


def check(*specs: Path, env: dict | None = None):
    args = [a for s in specs for a in ("--spec", str(s))]
    return registry_tool("check", *args, "--retries", "0", env=env, timeout=60)


def test_a_registry_that_takes_a_write_passes_and_nothing_is_written(tmp_path, registries):
    target = registries("target")
    stamp = tmp_path / "stamp"
    a = spec(tmp_path, f"{target.host}/team", "pytorch")
    b = spec(tmp_path, f"{target.host}/team", "vllm", target="vllm")
    result = registry_tool(
        "check", "--spec", str(a), "--spec", str(b), "--stamp", str(stamp), timeout=60
    )
    assert result.code == 0, result.err
    (line,) = result.err.splitlines()
    assert line.startswith(f"registry check: {target.host} (http): 2 repositories take a write (")
    assert stamp.read_text() == "checked\n"
    # nothing written: no blob, no manifest, no tag (an upload session's scratch directory
    # is the registry's own, purged by it)
    data = target.root / "data"
    assert list(data.rglob("blobs/sha256/*/*/data")) == []
    assert list(data.rglob("_manifests")) == []


def test_a_registry_that_does_not_answer_fails_in_one_line_naming_the_fix(tmp_path):
    port = free_port()  # nothing listens there
    stamp = tmp_path / "stamp"
    s = spec(tmp_path, f"127.0.0.1:{port}/team", "pytorch")
    result = registry_tool("check", "--spec", str(s), "--stamp", str(stamp), timeout=60)
    assert result.code == 1
    assert result.err.splitlines() == [
        f"registry: error: GET http://127.0.0.1:{port}/v2/: connection refused by"
        f" 127.0.0.1:{port}; is the registry running? check the host and port"
    ]
    assert not stamp.exists()


@pytest.mark.parametrize("password", ["wrong", None])
def test_a_write_without_working_credentials_names_docker_login(tmp_path, password):
    registry = Registry(tmp_path / "auth-registry", users={"ci": "s3cret"})
    try:
        config = tmp_path / "docker"
        if password:
            docker_config(config, registry.host, "ci", password)
        else:
            config.mkdir()
        s = spec(tmp_path, f"{registry.host}/team", "pytorch")
        result = check(s, env={"DOCKER_CONFIG": str(config)})
        assert result.code == 1
        (line,) = [x for x in result.err.splitlines() if "error" in x]
        assert f"{registry.host}/team/pytorch: the registry wants credentials" in line, line
        assert f"`docker login {registry.host}`" in line
        good = docker_config(tmp_path / "good", registry.host, "ci", "s3cret")
        assert check(s, env={"DOCKER_CONFIG": str(good)}).code == 0
    finally:
        registry.stop()


def test_check_needs_a_plan_or_specs(tmp_path):
    result = registry_tool("check", timeout=60)
    assert result.code == 1
    assert "give --plan or --spec" in result.err
    assert os.environ.get("REGISTRY_BIN_TOOL")
