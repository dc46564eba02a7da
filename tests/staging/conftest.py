"""Fixtures: a private embedded-staging state dir per test, and image pushes over HTTP."""

from __future__ import annotations

import hashlib
import http.client
import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from tools.process.daemon import free_port
from tools.staging import descriptor, embedded

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"


@pytest.fixture
def state(tmp_path, monkeypatch):
    """ROCM_PYTORCH_STAGING_DIR and _PORT of this test only; stops its registry after."""
    root = tmp_path / "staging-state"
    monkeypatch.setenv(embedded.DIR_ENV, str(root))
    monkeypatch.setenv(embedded.PORT_ENV, str(free_port()))
    monkeypatch.delenv(embedded.BIN_ENV, raising=False)
    monkeypatch.setattr(embedded, "PORT_RELEASE_WAIT", 0.5)  # quick "port taken" errors
    yield embedded.paths()
    embedded.stop()


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _request(host: str, method: str, path: str, body: bytes = b"", headers=None):
    name, _, port = host.partition(":")
    conn = http.client.HTTPConnection(name, int(port), timeout=10)
    conn.request(method, path, body=body, headers=headers or {})
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, r, data


def upload_blob(host: str, name: str, data: bytes) -> str:
    digest = sha(data)
    status, r, _ = _request(host, "POST", f"/v2/{name}/blobs/uploads/")
    assert status == 202, status
    location = r.getheader("Location")
    path = location.split(host, 1)[-1]
    sep = "&" if "?" in path else "?"
    status, _, body = _request(host, "PUT", f"{path}{sep}digest={digest}", data)
    assert status == 201, (status, body)
    return digest


@dataclass(frozen=True)
class Pushed:
    name: str
    tag: str
    digest: str
    manifest: bytes
    config: dict


def push_image(host: str, name: str, tag: str, size: int = 64 << 10) -> Pushed:
    """A one-layer OCI image with ``size`` random bytes, tagged ``name:tag``."""
    layer = os.urandom(size)
    config = {"architecture": "amd64", "os": "linux", "rootfs": {"type": "layers"}}
    config_bytes = json.dumps(config).encode()
    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": upload_blob(host, name, config_bytes),
                "size": len(config_bytes),
            },
            "layers": [
                {
                    "mediaType": "application/vnd.oci.image.layer.v1.tar",
                    "digest": upload_blob(host, name, layer),
                    "size": len(layer),
                }
            ],
        }
    ).encode()
    return tag_manifest(host, name, tag, manifest, config)


def tag_manifest(host: str, name: str, tag: str, manifest: bytes, config: dict) -> Pushed:
    status, _, body = _request(
        host, "PUT", f"/v2/{name}/manifests/{tag}", manifest, {"Content-Type": OCI_MANIFEST}
    )
    assert status == 201, (status, body)
    return Pushed(name, tag, sha(manifest), manifest, config)


def write_descriptor(
    directory: Path, image: Pushed, registry: str, *, embedded_: bool, parents=None
) -> Path:
    """A descriptor for ``image`` in ``directory`` (as an ImageBuild action leaves it)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{image.name.replace('/', '_')}_{image.tag}.json"
    descriptor.Descriptor(
        target=image.name.rsplit("/", 1)[-1],
        arch="gfx950",
        repository=image.name.rsplit("/", 1)[-1],
        digest=image.digest,
        media_type=OCI_MANIFEST,
        manifest=image.manifest,
        config=image.config,
        staging_registry=registry,
        staging_name=image.name,
        staging_tag=image.tag,
        embedded=embedded_,
        parents=parents or {},
    ).write(path)
    return path


def age_tag(p: embedded.Paths, name: str, tag: str, seconds: float) -> None:
    """Make the embedded storage say ``name:tag`` was pushed ``seconds`` ago."""
    import time

    link = p.repositories / name / "_manifests/tags" / tag / "current/link"
    t = time.time() - seconds
    os.utime(link, (t, t))


def tags_in(p: embedded.Paths) -> set[str]:
    return {
        f"{name}:{tag}"
        for name in embedded.list_repositories(p)
        for tag in embedded.list_tags(p, name)
    }
