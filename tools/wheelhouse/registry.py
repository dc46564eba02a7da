"""Wheel images from a registry: manifest and config first, layer blobs on demand.

Each wheel target is pulled by one tag tagconf renders (default the floating
``latest-<arch>``, ``latest`` for arch-free targets). Manifest and config are
small and fetched for every image before any layer, so a refused mix costs
no layer download. Layers are streamed to a scratch file and their digest
checked; transient failures are retried like the push tool's.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path

from tools.oci.client import RegistryClient
from tools.oci.digest import digest_of
from tools.oci.errors import RegistryError
from tools.oci.media import INDEX_TYPES, MANIFEST_TYPES
from tools.oci.reference import Reference, split_registry
from tools.tagconf.model import Catalog
from tools.wheelhouse.errors import WheelhouseError
from tools.wheelhouse.model import WheelImage, identify


class RegistrySource:
    """Pull wheel images from ``HOST[:PORT]/NAMESPACE``."""

    def __init__(
        self,
        spec: str,
        *,
        insecure: bool = False,
        ca_file: Path | None = None,
        retries: int = 5,
        backoff: float = 0.5,
        log=lambda _msg: None,
    ) -> None:
        self.spec = spec.rstrip("/")
        self.host, self.namespace = split_registry(self.spec)
        self.client = RegistryClient(
            self.host, insecure=insecure, ca_file=ca_file, retries=retries, backoff=backoff, log=log
        )

    def close(self) -> None:
        self.client.close()

    def name(self, repository: str) -> str:
        return f"{self.namespace}/{repository}" if self.namespace else repository

    # -- manifests and config --------------------------------------------------

    def _manifest(self, name: str, reference: str, ref: str) -> tuple[dict, str]:
        r = self.client.request(
            "GET", f"/v2/{name}/manifests/{reference}", headers={"Accept": MANIFEST_TYPES}
        )
        if r.status_code == 404:
            raise WheelhouseError(
                f"{ref}: not found in the registry",
                "publish the wheel images first (bazel run //images:push_wheels --define"
                " arch=...), or pick other tags with --tag / --set",
            )
        self.client.check(r, f"GET {ref}", (200,))
        digest = digest_of(r.content)
        header = r.headers.get("Docker-Content-Digest")
        if header and header != digest:
            raise RegistryError(f"{ref}: manifest does not match its digest {header}")
        return json.loads(r.content), digest

    def _pick(self, index: dict, ref: str) -> str:
        """The image manifest of an index: the only one, else linux/amd64."""
        entries = [
            m
            for m in index.get("manifests", [])
            if (m.get("annotations") or {}).get("vnd.docker.reference.type")
            != "attestation-manifest"
        ]
        if len(entries) == 1:
            return entries[0]["digest"]
        for m in entries:
            platform = m.get("platform") or {}
            if platform.get("os") == "linux" and platform.get("architecture") == "amd64":
                return m["digest"]
        raise WheelhouseError(
            f"{ref}: an index of {len(entries)} images and none for linux/amd64",
            "push single-image wheel images (what the image rules build)",
        )

    def _blob_bytes(self, name: str, digest: str) -> bytes:
        return self.client.get_blob(name, digest)

    def image(self, catalog: Catalog, target: str, repository: str, tag: str) -> WheelImage:
        """Manifest and config of ``repository:tag``, identified."""
        name = self.name(repository)
        ref = str(Reference.at(self.spec, repository, tag))
        manifest, digest = self._manifest(name, tag, ref)
        if manifest.get("mediaType") in INDEX_TYPES or "manifests" in manifest:
            digest = self._pick(manifest, ref)
            manifest, digest = self._manifest(name, digest, ref)
        config = json.loads(self._blob_bytes(name, manifest["config"]["digest"]))
        labels = (config.get("config") or {}).get("Labels") or {}
        image = identify(
            catalog,
            origin=ref,
            digest=digest,
            labels=labels,
            pulled=(repository, tag),
            layers=tuple(layer["digest"] for layer in manifest.get("layers", [])),
            open_layer=lambda d, scratch: self.open_layer(name, d, scratch),
        )
        if image is None or image.target != target:
            raise WheelhouseError(
                f"{ref}: holds {image.label() if image else 'an unknown image'}, not {target}",
                "re-publish the wheel images with the push targets",
            )
        return image

    # -- layers ----------------------------------------------------------------

    @contextmanager
    def open_layer(self, name: str, digest: str, scratch: Path):
        dest = scratch / f"blob-{digest.partition(':')[2]}"
        self.client.download_blob(name, digest, dest)
        try:
            with dest.open("rb") as f:
                yield f
        finally:
            dest.unlink(missing_ok=True)
