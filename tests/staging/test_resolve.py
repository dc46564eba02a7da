"""resolve(), the gc decisions, the descriptor scan, units, the state dir: no processes."""

from __future__ import annotations

import json
import os
import pwd

import pytest

from tools.staging import (
    EMBEDDED,
    EMBEDDED_PREFIX,
    Staging,
    StagingError,
    embedded,
    gc,
    resolve,
    scan,
)

GOOD = [
    ("registry.example.com/rocm-pytorch-staging", "registry.example.com/rocm-pytorch-staging"),
    ("registry.example.com:5000/team/staging/", "registry.example.com:5000/team/staging"),
    ("localhost/s", "localhost/s"),
    ("myhost:5000/a.b_c__d--e", "myhost:5000/a.b_c__d--e"),
    ("127.0.0.1:5480/staging", "127.0.0.1:5480/staging"),
    ("[::1]:5000/staging", "[::1]:5000/staging"),
    ("Registry.Example.com/x", "Registry.Example.com/x"),
]

BAD = [
    ("https://registry.example.com/staging", "scheme"),
    ("user:pw@registry.example.com/staging", "credentials"),
    ("registry.example.com", "no prefix"),
    ("registry.example.com/", "no prefix"),
    ("registry.example.com/Staging", "'Staging'"),
    ("registry.example.com/team//staging", "''"),
    ("registry.example.com/staging:latest", "tag or digest"),
    ("registry.example.com/staging@sha256:00", "tag or digest"),
    ("registry.example.com/-staging", "'-staging'"),
    ("registry.example.com/sta..ging", "'sta..ging'"),
    ("registry.example.com:99999/staging", "port '99999'"),
    ("registry.example.com:http/staging", "port 'http'"),
    ("rocm/staging", "not a registry host"),
    ("bad_host.example.com/staging", "not a host name"),
    ("-bad.example.com/staging", "not a host name"),
]


@pytest.mark.parametrize(("value", "want"), GOOD)
def test_resolve_accepts(value, want):
    assert resolve(value) == Staging(want, False)


@pytest.mark.parametrize(("value", "fragment"), BAD)
def test_resolve_rejects_naming_the_value_and_the_fix(value, fragment):
    with pytest.raises(StagingError) as e:
        resolve(value)
    message = str(e.value)
    assert repr(value) in message and fragment in message
    assert "\n" not in message and ";" in message  # one line: what; fix


@pytest.mark.parametrize("value", [None, "", EMBEDDED, " embedded "])
def test_resolve_embedded_without_starting(value, tmp_path, monkeypatch):
    monkeypatch.setenv(embedded.DIR_ENV, str(tmp_path))
    monkeypatch.setenv(embedded.PORT_ENV, "5999")
    staging = resolve(value, start=False)
    assert staging == Staging(f"127.0.0.1:5999/{EMBEDDED_PREFIX}", True)
    assert (staging.host, staging.prefix) == ("127.0.0.1:5999", "staging")
    assert staging.name("pytorch") == "staging/pytorch"
    assert not (tmp_path / "pid").exists()


def test_recorded_port_wins_over_default(tmp_path, monkeypatch):
    monkeypatch.setenv(embedded.DIR_ENV, str(tmp_path))
    monkeypatch.delenv(embedded.PORT_ENV, raising=False)
    assert resolve(None, start=False).host == f"127.0.0.1:{embedded.DEFAULT_PORT}"
    (tmp_path / "port").write_text("5512\n")
    assert resolve(None, start=False).host == "127.0.0.1:5512"


def test_bad_port_env(tmp_path, monkeypatch):
    monkeypatch.setenv(embedded.DIR_ENV, str(tmp_path))
    monkeypatch.setenv(embedded.PORT_ENV, "eighty")
    with pytest.raises(StagingError, match="ROCM_PYTORCH_STAGING_PORT='eighty'"):
        resolve(None, start=False)


def test_state_dir_is_in_the_users_cache_dir(monkeypatch):
    monkeypatch.delenv(embedded.DIR_ENV, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("HOME", raising=False)  # a Bazel action: the account's home
    home = pwd.getpwuid(os.getuid()).pw_dir
    want = embedded.Path(home, ".cache/rocm-pytorch-images/staging")
    assert embedded.state_dir() == want
    # Bazel tests set HOME to their TEST_TMPDIR: not the user's
    monkeypatch.setenv("HOME", "/somewhere")
    monkeypatch.setenv("TEST_TMPDIR", "/somewhere")
    assert embedded.state_dir() == want
    monkeypatch.delenv("TEST_TMPDIR")  # a user's HOME moves it
    assert str(embedded.state_dir()) == "/somewhere/.cache/rocm-pytorch-images/staging"
    monkeypatch.setenv(embedded.DIR_ENV, "/elsewhere")
    assert str(embedded.state_dir()) == "/elsewhere"


# -- gc decisions ------------------------------------------------------------------

DAY = 86400.0


def tag(name, t, digest, age):
    return gc.Tag(name, t, digest, age)


def test_decide_keeps_referenced_newest_and_young():
    tags = [
        tag("s/a", "ref", "d-ref", 30 * DAY),
        tag("s/a", "old", "d-old", 20 * DAY),
        tag("s/a", "new", "d-new", 3600),
        tag("s/a", "young", "d-young", 2 * DAY),
        tag("s/b", "b1", "d-b1", 40 * DAY),
        tag("s/b", "b2", "d-b2", 30 * DAY),
        tag("s/b", "alias", "d-b2", 50 * DAY),
    ]
    verdicts = gc.decide(tags, {"d-ref"}, keep=1, max_age=7 * DAY)
    kept = {v.tag.tag: v.why for v in verdicts if v.keep}
    assert kept == {
        "ref": "referenced by a descriptor",
        "new": "among the newest 1",
        "young": "younger than 7d",
        "b2": "among the newest 1",
    }
    # alias is dropped but points at a kept manifest: never deleted
    assert gc.deletions(verdicts) == [("s/a", "d-old"), ("s/b", "d-b1")]


def test_decide_unknown_ages_keep_listing_order_and_ignore_max_age():
    tags = [tag("s/a", t, f"d-{t}", None) for t in ("c-1", "c-2", "c-3")]
    verdicts = gc.decide(tags, {"d-c-3"}, keep=1, max_age=1e12)
    assert [v.keep for v in verdicts] == [True, False, True]
    assert gc.deletions(verdicts) == [("s/a", "d-c-2")]


def test_decide_keep_zero_and_same_digest_in_two_repositories():
    tags = [tag("s/a", "x", "d", 30 * DAY), tag("s/b", "y", "d", 1)]
    verdicts = gc.decide(tags, set(), keep=0, max_age=DAY)
    # same digest, other repository: a separate manifest link, deleted on its own
    assert gc.deletions(verdicts) == [("s/a", "d")]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("14d", 14 * DAY),
        ("36h", 36 * 3600),
        ("90m", 5400),
        ("30s", 30),
        ("2w", 14 * DAY),
        ("3", 3 * DAY),
    ],
)
def test_parse_age(text, seconds):
    assert gc.parse_age(text) == seconds


@pytest.mark.parametrize("text", ["", "d", "x1", "-1d", "1y"])
def test_parse_age_rejects(text):
    with pytest.raises(ValueError):
        gc.parse_age(text)


def test_human_and_format_age():
    assert gc.human(512) == "512 B"
    assert gc.human(3 << 20) == "3.0 MiB"
    assert gc.format_age(3 * DAY) == "3d" and gc.format_age(120) == "2m"


# -- descriptor scan -----------------------------------------------------------------


def descriptor_json(digest: str, parents=None) -> str:
    return json.dumps(
        {"schema": 1, "digest": digest, "staging": {"registry": "r/s"}, "parents": parents or {}}
    )


def test_scan_finds_descriptors_and_their_parents(tmp_path):
    out = tmp_path / "bazel-out"
    (out / "k8-fastbuild/bin/images").mkdir(parents=True)
    (out / "k8-fastbuild/bin/images/pytorch.json").write_text(
        descriptor_json("sha256:child", {"pytorch-base": "sha256:parent"})
    )
    (out / "k8-fastbuild/bin/images/plan.json").write_text('{"not": "a descriptor"}')
    (out / "k8-fastbuild/bin/images/broken.json").write_text("{")
    (out / "k8-fastbuild/bin/images/big.json").write_text(
        descriptor_json("sha256:big") + " " * scan.MAX_DESCRIPTOR_BYTES
    )
    (out / "k8-fastbuild/bin/images/other.txt").write_text(descriptor_json("sha256:txt"))
    runfiles = out / "k8-fastbuild/bin/tool.runfiles"
    runfiles.mkdir()
    (runfiles / "copy.json").write_text(descriptor_json("sha256:runfiles"))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.json").write_text(descriptor_json("sha256:outside"))
    (out / "k8-fastbuild/bin/link").symlink_to(outside)
    (out / "k8-fastbuild/bin/link.json").symlink_to(outside / "x.json")
    link = tmp_path / "bazel-out-link"
    link.symlink_to(out)  # the workspace's bazel-out is a symlink: the root is followed
    found = list(scan.find([link]))
    assert [f.path.name for f in found] == ["pytorch.json"]
    assert scan.referenced_digests(found) == {"sha256:child", "sha256:parent"}


def test_scan_default_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("BUILD_WORKSPACE_DIRECTORY", str(tmp_path))
    with pytest.raises(StagingError, match="--descriptors DIR"):
        scan.default_dirs()
    (tmp_path / "bazel-out").mkdir()
    assert scan.default_dirs() == [tmp_path / "bazel-out"]
    with pytest.raises(StagingError, match="does not exist"):
        list(scan.find([tmp_path / "nope"]))
