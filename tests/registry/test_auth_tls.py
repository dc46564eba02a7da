"""Authenticated (htpasswd) and TLS registries."""

from __future__ import annotations

import pytest

from tests.registry.family_push import push_one
from tests.registry.fixtures import Registry, docker_config


@pytest.fixture
def auth_registry(tmp_path):
    r = Registry(tmp_path / "auth-registry", users={"ci": "s3cret"})
    yield r
    r.stop()


@pytest.fixture
def tls_registry(tmp_path):
    r = Registry(tmp_path / "tls-registry", tls=True)
    yield r
    r.stop()


def test_good_credentials_from_docker_config_push(auth_registry, tmp_path):
    config = docker_config(tmp_path / "docker", auth_registry.host, "ci", "s3cret")
    result = push_one(tmp_path, auth_registry.host, env={"DOCKER_CONFIG": str(config)})
    assert result.code == 0, result.err
    assert "1/1 images pushed" in result.err


@pytest.mark.parametrize("password", ["wrong", None])
def test_bad_or_missing_credentials_fail_naming_docker_login(auth_registry, tmp_path, password):
    config = tmp_path / "docker"
    if password:
        docker_config(config, auth_registry.host, "ci", password)
    else:
        config.mkdir()
    result = push_one(tmp_path, auth_registry.host, env={"DOCKER_CONFIG": str(config)})
    assert result.code == 1
    assert "HTTP 401 unauthorized" in result.err
    assert f"docker login {auth_registry.host}" in result.err


def test_tls_registry_with_its_ca_is_accepted(tls_registry, tmp_path):
    result = push_one(
        tmp_path, f"https://{tls_registry.host}", "--ca-file", str(tls_registry.ca_file)
    )
    assert result.code == 0, result.err


def test_tls_registry_without_its_ca_is_refused(tls_registry, tmp_path):
    result = push_one(tmp_path, f"https://{tls_registry.host}")
    assert result.code == 1
    assert "TLS certificate not trusted" in result.err
    assert "--ca-file" in result.err
