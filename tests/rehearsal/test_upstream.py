"""tools/rehearsal/upstream.py and lock.py without mmdebstrap: packing, the image, the errors."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess

import pytest
from compression import zstd

from tools import mirrors
from tools.oci.digest import digest_of
from tools.rehearsal import lock, standin, upstream


def test_pack_streams_a_tar_into_one_zstd_layer(tmp_path):
    data = b"".join(i.to_bytes(4, "big") for i in range(300_000))  # > one chunk
    out = tmp_path / "layer.tar.zst"
    diff_id, digest, raw, size = upstream.pack(io.BytesIO(data), out)
    blob = out.read_bytes()
    assert diff_id == "sha256:" + hashlib.sha256(data).hexdigest() and raw == len(data)
    assert digest == "sha256:" + hashlib.sha256(blob).hexdigest() and size == len(blob)
    assert zstd.decompress(blob) == data
    # deterministic: the same bytes make the same blob
    assert upstream.pack(io.BytesIO(data), tmp_path / "again")[1] == digest


def test_the_image_is_one_layer_with_a_fixed_config():
    lock_ = standin.Lock({"sid": "d", "experimental": "e"}, (), {"libamdhip64-dev": "7.2.4"}, ())
    config = upstream.image_config("sha256:" + "a" * 64, lock_, "10.1.0-full", "mmdebstrap 1.6.0")
    assert config == upstream.image_config(
        "sha256:" + "a" * 64, lock_, "10.1.0-full", "mmdebstrap 1.6.0"
    )
    parsed = json.loads(config)
    assert parsed["rootfs"] == {"type": "layers", "diff_ids": ["sha256:" + "a" * 64]}
    assert (
        parsed["created"] == "1970-01-01T00:00:00Z"
        and "/opt/rocm/bin" in parsed["config"]["Env"][0]
    )
    assert "HIP 7.2.4" in parsed["config"]["Labels"]["org.opencontainers.image.description"]
    manifest = json.loads(upstream.manifest(config, "sha256:" + "b" * 64, 123))
    assert manifest["config"]["digest"] == digest_of(config)
    assert manifest["layers"] == [
        {"mediaType": upstream.LAYER, "digest": "sha256:" + "b" * 64, "size": 123}
    ]


@pytest.mark.parametrize(
    "tail, hint",
    [
        (
            "E: Version '7.2.4-1~exp1' for 'librocblas5' was not found",
            "bazel run //images/rehearsal:lock",
        ),
        (
            "layout: error: the root file system is not the lock's: x",
            "bazel run //images/rehearsal:lock",
        ),
        ("E: Failed to fetch http://x/debian/pool/y.deb", "python3 -m tools.mirrors check --probe"),
        ("something else", ""),
    ],
)
def test_hints_name_the_fix(tail, hint):
    assert hint in upstream.hints(tail) if hint else upstream.hints(tail) == ""


def test_no_mmdebstrap_says_where_it_comes_from(monkeypatch):
    def missing(*a, **k):
        raise FileNotFoundError("mmdebstrap")

    monkeypatch.setattr(subprocess, "run", missing)
    with pytest.raises(
        upstream.UpstreamError, match=r"tools/bootstrap\.sh installs it in the sid tree"
    ):
        upstream.mmdebstrap_version()


def test_the_standin_archive_needs_a_mirror():
    resolved = mirrors.Resolved(
        notes=("http://debian.invalid/debian is not mapped: no Debian source",)
    )
    with pytest.raises(standin.StandInError, match=r"map it in \[apt.rewrite\] to a Debian mirror"):
        lock.mirror_uri(resolved)
    mapped = mirrors.Resolved(apt_rewrite=((mirrors.STANDIN_ARCHIVE, "http://deb.example/debian"),))
    assert lock.mirror_uri(mapped) == "http://deb.example/debian"


def test_content_key_separates_its_parts():
    assert upstream.content_key(b"ab", b"c") != upstream.content_key(b"a", b"bc")
