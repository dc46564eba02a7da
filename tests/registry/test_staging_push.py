"""Publishing from a staging registry, given descriptors: copy, mount, no-op, lost content.

Two real registries (docker-registry processes on loopback ports): one holds
synthetic images the way image builds leave them (plus their descriptors),
the other is the publication target. Request-recording proxies count what
the push tool asks of each.
"""

from __future__ import annotations

import dataclasses
import json
import tracemalloc

import httpx
import pytest

from tests.registry.fixtures import Fault, FaultProxy, Registry
from tests.registry.staging_images import (
    NAMESPACE,
    PutMeter,
    family,
    refs,
    refuse_mounts,
    registry_tool,
    write_plan,
)
from tools.oci.errors import RegistryError
from tools.registry.plan import load_plans
from tools.registry.push import Pusher, PushOptions


@pytest.fixture
def env(env, tmp_path):
    """conftest's env (no user credentials), and an empty TMPDIR to show nothing is
    spooled to disk."""
    spool = tmp_path / "spool"
    spool.mkdir()
    return {**env, "TMPDIR": str(spool)}


def push(plan, registry: str, *args: str, env: dict):
    return registry_tool("push", "--plan", str(plan), "--registry", registry, *args, env=env)


def blob(registry: Registry, name: str, digest: str) -> bytes:
    status, _, body = registry.get(f"/v2/{name}/blobs/{digest}")
    assert status == 200, (name, digest, status)
    return body


def mounts(proxy: FaultProxy) -> list[tuple[str, str, int]]:
    return [r for r in proxy.requests if r[0] == "POST" and "mount=" in r[1]]


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if "error" in line]


def test_another_host_streams_each_blob_once_and_lands_the_exact_tags(
    tmp_path, env, registries, proxy_for
):
    staging, target = registries("staging"), registries("target")
    images = family(staging.host, tmp_path / "images", vcs_ref="abc1234")
    parent, child = images
    proxy = proxy_for(target)
    meter = PutMeter(proxy)
    result = push(write_plan(tmp_path, images), f"{proxy.host}/{NAMESPACE}", env=env)
    assert result.code == 0, result.err
    # should publish exactly the spec's tags (versioned, floating, immutable) on the digests
    want = refs(images, NAMESPACE)
    assert len(want) == 6
    assert target.all_refs() == want
    assert sorted(result.out.splitlines()) == sorted(f"pushed {proxy.host}/{r}" for r in want)
    # should push each manifest unchanged (non-canonical JSON: byte-exact or a new digest)
    for image in images:
        name = f"{NAMESPACE}/{image.descriptor.repository}"
        accept = {"Accept": image.descriptor.media_type}
        _, _, body = target.get(f"/v2/{name}/manifests/{image.descriptor.digest}", accept)
        assert body == image.descriptor.manifest
        # should hold every blob, byte for byte
        for digest, data in image.blobs.items():
            assert blob(target, name, digest) == data
    # should stream each distinct blob once (the child's 3 shared layers are mounted from
    # its parent's repository): 4 parent + 2 child blobs, their exact bytes, in PUTs
    shared = set(parent.blobs) & set(child.blobs)
    assert len(shared) == 3
    copied = parent.layer_bytes + sum(len(b) for d, b in child.blobs.items() if d not in shared)
    assert (meter.puts, meter.bytes) == (6, copied)
    assert len(mounts(proxy)) == 3
    assert all(status == 201 for _, _, status in mounts(proxy))
    assert "uploaded 6 blobs" in result.err and "mounted 3" in result.err
    # should never spool a blob to the local disk
    assert list((tmp_path / "spool").iterdir()) == []


def test_same_host_mounts_every_blob_from_staging_and_moves_no_bytes(
    tmp_path, env, registries, proxy_for
):
    registry = registries("registry")
    proxy = proxy_for(registry)
    meter = PutMeter(proxy)
    # staging and target share the proxy's host: staging/<repo> and rocm-pytorch/<repo>
    images = family(registry.host, tmp_path / "images", staging=f"{proxy.host}/staging")
    result = push(write_plan(tmp_path, images), f"{proxy.host}/{NAMESPACE}", env=env)
    assert result.code == 0, result.err
    published = {r: d for r, d in registry.all_refs().items() if r.startswith(NAMESPACE)}
    assert published == refs(images, NAMESPACE)
    # should mount all 4 + 5 blobs from staging/<repository>, no upload, zero blob bytes
    sources = sorted(r[1].split("from=")[1].replace("%2F", "/") for r in mounts(proxy))
    parent, child = (i.descriptor.staging_name for i in images)
    assert sources == sorted([parent] * 4 + [child] * 5)
    assert all(status == 201 for _, _, status in mounts(proxy))
    assert (meter.puts, meter.bytes) == (0, 0)
    # should write only mounts, 2 manifests by digest and 4 tags
    manifest_puts = [r for r in proxy.writes() if r[0] == "PUT" and "/manifests/" in r[1]]
    assert len(manifest_puts) == 2 + 4
    assert len(proxy.writes()) == 9 + 6
    assert "uploaded 0 blobs (0 B), mounted 9" in result.err


def test_a_mount_answered_with_an_upload_session_streams_into_that_session(
    tmp_path, env, registries, proxy_for
):
    registry = registries("registry")
    proxy = proxy_for(registry)
    refused = refuse_mounts(proxy)
    meter = PutMeter(proxy)
    images = family(registry.host, tmp_path / "images", staging=f"{proxy.host}/staging")
    result = push(write_plan(tmp_path, images), f"{proxy.host}/{NAMESPACE}", env=env)
    assert result.code == 0, result.err
    published = {r: d for r, d in registry.all_refs().items() if r.startswith(NAMESPACE)}
    assert published == refs(images, NAMESPACE)
    # should stream each of the 4 + 5 blobs into the session its mount opened: 9 POSTs
    # (all of them mounts), 9 PUTs, and every blob's bytes
    posts = [r for r in proxy.requests if r[0] == "POST"]
    assert (len(refused), len(posts), meter.puts) == (9, 9, 9)
    assert meter.bytes == sum(i.layer_bytes for i in images)
    assert "uploaded 9 blobs" in result.err


def test_second_push_writes_nothing_and_asks_staging_nothing(tmp_path, env, registries, proxy_for):
    staging, target = registries("staging"), registries("target")
    staging_proxy = proxy_for(staging)
    images = family(staging.host, tmp_path / "images", staging=f"{staging_proxy.host}/staging")
    plan = write_plan(tmp_path, images)
    proxy = proxy_for(target)
    assert push(plan, f"{proxy.host}/{NAMESPACE}", env=env).code == 0
    first = len(staging_proxy.requests)
    proxy.requests.clear()
    staging_proxy.requests.clear()
    result = push(plan, f"{proxy.host}/{NAMESPACE}", env=env)
    assert result.code == 0, result.err
    # should write nothing and make 1 + number-of-tags requests per image, none to staging
    assert proxy.writes() == []
    assert len(proxy.requests) == 2 * (1 + 2)
    assert staging_proxy.requests == []
    # the first push read staging: 2 manifest HEADs and a HEAD of each blob they name
    # (3 + 6: checked before the first write), then one GET per distinct blob (4 + 2)
    assert first == 2 + 9 + 6


@pytest.mark.parametrize("what", ["manifest", "blob"])
def test_content_staging_lost_fails_in_one_line_naming_image_and_fix(
    tmp_path, env, registries, proxy_for, what
):
    staging, target = registries("staging"), registries("target")
    parent, child = images = family(staging.host, tmp_path / "images")
    lost = parent if what == "blob" else child
    d = lost.descriptor
    if what == "manifest":
        r = httpx.delete(f"http://{staging.host}/v2/{d.staging_name}/manifests/{d.digest}")
    else:
        r = httpx.delete(f"http://{staging.host}/v2/{d.staging_name}/blobs/{d.layers[1].digest}")
    assert r.status_code == 202, r.text
    proxy = proxy_for(target)
    result = push(write_plan(tmp_path, images), f"{proxy.host}/{NAMESPACE}", env=env)
    # should exit 1 with one line: image, arch, digest, staging ref and the fix
    assert result.code == 1
    assert error_lines(result.err) == [
        f"registry: error: staging has lost {lost.target} (gfx950) {d.digest}"
        f" ({staging.host}/{d.staging_name}@{d.digest}); run"
        " `bazel run //tools/staging -- forget` and build again (it rebuilds what is missing)"
    ]
    assert result.err.splitlines()[-1] == error_lines(result.err)[0]
    # should write nothing: a lost manifest or blob is found before the first write
    assert target.all_refs() == {}
    assert proxy.writes() == []
    # a dry run says the same, and writes nothing (its registry check cancels its sessions)
    writes = len(proxy.writes())
    dry = push(write_plan(tmp_path, images), f"{proxy.host}/{NAMESPACE}", "--dry-run", env=env)
    assert (dry.code, error_lines(dry.err)) == (1, error_lines(result.err))
    assert len(proxy.writes(sessions=False)) == writes


@pytest.mark.parametrize("jobs,peak", [("4", 4), ("1", 1)])
def test_blobs_of_an_image_are_copied_several_at_once(
    tmp_path, env, registries, proxy_for, jobs, peak
):
    staging, target = registries("staging"), registries("target")
    images = family(staging.host, tmp_path / "images")
    proxy = proxy_for(target)
    proxy.faults.append(Fault("PUT", r"/blobs/uploads/", "slow", count=100, delay=0.5))
    meter = PutMeter(proxy)
    result = push(
        write_plan(tmp_path, images[:1]), f"{proxy.host}/{NAMESPACE}", "--jobs", jobs, env=env
    )
    assert result.code == 0, result.err
    # rocm-runtime has 4 blobs (config and 3 layers): --jobs 4 has them all in flight at once
    assert (meter.puts, meter.peak) == (4, peak)


def test_dry_run_reports_what_each_ref_would_get_and_writes_nothing(
    tmp_path, env, registries, proxy_for
):
    staging, target = registries("staging"), registries("target")
    images = family(staging.host, tmp_path / "images")
    parent = images[0]
    plan = write_plan(tmp_path, images)
    proxy = proxy_for(target)
    result = push(plan, f"{proxy.host}/{NAMESPACE}", "--dry-run", env=env)
    assert result.code == 0, result.err
    # the registry check: upload sessions opened and cancelled, nothing else written
    assert proxy.writes(sessions=False) == []
    lines = result.out.splitlines()
    assert len(lines) == 4
    versioned = json.loads(parent.spec.read_text())["tags"]["versioned"]
    size = sum(len(b) for b in parent.blobs.values()) / 1e6
    assert lines[0] == (
        f"{proxy.host}/{NAMESPACE}/rocm-runtime:{versioned}@{parent.descriptor.digest}"
        f" (0/4 blobs present, would copy 4 ({size:.1f} MB) from staging {staging.host})"
    )
    assert "(0/5 blobs present, would copy 5" in lines[2]
    # after the parent is published, the child's shared layers are present
    assert push(write_plan(tmp_path, [parent]), f"{proxy.host}/{NAMESPACE}", env=env).code == 0
    lines = push(plan, f"{proxy.host}/{NAMESPACE}", "--dry-run", env=env).out.splitlines()
    assert lines[0].endswith("(manifest present)") and lines[1].endswith("(manifest present)")
    assert "(0/5 blobs present, would copy 5" in lines[2]  # present in rocm-runtime only
    # same host: mounts
    same = push(plan, f"{staging.host}/{NAMESPACE}", "--dry-run", env=env)
    assert "(0/4 blobs present, would mount 4 from staging staging/rocm-runtime)" in same.out


def test_a_plan_without_descriptors_plans_but_does_not_push(tmp_path, env, registries):
    staging = registries("staging")
    images = family(staging.host, tmp_path / "images")
    plan = write_plan(tmp_path, images, descriptors=False)
    planned = registry_tool("plan", "--plan", str(plan), "--registry", "r.example/ns", env=env)
    assert planned.code == 0, planned.err
    assert len(planned.out.splitlines()) == 4
    result = push(plan, f"{staging.host}/{NAMESPACE}", env=env)
    assert result.code == 1
    assert error_lines(result.err) == [
        "registry: error: rocm-runtime (gfx950): the plan names no descriptor (a `.plan`"
        " target's plan); use the `.push` target, which builds the image"
    ]


def test_a_big_layer_is_copied_in_constant_memory(tmp_path, env, registries, monkeypatch):
    staging, target = registries("staging"), registries("target")
    big = 48_000_000
    images = family(staging.host, tmp_path / "images", big=big)
    pusher = Pusher(PushOptions(jobs=4), log=lambda _msg: None)
    tracemalloc.start()
    try:
        result = pusher.push(load_plans([write_plan(tmp_path, images)], f"{target.host}/ns"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        pusher.close()
    assert result.failed is None, result.error
    assert sum(c.stats.uploaded_bytes for c in pusher.clients.values()) > big
    # should hold a few 1 MiB chunks per blob in flight, never a layer
    assert peak < 12_000_000, peak  # measured: 4.6 MB with a 48 MB layer


def test_an_embedded_staging_registry_is_started_and_read_where_it_now_listens(
    tmp_path, env, registries, monkeypatch
):
    import tools.staging

    staging, target = registries("staging"), registries("target")
    # the descriptors name a port nothing listens on: the embedded registry moved
    images = family(staging.host, tmp_path / "images", staging="127.0.0.1:9/staging", embedded=True)
    calls = []

    def resolve(value, **_kwargs):
        calls.append(value)
        return tools.staging.Staging(f"{staging.host}/staging", True)

    monkeypatch.setattr(tools.staging, "resolve", resolve)
    pusher = Pusher(PushOptions(), log=lambda _msg: None)
    try:
        result = pusher.push(load_plans([write_plan(tmp_path, images)], f"{target.host}/ns"))
    finally:
        pusher.close()
    assert result.failed is None, result.error
    # should start (or find) the embedded registry once, and read from where it listens
    assert calls == [None]
    assert len(target.all_refs()) == 4


def embedded_elsewhere(monkeypatch, host: str, instance: str) -> list:
    """This environment's embedded staging: at ``host``, state dir ``instance``."""
    import tools.staging
    from tools.staging import embedded

    calls = []

    def resolve(value, **_kwargs):
        calls.append(value)
        return tools.staging.Staging(f"{host}/staging", True)

    monkeypatch.setattr(tools.staging, "resolve", resolve)
    monkeypatch.setattr(embedded, "instance_id", lambda p=None: instance)
    return calls


def test_a_push_reads_the_embedded_staging_its_descriptors_name(
    tmp_path, env, registries, monkeypatch
):
    """Another checkout's embedded staging, still running: read from it, not from this
    environment's (which holds other things, or nothing)."""
    theirs, mine, target = registries("theirs"), registries("mine"), registries("target")
    images = family(theirs.host, tmp_path / "images", embedded=True, instance="theirs")
    calls = embedded_elsewhere(monkeypatch, mine.host, "mine")
    pusher = Pusher(PushOptions(), log=lambda _msg: None)
    try:
        result = pusher.push(load_plans([write_plan(tmp_path, images)], f"{target.host}/ns"))
    finally:
        pusher.close()
    assert result.failed is None, result.error
    assert len(target.all_refs()) == 4
    assert calls == []  # this environment's staging was not even started


def test_a_push_from_another_state_dirs_stopped_staging_fails_in_one_line(
    tmp_path, env, registries, monkeypatch
):
    theirs, mine, target = registries("theirs"), registries("mine"), registries("target")
    images = family(theirs.host, tmp_path / "images", embedded=True, instance="theirs")
    theirs.stop()
    embedded_elsewhere(monkeypatch, mine.host, "mine")
    pusher = Pusher(PushOptions(), log=lambda _msg: None)
    try:
        with pytest.raises(RegistryError) as e:
            pusher.push(load_plans([write_plan(tmp_path, images)], f"{target.host}/ns"))
    finally:
        pusher.close()
    # should refuse before the first write, rather than read this environment's staging
    assert (
        f"was built into another embedded staging registry ({theirs.host}, state theirs),"
        f" which does not answer; this environment's is {mine.host} (state mine)"
    ) in str(e.value)
    assert target.all_refs() == {}


def test_dry_run_refuses_what_the_push_would_refuse(tmp_path, env, registries, proxy_for):
    staging, target = registries("staging"), registries("target")
    images = family(staging.host, tmp_path / "images", vcs_ref="1234567")
    proxy = proxy_for(target)
    assert push(write_plan(tmp_path, images), f"{proxy.host}/{NAMESPACE}", env=env).code == 0
    published = target.all_refs()
    # another build of the same commit: other digests under the same immutable tags
    other = family(staging.host, tmp_path / "other", vcs_ref="1234567")
    plan = write_plan(tmp_path, other)
    proxy.requests.clear()
    dry = push(plan, f"{proxy.host}/{NAMESPACE}", "--dry-run", env=env)
    real = push(plan, f"{proxy.host}/{NAMESPACE}", env=env)
    # should refuse in both, with the same one line naming each tag and both digests
    assert (real.code, dry.code) == (1, 1), dry.err
    assert len(error_lines(real.err)) == 1
    assert error_lines(dry.err) == error_lines(real.err)
    for old, new in zip(images, other, strict=True):
        assert old.descriptor.digest in real.err and new.descriptor.digest in real.err
    assert "immutable tags never move; nothing was pushed" in real.err
    # ... and write nothing (the dry run's registry check cancels its sessions)
    assert proxy.writes(sessions=False) == []
    assert target.all_refs() == published


def test_a_second_push_says_up_to_date_and_counts_apart(tmp_path, env, registries, proxy_for):
    staging, target = registries("staging"), registries("target")
    images = family(staging.host, tmp_path / "images", vcs_ref="1234567")
    proxy = proxy_for(target)
    first = push(write_plan(tmp_path, images), f"{proxy.host}/{NAMESPACE}", env=env)
    assert first.code == 0, first.err
    want = sorted(f"{proxy.host}/{r}" for r in refs(images, NAMESPACE))
    assert sorted(first.out.splitlines()) == [f"pushed {r}" for r in want]
    assert "2/2 images pushed, 0 up to date; 6 refs written, 0 up to date;" in first.err
    # should say `up to date` for every ref the second push finds on its digest
    again = push(write_plan(tmp_path, images), f"{proxy.host}/{NAMESPACE}", env=env)
    assert again.code == 0, again.err
    assert sorted(again.out.splitlines()) == [f"up to date {r}" for r in want]
    assert "0/2 images pushed, 2 up to date; 0 refs written, 6 up to date;" in again.err
    # the same images from a new commit: only the new immutable tags are written
    newer = [
        dataclasses.replace(i, spec=respec(i, tmp_path / "newer", vcs_ref="7654321"))
        for i in images
    ]
    third = push(write_plan(tmp_path, newer), f"{proxy.host}/{NAMESPACE}", env=env)
    assert third.code == 0, third.err
    lines = third.out.splitlines()
    assert sorted(line for line in lines if line.startswith("pushed ")) == sorted(
        f"pushed {proxy.host}/{r}" for r in refs(newer, NAMESPACE) if r.endswith("-g7654321")
    )
    assert len([line for line in lines if line.startswith("up to date ")]) == 4
    assert "2/2 images pushed, 0 up to date; 2 refs written, 4 up to date;" in third.err


def respec(image, tmp, vcs_ref: str):
    """``image``'s spec rendered for another VCS_REF (same image, new immutable tag)."""
    from tests.registry.staging_images import CATALOG
    from tools.tagconf.spec import image_spec
    from tools.tagconf.tags import resolve_values

    spec = image_spec(
        CATALOG,
        CATALOG.target(image.target),
        image.arch,
        resolve_values(CATALOG, vcs_ref=vcs_ref),
        NAMESPACE,
    )
    tmp.mkdir(exist_ok=True)
    path = tmp / image.spec.name
    path.write_text(json.dumps(spec))
    return path


def test_push_json_is_one_document_with_each_refs_digest_and_action(
    tmp_path, env, registries, proxy_for
):
    staging, target = registries("staging"), registries("target")
    images = family(staging.host, tmp_path / "images", vcs_ref="1234567")
    plan = write_plan(tmp_path, images)
    proxy = proxy_for(target)
    result = push(plan, f"{proxy.host}/{NAMESPACE}", "--json", env=env)
    assert result.code == 0, result.err
    # stdout holds the one document; progress and `pushed` lines go to stderr
    doc = json.loads(result.out)
    assert "[1/2]" in result.err and f"pushed {proxy.host}/" in result.err
    digest = {f"{proxy.host}/{r}": d for r, d in refs(images, NAMESPACE).items()}
    assert sorted(r["ref"] for r in doc["refs"]) == sorted(digest)
    for r in doc["refs"]:
        assert r["digest"] == digest[r["ref"]]
        assert r["action"] == "uploaded"  # each image had blob bytes copied
    assert (doc["ok"], doc["error"]) == (True, None)
    assert doc["totals"] == {
        "images": 2,
        "images_pushed": 2,
        "images_up_to_date": 0,
        "refs_written": 6,
        "refs_up_to_date": 0,
        "refs_not_confirmed": 0,
        "refs_refused": 0,
        "uploaded_blobs": 6,
        "uploaded_bytes": doc["totals"]["uploaded_bytes"],
        "mounted_blobs": 3,
        "requests": doc["totals"]["requests"],
        "retries": 0,
    }
    # a second push: up to date
    again = json.loads(push(plan, f"{proxy.host}/{NAMESPACE}", "--json", env=env).out)
    assert {r["action"] for r in again["refs"]} == {"up to date"}
    assert again["totals"]["refs_up_to_date"] == 6
    # same host: every blob mounted from staging
    same = push(plan, f"{staging.host}/{NAMESPACE}", "--json", env=env)
    assert {r["action"] for r in json.loads(same.out)["refs"]} == {"mounted"}, same.err
    # another build under the same immutable tags: refused, exit 1, still one document
    other = family(staging.host, tmp_path / "other", vcs_ref="1234567")
    refused = push(write_plan(tmp_path, other), f"{proxy.host}/{NAMESPACE}", "--json", env=env)
    assert refused.code == 1
    doc = json.loads(refused.out)
    assert doc["ok"] is False and "immutable tags never move" in doc["error"]
    assert {r["action"] for r in doc["refs"]} == {"refused"}
    assert doc["totals"]["refs_refused"] == 6
    assert error_lines(refused.err) == [f"registry: error: {doc['error']}"]


def test_plan_json_lists_target_arch_refs_and_immutable(tmp_path, env, registries):
    staging = registries("staging")
    images = family(staging.host, tmp_path / "images", vcs_ref="1234567")
    plan = write_plan(tmp_path, images, descriptors=False)
    result = registry_tool("plan", "--plan", str(plan), "--registry", "r.example/ns", "--json")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    # the fixture catalogue's (staging_images.py): base is ${ROCM_VERSION}-${PYTHON_VERSION}-${ARCH}
    base = "r.example/ns/base:9.8.7-full-3.21-gfx950"
    assert [i["target"] for i in doc["images"]] == ["rocm-runtime", "pytorch-base"]
    assert doc["images"][1] == {
        "target": "pytorch-base",
        "arch": "gfx950",
        "refs": doc["images"][1]["refs"],
        "immutable": f"{base}-g1234567",
    }
    assert doc["images"][1]["refs"][0] == base
    assert doc["images"][1]["refs"][-1] == f"{base}-g1234567"
    assert len(doc["images"][1]["refs"]) == 3


@pytest.mark.parametrize("value", [" {host}/ns", "{host}/ns ", " {host}/ns "])
@pytest.mark.parametrize("command", ["push", "plan"])
def test_blanks_around_the_registry_are_refused_not_dropped(
    tmp_path, env, registries, command, value
):
    staging = registries("staging")
    plan = write_plan(tmp_path, family(staging.host, tmp_path / "images")[:1])
    value = value.format(host=staging.host)
    result = registry_tool(command, "--plan", str(plan), f"--registry={value}", env=env)
    # should refuse in one line that names the value and the fix, before any request
    assert result.code == 2, result
    assert result.out == ""
    assert result.err == (
        f"registry: error: --registry: {value!r}: blanks around the registry;"
        f" write {value.strip()!r} (no blanks)\n"
    )


@pytest.mark.parametrize("scheme", ["HTTP://", "Http://"])
def test_the_registry_s_scheme_is_case_insensitive(tmp_path, env, registries, scheme):
    staging, target = registries("staging"), registries("target")
    images = family(staging.host, tmp_path / "images")
    # should push as with http://: every ref lands, and the lines name the scheme as given
    result = push(write_plan(tmp_path, images), f"{scheme}{target.host}/{NAMESPACE}", env=env)
    assert result.code == 0, result.err
    published = {r: d for r, d in target.all_refs().items() if r.startswith(NAMESPACE)}
    assert published == refs(images, NAMESPACE)
    assert f"pushed http://{target.host}/{NAMESPACE}/rocm-runtime:" in result.out, result.out
