"""Read an OCI image layout directory (what the image rule writes)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from tools.registry.errors import RegistryError


@dataclass(frozen=True)
class Blob:
    digest: str
    size: int
    path: Path


@dataclass(frozen=True)
class Layout:
    """One image of a layout: manifest bytes (pushed unchanged) and its blobs."""

    path: Path
    digest: str
    media_type: str
    manifest: bytes
    blobs: tuple[Blob, ...]  # config first, then layers

    @property
    def size(self) -> int:
        return sum(b.size for b in self.blobs)


def blob_path(root: Path, digest: str) -> Path:
    algo, _, hexdigest = digest.partition(":")
    return root / "blobs" / algo / hexdigest


def read_layout(path: Path) -> Layout:
    """The single image in OCI layout ``path``; checks the manifest digest."""
    try:
        index = json.loads((path / "index.json").read_text())
    except (OSError, ValueError) as e:
        raise RegistryError(f"{path}: not an OCI layout ({e}); build the image first") from None
    manifests = index.get("manifests") or []
    if len(manifests) != 1:
        raise RegistryError(
            f"{path}: want exactly one manifest in index.json, got {len(manifests)}"
        )
    descriptor = manifests[0]
    digest = descriptor["digest"]
    manifest = blob_path(path, digest).read_bytes()
    if "sha256:" + hashlib.sha256(manifest).hexdigest() != digest:
        raise RegistryError(f"{path}: manifest does not match its digest {digest}; rebuild")
    data = json.loads(manifest)
    blobs = []
    for d in [data["config"], *data.get("layers", [])]:
        blobs.append(Blob(d["digest"], int(d["size"]), blob_path(path, d["digest"])))
    media_type = descriptor.get("mediaType") or data.get("mediaType")
    return Layout(path, digest, media_type, manifest, tuple(blobs))
