"""The mirror secrets through a real image build (tools/imagebuild, BuildKit, a registry).

A RUN step that mounts them as docker/ does finds each at its place; the
image's layers and config, BuildKit's log and the descriptor hold no trace of
the credentials or the settings' files; and a build with other mirrors
reuses the cached step and gives the same digest (the settings are no input
of the build).
"""

from __future__ import annotations

import gzip
import io
import json
import tarfile

import pytest

from tests.mirrors.conftest import CA_BODY, PASSWORD
from tests.registry.fixtures import Registry
from tools.imagebuild import build
from tools.staging import descriptor, embedded

DOCKERFILE = "tests/mirrors/Dockerfile.secrets"  # runfiles path (cwd = runfiles root)


@pytest.fixture(autouse=True)
def own_staging_state(tmp_path, monkeypatch):
    """A staging state of its own: the build's lease never waits on another process's
    start, stop or gc of the user's embedded registry (that notice is a second line)."""
    monkeypatch.setenv(embedded.DIR_ENV, str(tmp_path / "staging-state"))


@pytest.fixture
def registry(tmp_path):
    r = Registry(tmp_path / "registry")
    yield r
    r.stop()


CC_PASSWORD = "cc-Cache-pw-0123"  # the compiler cache's, in its credentials file


def write_settings(
    file, netrc_file, ca_file, index: str, cache: str = "http://127.0.0.1:9/c"
) -> None:
    login = file.parent / "cc-login"
    login.write_text(f"builder:{CC_PASSWORD}\n")
    file.write_text(
        f"""
[pip]
index_url = "{index}"
[git.rewrite]
"https://github.com/" = "http://127.0.0.1:9/github/"
[auth]
netrc = "{netrc_file}"
[tls]
ca_bundle = "{ca_file}"
[compiler_cache]
backend = "sccache-webdav"
endpoint = "{cache}"
credentials = "{login}"
"""
    )


def imagebuild(tmp_path, registry, name: str, *extra: str):
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"target": "mirrors-probe", "repository": "mirrors-probe"}))
    out, log = tmp_path / f"{name}.json", tmp_path / f"{name}.log"
    argv = [
        "--spec", str(spec),
        "--dockerfile", DOCKERFILE,
        "--network", "none",
        "--host-file", "busybox=/usr/bin/busybox",
        "--staging", f"{registry.host}/staging",
        "--output", str(out),
        "--log", str(log),
        *extra,
    ]  # fmt: skip
    assert build.main(argv) == 0, log.read_text()[-3000:]
    return descriptor.load(out), out.read_text(), log.read_text()


def blob(registry, name: str, digest: str) -> bytes:
    status, _, data = registry.get(f"/v2/{name}/blobs/{digest}")
    assert status == 200
    return data


def test_secrets_reach_the_step_and_nothing_else(
    tmp_path, registry, settings_file, netrc_file, ca_file
):
    write_settings(settings_file, netrc_file, ca_file, "http://127.0.0.1:9/simple")
    d, desc_text, log = imagebuild(tmp_path, registry, "first")
    files: dict[str, bytes] = {}
    for layer in d.layers:
        data = blob(registry, d.staging_name, layer.digest)
        assert PASSWORD.encode() not in data and PASSWORD.encode() not in gzip.decompress(data)
        assert CC_PASSWORD.encode() not in gzip.decompress(data)
        with tarfile.open(fileobj=io.BytesIO(gzip.decompress(data))) as tar:
            for member in tar.getmembers():
                f = tar.extractfile(member) if member.isfile() else None
                files[member.name] = f.read() if f else b""
    assert files["proof"] == b"the mirror secrets reached the step\n"
    leaked = [n for n in files if n.startswith(("etc/", "root/", "run/"))]
    # should keep no secret, and no stub of a mount point, in a layer
    assert not leaked, leaked
    config = blob(registry, d.staging_name, d.config_blob.digest)
    for text, where in (
        (config, "config"),
        (desc_text.encode(), "descriptor"),
        (log.encode(), "log"),
    ):
        assert PASSWORD.encode() not in text, f"the netrc password is in the {where}"
        assert CA_BODY.encode() not in text, f"the CA bundle is in the {where}"
        assert CC_PASSWORD.encode() not in text, f"the compiler cache password is in the {where}"
        # the cache server is the host's setting: no image names it
        assert b"127.0.0.1:9/c" not in text or where == "log", f"the cache is in the {where}"
    assert "# mirrors (" in log and f"credentials: {netrc_file} (netrc)" in log
    assert "compiler cache: sccache-webdav at http://127.0.0.1:9/c" in log


def test_other_mirrors_rebuild_nothing(tmp_path, registry, settings_file, netrc_file, ca_file):
    write_settings(settings_file, netrc_file, ca_file, "http://127.0.0.1:9/simple")
    first, _, _ = imagebuild(tmp_path, registry, "first")
    # other mirrors, other credentials, another compiler cache server
    write_settings(
        settings_file, netrc_file, ca_file, "http://127.0.0.1:10/other/simple",
        cache="http://127.0.0.1:11/other-cache",
    )  # fmt: skip
    netrc_file.write_text("machine 127.0.0.1 login builder password another-secret\n")
    # --no-reuse: BuildKit runs (else staging's copy of this content key is used as is)
    second, _, log = imagebuild(tmp_path, registry, "second", "--no-reuse")
    assert second.digest == first.digest and second.content_key == first.content_key
    step = [line.split()[0] for line in log.splitlines() if "] RUN --mount=type=secret" in line]
    # should take the step that mounts the secrets from BuildKit's cache
    assert step and f"{step[0]} CACHED" in log.splitlines(), log[-2000:]
    assert "pip index: http://127.0.0.1:10/other/simple" in log
    assert "compiler cache: sccache-webdav at http://127.0.0.1:11/other-cache" in log


def test_bad_settings_fail_the_build_in_one_line(tmp_path, registry, settings_file, capsys):
    settings_file.write_text('[pip]\nindex_url = "https://u:pw@pypi.example.internal/simple"\n')
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"target": "mirrors-probe", "repository": "mirrors-probe"}))
    argv = ["--spec", str(spec), "--dockerfile", DOCKERFILE, "--network", "none"]
    argv += ["--host-file", "busybox=/usr/bin/busybox", "--staging", f"{registry.host}/staging"]
    assert build.main([*argv, "--output", str(tmp_path / "d.json")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("imagebuild: error: mirror settings: ") and "\n" not in err
    assert "netrc" in err and "python3 -m tools.mirrors check" in err
