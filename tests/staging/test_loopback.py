"""tools/staging/loopback.py against a real embedded registry: the three reads an image
build makes (parent HEAD, manifest and config GET) answer as tools/registry's client
does, and every failure is one RegistryError naming the request."""

from __future__ import annotations

import json

import pytest

from tests.staging.conftest import push_image, sha
from tools.oci.client import RegistryClient
from tools.oci.errors import RegistryError
from tools.staging import embedded
from tools.staging.loopback import LoopbackClient


@pytest.fixture
def host(state):
    return f"127.0.0.1:{embedded.ensure_running()}"


def test_reads_answer_as_the_registry_client_does(host):
    image = push_image(host, "staging/app", "c-1")
    ours, theirs = LoopbackClient(host), RegistryClient(host, retries=0)
    try:
        for ref in ("c-1", image.digest):
            assert ours.manifest_digest(image.name, ref) == theirs.manifest_digest(image.name, ref)
            assert ours.get_manifest(image.name, ref) == theirs.get_manifest(image.name, ref)
        assert ours.manifest_digest(image.name, image.digest) == image.digest
        assert ours.manifest_digest(image.name, "sha256:" + "0" * 64) is None
        assert ours.manifest_digest("staging/nothing", "c-1") is None
        config = json.loads(image.manifest)["config"]["digest"]
        assert ours.get_blob(image.name, config) == theirs.get_blob(image.name, config)
        assert json.loads(ours.get_blob(image.name, config)) == image.config
    finally:
        ours.close()
        theirs.close()


def test_one_connection_serves_every_request_and_survives_a_registry_restart(host, state):
    image = push_image(host, "staging/app", "c-1")
    c = LoopbackClient(host)
    try:
        assert c.manifest_digest(image.name, "c-1") == image.digest
        first = c._conn.sock
        assert c.get_manifest(image.name, "c-1")[0] == image.manifest
        assert c._conn.sock is first  # kept alive
        embedded.stop()
        embedded.ensure_running()  # same port (ROCM_PYTORCH_STAGING_PORT), same storage
        assert c.manifest_digest(image.name, "c-1") == image.digest  # reconnected once
    finally:
        c.close()


def test_failures_name_the_request(host, state):
    image = push_image(host, "staging/app", "c-1")
    c = LoopbackClient(host)
    try:
        missing = r"GET staging/app:c-2 on 127\.0\.0\.1:\d+: HTTP 404"
        with pytest.raises(RegistryError, match=missing):
            c.get_manifest(image.name, "c-2")
        with pytest.raises(RegistryError, match="GET blob staging/app@sha256:"):
            c.get_blob(image.name, sha(b"never pushed"))
        embedded.stop()
        with pytest.raises(RegistryError, match=rf"HEAD {host}/v2/staging/app/manifests/c-1: "):
            c.manifest_digest(image.name, "c-1")
    finally:
        c.close()
