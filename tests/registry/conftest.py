"""Fixtures of the registry tests: real docker-registry processes and fault proxies.

Bazel runs this file only for the test targets that list it in their srcs
(tests/registry/BUILD.bazel): list it in every target whose tests use these
fixtures. Test modules use the fixtures by name and never import this file.
"""

from __future__ import annotations

import pytest

from tests.registry.fixtures import FaultProxy, Registry


@pytest.fixture
def registry(tmp_path):
    """One registry for the test, stopped after it."""
    r = Registry(tmp_path / "registry")
    yield r
    r.stop()


@pytest.fixture
def registries(tmp_path):
    """``registries(name, **Registry options)`` starts a registry; all stop after the test."""
    started = []

    def start(name: str, **kwargs) -> Registry:
        started.append(Registry(tmp_path / name, **kwargs))
        return started[-1]

    yield start
    for r in started:
        r.stop()


@pytest.fixture
def proxy_for():
    """``proxy_for(registry, **FaultProxy options)`` puts a recording, fault-injecting proxy in
    front of ``registry``; all stop after the test."""
    proxies = []

    def make(registry: Registry, **kwargs) -> FaultProxy:
        proxies.append(FaultProxy(registry.host, **kwargs))
        return proxies[-1]

    yield make
    for p in proxies:
        p.stop()


@pytest.fixture(autouse=True)
def history_dir(tmp_path, monkeypatch):
    """Every push a test runs appends to a publish history in the test's own directory,
    never to the user's (~/.cache/rocm-pytorch-images/history)."""
    monkeypatch.setenv("ROCM_PYTORCH_HISTORY_DIR", str(tmp_path / "history"))


@pytest.fixture
def env(tmp_path, monkeypatch):
    """No user credentials: an empty DOCKER_CONFIG, here and for the tools a test runs.

    A module that needs more overrides it and asks for this one by the same name.
    """
    config = tmp_path / "docker-config"
    config.mkdir()
    monkeypatch.setenv("DOCKER_CONFIG", str(config))
    return {"DOCKER_CONFIG": str(config)}
