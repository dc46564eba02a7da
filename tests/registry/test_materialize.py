"""`registry layout`: an image from staging as an OCI image layout, complete or not at all."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess

import httpx
import pytest

from tests.registry.fixtures import Registry
from tests.registry.staging_images import family, registry_tool, write_plan


@pytest.fixture
def staging(tmp_path, monkeypatch):
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "docker-config"))
    r = Registry(tmp_path / "staging")
    yield r
    r.stop()


def check_layout(root, image, ref_name):
    """``root`` is an OCI layout of exactly ``image``; returns its blob count."""
    d = image.descriptor
    assert json.loads((root / "oci-layout").read_text()) == {"imageLayoutVersion": "1.0.0"}
    index = json.loads((root / "index.json").read_text())
    assert index["schemaVersion"] == 2
    (entry,) = index["manifests"]
    # should name the descriptor's manifest, bytes unchanged, and the versioned tag
    assert (entry["digest"], entry["size"], entry["mediaType"]) == (d.digest, d.size, d.media_type)
    assert entry.get("annotations", {}).get("org.opencontainers.image.ref.name") == ref_name
    blobs = root / "blobs" / "sha256"
    assert (blobs / d.digest[7:]).read_bytes() == d.manifest
    # should hold every blob the manifest names, each matching its digest, and nothing else
    for b in d.blobs:
        data = (blobs / b.digest[7:]).read_bytes()
        assert (len(data), hashlib.sha256(data).hexdigest()) == (b.size, b.digest[7:])
        assert data == image.blobs[b.digest]
    assert sorted(p.name for p in blobs.iterdir()) == sorted(
        {d.digest[7:], *(b.digest[7:] for b in d.blobs)}
    )
    skopeo = shutil.which("skopeo")
    if skopeo:  # an independent reader agrees
        raw = subprocess.run(
            [skopeo, "inspect", "--raw", f"oci:{root}"], capture_output=True, check=True
        ).stdout
        assert raw == d.manifest
    return len(d.blobs)


def versioned(image) -> str:
    return json.loads(image.spec.read_text())["tags"]["versioned"]


def test_layout_of_one_descriptor_is_a_valid_oci_layout_of_its_digest(tmp_path, staging):
    parent, child = family(staging.host, tmp_path / "images")
    out = tmp_path / "out" / "pytorch-base"
    args = ["--descriptor", str(child.path), "--spec", str(child.spec), "--out", str(out)]
    result = registry_tool("layout", *args)
    assert result.code == 0, result.err
    assert result.out.strip() == str(out)
    assert check_layout(out, child, versioned(child)) == 5
    # should leave nothing next to it (the temporary directory was renamed into place)
    assert [p.name for p in out.parent.iterdir()] == ["pytorch-base"]
    # an existing empty directory is fine too (Bazel creates a tree artifact's directory);
    # without --spec there is no ref name
    empty = tmp_path / "empty"
    empty.mkdir()
    result = registry_tool("layout", "--descriptor", str(parent.path), "--out", str(empty))
    assert result.code == 0, result.err
    assert check_layout(empty, parent, None) == 4


def test_layout_of_a_plan_has_one_directory_per_image(tmp_path, staging):
    images = family(staging.host, tmp_path / "images")
    out = tmp_path / "layouts"
    result = registry_tool("layout", "--plan", str(write_plan(tmp_path, images)), "--out", str(out))
    assert result.code == 0, result.err
    assert sorted(p.name for p in out.iterdir()) == ["pytorch-base.gfx950", "rocm-runtime.gfx950"]
    for image in images:
        check_layout(out / f"{image.target}.gfx950", image, versioned(image))
    # should fetch the 3 layers the child shares with its parent once: hard links
    parent, child = images
    shared = sorted(set(parent.blobs) & set(child.blobs))
    assert len(shared) == 3
    for digest in shared:
        a, b = (out / f"{i.target}.gfx950" / "blobs" / "sha256" / digest[7:] for i in images)
        assert a.stat().st_ino == b.stat().st_ino


def test_layout_refuses_a_directory_with_content(tmp_path, staging):
    (image, _) = family(staging.host, tmp_path / "images")
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    result = registry_tool("layout", "--descriptor", str(image.path), "--out", str(out))
    assert result.code == 1
    assert result.err.splitlines() == [
        f"registry: error: {out}: exists and is not an empty directory; give a new --out"
    ]
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_layout_of_content_staging_lost_writes_nothing(tmp_path, staging):
    (image, _) = family(staging.host, tmp_path / "images")
    d = image.descriptor
    r = httpx.delete(f"http://{staging.host}/v2/{d.staging_name}/blobs/{d.layers[2].digest}")
    assert r.status_code == 202
    out = tmp_path / "out" / "layout"
    result = registry_tool("layout", "--descriptor", str(image.path), "--out", str(out))
    assert result.code == 1
    # should say which image staging lost and how to get it back, in one line
    (line,) = [line for line in result.err.splitlines() if "error" in line]
    assert line.startswith(f"registry: error: staging has lost rocm-runtime (gfx950) {d.digest}")
    assert "bazel run //tools/staging -- forget" in line
    # should leave neither the layout nor a temporary directory behind
    assert list(out.parent.iterdir()) == []
