"""tools/rehearsal/upstream.py and lock.py without mmdebstrap: packing, the image, the errors."""

from __future__ import annotations

import hashlib
import io
import json
import re
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
    config = upstream.image_config("sha256:" + "a" * 64, lock_, "9.8.7-full", "mmdebstrap 1.6.0")
    assert config == upstream.image_config(
        "sha256:" + "a" * 64, lock_, "9.8.7-full", "mmdebstrap 1.6.0"
    )
    parsed = json.loads(config)
    assert parsed["rootfs"] == {"type": "layers", "diff_ids": ["sha256:" + "a" * 64]}
    assert (
        parsed["created"] == "1970-01-01T00:00:00Z"
        and "/opt/rocm/bin" in parsed["config"]["Env"][0]
    )
    assert "HIP 7.2.4" in parsed["config"]["Labels"]["org.opencontainers.image.description"]
    manifest = json.loads(
        upstream.manifest(
            config, [{"mediaType": upstream.LAYER, "digest": "sha256:" + "b" * 64, "size": 123}]
        )
    )
    assert manifest["config"]["digest"] == digest_of(config)
    assert manifest["layers"] == [
        {"mediaType": upstream.LAYER, "digest": "sha256:" + "b" * 64, "size": 123}
    ]


@pytest.mark.parametrize(
    "tail, hint",
    [
        (
            "E: Version '7.2.4-1~exp1' for 'librocblas5' was not found",
            "bazel run //rehearsal:lock",
        ),
        (
            "layout: error: the root file system is not the lock's: x",
            "bazel run //rehearsal:lock",
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


def test_the_version_layer_holds_one_file_with_the_build_number(tmp_path):
    import tarfile

    diff_id, digest, raw, _ = upstream.version_layer("7.2.0", "3", tmp_path / "l.tar.zst")
    data = zstd.decompress((tmp_path / "l.tar.zst").read_bytes())
    assert diff_id == digest_of(data) and raw == len(data)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        (member,) = tar.getmembers()
        assert member.name == "opt/rocm-7.2.0/.info/version" and member.mtime == 0
        assert tar.extractfile(member).read() == b"7.2.0-3\n"
    # deterministic: the same rebuild is the same layer
    assert upstream.version_layer("7.2.0", "3", tmp_path / "again")[:2] == (diff_id, digest)


@pytest.mark.parametrize(
    "argv, error",
    [
        (["--base", "b.json"], "takes both --base DESCRIPTOR and --build N"),
        (["--build", "1"], "takes both --base DESCRIPTOR and --build N"),
        (["--base", "b.json", "--build", "0"], "build numbers are 1, 2, ..."),
        (["--base", "b.json", "--build", "01"], "build numbers are 1, 2, ..."),
        (["--base", "b.json", "--build", "x"], "build numbers are 1, 2, ..."),
        (["--config", "u.toml"], "--lock, --layout missing"),
    ],
)
def test_the_mode_needs_its_arguments(argv, error):
    args = upstream.build_parser().parse_args(
        [*argv, "--rocm-version", "7.2.0-full", "--output", "o.json"]
    )
    with pytest.raises(upstream.UpstreamError, match=re.escape(error)):
        upstream.check_mode(args)


class _Staging:
    host = "127.0.0.1:5000"

    @staticmethod
    def name(repository):
        return "stage/" + repository


def _base_descriptor(tmp_path, name="stage/rehearsal-upstream"):
    from tools.staging import descriptor as desc

    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {"Cmd": ["/bin/bash"]},
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + "a" * 64]},
        "history": [{"created_by": "mmdebstrap"}],
    }
    config_bytes = json.dumps(config).encode()
    layer = {"mediaType": upstream.LAYER, "digest": "sha256:" + "b" * 64, "size": 9}
    body = upstream.manifest(config_bytes, [layer])
    path = tmp_path / "base.json"
    desc.Descriptor(
        target="rehearsal-upstream",
        arch=None,
        repository="rehearsal-upstream",
        digest=digest_of(body),
        media_type=upstream.MANIFEST,
        manifest=body,
        config=config,
        content_key="sha256:" + "c" * 64,
        builder={"name": "mmdebstrap"},
        staging_registry="127.0.0.1:5000/stage",
        staging_name=name,
        staging_tag="c-" + "c" * 64,
        embedded=False,
    ).write(path)
    return path, layer


def _rebuild(tmp_path, monkeypatch, base, build="1"):
    pushed = {}
    monkeypatch.setattr(upstream, "staging_of", lambda args: _Staging())
    monkeypatch.setattr(
        upstream,
        "upload",
        lambda staging, name, tag, blob, config, body: pushed.update(
            name=name, config=json.loads(config), manifest=json.loads(body)
        ),
    )

    def staged(args, staging, key, builder, what, make):
        _, _, summary = make(staging.name(upstream.REPOSITORY), "c-x", "absent")
        pushed.update(key=key, summary=summary)
        return summary

    monkeypatch.setattr(upstream, "staged", staged)
    argv = ["--base", str(base), "--build", build, "--rocm-version", "7.2.0-full"]
    args = upstream.build_parser().parse_args([*argv, "--output", str(tmp_path / "o.json")])
    upstream.run(args)
    return pushed


def test_a_rebuild_is_the_base_and_one_layer_more(tmp_path, monkeypatch):
    base, layer = _base_descriptor(tmp_path)
    pushed = _rebuild(tmp_path, monkeypatch, base)
    layers = pushed["manifest"]["layers"]
    assert len(layers) == 2 and layers[0] == layer
    diff_ids = pushed["config"]["rootfs"]["diff_ids"]
    assert diff_ids[0] == "sha256:" + "a" * 64 and len(diff_ids) == 2
    assert pushed["config"]["config"] == {"Cmd": ["/bin/bash"]}  # the base's, as it was
    assert "rebuild 1 of ROCm 7.2.0" in pushed["config"]["history"][-1]["created_by"]
    # another build number is another image (content key)
    assert _rebuild(tmp_path, monkeypatch, base, "2")["key"] != pushed["key"]


def test_a_rebuild_into_another_staging_is_refused(tmp_path, monkeypatch):
    base, _ = _base_descriptor(tmp_path, name="elsewhere/rehearsal-upstream")
    with pytest.raises(upstream.UpstreamError, match="build both with the same staging"):
        _rebuild(tmp_path, monkeypatch, base)
