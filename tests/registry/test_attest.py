"""SBOMs, provenance and signatures of published digests, and `registry verify`.

Two real registries (docker-registry 2.8, which has no referrers API, so the
`sha256-<hex>` tag schema is used) and synthetic images whose layers hold a
dpkg status file, Python dist-info directories and whiteouts. Signing runs
Debian's cosign with a key made here; `cosign verify` checks what
`registry verify` accepts, so both read the same bundles.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.registry.fixtures import Registry
from tests.registry.staging_images import NAMESPACE, refs, registry_tool, stage, write_plan
from tools.oci.referrers import fallback_tag
from tools.registry.sign import find_cosign

DPKG_STATUS = """\
Package: busybox-static
Status: install ok installed
Priority: optional
Section: shells
Maintainer: Debian Busybox Team <busybox@packages.debian.org>
Architecture: amd64
Source: busybox
Version: 1:1.37.0-6
Description: Standalone rescue shell with tons of builtin utilities
 BusyBox combines tiny versions of many common UNIX utilities.

Package: removed-pkg
Status: deinstall ok config-files
Architecture: amd64
Version: 1.0

"""
TORCH_METADATA = """\
Metadata-Version: 2.1
Name: torch
Version: 4.5.6+rocm9.8.7.full.gfx950
Summary: Tensors and Dynamic neural networks in Python with strong GPU acceleration
License: BSD-3-Clause

"""


def files_layer(files: dict[str, bytes | None]) -> tuple[bytes, str]:
    """A gzipped tar of ``files`` (None: an empty file, e.g. a whiteout) and its diff_id."""
    import hashlib

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(path)
            info.size = len(data or b"")
            tar.addfile(info, io.BytesIO(data or b""))
    raw = buf.getvalue()
    return gzip.compress(raw, mtime=0), "sha256:" + hashlib.sha256(raw).hexdigest()


def images_with_packages(staging: str, tmp, vcs_ref: str | None = "1a2b3c4"):
    """rocm-runtime (busybox in dpkg, a Python dist that its child removes) and pytorch-base."""
    site = "opt/venv/lib/python3.14/site-packages"
    tmp.mkdir(parents=True, exist_ok=True)
    base_layers = [
        files_layer(
            {
                "bin/busybox": b"\x7fELF",
                "var/lib/dpkg/status": DPKG_STATUS.encode(),
                "etc/os-release": b'ID=debian\nVERSION_CODENAME="sid"\n',
                f"{site}/six-1.17.0.dist-info/METADATA": b"Name: six\nVersion: 1.17.0\n",
            }
        )
    ]
    parent = stage(staging, tmp, "rocm-runtime", base_layers, vcs_ref=vcs_ref)
    child_layers = [
        *base_layers,
        files_layer(
            {
                f"{site}/.wh.six-1.17.0.dist-info": None,
                f"{site}/torch-4.5.6+rocm9.8.7.full.gfx950.dist-info/METADATA": (
                    TORCH_METADATA.encode()
                ),
            }
        ),
    ]
    child = stage(
        staging,
        tmp,
        "pytorch-base",
        child_layers,
        parents={"rocm-runtime": parent.descriptor.digest},
        vcs_ref=vcs_ref,
    )
    return [parent, child]


@pytest.fixture
def env(env, tmp_path):
    """conftest's env (no user credentials), with an SBOM layer cache and HOME of the test."""
    return {
        **env,
        "ROCM_PYTORCH_SBOM_CACHE": str(tmp_path / "sbom-cache"),
        "HOME": str(tmp_path),
    }


def key_pair(root: Path, password: str) -> tuple[Path, Path]:
    """A cosign key pair made by cosign itself in ``root``: (private, public)."""
    subprocess.run(
        [find_cosign(), "generate-key-pair"],
        cwd=root,
        env={**os.environ, "COSIGN_PASSWORD": password},
        check=True,
        capture_output=True,
    )
    return root / "cosign.key", root / "cosign.pub"


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    """A password-protected key pair."""
    return key_pair(tmp_path_factory.mktemp("keys"), "s3cret")


def push(plan, registry: str, *args: str, env: dict):
    return registry_tool("push", "--plan", str(plan), "--registry", registry, *args, env=env)


def referrers(registry: Registry, name: str, digest: str) -> list[dict]:
    status, _, body = registry.get(
        f"/v2/{name}/manifests/{fallback_tag(digest)}",
        {"Accept": "application/vnd.oci.image.index.v1+json"},
    )
    return json.loads(body)["manifests"] if status == 200 else []


def artifact_blob(registry: Registry, name: str, descriptor: dict) -> dict:
    _, _, body = registry.get(
        f"/v2/{name}/manifests/{descriptor['digest']}",
        {"Accept": "application/vnd.oci.image.manifest.v1+json"},
    )
    manifest = json.loads(body)
    _, _, blob = registry.get(f"/v2/{name}/blobs/{manifest['layers'][0]['digest']}")
    return json.loads(blob)


def test_attest_attaches_an_sbom_of_dpkg_and_python_packages_and_provenance(
    tmp_path, env, registries
):
    staging, target = registries("staging"), registries("target")
    images = images_with_packages(staging.host, tmp_path / "images")
    plan = write_plan(tmp_path, images)
    result = push(plan, f"{target.host}/{NAMESPACE}", "--attest", env=env)
    assert result.code == 0, result.err
    assert "2 SBOMs and 2 provenances attached" in result.err
    parent, child = images
    name = f"{NAMESPACE}/base"
    listed = referrers(target, name, child.descriptor.digest)
    types = sorted(d["artifactType"] for d in listed)
    assert types == ["application/vnd.cyclonedx+json", "application/vnd.in-toto+json"]

    bom = artifact_blob(target, name, next(d for d in listed if "cyclonedx" in d["artifactType"]))
    assert bom["bomFormat"] == "CycloneDX"
    purls = {c["purl"] for c in bom["components"]}
    # should list busybox's package and the torch wheel; not what a later layer removed
    assert "pkg:deb/debian/busybox-static@1%3A1.37.0-6?arch=amd64" in purls
    assert "pkg:pypi/torch@4.5.6+rocm9.8.7.full.gfx950" in purls
    assert not any("six" in p or "removed-pkg" in p for p in purls)
    torch = next(c for c in bom["components"] if c["name"] == "torch")
    assert torch["licenses"] == [{"expression": "BSD-3-Clause"}]
    assert bom["metadata"]["component"]["version"] == child.descriptor.digest
    parent_bom = artifact_blob(
        target,
        f"{NAMESPACE}/rocm-runtime",
        next(
            d
            for d in referrers(target, f"{NAMESPACE}/rocm-runtime", parent.descriptor.digest)
            if "cyclonedx" in d["artifactType"]
        ),
    )
    assert "pkg:pypi/six@1.17.0" in {c["purl"] for c in parent_bom["components"]}

    prov = artifact_blob(target, name, next(d for d in listed if "in-toto" in d["artifactType"]))
    assert prov["_type"] == "https://in-toto.io/Statement/v1"
    assert prov["predicateType"] == "https://slsa.dev/provenance/v1"
    assert prov["subject"][0]["digest"]["sha256"] == child.descriptor.digest.split(":")[1]
    build = prov["predicate"]["buildDefinition"]
    assert build["externalParameters"]["target"] == "pytorch-base"
    assert build["externalParameters"]["commit"] == "1a2b3c4"
    assert build["externalParameters"]["buildArgs"]["ROCM_VERSION"]
    parents = {d["name"]: d for d in build["resolvedDependencies"]}
    assert parents["rocm-runtime"]["digest"]["sha256"] == parent.descriptor.digest.split(":")[1]
    assert parents["source"]["uri"].endswith("@1a2b3c4")
    # the builder's name, not its whole record (identity and versions)
    assert prov["predicate"]["runDetails"]["builder"]["id"] == "buildx://local"
    # the child's SBOM read only its own layer; the parent's came from the layer cache
    assert "(2 layers read)" in result.err


def test_sign_verify_noop_and_tamper(tmp_path, env, registries, proxy_for, keys):
    key, pub = keys
    env = {**env, "COSIGN_PASSWORD": "s3cret"}
    staging, target = registries("staging"), registries("target")
    images = images_with_packages(staging.host, tmp_path / "images")
    plan = write_plan(tmp_path, images)
    proxy = proxy_for(target)
    registry = f"{proxy.host}/{NAMESPACE}"
    first = push(plan, registry, "--sign", "--key", str(key), env=env)
    assert first.code == 0, first.err
    assert "6 signatures made" in first.err
    # image tags (the immutable one too) name the images; every other tag is a referrers index
    published = target.all_refs()
    image_tags = {r: d for r, d in published.items() if ":sha256-" not in r}
    assert image_tags == refs(images, NAMESPACE)
    assert len(published) - len(image_tags) == 3 * 2  # image, SBOM, provenance per image

    verified = registry_tool(
        "verify", "--plan", str(plan), "--registry", registry, "--key", str(pub)
    )
    assert verified.code == 0, verified.out + verified.err
    assert verified.out.count("verified ") == 6  # 2 images x 3 tags
    assert "signature, sbom signed, provenance signed" in verified.out

    # cosign itself accepts the signature registry verify accepted
    ref = f"{proxy.host}/{NAMESPACE}/base@{images[1].descriptor.digest}"
    cosign = subprocess.run(
        [find_cosign(), "verify", "--key", str(pub), "--insecure-ignore-tlog=true", ref],
        capture_output=True,
        text=True,
        env={**os.environ, "TUF_ROOT": str(tmp_path / "tuf")},
    )
    assert cosign.returncode == 0, cosign.stderr

    # a no-op signed publish: no write, no cosign run
    proxy.requests.clear()
    again = push(plan, registry, "--sign", "--key", str(key), env=env)
    assert again.code == 0, again.err
    assert proxy.writes() == []
    assert "0 SBOMs and 0 provenances attached (0 layers read), 0 signatures made" in again.err
    assert "2 images already complete" in again.err
    noop_requests = len(proxy.requests)
    # 1 + 3 tags per image as before, + 1 for the immutable tag's confirmation, 1
    # referrers probe, and per image 3 digests x (referrers list + bundle manifest + blob)
    assert noop_requests == 2 * (1 + 3 + 1) + 1 + 2 * 3 * 3, proxy.requests
    print(f"no-op signed publish of 2 images: {noop_requests} requests")

    # tamper: the child's versioned tag now names the parent's (signed) digest
    parent, child = images
    tag = json.loads(child.spec.read_text())["tags"]["versioned"]
    _, _, manifest = target.get(
        f"/v2/{NAMESPACE}/rocm-runtime/manifests/{parent.descriptor.digest}",
        {"Accept": "application/vnd.oci.image.manifest.v1+json"},
    )
    import httpx

    manifest_doc = json.loads(manifest)
    for blob in [manifest_doc["config"], *manifest_doc["layers"]]:
        r = httpx.post(
            f"http://{target.host}/v2/{NAMESPACE}/base/blobs/uploads/",
            params={"mount": blob["digest"], "from": f"{NAMESPACE}/rocm-runtime"},
        )
        assert r.status_code == 201, r.text
    r = httpx.put(
        f"http://{target.host}/v2/{NAMESPACE}/base/manifests/{tag}",
        content=manifest,
        headers={"Content-Type": "application/vnd.oci.image.manifest.v1+json"},
    )
    assert r.status_code == 201, r.text
    tampered = registry_tool(
        "verify", "--plan", str(plan), "--registry", registry, "--key", str(pub)
    )
    assert tampered.code == 1
    bad = f"{registry}/base:{tag}"
    assert f"FAILED {bad}@{parent.descriptor.digest}" in tampered.out
    assert f"names {parent.descriptor.digest}, but the plan's image is" in tampered.out
    assert "no signature" in tampered.out  # nothing signed that digest in this repository
    assert f"verification failed: {bad}" in tampered.err
    assert tampered.out.count("verified ") == 5

    # another key: every ref fails
    other = tmp_path / "other"
    other.mkdir()
    other_key = key_pair(other, "")[1]
    wrong = registry_tool(
        "verify",
        f"{registry}/rocm-runtime:{json.loads(parent.spec.read_text())['tags']['versioned']}",
        "--key",
        str(other_key),
    )
    assert wrong.code == 1
    assert "signed with another key" in wrong.out


def test_sign_without_a_key_fails_before_writing(tmp_path, env, registries, proxy_for):
    staging, target = registries("staging"), registries("target")
    images = images_with_packages(staging.host, tmp_path / "images")
    plan = write_plan(tmp_path, images)
    proxy = proxy_for(target)
    env = {k: v for k, v in env.items()}
    result = push(
        plan,
        f"{proxy.host}/{NAMESPACE}",
        "--sign",
        env={**env, "COSIGN_KEY": ""},
    )
    assert result.code == 1
    assert "signing needs a key" in result.err
    assert proxy.writes() == []


def test_a_signed_push_writes_manifest_and_signatures_before_any_tag(
    tmp_path, env, registries, proxy_for, keys
):
    """The order of the writes, read from the proxy's log (docs/publishing.md, "What a
    push does"; docs/supply-chain.md): not only what the registry holds at the end."""
    key, _ = keys
    env = {**env, "COSIGN_PASSWORD": "s3cret"}
    staging, target = registries("staging"), registries("target")
    images = images_with_packages(staging.host, tmp_path / "images")
    proxy = proxy_for(target)
    registry = f"{proxy.host}/{NAMESPACE}"
    result = push(write_plan(tmp_path, images), registry, "--sign", "--key", str(key), env=env)
    assert result.code == 0, result.err
    # the proxy logs a request when the registry has answered it, so a write logged
    # before another was done before the other was sent
    puts = [p for m, p, status in proxy.requests if m == "PUT" and status == 201]
    for image in images:
        spec = json.loads(image.spec.read_text())
        manifests = f"/v2/{NAMESPACE}/{spec['repository']}/manifests/"
        digest = image.descriptor.digest
        tags = spec["tags"]
        at = {tag: puts.index(manifests + tag) for tag in tags.values()}
        first_tag = min(at.values())
        # should write the image's manifest by digest before any tag names it
        assert puts.index(manifests + digest) < first_tag
        # and its immutable tag before its other tags
        assert at[tags["immutable"]] == first_tag, at
        # and every attachment (SBOM, provenance, the signatures of all three, and
        # the referrers indexes that list them) before the first tag
        attached = [
            i
            for i, p in enumerate(puts)
            if p.startswith(manifests + "sha256") and p != manifests + digest
        ]
        own_index = [i for i in attached if puts[i] == manifests + fallback_tag(digest)]
        assert own_index and attached, puts
        assert max(attached) < first_tag, (image.target, puts)
        # the index as last written before the first tag lists the signature too
        assert len(referrers(target, f"{NAMESPACE}/{spec['repository']}", digest)) == 3
