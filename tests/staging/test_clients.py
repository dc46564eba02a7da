"""check_staged and Staging.client: what image builds, the push and the layout ask of staging."""

from __future__ import annotations

import json

import pytest

from tools.oci.client import RegistryClient
from tools.oci.digest import digest_of
from tools.oci.media import OCI_MANIFEST
from tools.staging import Staging
from tools.staging import descriptor as desc
from tools.staging.clients import Lost, check_staged
from tools.staging.loopback import LoopbackClient

CONFIG, LAYER = "sha256:" + "c" * 64, "sha256:" + "1" * 64


SHARED = Staging("registry.example.com/staging", False)


def descriptor() -> desc.Descriptor:
    manifest = json.dumps(
        {"config": {"digest": CONFIG, "size": 2}, "layers": [{"digest": LAYER, "size": 3}]}
    ).encode()
    return desc.Descriptor(
        target="rocm-runtime",
        arch="gfx950",
        repository="rocm-runtime",
        digest=digest_of(manifest),
        media_type=OCI_MANIFEST,
        manifest=manifest,
        config={},
        **SHARED.placement("staging/rocm-runtime", "c-00"),
    )


class Holding:
    """A staging client that holds some manifests and blobs, and says when it is closed."""

    def __init__(self, *digests: str) -> None:
        self.digests = set(digests)
        self.closed = False

    def manifest_digest(self, name: str, reference: str) -> str | None:
        return reference if reference in self.digests else None

    def blob_exists(self, name: str, digest: str) -> bool:
        return digest in self.digests

    def close(self) -> None:
        self.closed = True


def test_an_image_staging_holds_whole_passes():
    d = descriptor()
    client = Holding(d.digest, CONFIG, LAYER)
    check_staged(d, client)
    assert not client.closed  # the caller's client stays open


@pytest.mark.parametrize("missing", ["manifest", "config", "layer"])
def test_a_lost_manifest_or_blob_is_the_one_lost_message_with_the_fix(missing):
    d = descriptor()
    held = {"manifest": d.digest, "config": CONFIG, "layer": LAYER}
    held.pop(missing)
    with pytest.raises(Lost) as e:
        check_staged(d, Holding(*held.values()))
    assert str(e.value) == (
        f"staging has lost rocm-runtime (gfx950) {d.digest}"
        f" (registry.example.com/staging/rocm-runtime@{d.digest}); run"
        " `bazel run //tools/staging -- forget` and build again (it rebuilds what is missing)"
    )
    assert e.value.blob == {"manifest": "", "config": CONFIG, "layer": LAYER}[missing]


def test_without_a_client_the_descriptors_staging_hands_one_out_and_it_is_closed(monkeypatch):
    d = descriptor()
    made = []

    def client(staging: Staging) -> Holding:
        made.append((staging, Holding(d.digest)))
        return made[-1][1]

    monkeypatch.setattr(Staging, "client", client)
    with pytest.raises(Lost):
        check_staged(d)
    [(staging, c)] = made
    assert staging == SHARED
    assert c.closed


def test_staging_hands_out_the_loopback_client_for_the_embedded_registry_only():
    embedded = Staging("127.0.0.1:5480/staging", True).client()
    shared = Staging("registry.example.com/staging", False).client()
    try:
        assert isinstance(embedded, LoopbackClient) and embedded.host == "127.0.0.1:5480"
        assert isinstance(shared, RegistryClient) and shared.base == "https://registry.example.com"
    finally:
        embedded.close()
        shared.close()
