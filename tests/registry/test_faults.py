"""Fault injection: every transient fault is retried; a lasting one fails cleanly."""

from __future__ import annotations

import json

import pytest

from tests.registry.family_push import NAMESPACE, registry_tool, write_plan
from tests.registry.fixtures import Fault

RETRY = ["--retries", "4", "--backoff", "0.01"]
BLOB_PUT = r"/blobs/uploads/.+digest="
MANIFEST_PUT = r"/manifests/"


def plan_for(tmp_path):
    # a parent and a child, so mounts and ordering are exercised too
    return write_plan(
        tmp_path,
        [
            ("rocm-runtime", "gfx950", "rocm-runtime.gfx950", None),
            ("pytorch-base", "gfx950", "pytorch-base.gfx950", None),
        ],
    )


def push_via(proxy, plan, *extra):
    return registry_tool(
        "push", "--plan", str(plan), "--registry", f"{proxy.host}/{NAMESPACE}", *RETRY, *extra
    )


@pytest.mark.parametrize(
    "fault",
    [
        Fault("PUT", MANIFEST_PUT, "503", count=3),
        Fault("HEAD", r"/blobs/sha256:", "429", count=2),
        Fault("POST", r"/blobs/uploads/$", "503", count=2),
        Fault("PUT", BLOB_PUT, "reset", count=1),
        Fault("PUT", BLOB_PUT, "reset", count=2),
        Fault("HEAD", r"/manifests/", "slow", count=2, delay=0.3),
    ],
    ids=[
        "5xx-burst-manifest",
        "429-blob-head",
        "5xx-upload-start",
        "reset-mid-blob",
        "two-resets",
        "slow",
    ],
)
def test_transient_fault_is_retried_and_the_push_completes(registry, proxy_for, tmp_path, fault):
    proxy = proxy_for(registry)
    proxy.faults.append(fault)
    result = push_via(proxy, plan_for(tmp_path))
    # should have hit the fault and still pushed both images with all tags
    assert fault.hits == fault.count
    assert result.code == 0, result.err
    assert "2/2 images pushed" in result.err
    assert len(registry.all_refs()) == 4
    # should have retried exactly the injected failures (a slow answer is no failure)
    retries = 0 if fault.kind == "slow" else fault.count
    assert f", {retries} retries" in result.err


def assert_no_dangling_tags(registry):
    for ref, digest in registry.all_refs().items():
        repo = ref.split(":")[0]
        status, _, _ = registry.get(
            f"/v2/{repo}/manifests/{digest}",
            {"Accept": "application/vnd.oci.image.manifest.v1+json"},
        )
        assert status == 200, f"{ref} points at missing manifest {digest}"


@pytest.mark.parametrize(
    "fault",
    [
        Fault("PUT", r"/manifests/latest-", "503", count=100),
        Fault("PUT", BLOB_PUT, "reset", count=100),
    ],
    ids=["tag-put-keeps-failing", "blob-upload-keeps-resetting"],
)
def test_lasting_fault_fails_cleanly_and_a_rerun_completes(registry, proxy_for, tmp_path, fault):
    plan = plan_for(tmp_path)
    proxy = proxy_for(registry)
    proxy.faults.append(fault)
    result = push_via(proxy, plan)
    # should fail naming what was and was not pushed, with no tag on a missing manifest
    assert result.code == 1
    assert "registry: error: push of rocm-runtime (gfx950) failed" in result.err
    assert "not pushed: rocm-runtime (gfx950), pytorch-base (gfx950)" in result.err
    assert "Traceback" not in result.err
    assert_no_dangling_tags(registry)
    # should complete when re-run once the fault is gone
    proxy.faults.clear()
    rerun = push_via(proxy, plan)
    assert rerun.code == 0, rerun.err
    assert len(registry.all_refs()) == 4
    assert_no_dangling_tags(registry)


def test_prune_cache_keeps_the_newest_n_per_group(registry):
    from tools.oci.client import RegistryClient

    client = RegistryClient(registry.host)
    repo = f"{NAMESPACE}/pytorch-cache"
    config = b'{"layers":[]}'
    import hashlib

    config_digest = "sha256:" + hashlib.sha256(config).hexdigest()

    def put_cache(tag: str, created: str, payload: bytes) -> None:
        layer_digest = "sha256:" + hashlib.sha256(payload).hexdigest()
        for digest, data in ((config_digest, config), (layer_digest, payload)):
            if not client.blob_exists(repo, digest):
                path = registry.root / digest.replace(":", "_")
                path.write_bytes(data)
                client.upload_blob(repo, digest, path, len(data))
        manifest = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {
                "mediaType": "application/vnd.buildkit.cacheconfig.v0",
                "digest": config_digest,
                "size": len(config),
            },
            "layers": [
                {
                    "mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                    "digest": layer_digest,
                    "size": len(payload),
                    "annotations": {"buildkit/createdat": created},
                }
            ],
        }
        client.put_manifest(
            repo, tag, json.dumps(manifest).encode(), "application/vnd.oci.image.manifest.v1+json"
        )

    for i, version in enumerate(["4.2.0", "4.3.0", "4.4.0", "4.5.0"]):
        put_cache(f"pytorch_gfx950_{version}-x", f"2026-0{i + 1}-01T00:00:00Z", version.encode())
    put_cache("test_gfx950_4.5.0-x", "2026-01-01T00:00:00Z", b"test")
    client.close()

    dry = registry_tool(
        "prune-cache", "--registry", f"{registry.host}/{NAMESPACE}", "--keep", "2", "--dry-run"
    )
    assert dry.code == 0, dry.err
    assert dry.out.count("would delete") == 2
    assert len(registry.all_refs()) == 5

    result = registry_tool(
        "prune-cache", "--registry", f"{registry.host}/{NAMESPACE}", "--keep", "2"
    )
    assert result.code == 0, result.err
    assert sorted(registry.all_refs()) == [
        f"{repo}:pytorch_gfx950_4.4.0-x",
        f"{repo}:pytorch_gfx950_4.5.0-x",
        f"{repo}:test_gfx950_4.5.0-x",
    ]


def test_prune_cache_refuses_keep_zero():
    result = registry_tool("prune-cache", "--registry", "127.0.0.1:9/ns", "--keep", "0")
    assert result.code == 1
    assert "--keep 0: keep at least 1" in result.err


@pytest.mark.parametrize("status", ["403", "404", "405"])
def test_a_refused_mount_falls_back_to_upload(registry, proxy_for, tmp_path, status):
    """A registry that answers a cross-repository mount with an error (no mounts, no
    access to the source) still gets every blob: uploaded, as go-containerregistry does."""
    proxy = proxy_for(registry)
    refuse = Fault("POST", r"/blobs/uploads/\?mount=", status, count=1000)
    proxy.faults.append(refuse)
    result = push_via(proxy, plan_for(tmp_path))
    assert refuse.hits > 0, "the push tried no mount"
    assert result.code == 0, result.err
    assert "2/2 images pushed" in result.err
    assert ", mounted 0," in result.err
    assert len(registry.all_refs()) == 4
    assert_no_dangling_tags(registry)
