"""OCI 1.1 referrers: artifacts attached to a manifest digest (SBOMs, provenance, signatures).

An artifact is an image manifest whose ``subject`` names the image's
manifest and whose ``artifactType`` names what it is. A registry with the
referrers API (`GET /v2/<name>/referrers/<digest>`: distribution 3, zot,
Harbor) lists them itself. Others (Debian's docker-registry 2.8 answers that
path with 404) get the distribution spec's fallback, the *referrers tag
schema*: an image index under the tag `sha256-<hex>` of the subject, which
the client that attaches an artifact rewrites with the artifact's descriptor
added. cosign 3 uses the same two ways for its signature bundles, so one
index holds our SBOM, provenance and cosign's signatures.

Descriptors in the fallback index carry the artifact's annotations, as the
referrers API's do: a publish can tell what is attached from one GET.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field

from tools.oci.client import RegistryClient
from tools.oci.digest import digest_of
from tools.oci.errors import RegistryError
from tools.oci.media import EMPTY_CONFIG, OCI_INDEX, OCI_MANIFEST
from tools.oci.reference import Reference

EMPTY = b"{}"
EMPTY_DIGEST = digest_of(EMPTY)


def encode(document: dict) -> bytes:
    """An artifact's blob (SBOM, provenance): stable JSON, one key per line."""
    return (json.dumps(document, indent=1, sort_keys=True) + "\n").encode()


def fallback_tag(digest: str) -> str:
    """The referrers tag schema's tag of ``digest``: `sha256-<hex>`."""
    algorithm, _, hex_ = digest.partition(":")
    return f"{algorithm}-{hex_}"


@dataclass(frozen=True)
class Subject:
    """The manifest artifacts attach to."""

    digest: str
    media_type: str
    size: int

    def descriptor(self) -> dict:
        return {"mediaType": self.media_type, "digest": self.digest, "size": self.size}


def artifact_manifest(
    subject: Subject, artifact_type: str, blob: bytes, annotations: dict[str, str]
) -> bytes:
    """The manifest of an artifact holding ``blob`` (its one layer), as bytes.

    Deterministic (no timestamp): the same content for the same subject is
    the same digest, so attaching it again is a no-op.
    """
    manifest = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "artifactType": artifact_type,
        "config": {"mediaType": EMPTY_CONFIG, "digest": EMPTY_DIGEST, "size": len(EMPTY)},
        "layers": [{"mediaType": artifact_type, "digest": digest_of(blob), "size": len(blob)}],
        "subject": subject.descriptor(),
        "annotations": dict(sorted(annotations.items())),
    }
    return json.dumps(manifest, separators=(",", ":")).encode()


@dataclass
class Referrers:
    """Lists and attaches referrers on one registry, by whichever way it supports."""

    client: RegistryClient
    api: bool | None = None  # None: not asked yet (one probe per registry and run)
    fetched: dict[tuple[str, str], list[dict]] = field(default_factory=dict)

    def list(self, name: str, digest: str) -> list[dict]:
        """Descriptors of the artifacts whose subject is ``digest`` in ``name``."""
        if (name, digest) in self.fetched:
            return self.fetched[(name, digest)]
        found: list[dict] | None = None
        if self.api is not False:
            r = self.client.request(
                "GET", f"/v2/{name}/referrers/{digest}", headers={"Accept": OCI_INDEX}
            )
            if r.status_code == 200 and OCI_INDEX in r.headers.get("Content-Type", OCI_INDEX):
                self.api = True
                found = r.json().get("manifests") or []
            elif r.status_code in (404, 405) and self.api is None:
                self.api = False  # no referrers API: the tag schema, from now on
            else:
                self.client.check(r, f"GET referrers of {name}@{digest}", (200,))
        if found is None:
            found = self._fallback_index(name, digest).get("manifests") or []
        self.fetched[(name, digest)] = found
        return found

    def _fallback_index(self, name: str, digest: str) -> dict:
        tag = fallback_tag(digest)
        r = self.client.request("GET", f"/v2/{name}/manifests/{tag}", headers={"Accept": OCI_INDEX})
        if r.status_code == 404:
            return {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": []}
        self.client.check(r, f"GET {name}:{tag}", (200,))
        index = r.json()
        if index.get("mediaType", OCI_INDEX) != OCI_INDEX:
            raise RegistryError(
                f"{Reference(self.client.host, name, tag)} is not a referrers index"
                f" ({index.get('mediaType')}); the tag is reserved for the referrers of the"
                " image it is named after"
            )
        return index

    def attach(
        self,
        name: str,
        subject: Subject,
        artifact_type: str,
        blob: bytes,
        annotations: dict[str, str],
    ) -> tuple[dict, bool]:
        """Push the artifact (blobs, manifest by digest) and list it: (its descriptor,
        whether anything was written). Already attached (the same manifest digest
        listed): nothing is written.
        """
        manifest = artifact_manifest(subject, artifact_type, blob, annotations)
        descriptor = {
            "mediaType": OCI_MANIFEST,
            "digest": digest_of(manifest),
            "size": len(manifest),
            "artifactType": artifact_type,
            "annotations": dict(sorted(annotations.items())),
        }
        listed = self.list(name, subject.digest)
        if any(d.get("digest") == descriptor["digest"] for d in listed):
            return descriptor, False
        for data in (EMPTY, blob):
            if not self.client.blob_exists(name, digest_of(data)):
                self.client.upload(name, digest_of(data), len(data), lambda d=data: io.BytesIO(d))
        self.client.put_manifest(name, descriptor["digest"], manifest, OCI_MANIFEST)
        found = [*listed, descriptor]
        if not self.api:
            # read again right before the write: another client (cosign) may have added one
            index = self._fallback_index(name, subject.digest)
            found = index["manifests"] = [
                d for d in index.get("manifests") or [] if d.get("digest") != descriptor["digest"]
            ] + [descriptor]
            body = json.dumps(index, separators=(",", ":")).encode()
            self.client.put_manifest(name, fallback_tag(subject.digest), body, OCI_INDEX)
        self.fetched[(name, subject.digest)] = found
        return descriptor, True

    def forget(self, name: str, digest: str) -> None:
        """Drop what was read about ``digest`` (another program wrote to it)."""
        self.fetched.pop((name, digest), None)

    def manifest(self, name: str, digest: str) -> dict:
        body, _, _ = self.client.get_manifest(name, digest)
        if digest_of(body) != digest:
            raise RegistryError(
                f"{Reference(self.client.host, name, None, digest)}: manifest does not match"
            )
        return json.loads(body)
