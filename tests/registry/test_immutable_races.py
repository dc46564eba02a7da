"""The immutable-tag promise of docs/publishing.md, held by real `registry push` processes.

Issue 42, section 1: a third push that finds the tag up to date (a CI retry, or a
re-run after Ctrl-C) while another push's PUT is still on its way; PUTs held past the
window, where a push that fails on its immutable tag must not have moved the image's
other tags; a lone push to a far registry. Each push goes through its own proxy, so the
tags each one PUT are known.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time

import httpx
import pytest

from tests.registry.fixtures import Fault, FaultProxy
from tests.registry.push_procs import Push, error_lines, two_builds, wait_for
from tests.registry.staging_images import NAMESPACE, layer, push_blob, refs, stage, write_plan


@pytest.fixture
def env(env):
    """conftest's env (no user credentials) on top of this process's environment."""
    return {**os.environ, **env}


def json_tags(image) -> dict[str, str]:
    """The image's tags by kind: versioned, floating, immutable."""
    return json.loads(image.spec.read_text())["tags"]


def tag_puts(proxy: FaultProxy) -> list[str]:
    """The tags a push PUT through ``proxy`` that the registry took (201)."""
    return [
        path.rsplit("/manifests/", 1)[1]
        for method, path, status in proxy.requests
        if method == "PUT"
        and "/manifests/" in path
        and status == 201
        and not path.rsplit("/", 1)[1].startswith("sha256:")
    ]


def check_honest(push: Push, proxy: FaultProxy, code: int, digest: str, tags: dict[str, str], now):
    """What every push must hold to, whatever the race: ``tags`` are its image's tags (kind ->
    tag), ``now`` the registry's refs after every push ended."""
    repo = f"{NAMESPACE}/rocm-runtime"
    pushed = push.pushed()
    # its `pushed` lines are the refs its summary counts as written, and none claims a tag
    # the summary then leaves out
    assert len(pushed) == max(push.refs_written(), 0), (push.lines, push.err)
    if code == 0:
        assert all(now.get(ref) == digest for ref in pushed), (pushed, now, push.err)
        return
    if code != 1:
        return
    (line,) = error_lines(push.err)
    if tags["immutable"] in line:  # it failed on its immutable tag:
        # ... having moved none of its image's other tags
        others = [f"{repo}:{tags[k]}" for k in ("versioned", "floating")]
        assert not [ref for ref in others if now.get(ref) == digest], (now, push.err)
        # ... and its message names every tag it wrote, and where each one points now
        for tag in tag_puts(proxy):
            assert f"{proxy.host}/{repo}:{tag} (now {now.get(f'{repo}:{tag}')})" in line, line


@pytest.mark.parametrize("third", ["retry", "re-run-after-ctrl-c"])
def test_three_pushes_of_one_immutable_tag_only_the_digest_it_holds_exits_0(
    tmp_path, env, registries, proxy_for, third
):
    """B's PUT of the tag is held 4 s after its look-up (inside the window). Meanwhile A,
    another digest, writes the tag; then C, A's digest again, finds the tag up to date: a CI
    retry or another machine ("retry"), or A's own re-run right after a Ctrl-C while A was
    checking its tag ("re-run-after-ctrl-c"). Then B's PUT lands."""
    staging, target = registries("staging"), registries("target")
    builds, plans = two_builds(tmp_path, staging)
    a, b = (build.descriptor.digest for build in builds)
    tags = json_tags(builds[0])
    tag = tags["immutable"]
    proxies = {name: proxy_for(target) for name in "ABC"}
    held = Fault("PUT", rf"/manifests/{re.escape(tag)}$", "slow", delay=4)
    proxies["B"].faults.append(held)
    pushes: dict[str, Push] = {}
    start = time.monotonic()
    try:
        pushes["B"] = Push(plans[1], f"{proxies['B'].host}/{NAMESPACE}", env)
        wait_for(lambda: held.hits == 1)  # looked up (absent), its PUT on its way
        pushes["A"] = Push(plans[0], f"{proxies['A'].host}/{NAMESPACE}", env)
        wait_for(lambda: tag in tag_puts(proxies["A"]))  # A's PUT landed
        if third == "re-run-after-ctrl-c":
            time.sleep(0.2)  # A reads its tag back, or waits to
            pushes["A"].proc.send_signal(signal.SIGINT)
            assert pushes["A"].wait(timeout=15) == 130, pushes["A"].err
        pushes["C"] = Push(plans[0], f"{proxies['C'].host}/{NAMESPACE}", env)
        codes = {name: push.wait() for name, push in pushes.items()}
    finally:
        for push in pushes.values():
            push.kill()
    print(f"three pushes ({third}): {time.monotonic() - start:.1f} s, exit codes {codes}")
    now = target.all_refs()
    holds = now[f"{NAMESPACE}/rocm-runtime:{tag}"]
    digest = {"A": a, "B": b, "C": a}
    errs = {name: push.err for name, push in pushes.items()}
    # should let only pushes of the digest the tag holds exit 0 ...
    assert all(digest[n] == holds for n, code in codes.items() if code == 0), (codes, errs)
    # ... here B, whose PUT landed inside the window after its look-up
    assert holds == b and codes["B"] == 0, (codes, errs)
    assert codes["C"] == 1 and codes["A"] == (1 if third == "retry" else 130), (codes, errs)
    for name, push in pushes.items():
        check_honest(push, proxies[name], codes[name], digest[name], tags, now)
    # C found the tag on its digest, waited out the window and read it again: B's digest
    (line,) = error_lines(errs["C"])
    ref = f"{proxies['C'].host}/{NAMESPACE}/rocm-runtime:{tag}"
    assert f"{ref} was up to date (this build, {a}) and is now {b}" in line, line
    assert not pushes["C"].lines, pushes["C"].lines
    if third == "re-run-after-ctrl-c":
        # A stopped before it had checked its tag: no `pushed` line for it, and says so
        ref = f"{proxies['A'].host}/{NAMESPACE}/rocm-runtime:{tag}"
        assert f"pushed {ref}" not in pushes["A"].lines, pushes["A"].lines
        assert f"  written, not confirmed when it stopped: {ref}" in errs["A"], errs["A"]


@pytest.mark.parametrize("hold", [6, 10])
def test_a_push_that_fails_on_its_immutable_tag_moved_none_of_its_other_tags(
    tmp_path, env, registries, proxy_for, hold
):
    """B's PUT of the tag is held ``hold`` s, past the window; A, another digest, writes the
    tag meanwhile and checks it after B's PUT landed. Both fail; neither may leave the image's
    versioned and floating tags on its own digest, nor a `pushed` line its summary drops."""
    staging, target = registries("staging"), registries("target")
    builds, plans = two_builds(tmp_path, staging)
    a, b = (build.descriptor.digest for build in builds)
    tags = json_tags(builds[0])
    tag = tags["immutable"]
    proxies = {name: proxy_for(target) for name in "AB"}
    held = Fault("PUT", rf"/manifests/{re.escape(tag)}$", "slow", delay=hold)
    proxies["B"].faults.append(held)
    pushes: dict[str, Push] = {}
    start = time.monotonic()
    try:
        pushes["B"] = Push(plans[1], f"{proxies['B'].host}/{NAMESPACE}", env)
        wait_for(lambda: held.hits == 1)
        time.sleep(hold - 4.5)  # A writes its tag about 4 s before B's lands, checks it after
        pushes["A"] = Push(plans[0], f"{proxies['A'].host}/{NAMESPACE}", env)
        codes = {name: push.wait() for name, push in pushes.items()}
    finally:
        for push in pushes.values():
            push.kill()
    print(f"held {hold} s: {time.monotonic() - start:.1f} s, exit codes {codes}")
    now = target.all_refs()
    errs = {name: push.err for name, push in pushes.items()}
    assert tag in tag_puts(proxies["A"]), errs  # A wrote the tag before B's PUT landed
    # should fail both: B's PUT came too late to know what it overwrote, and A's tag moved
    assert codes == {"B": 1, "A": 1}, (codes, errs)
    assert now[f"{NAMESPACE}/rocm-runtime:{tag}"] == b
    for name, digest in (("A", a), ("B", b)):
        check_honest(pushes[name], proxies[name], codes[name], digest, tags, now)
    # no other tag of the image was written by either
    assert set(now) & set(refs(builds, NAMESPACE)) == {f"{NAMESPACE}/rocm-runtime:{tag}"}, now
    (line,) = error_lines(errs["B"])
    assert f"{proxies['B'].host}/{NAMESPACE}/rocm-runtime:{tag}: its PUT was answered" in line
    (line,) = error_lines(errs["A"])
    assert f"rocm-runtime:{tag} is {b}, this build is {a}: another push" in line, line


def test_a_lone_release_push_to_a_far_registry_succeeds(tmp_path, env, registries, proxy_for):
    """Every request to the registry takes 2.6 s (a far registry): the look-up and the PUT of
    the immutable tag take 5.2 s, more than the 5 s window, and no other push runs."""
    staging, target = registries("staging"), registries("target")
    image = stage(staging.host, tmp_path, "rocm-runtime", [layer(200_000, "a")], vcs_ref="1234567")
    # its blobs are there already (a HEAD each, not an upload): the test takes 2 requests less
    with httpx.Client() as http:
        for data in image.blobs.values():
            push_blob(http, f"http://{target.host}", f"{NAMESPACE}/rocm-runtime", data)
    far = proxy_for(target)
    far.faults.append(Fault("*", r"^/", "slow", count=1_000_000, delay=2.6))
    start = time.monotonic()
    push = Push(write_plan(tmp_path, [image]), f"{far.host}/{NAMESPACE}", env)
    try:
        code = push.wait()
    finally:
        push.kill()
    took = time.monotonic() - start
    print(f"a lone push at 2.6 s a request: {took:.1f} s, {len(far.requests)} requests")
    # should publish every tag, with no word of another push
    assert code == 0, push.err
    assert "another push" not in push.err
    published = {r: d for r, d in target.all_refs().items() if r.startswith(NAMESPACE)}
    assert published == refs([image], NAMESPACE)
    assert sorted(push.pushed()) == sorted(published)
