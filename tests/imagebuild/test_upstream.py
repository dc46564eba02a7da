"""The upstream image's digest (issue #42 2.11): locked by a command, pinned by the
builds, held by a release (tools/imagebuild/upstream.py, tools/tagconf/upstream_lock.py).

A loopback registry stands for the upstream's (Docker Hub is not reachable here):
`lock` asks it through the docker CLI's resolver and writes images/upstream.lock;
tagconf puts the digest in the spec of the images that start FROM the upstream
(and only theirs); the build pins it; a release refuses an unlocked upstream and a
tag that moved since the lock, each in one line.

The catalogue is the tests' own (tests/fixtures/catalog.toml); the Dockerfiles are
the real ones.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.registry.fixtures import Registry
from tools.imagebuild import upstream
from tools.oci.client import RegistryClient
from tools.tagconf import upstream_lock
from tools.tagconf.cli import main as tagconf_main
from tools.tagconf.errors import TagconfError

A, B = "sha256:" + "a" * 64, "sha256:" + "b" * 64
CATALOG = Path("tests/fixtures/catalog.toml")
# its UPSTREAM_IMAGE:ROCM_VERSION, as a Dockerfile names it
UPSTREAM, ROCM = "fixture/dev-upstream", "9.8.7-full"
REF = f"{UPSTREAM}:{ROCM}"
RUNTIME = {"target": "rocm-runtime", "upstream": REF, "build_args": {"UPSTREAM_IMAGE": "rocm/x"}}
CHILD = {"target": "pytorch", "upstream": REF, "build_args": {"PYTHON_VERSION": "3.21"}}


def put_image(registry: Registry, name: str, tag: str, salt: str) -> str:
    """A one-config image under ``name:tag``; its manifest digest."""
    client = RegistryClient(registry.host)
    config = json.dumps({"architecture": "amd64", "os": "linux", "salt": salt}).encode()
    digest = "sha256:" + hashlib.sha256(config).hexdigest()
    path = registry.root / f"{salt}.json"
    path.write_bytes(config)
    client.upload_blob(name, digest, path, len(config))
    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": digest,
                "size": len(config),
            },
            "layers": [],
        }
    ).encode()
    out = client.put_manifest(name, tag, manifest, "application/vnd.oci.image.manifest.v1+json")
    client.close()
    return out


@pytest.fixture
def registry(tmp_path):
    r = Registry(tmp_path / "registry")
    yield r
    r.stop()


def test_the_lock_file_reads_back_what_it_writes_and_refuses_what_it_is_not(tmp_path):
    lock = tmp_path / "upstream.lock"
    lock.write_text(upstream_lock.render({REF: A}))
    assert upstream_lock.load(lock) == {REF: A}
    assert Path("images/upstream.lock").read_text() == upstream_lock.render({})  # checked in
    for text, words in [
        ('[images]\n"x:1" = "sha256:abc"\n', "is not a sha256 digest"),
        ("[other]\n", "want one [images] table"),
        ("[images\n", "cannot read the upstream lock"),
    ]:
        lock.write_text(text)
        with pytest.raises(TagconfError) as e:
            upstream_lock.load(lock)
        assert words in str(e.value) and "bazel run //images:upstream_lock" in str(e.value)


def test_the_registry_is_asked_through_the_docker_cli_and_the_lock_written(tmp_path, registry):
    ref = f"{registry.host}/{REF}"
    first = put_image(registry, UPSTREAM, ROCM, "one")
    assert upstream.current_digest(ref) == first
    catalog = tmp_path / "catalog.toml"
    text = CATALOG.read_text()
    assert f'UPSTREAM_IMAGE = "{UPSTREAM}"' in text and f'ROCM_VERSION = "{ROCM}"' in text
    catalog.write_text(
        text.replace(f'UPSTREAM_IMAGE = "{UPSTREAM}"',
                     f'UPSTREAM_IMAGE = "{registry.host}/{UPSTREAM}"')
    )  # fmt: skip
    lock = tmp_path / "upstream.lock"
    assert upstream.lock(catalog, lock, upstream.current_digest) == (ref, "", first)
    assert upstream_lock.load(lock) == {ref: first}
    # the tag moves: the lock command takes the new digest, saying what it was
    second = put_image(registry, UPSTREAM, ROCM, "two")
    assert upstream.lock(catalog, lock, upstream.current_digest) == (ref, first, second)
    # a mirror's ref beside it (--define UPSTREAM_IMAGE=): both kept
    other = f"{registry.host}/mirror/dev:{ROCM}"
    third = put_image(registry, "mirror/dev", ROCM, "three")
    assert upstream.lock(catalog, lock, upstream.current_digest, other) == (other, "", third)
    assert upstream_lock.load(lock) == {ref: second, other: third}
    with pytest.raises(upstream.UpstreamError) as e:
        upstream.current_digest(f"{registry.host}/{UPSTREAM}:nope")
    assert str(e.value).startswith(f"cannot ask for {registry.host}/{UPSTREAM}:nope")
    assert "\n" not in str(e.value)


def test_tagconf_puts_the_digest_in_the_specs_of_the_builds_with_a_stage_from_it(tmp_path):
    lock = tmp_path / "upstream.lock"
    lock.write_text(upstream_lock.render({REF: A}))

    def build_spec(target: str, dockerfile: str) -> dict:
        out = tmp_path / f"{target}.build.json"
        code = tagconf_main(
            ["--catalog", str(CATALOG), "spec", "--target", target, "--arch", "gfx950",
             "--upstream-lock", str(lock), "--dockerfile", dockerfile, "--build-output", str(out),
             "--output", str(tmp_path / f"{target}.json")]
        )  # fmt: skip
        assert code == 0
        return json.loads(out.read_text())

    assert build_spec("rocm-runtime", "docker/Dockerfile.rocm-runtime")["upstream_digest"] == A
    # pytorch-src-fetch, a stage of pytorch's build, starts FROM it too; vllm's none
    assert build_spec("pytorch", "docker/Dockerfile.pytorch")["upstream_digest"] == A
    assert "upstream_digest" not in build_spec("vllm", "docker/Dockerfile.vllm")


def test_the_build_pins_the_locked_digest_and_only_then():
    assert upstream.pin({**RUNTIME, "upstream_digest": A}) == [
        "--build-context", f"{REF}=docker-image://{REF}@{A}",
    ]  # fmt: skip
    assert upstream.pin(RUNTIME) == []  # not locked: the tag, as BuildKit resolves it
    assert upstream.pin({**CHILD, "upstream_digest": A}) == []  # it starts FROM its parent


def test_a_release_builds_only_from_a_locked_upstream_that_has_not_moved():
    asked = []

    def ask(ref: str) -> str:
        asked.append(ref)
        return B

    with pytest.raises(upstream.UpstreamError) as e:
        upstream.check_release(RUNTIME, True, False, ask)
    assert str(e.value) == (
        f"a release builds rocm-runtime FROM a locked upstream, and images/upstream.lock has no"
        f" digest for {REF}: run `bazel run //images:upstream_lock` (it asks the registry) and"
        " commit images/upstream.lock"
    )
    with pytest.raises(upstream.UpstreamError) as e:
        upstream.check_release({**RUNTIME, "upstream_digest": A}, True, False, ask)
    assert f"the upstream tag {REF} moved: images/upstream.lock pins {A}, its registry" in str(
        e.value
    )
    assert f"names {B} now" in str(e.value)
    upstream.check_release({**RUNTIME, "upstream_digest": B}, True, False, ask)  # held
    asked.clear()
    upstream.check_release(RUNTIME, False, False, ask)  # not a release: the tag
    upstream.check_release(RUNTIME, True, True, ask)  # a stand-in: an image of this build
    upstream.check_release(CHILD, True, False, ask)  # FROM its parent
    assert asked == []
