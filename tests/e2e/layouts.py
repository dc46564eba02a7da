"""Read OCI image layouts (as the image rule writes them) for the e2e tests."""

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

PACKAGE = Path("tests/e2e")  # runfiles path of the fixture family's outputs


def e2e_archs() -> list[str]:
    return os.environ["E2E_ARCHS"].split(",")


def image_name(target: str, arch: str | None) -> str:
    return f"{target}.{arch}" if arch else target


@dataclass
class Layout:
    """One image: its OCI layout directory and the build's metadata JSON."""

    name: str

    @property
    def path(self) -> Path:
        return PACKAGE / f"{self.name}.layout"

    @cached_property
    def metadata(self) -> dict:
        return json.loads((PACKAGE / f"{self.name}.json").read_text())

    @cached_property
    def index(self) -> dict:
        return json.loads((self.path / "index.json").read_text())

    def blob(self, digest: str) -> bytes:
        algo, _, hexdigest = digest.partition(":")
        return (self.path / "blobs" / algo / hexdigest).read_bytes()

    @cached_property
    def manifest(self) -> dict:
        (descriptor,) = self.index["manifests"]
        return json.loads(self.blob(descriptor["digest"]))

    @cached_property
    def config(self) -> dict:
        return json.loads(self.blob(self.manifest["config"]["digest"]))

    @property
    def layers(self) -> list[str]:
        return [layer["digest"] for layer in self.manifest["layers"]]

    @cached_property
    def files(self) -> dict[str, bytes]:
        """Regular files of the image's filesystem, layers applied in order."""
        out: dict[str, bytes] = {}
        for digest in self.layers:
            data = self.blob(digest)
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

    def glob(self, prefix: str, suffix: str = "") -> dict[str, bytes]:
        return {k: v for k, v in self.files.items() if k.startswith(prefix) and k.endswith(suffix)}

    def verify(self) -> None:
        """Assert the layout follows the OCI image-layout spec."""
        marker = json.loads((self.path / "oci-layout").read_text())
        assert marker == {"imageLayoutVersion": "1.0.0"}, marker
        assert self.index["schemaVersion"] == 2
        (descriptor,) = self.index["manifests"]
        descriptors = [descriptor, self.manifest["config"], *self.manifest["layers"]]
        for d in descriptors:
            data = self.blob(d["digest"])
            assert len(data) == d["size"], (self.name, d)
            assert "sha256:" + hashlib.sha256(data).hexdigest() == d["digest"], (self.name, d)
        assert self.manifest["mediaType"] == "application/vnd.oci.image.manifest.v1+json"
