"""Read the fixture family's images for the e2e tests: descriptors in Bazel, blobs in staging."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import httpx

PACKAGE = Path("tests/e2e")  # runfiles path of the fixture family's outputs


def e2e_archs() -> list[str]:
    return os.environ["E2E_ARCHS"].split(",")


def image_name(target: str, arch: str | None) -> str:
    return f"{target}.{arch}" if arch else target


def check_blob(where: str, d: dict, data: bytes) -> None:
    assert len(data) == d["size"], (where, d)
    assert "sha256:" + hashlib.sha256(data).hexdigest() == d["digest"], (where, d)


@dataclass
class Image:
    """One image: the build's descriptor, its blobs read back from the staging registry."""

    name: str

    @property
    def descriptor_path(self) -> Path:
        return PACKAGE / f"{self.name}.json"

    @cached_property
    def metadata(self) -> dict:
        return json.loads(self.descriptor_path.read_text())

    @property
    def staging(self) -> dict:
        return self.metadata["staging"]

    def blob(self, digest: str) -> bytes:
        return _blob(self.staging["registry"].split("/", 1)[0], self.staging["name"], digest)

    def staged_manifest(self) -> bytes:
        """The manifest staging serves for the descriptor's digest."""
        host = self.staging["registry"].split("/", 1)[0]
        r = httpx.get(
            f"http://{host}/v2/{self.staging['name']}/manifests/{self.metadata['digest']}",
            headers={"Accept": "application/vnd.oci.image.manifest.v1+json"},
            timeout=30,
        )
        assert r.status_code == 200, (self.name, r.status_code)
        return r.content

    @cached_property
    def manifest(self) -> dict:
        return json.loads(self.metadata["manifest"])

    @cached_property
    def config(self) -> dict:
        return json.loads(self.blob(self.manifest["config"]["digest"]))

    @property
    def layers(self) -> list[str]:
        return [layer["digest"] for layer in self.manifest["layers"]]

    @cached_property
    def files(self) -> dict[str, bytes]:
        """Regular files of the image's filesystem, layers applied in order."""
        return apply_layers(self.blob(d) for d in self.layers)

    def glob(self, prefix: str, suffix: str = "") -> dict[str, bytes]:
        return {k: v for k, v in self.files.items() if k.startswith(prefix) and k.endswith(suffix)}

    def verify(self) -> None:
        """Assert staging holds the image the descriptor describes, blob for blob."""
        manifest = self.staged_manifest()
        assert manifest == self.metadata["manifest"].encode(), self.name
        check_blob(self.name, {"digest": self.metadata["digest"], "size": len(manifest)}, manifest)
        for d in [self.manifest["config"], *self.manifest["layers"]]:
            check_blob(self.name, d, self.blob(d["digest"]))
        assert self.manifest["mediaType"] == "application/vnd.oci.image.manifest.v1+json"
        assert json.loads(self.blob(self.manifest["config"]["digest"])) == self.metadata["config"]


_BLOBS: dict[tuple[str, str, str], bytes] = {}


def _blob(host: str, name: str, digest: str) -> bytes:
    key = (host, name, digest)
    if key not in _BLOBS:
        r = httpx.get(f"http://{host}/v2/{name}/blobs/{digest}", timeout=60, follow_redirects=True)
        assert r.status_code == 200, (name, digest, r.status_code)
        _BLOBS[key] = r.content
    return _BLOBS[key]


def apply_layers(blobs) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for data in blobs:
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for member in tar:
                name = "/" + member.name.removeprefix("./").lstrip("/")
                base = name.rsplit("/", 1)[-1]
                if base.startswith(".wh."):
                    out.pop(name.replace(".wh.", "", 1), None)
                elif member.isfile():
                    out[name] = tar.extractfile(member).read()
    return out
