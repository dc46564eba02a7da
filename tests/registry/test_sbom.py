"""SBOM layer reading (whiteouts, digests), package parsing, bundle checks: no registry."""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import tarfile
from contextlib import contextmanager

import pytest

from tools.oci.errors import RegistryError
from tools.oci.referrers import artifact_manifest, encode, fallback_tag
from tools.registry import provenance, sbom
from tools.registry.sign import IN_TOTO, PublicKey, pae


def tar_gz(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(buf.getvalue(), mtime=0)


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def files_of(*layers: dict[str, bytes], cache=None) -> tuple[dict[str, str], int]:
    blobs = {digest(b): b for b in (tar_gz(files) for files in layers)}

    @contextmanager
    def open_layer(d: str):
        yield io.BytesIO(blobs[d])

    order = [
        (digest(tar_gz(files)), "application/vnd.oci.image.layer.v1.tar+gzip") for files in layers
    ]
    return sbom.image_files(order, open_layer, cache)


META = "usr/lib/python3/dist-packages/{}.dist-info/METADATA"


def test_whiteouts_and_opaque_directories_remove_lower_layers_files(tmp_path):
    layers = (
        {
            META.format("a-1"): b"Name: a\nVersion: 1\n",
            META.format("b-2"): b"Name: b\nVersion: 2\n",
        },
        {"usr/lib/python3/dist-packages/.wh.a-1.dist-info": b""},
        {"usr/lib/python3/.wh..wh..opq": b"", META.format("c-3"): b"Name: c\nVersion: 3\n"},
    )
    files, read = files_of(*layers, cache=tmp_path)
    assert sorted(files) == [META.format("c-3")]
    assert read == 3
    # the second time every layer comes from the cache
    again, read = files_of(*layers, cache=tmp_path)
    assert again == files and read == 0


def test_a_layer_that_does_not_match_its_digest_is_refused():
    data = tar_gz({"etc/os-release": b"ID=debian\n"})
    with pytest.raises(RegistryError, match="does not match its digest"):
        sbom.scan_layer(
            io.BytesIO(data), "application/vnd.oci.image.layer.v1.tar+gzip", "sha256:" + "0" * 64
        )


def test_dpkg_status_gives_installed_packages_only_with_escaped_purls():
    status = (
        "Package: libc6\nStatus: install ok installed\nArchitecture: amd64\nVersion: 2.41-1\n"
        "Description: x\n continuation: not a field\n\n"
        "Package: gone\nStatus: deinstall ok config-files\nVersion: 1\n\n"
        "Package: busybox-static\nStatus: install ok installed\nArchitecture: amd64\n"
        "Version: 1:1.38.0-3+b1\nSource: busybox (1:1.38.0-3)\n"
    )
    files = {"var/lib/dpkg/status": status, "etc/os-release": 'ID="ubuntu"\n'}
    components = sbom.components(files)
    assert [c["purl"] for c in components] == [
        "pkg:deb/ubuntu/busybox-static@1%3A1.38.0-3%2Bb1?arch=amd64",
        "pkg:deb/ubuntu/libc6@2.41-1?arch=amd64",
    ]


def test_the_document_is_deterministic_and_names_the_image():
    files = {META.format("Torch_X-1"): "Name: Torch_X\nVersion: 1.0\nLicense-Expression: MIT\n"}
    one = encode(sbom.cyclonedx(files, "runtime", "sha256:" + "a" * 64, {"t": "pytorch-run"}))
    two = encode(sbom.cyclonedx(files, "runtime", "sha256:" + "a" * 64, {"t": "pytorch-run"}))
    assert one == two
    doc = json.loads(one)
    assert doc["bomFormat"] == "CycloneDX" and doc["specVersion"] == "1.6"
    assert doc["components"][0]["purl"] == "pkg:pypi/torch-x@1.0"
    assert doc["components"][0]["licenses"] == [{"expression": "MIT"}]
    assert doc["metadata"]["component"]["version"] == "sha256:" + "a" * 64


def test_artifact_manifests_are_deterministic_and_name_their_subject():
    from tools.oci.referrers import Subject

    subject = Subject("sha256:" + "b" * 64, "application/vnd.oci.image.manifest.v1+json", 10)
    a = artifact_manifest(subject, sbom.CYCLONEDX, b"{}", {"k": "v"})
    assert a == artifact_manifest(subject, sbom.CYCLONEDX, b"{}", {"k": "v"})
    m = json.loads(a)
    assert m["subject"]["digest"] == subject.digest
    assert m["artifactType"] == sbom.CYCLONEDX
    assert fallback_tag(subject.digest) == "sha256-" + "b" * 64


def bundle(private, subject_digest: str) -> dict:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    statement = {
        "_type": provenance.STATEMENT,
        "subject": [{"digest": {"sha256": subject_digest.split(":")[1]}}],
        "predicateType": "https://sigstore.dev/cosign/sign/v1",
        "predicate": {},
    }
    payload = json.dumps(statement).encode()
    sig = private.sign(pae(IN_TOTO, payload), ec.ECDSA(hashes.SHA256()))
    return {
        "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
        "dsseEnvelope": {
            "payload": base64.b64encode(payload).decode(),
            "payloadType": IN_TOTO,
            "signatures": [{"sig": base64.b64encode(sig).decode()}],
        },
    }


def test_bundle_checks_key_signature_and_digest():
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    ours, theirs = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())

    def public(k) -> PublicKey:
        return PublicKey(
            k.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )

    d = "sha256:" + "c" * 64
    good = bundle(ours, d)
    assert public(ours).check_bundle(good, d) == ""
    assert "does not verify" in public(theirs).check_bundle(good, d)
    assert "not sha256:" + "d" * 64 in public(ours).check_bundle(good, "sha256:" + "d" * 64)
    hinted = {**good, "verificationMaterial": {"publicKey": {"hint": public(theirs).hint}}}
    assert public(ours).check_bundle(hinted, d) == "signed with another key"
    forged = json.loads(json.dumps(good))
    forged["dsseEnvelope"]["payload"] = base64.b64encode(
        base64.b64decode(good["dsseEnvelope"]["payload"]).replace(b"c" * 64, b"d" * 64)
    ).decode()
    assert "does not verify" in public(ours).check_bundle(forged, "sha256:" + "d" * 64)


def test_a_registry_with_the_referrers_api_gets_no_fallback_tag():
    """A distribution-3-like registry (mock transport): the API lists, no `sha256-` tag."""
    import httpx

    from tools.oci.client import RegistryClient
    from tools.oci.referrers import OCI_INDEX, Referrers, Subject

    blobs: dict[str, bytes] = {}
    manifests: dict[str, bytes] = {}
    writes: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if "/referrers/" in path:
            subject = path.rsplit("/", 1)[1]
            listed = []
            for ref, body in manifests.items():
                m = json.loads(body)
                if ref.startswith("sha256:") and m.get("subject", {}).get("digest") == subject:
                    listed.append(
                        {
                            "mediaType": m["mediaType"],
                            "digest": ref,
                            "size": len(body),
                            "artifactType": m["artifactType"],
                            "annotations": m.get("annotations", {}),
                        }
                    )
            index = {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": listed}
            return httpx.Response(200, json=index, headers={"Content-Type": OCI_INDEX})
        if request.method == "HEAD" and "/blobs/" in path:
            return httpx.Response(200 if path.rsplit("/", 1)[1] in blobs else 404)
        if request.method == "POST" and path.endswith("/blobs/uploads/"):
            return httpx.Response(202, headers={"Location": "/upload/1"})
        if request.method == "PUT" and path.startswith("/upload/"):
            writes.append("blob")
            blobs[request.url.params["digest"]] = request.read()
            return httpx.Response(201)
        if request.method == "PUT" and "/manifests/" in path:
            writes.append(path.rsplit("/", 1)[1])
            manifests[path.rsplit("/", 1)[1]] = request.read()
            return httpx.Response(201)
        return httpx.Response(404)

    client = RegistryClient("reg.example")
    client.http = httpx.Client(transport=httpx.MockTransport(handler))
    r = Referrers(client)
    subject = Subject("sha256:" + "e" * 64, "application/vnd.oci.image.manifest.v1+json", 5)
    d, written = r.attach(
        "ns/app", subject, sbom.CYCLONEDX, b'{"bomFormat":"CycloneDX"}', {"a": "b"}
    )
    assert written
    assert r.api is True
    assert writes == ["blob", "blob", d["digest"]]  # empty config, the SBOM, the manifest
    again = Referrers(client)
    assert [x["digest"] for x in again.list("ns/app", subject.digest)] == [d["digest"]]
    _, written = again.attach(
        "ns/app", subject, sbom.CYCLONEDX, b'{"bomFormat":"CycloneDX"}', {"a": "b"}
    )
    assert not written
    assert len(writes) == 3  # already attached: nothing written
