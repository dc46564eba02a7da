"""Settings resolved against a host, rendered as BuildKit secrets, and read by apt-install.sh."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from tests.mirrors.conftest import PASSWORD
from tools.mirrors import host as host_mod
from tools.mirrors import secrets
from tools.mirrors.settings import (
    DEFAULTS,
    STANDIN_ARCHIVE,
    CompilerCache,
    MirrorError,
    Settings,
    parse,
)

APT_INSTALL = Path("docker/scripts/apt-install.sh").resolve()  # runfiles path


@pytest.fixture
def etc_apt(tmp_path):
    d = tmp_path / "etc-apt"
    (d / "sources.list.d").mkdir(parents=True)
    (d / "sources.list").write_text("deb http://deb.example/debian sid main\n")
    return d


def test_defaults_map_the_standin_archive_to_this_hosts_debian_mirror(etc_apt, tmp_path):
    got = secrets.resolve(DEFAULTS, etc_apt=etc_apt, pip_files=[], ca_bundle="/etc/ssl/ca.crt")
    assert got.apt_rewrite == ((STANDIN_ARCHIVE, "http://deb.example/debian"),)
    assert got.pip == host_mod.PipIndex() and got.ca_bundle == "/etc/ssl/ca.crt"
    assert got.notes == ()


def test_a_default_that_this_host_cannot_resolve_is_left_out_with_a_note(tmp_path):
    empty = tmp_path / "empty-apt"
    empty.mkdir()
    got = secrets.resolve(DEFAULTS, etc_apt=empty, pip_files=[], ca_bundle="")
    assert got.apt_rewrite == ()
    assert got.notes and "is not mapped: this host has no Debian apt source" in got.notes[0]


def test_host_set_by_the_user_and_not_found_is_an_error(tmp_path):
    empty = tmp_path / "empty-apt"
    empty.mkdir()
    user = parse({"apt": {"rewrite": {"http://archive.example/ubuntu": "host"}}}, "mirrors.toml")
    with pytest.raises(MirrorError, match=r"mirrors.toml: \[apt.rewrite\] 'http://archive"):
        secrets.resolve(user, etc_apt=empty, pip_files=[], ca_bundle="")


def test_pip_host_takes_this_hosts_index_unless_the_file_says_otherwise(etc_apt, tmp_path):
    conf = tmp_path / "pip.conf"
    conf.write_text(
        "[global]\nindex-url = https://host.example/simple\n"
        "extra-index-url = https://hostextra.example/simple\n"
    )
    got = secrets.resolve(DEFAULTS, etc_apt=etc_apt, pip_files=[conf], ca_bundle="")
    assert got.pip.index_url == "https://host.example/simple"
    assert got.pip.extra_index_urls == ("https://hostextra.example/simple",)
    mine = Settings(pip_extra_index_urls=())
    got = secrets.resolve(mine, etc_apt=etc_apt, pip_files=[conf], ca_bundle="")
    assert got.pip.index_url == "https://host.example/simple" and got.pip.extra_index_urls == ()


def test_longer_archive_prefixes_are_tried_first(etc_apt):
    user = Settings(
        apt_rewrite={
            "http://a.example/": "http://m1.example/",
            "http://a.example/debian": "http://m2.example/d",
        }
    )
    got = secrets.resolve(user, etc_apt=etc_apt, pip_files=[], ca_bundle="")
    assert [a for a, _ in got.apt_rewrite] == ["http://a.example/debian", "http://a.example/"]


def full(netrc_file, ca_file) -> secrets.Resolved:
    cc_login = netrc_file.parent / "cc-login"  # the compiler cache's user:password
    cc_login.write_text(f"builder:{PASSWORD}\n")
    return secrets.Resolved(
        apt_rewrite=((STANDIN_ARCHIVE, "http://127.0.0.1:3142/debian"),),
        apt_options=(("Acquire::Check-Valid-Until", "false"),),
        pip=host_mod.PipIndex(
            "https://pypi.example.internal/simple",
            ("https://a.example/simple", "https://b.example/simple"),
            ("a.example",),
        ),
        git_rewrite=(("https://github.com/", "http://127.0.0.1:8418/github/"),),
        netrc=str(netrc_file),
        ca_bundle=str(ca_file),
        rust_dist_server="https://rust.example.internal",
        rust_crates_registry="sparse+https://crates.example.internal/index/",
        compiler_cache=CompilerCache(
            backend="sccache-webdav",
            endpoint="http://127.0.0.1:8080/sccache",
            credentials=str(cc_login),
        ),
    )


def test_render_writes_each_secret_private(tmp_path, netrc_file, ca_file):
    out = secrets.render(full(netrc_file, ca_file), tmp_path / "secrets")
    assert sorted(out) == sorted([*secrets.SECRETS, *secrets.OPTIONAL_SECRETS])
    assert out["compiler-cache-credentials"].read_text() == f"builder:{PASSWORD}\n"
    assert out["rust-mirror"].read_text().splitlines()[1:] == [
        "dist-server https://rust.example.internal",
        "crates-registry sparse+https://crates.example.internal/index/",
    ]
    assert stat.S_IMODE(os.stat(tmp_path / "secrets").st_mode) == 0o700
    for file in out.values():
        assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert out["apt-mirror"].read_text().splitlines()[1:] == [
        f"rewrite {STANDIN_ARCHIVE} http://127.0.0.1:3142/debian",
        "option Acquire::Check-Valid-Until=false",
    ]
    assert out["pip.conf"].read_text() == (
        "[global]\nindex-url = https://pypi.example.internal/simple\n"
        "extra-index-url = https://a.example/simple\n    https://b.example/simple\n"
        "trusted-host = a.example\ncert = /run/secrets/mirror-ca\n"
    )
    assert out["gitconfig"].read_text() == (
        '[url "http://127.0.0.1:8418/github/"]\n\tinsteadOf = https://github.com/\n'
        "[http]\n\tsslCAInfo = /run/secrets/mirror-ca\n"
    )
    assert PASSWORD in out["mirror-netrc"].read_text()
    assert out["mirror-ca"].read_bytes() == ca_file.read_bytes()
    args = secrets.buildx_args(out)
    assert args[:2] == ["--secret", f"id=apt-mirror,src={out['apt-mirror']}"]
    assert PASSWORD not in " ".join(args)
    assert all(PASSWORD not in line for line in full(netrc_file, ca_file).describe())


def test_nothing_to_say_renders_nothing(tmp_path):
    assert secrets.render(secrets.Resolved(), tmp_path / "s") == {}


def run_apt_install(*argv, secrets_dir, apt_dir):
    env = dict(
        os.environ, ROCM_PYTORCH_SECRETS_DIR=str(secrets_dir), ROCM_PYTORCH_APT_DIR=str(apt_dir)
    )
    return subprocess.run(
        ["sh", str(APT_INSTALL), *argv], env=env, capture_output=True, text=True, check=False
    )


def test_apt_install_reads_the_rendered_rewrites(tmp_path, netrc_file, ca_file):
    apt = tmp_path / "image-apt"
    (apt / "sources.list.d").mkdir(parents=True)
    (apt / "sources.list").write_text(
        f"deb {STANDIN_ARCHIVE} sid main\n"
        f"deb [signed-by=/usr/share/keyrings/x.gpg] {STANDIN_ARCHIVE}-security sid main\n"
        f"# deb {STANDIN_ARCHIVE} sid main\n"
    )
    (apt / "sources.list.d/extra.sources").write_text(
        f"Types: deb\nURIs: {STANDIN_ARCHIVE}/\nSuites: experimental\nComponents: main\n"
    )
    out = secrets.render(full(netrc_file, ca_file), tmp_path / "secrets")
    proc = run_apt_install("--sources", secrets_dir=out["apt-mirror"].parent, apt_dir=apt)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "# sources.list",
        "deb http://127.0.0.1:3142/debian sid main",
        f"deb [signed-by=/usr/share/keyrings/x.gpg] {STANDIN_ARCHIVE}-security sid main",
        f"# deb {STANDIN_ARCHIVE} sid main",
        "# sources.list.d/extra.sources",
        "Types: deb",
        "URIs: http://127.0.0.1:3142/debian/",
        "Suites: experimental",
        "Components: main",
    ]
    # without the secret: the image's own sources
    proc = run_apt_install("--sources", secrets_dir=tmp_path / "none", apt_dir=apt)
    assert f"deb {STANDIN_ARCHIVE} sid main" in proc.stdout.splitlines()


def test_apt_install_usage_errors(tmp_path):
    proc = run_apt_install(secrets_dir=tmp_path, apt_dir=tmp_path)
    assert proc.returncode == 2 and "no packages given" in proc.stderr
    proc = run_apt_install("--bogus", secrets_dir=tmp_path, apt_dir=tmp_path)
    assert proc.returncode == 1 and "unknown option '--bogus'" in proc.stderr
    proc = run_apt_install("--available", secrets_dir=tmp_path, apt_dir=tmp_path)
    assert proc.returncode == 1 and "usage: apt-install.sh --available PACKAGE" in proc.stderr


# --- the compiler cache -------------------------------------------------------

HEADER = "# compiler cache of docker/scripts/build-env.sh (tools/mirrors)"


def compiler_cache(backend: str, credentials: Path | None = None, **keys) -> secrets.Resolved:
    cc = CompilerCache(backend=backend, credentials=str(credentials or ""), **keys)
    return secrets.Resolved(compiler_cache=cc)


@pytest.mark.parametrize(
    "backend, keys, env",
    [
        ("none", {}, ["ROCM_PYTORCH_CC_BACKEND=none"]),
        (
            "sccache-webdav",
            {"endpoint": "http://c.example:8080/sccache", "key_prefix": "rocm/gfx950"},
            [
                "ROCM_PYTORCH_CC_BACKEND=sccache-webdav",
                "ROCM_PYTORCH_CC_ENDPOINT=http://c.example:8080/sccache",
                "SCCACHE_WEBDAV_ENDPOINT=http://c.example:8080/sccache",
                "SCCACHE_WEBDAV_KEY_PREFIX=rocm/gfx950",
            ],
        ),
        (
            "sccache-s3",
            {"endpoint": "https://m.example:9000", "bucket": "cache", "region": "auto"},
            [
                "ROCM_PYTORCH_CC_BACKEND=sccache-s3",
                "ROCM_PYTORCH_CC_ENDPOINT=https://m.example:9000",
                "SCCACHE_BUCKET=cache",
                "SCCACHE_ENDPOINT=https://m.example:9000",
                "SCCACHE_S3_USE_SSL=true",
                "SCCACHE_REGION=auto",
            ],
        ),
        (
            "sccache-s3",
            {"endpoint": "http://127.0.0.1:9000", "bucket": "cache", "key_prefix": "p"},
            [
                "ROCM_PYTORCH_CC_BACKEND=sccache-s3",
                "ROCM_PYTORCH_CC_ENDPOINT=http://127.0.0.1:9000",
                "SCCACHE_BUCKET=cache",
                "SCCACHE_ENDPOINT=http://127.0.0.1:9000",
                "SCCACHE_S3_USE_SSL=false",
                "SCCACHE_S3_KEY_PREFIX=p",
            ],
        ),
        (
            "sccache-gcs",
            {"bucket": "cache"},
            [
                "ROCM_PYTORCH_CC_BACKEND=sccache-gcs",
                "ROCM_PYTORCH_CC_ENDPOINT=https://storage.googleapis.com",
                "SCCACHE_GCS_BUCKET=cache",
                "SCCACHE_GCS_RW_MODE=READ_WRITE",
            ],
        ),
        (
            "sccache-redis",
            {"endpoint": "rediss://r.example:6380", "key_prefix": "cc"},
            [
                "ROCM_PYTORCH_CC_BACKEND=sccache-redis",
                "ROCM_PYTORCH_CC_ENDPOINT=rediss://r.example:6380",
                "SCCACHE_REDIS_ENDPOINT=rediss://r.example:6380",
                "SCCACHE_REDIS_KEY_PREFIX=cc",
            ],
        ),
        (
            "ccache-http",
            {"endpoint": "http://c.example:8080/ccache|layout=bazel"},
            [
                "ROCM_PYTORCH_CC_BACKEND=ccache-http",
                "ROCM_PYTORCH_CC_ENDPOINT=http://c.example:8080/ccache",
                # quoted for the shell: | would be a pipe
                "CCACHE_REMOTE_STORAGE='http://c.example:8080/ccache|layout=bazel'",
            ],
        ),
    ],
)
def test_render_writes_the_compiler_cache_env_file(tmp_path, backend, keys, env):
    out = secrets.render(compiler_cache(backend, **keys), tmp_path / "s")
    assert sorted(out) == ["compiler-cache"]
    assert out["compiler-cache"].read_text().splitlines() == [HEADER, *env]
    assert stat.S_IMODE(out["compiler-cache"].stat().st_mode) == 0o600
    # the shell reads back exactly the values (what build-env.sh gets)
    proc = subprocess.run(
        ["bash", "-c", f'set -a; . "{out["compiler-cache"]}"; env'],
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    got = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
    for line in env:
        name, _, value = line.partition("=")
        assert got[name] == value.strip("'")


@pytest.mark.parametrize(
    "backend, keys, content",
    [
        ("sccache-s3", {"endpoint": "https://m.example", "bucket": "b"}, "[default]\n"),
        ("sccache-gcs", {"bucket": "b"}, '{"type": "service_account"}\n'),
        ("sccache-webdav", {"endpoint": "http://c.example/"}, "builder:pw\n"),
        ("ccache-http", {"endpoint": "http://c.example/"}, "builder:pw"),
    ],
)
def test_the_credentials_file_is_passed_unchanged(tmp_path, backend, keys, content):
    file = tmp_path / "credentials"
    file.write_bytes(content.encode())
    resolved = compiler_cache(backend, file, **keys)
    out = secrets.render(resolved, tmp_path / "s")
    assert sorted(out) == ["compiler-cache", "compiler-cache-credentials"]
    assert out["compiler-cache-credentials"].read_bytes() == content.encode()
    assert stat.S_IMODE(out["compiler-cache-credentials"].stat().st_mode) == 0o600
    # the env file names no credentials, the build's arguments only the files
    assert "pw" not in out["compiler-cache"].read_text()
    args = secrets.buildx_args(out)
    assert f"id=compiler-cache-credentials,src={out['compiler-cache-credentials']}" in args
    assert content not in " ".join(args)
    assert f"compiler cache credentials: {file} (file)" in resolved.describe()


def test_the_default_local_ccache_renders_no_compiler_cache_secret(tmp_path):
    # absent when not configured: the RUN steps then mount nothing, as before
    assert secrets.render(secrets.Resolved(), tmp_path / "a") == {}
    assert secrets.render(compiler_cache("local"), tmp_path / "b") == {}
    assert secrets.Resolved().describe() == []
    assert set(secrets.COMPILER_CACHE_SECRETS) <= set(secrets.OPTIONAL_SECRETS)
    assert not set(secrets.COMPILER_CACHE_SECRETS) & set(secrets.SECRETS)


def test_a_credentials_file_gone_before_the_build_is_an_error(tmp_path):
    resolved = compiler_cache("sccache-webdav", tmp_path / "gone", endpoint="http://c.example/")
    with pytest.raises(MirrorError, match=r"cannot read .*/gone for the build's compiler-cache-c"):
        secrets.render(resolved, tmp_path / "s")


@pytest.mark.parametrize(
    "backend, keys, line",
    [
        ("none", {}, "compiler cache: none"),
        (
            "sccache-s3",
            {"endpoint": "https://m.example:9000", "bucket": "b", "region": "auto"},
            "compiler cache: sccache-s3 at https://m.example:9000/b (region auto)",
        ),
        (
            "sccache-gcs",
            {"bucket": "b", "key_prefix": "rocm"},
            "compiler cache: sccache-gcs at gs://b (key prefix rocm)",
        ),
        (
            "sccache-webdav",
            {"endpoint": "http://c.example/sccache"},
            "compiler cache: sccache-webdav at http://c.example/sccache",
        ),
        (
            "ccache-http",
            {"endpoint": "http://c.example/ccache|layout=bazel"},
            "compiler cache: ccache-http at http://c.example/ccache|layout=bazel",
        ),
    ],
)
def test_describe_names_the_compiler_cache(backend, keys, line):
    assert compiler_cache(backend, **keys).describe() == [line]
