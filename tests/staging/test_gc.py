"""gc and forget against the embedded registry and a shared one (real docker-registry)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

from tests.registry.fixtures import Registry
from tests.staging.conftest import (
    age_tag,
    push_image,
    tag_manifest,
    tags_in,
    write_descriptor,
)
from tools.staging import embedded, forget, gc, lease, resolve, scan
from tools.staging.errors import UnreachableError

DAY = 86400.0


@pytest.fixture
def populated(state, tmp_path):
    """The embedded staging with aged images, and a bazel-out whose descriptors use some."""
    staging = resolve(None)
    host = staging.host
    out = tmp_path / "bazel-out"
    images = {
        "ref": push_image(host, "staging/a", "ref"),
        "old": push_image(host, "staging/a", "old"),
        "new": push_image(host, "staging/a", "new"),
        "young": push_image(host, "staging/a", "young"),
        "b1": push_image(host, "staging/b", "b1"),
        "b2": push_image(host, "staging/b", "b2"),
        "parent": push_image(host, "staging/c", "parent"),
        "c-old": push_image(host, "staging/c", "c-old"),
        "outside": push_image(host, "other/x", "outside"),
    }
    b2 = images["b2"]
    tag_manifest(host, "staging/b", "alias", b2.manifest, b2.config)
    ages = {
        ("staging/a", "ref"): 30 * DAY,
        ("staging/a", "old"): 20 * DAY,
        ("staging/a", "new"): 3600,
        ("staging/a", "young"): 2 * DAY,
        ("staging/b", "b1"): 40 * DAY,
        ("staging/b", "b2"): 30 * DAY,
        ("staging/b", "alias"): 50 * DAY,
        ("staging/c", "parent"): 60 * DAY,
        ("staging/c", "c-old"): 10 * DAY,
        ("other/x", "outside"): 100 * DAY,
    }
    for (name, t), age in ages.items():
        age_tag(state, name, t, age)
    write_descriptor(out / "k8-fastbuild/bin", images["ref"], staging.registry, embedded_=True)
    write_descriptor(
        out / "k8-fastbuild/bin",
        images["c-old"],
        staging.registry,
        embedded_=True,
        parents={"base": images["parent"].digest},
    )
    return staging, out, images


ALL = {
    "staging/a:ref",
    "staging/a:old",
    "staging/a:new",
    "staging/a:young",
    "staging/b:b1",
    "staging/b:b2",
    "staging/b:alias",
    "staging/c:parent",
    "staging/c:c-old",
    "other/x:outside",
}


def test_gc_embedded_keeps_referenced_newest_young_and_frees_disk(state, populated):
    staging, out, images = populated
    pid = embedded.status()["pid"]
    # another port in the setting is refused before anything (test_embedded); the
    # restart around garbage-collect keeps the recorded port (asserted below)
    lines = []
    report = gc.run(staging, [out], gc.Options(keep=1, max_age=7 * DAY), say=lines.append)
    assert tags_in(state) == ALL - {"staging/a:old", "staging/b:b1"}
    assert report.deleted == 2 and report.descriptors == 2
    assert sorted(report.deletions) == [
        ("staging/a", images["old"].digest),
        ("staging/b", images["b1"].digest),
    ]
    assert any(f"staging/a@{images['old'].digest} (tag old;" in line for line in lines)
    assert report.bytes_after < report.bytes_before
    # restarted around garbage-collect, on the same port
    info = embedded.status()
    assert info["running"] and info["pid"] != pid and staging == resolve(None)
    assert report.bytes_after == info["storage_bytes"]
    # the blobs of the deleted images are gone from disk
    blobs = state.data / "docker/registry/v2/blobs/sha256"
    old_layer = __import__("json").loads(images["old"].manifest)["layers"][0]["digest"]
    assert not (blobs / old_layer[7:9] / old_layer[7:]).exists()


def test_gc_dry_run_deletes_nothing(state, populated):
    staging, out, _ = populated
    pid = embedded.status()["pid"]
    before = embedded.storage_bytes(state)
    lines = []
    report = gc.run(staging, [out], gc.Options(keep=1, max_age=7 * DAY, dry_run=True), lines.append)
    assert len(report.deletions) == 2 and report.deleted == 0
    assert all(line.startswith("would delete") for line in lines) and len(lines) == 2
    assert tags_in(state) == ALL
    assert embedded.storage_bytes(state) == before and embedded.status()["pid"] == pid


def test_gc_defaults_keep_everything_young(state, populated):
    staging, out, _ = populated
    report = gc.run(staging, [out], gc.Options(keep=0, max_age=365 * DAY))
    assert report.deletions == [] and tags_in(state) == ALL


def test_forget_finds_descriptors_whose_image_is_gone(state, populated):
    staging, out, _ = populated
    found = list(scan.find([out]))
    assert forget.lost(found) == []
    gc.run(staging, [], gc.Options(keep=0, max_age=0))  # no descriptors: everything goes
    assert tags_in(state) == {"other/x:outside"}
    gone = forget.lost(found)
    assert len(gone) == 2
    assert forget.forget(gone) == 2 and list(scan.find([out])) == []


def test_forget_finds_a_descriptor_whose_layer_blob_is_gone(state, populated):
    """A deleted layer (its manifest kept) is found too: `forget` no longer finds nothing
    while every push fails on that blob."""
    _, out, images = populated
    found = list(scan.find([out]))
    assert forget.lost(found) == []
    ref = images["ref"]
    layer = json.loads(ref.manifest)["layers"][0]["digest"].removeprefix("sha256:")
    data = state.data / "docker/registry/v2/blobs/sha256" / layer[:2] / layer / "data"
    data.unlink()
    gone = forget.lost(found)
    assert [f.data["digest"] for f in gone] == [ref.digest]


@pytest.fixture
def shared(tmp_path):
    registry = Registry(tmp_path / "shared")
    yield registry
    registry.stop()


def test_forget_leaves_a_staging_that_does_not_answer_and_checks_the_rest(state, populated, shared):
    """A descriptor of a staging registry that is gone (a test's temporary team staging)
    keeps `forget` from nothing else: it is left alone, named by its host."""
    _, out, images = populated
    gone_host = shared.host
    pushed = push_image(gone_host, "team/staging/a", "t-1")
    write_descriptor(out, pushed, f"{gone_host}/team/staging", embedded_=False)
    shared.stop()
    ref = images["ref"]
    layer = json.loads(ref.manifest)["layers"][0]["digest"].removeprefix("sha256:")
    (state.data / "docker/registry/v2/blobs/sha256" / layer[:2] / layer / "data").unlink()
    found = list(scan.find([out]))
    with pytest.raises(UnreachableError, match=f"staging registry {gone_host} cannot be reached"):
        forget.lost(found)
    unreachable: dict = {}
    gone = forget.lost(found, unreachable=unreachable)
    assert [f.data["digest"] for f in gone] == [ref.digest]
    assert {h: [f.data["digest"] for f in fs] for h, fs in unreachable.items()} == {
        gone_host: [pushed.digest]
    }


def test_gc_shared_ignores_ages_keeps_referenced_and_first_listed(shared, tmp_path):
    staging = resolve(f"{shared.host}/team/staging")
    assert not staging.embedded
    images = {t: push_image(shared.host, "team/staging/a", t) for t in ("c-1", "c-2", "c-3", "c-4")}
    push_image(shared.host, "team/other", "c-9")
    out = tmp_path / "bazel-out"
    write_descriptor(out, images["c-3"], staging.registry, embedded_=False)
    dry = gc.run(staging, [out], gc.Options(keep=1, max_age=1e12, dry_run=True))
    assert sorted(dry.deletions) == sorted(
        ("team/staging/a", images[t].digest) for t in ("c-2", "c-4")
    )
    assert len(shared.all_refs()) == 5
    report = gc.run(staging, [out], gc.Options(keep=1, max_age=1e12))
    assert report.deleted == 2 and report.bytes_before is None
    assert set(shared.all_refs()) == {
        "team/staging/a:c-1",
        "team/staging/a:c-3",
        "team/other:c-9",
    }


HOLD = """
import sys, time
from tools.staging import lease
with lease.hold("pytorch (gfx950)", digests=[sys.argv[1]], tags=[sys.argv[2]]):
    print("held", flush=True)
    time.sleep(600)
"""


@pytest.fixture
def build_holding(tmp_path):
    """Start a process that holds a lease (as an image build does) on a digest and a tag."""
    procs = []

    def start(digest: str, tag: str) -> subprocess.Popen:
        proc = subprocess.Popen(
            [sys.executable, "-c", HOLD, digest, tag],
            stdout=subprocess.PIPE,
            text=True,
            env=dict(os.environ, PYTHONPATH=os.getcwd()),
        )
        assert proc.stdout.readline().strip() == "held"
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


def test_gc_keeps_what_a_running_build_leases_and_leaves_the_registry_up(
    state, populated, build_holding
):
    """gc beside a build (another clone, the same staging) restarted the registry under it
    (connection refused) and deleted what it had pushed: a lease keeps both."""
    staging, out, images = populated
    pid = embedded.status()["pid"]
    build = build_holding(images["b1"].digest, "staging/a:old")  # a parent, and its own tag
    report = gc.run(staging, [out], gc.Options(keep=1, max_age=7 * DAY))
    assert report.deleted == 0 and tags_in(state) == ALL
    kept = {f"{v.tag.name}:{v.tag.tag}": v.why for v in report.verdicts}
    assert kept["staging/a:old"] == kept["staging/b:b1"] == "in use by a running build"
    assert embedded.status()["pid"] == pid  # not restarted under the build
    assert [h.pid for h in report.builds] == [build.pid]
    assert report.notes == [
        f"1 running build(s) use staging (pid {build.pid} (pytorch (gfx950), 0s)): the registry"
        " was not restarted, so the disk of what was deleted is freed by the next gc while no"
        " build runs"
    ]
    # the build ends however it ends (Bazel SIGKILLs): its lease goes with it
    build.kill()
    build.wait()
    report = gc.run(staging, [out], gc.Options(keep=1, max_age=7 * DAY))
    assert report.deleted == 2 and report.builds == []
    assert tags_in(state) == ALL - {"staging/a:old", "staging/b:b1"}
    assert embedded.status()["pid"] != pid
    assert list(lease.directory(state).iterdir()) == []  # the stale lease was removed


def test_a_build_that_starts_during_gc_waits_for_it_and_says_so(state, capfd):
    """A lease is taken under the lock gc holds from reading leases to the restart: a build
    is either seen by gc, or waits until the registry answers again."""
    embedded.ensure_running()
    got = threading.Event()

    def take() -> None:
        with lease.hold("vllm (gfx950)", tags=["staging/vllm:c-1"]):
            got.set()

    with embedded.locked(state):  # what gc holds
        thread = threading.Thread(target=take)
        thread.start()
        assert not got.wait(1.0)
    thread.join(10)
    assert got.is_set()
    assert "staging: waiting for a gc (or a start or stop) of the embedded staging registry" in (
        capfd.readouterr().err
    )


# -- `python3 -m tools.staging gc` beside a build: no httpx, no Bazel server -----------------

# A python3 that cannot import httpx, as the host's (or the sid tree's) is: the module
# runs as `python3 -m tools.staging` would, from the workspace directory.
WITHOUT_HTTPX = (
    "import runpy, sys; sys.modules['httpx'] = None;"
    " runpy.run_module('tools.staging', run_name='__main__', alter_sys=True)"
)


def staging_module(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_HTTPX, *args],
        capture_output=True,
        text=True,
        check=False,
        env=dict(os.environ, PYTHONPATH=os.getcwd()),
        timeout=120,
    )


def test_python3_m_tools_staging_gc_needs_no_httpx_beside_a_running_build(
    state, populated, build_holding
):
    """`python3 -m tools.staging gc` died with ModuleNotFoundError: httpx (only --dry-run
    worked), and `bazel run` waits for the build that holds the Bazel server: the embedded
    registry's gc is the standard library's only."""
    _, out, images = populated
    pid = embedded.status()["pid"]
    build = build_holding(images["ref"].digest, "staging/a:c-building")
    r = staging_module("gc", "--keep", "1", "--max-age", "7d", "--descriptors", str(out))
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert f"delete staging/a@{images['old'].digest} (tag old;" in r.stdout
    assert "deleted 2 manifests" in r.stdout
    assert f"note: 1 running build(s) use staging (pid {build.pid}" in r.stdout
    assert tags_in(state) == ALL - {"staging/a:old", "staging/b:b1"}
    assert embedded.status()["pid"] == pid  # not restarted under the build


def test_gc_of_a_shared_registry_without_httpx_is_one_line_naming_what_works(shared, tmp_path):
    push_image(shared.host, "team/staging/a", "c-1")
    where = f"{shared.host}/team/staging"
    r = staging_module("gc", "--staging", where, "--descriptors", str(tmp_path))
    assert r.returncode == 2
    assert r.stdout == ""
    (line,) = r.stderr.splitlines()
    assert line.startswith(
        f"staging: error: a shared staging registry needs the Python module httpx, which"
        f" {sys.executable} cannot import; run `bazel run //tools/staging -- gc --staging"
        f" {where} --descriptors {tmp_path}`, or `bazel-bin/tools/staging/staging gc"
    ), line
    assert set(shared.all_refs()) == {"team/staging/a:c-1"}  # nothing deleted
