"""Attach SBOM and provenance to published digests, sign them, and verify what a plan names.

A push with ``--attest`` (or ``--sign``) runs ``Attester.attach`` for each
image once its manifest is in the registry and before any of its tags is
written, so no tag ever names an image whose attestations (and, with
``--sign``, signatures) are not there yet:

1. the referrers of the digest are listed (referrers API, else the
   `sha256-<hex>` tag);
2. no CycloneDX SBOM among them: it is made from the image's layers, read
   from staging (``tools.registry.sbom``), and attached;
3. the provenance statement (``tools.registry.provenance``) is made from the
   descriptor and spec and attached unless that exact artifact is listed;
4. with ``--sign``, the image, the SBOM and the provenance are each signed
   with cosign unless a bundle of this key already verifies for them.

So a publish that changes nothing writes nothing and runs no cosign: per
image it reads one referrers list per digest and one bundle (manifest and
blob) per signature.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tools.oci.errors import NotFound, RegistryError
from tools.oci.referrers import EMPTY_CONFIG, Referrers, Subject, encode
from tools.registry import provenance, sbom
from tools.registry.sign import BUNDLE, PublicKey, Signer
from tools.staging.clients import Clients, lost

if TYPE_CHECKING:
    from tools.registry.plan import PlannedImage
    from tools.staging.descriptor import Descriptor

SBOM_ANNOTATIONS = {"org.opencontainers.image.description": "CycloneDX SBOM: dpkg and Python"}
BUNDLE_TYPES = (BUNDLE, EMPTY_CONFIG)
PROVENANCE_ANNOTATIONS = {"in-toto.io/predicate-type": provenance.SLSA}


@dataclass
class Counts:
    sboms: int = 0
    provenances: int = 0
    signatures: int = 0
    layers_read: int = 0
    up_to_date: int = 0  # digests whose attestations and signatures were all there


@dataclass
class Attester:
    clients: Clients
    signer: Signer | None = None
    log: Callable[[str], None] = lambda _msg: None
    counts: Counts = field(default_factory=Counts)
    by_host: dict[str, Referrers] = field(default_factory=dict)

    def referrers(self, host: str) -> Referrers:
        if host not in self.by_host:
            self.by_host[host] = Referrers(self.clients(host))
        return self.by_host[host]

    # -- publishing ----------------------------------------------------------

    def attach(self, image: PlannedImage, d: Descriptor) -> None:
        """SBOM, provenance and (with a signer) signatures for ``image``'s digest."""
        r = self.referrers(image.host)
        subject = Subject(d.digest, d.media_type, d.size)
        listed = r.list(image.name, d.digest)
        wrote = False
        bom = next((x for x in listed if x.get("artifactType") == sbom.CYCLONEDX), None)
        if bom is None:
            blob = encode(self.make_sbom(image, d))
            bom, _ = r.attach(image.name, subject, sbom.CYCLONEDX, blob, SBOM_ANNOTATIONS)
            self.counts.sboms += 1
            wrote = True
            self.log(f"  attached SBOM {bom['digest'][:19]} ({len(blob)} bytes)")
        statement = provenance.statement(d, image.load_spec())
        prov_blob = encode(statement)
        prov, attached = r.attach(
            image.name, subject, provenance.IN_TOTO, prov_blob, PROVENANCE_ANNOTATIONS
        )
        if attached:
            self.counts.provenances += 1
            wrote = True
            self.log(f"  attached provenance {prov['digest'][:19]}")
        if self.signer:
            for digest in (d.digest, bom["digest"], prov["digest"]):
                if not self.signature(image.host, image.name, digest, self.signer.public)[0]:
                    self.signer.sign(image.host, image.name, digest)
                    r.forget(image.name, digest)
                    self.counts.signatures += 1
                    wrote = True
        if not wrote:
            self.counts.up_to_date += 1

    def make_sbom(self, image: PlannedImage, d: Descriptor) -> dict:
        s = self.clients.staging(d)

        def open_layer(digest: str):
            return s.blob_stream(d.staging_name, digest)

        layers = [(b.digest, b.media_type) for b in d.layers]
        try:
            files, read = sbom.image_files(layers, open_layer, sbom.cache_dir())
        except NotFound:
            raise lost(d) from None
        self.counts.layers_read += read
        properties = {
            "org.rocm-pytorch.image.target": d.target,
            "org.rocm-pytorch.image.arch": d.arch or "",
        }
        return sbom.cyclonedx(files, image.repository, d.digest, properties)

    # -- checking --------------------------------------------------------------

    def signature(self, host: str, name: str, digest: str, key: PublicKey) -> tuple[bool, str]:
        """(signed, why not): whether a bundle of ``key`` for ``digest`` is attached."""
        r = self.referrers(host)
        # cosign 3 lists its bundles in the fallback index with the artifactType of
        # their config (the empty one); the referrers API says the bundle's own
        bundles = [x for x in r.list(name, digest) if x.get("artifactType") in BUNDLE_TYPES]
        if not bundles:
            return False, "no signature"
        reasons = []
        for b in bundles:
            manifest = r.manifest(name, b["digest"])
            if manifest.get("artifactType") != BUNDLE:
                continue
            layer = next(
                (x for x in manifest.get("layers") or [] if x.get("mediaType") == BUNDLE), None
            )
            if layer is None:
                reasons.append(f"{b['digest'][:19]}: no bundle layer")
                continue
            bundle = json.loads(self.clients(host).get_blob(name, layer["digest"]))
            why = key.check_bundle(bundle, digest)
            if not why:
                return True, ""
            reasons.append(why)
        return False, "; ".join(sorted(set(reasons)))


@dataclass
class Finding:
    ref: str
    digest: str | None
    problems: list[str]
    checked: list[str]


def verify_digest(
    attester: Attester, host: str, name: str, digest: str, key: PublicKey, attestations: bool
) -> tuple[list[str], list[str]]:
    """(problems, what was checked) for one digest: its signature, and its SBOM and
    provenance each attached and signed."""
    problems, checked = [], []
    ok, why = attester.signature(host, name, digest, key)
    (checked if ok else problems).append("signature" if ok else f"signature: {why}")
    if not attestations:
        return problems, checked
    listed = attester.referrers(host).list(name, digest)
    for label, artifact_type in (("sbom", sbom.CYCLONEDX), ("provenance", provenance.IN_TOTO)):
        found = [x for x in listed if x.get("artifactType") == artifact_type]
        if not found:
            problems.append(f"no {label} attached")
            continue
        # checked one at a time, up to the first that holds (each is 3+ requests)
        results = (attester.signature(host, name, x["digest"], key) for x in found)
        ok, why = next(results)
        if ok or any(ok for ok, _ in results):
            checked.append(f"{label} signed")
        else:
            problems.append(f"{label} {found[0]['digest'][:19]}: {why}")
    return problems, checked


def verify_refs(
    attester: Attester,
    refs: list[tuple[str, str, str, str, str | None]],
    key: PublicKey,
    attestations: bool = True,
) -> list[Finding]:
    """Check each (ref, host, name, tag-or-digest, expected digest or None)."""
    findings = []
    by_digest: dict[tuple[str, str, str], tuple[list[str], list[str]]] = {}
    for ref, host, name, reference, expected in refs:
        c = attester.clients(host)
        digest = (
            reference if reference.startswith("sha256:") else c.manifest_digest(name, reference)
        )
        if digest is None:
            findings.append(Finding(ref, None, ["not in the registry"], []))
            continue
        problems: list[str] = []
        if expected and digest != expected:
            problems.append(f"names {digest}, but the plan's image is {expected}")
        key_ = (host, name, digest)
        if key_ not in by_digest:
            try:
                by_digest[key_] = verify_digest(attester, host, name, digest, key, attestations)
            except RegistryError as e:
                by_digest[key_] = ([str(e)], [])
        found, checked = by_digest[key_]
        findings.append(Finding(ref, digest, problems + found, checked))
    return findings
