"""Pushes that race each other, get interrupted or run out of time: real `registry push`
processes.

Synthetic images staged the way image builds leave them, real
docker-registry processes, slow and hanging proxies to line the races up.
"""

from __future__ import annotations

import os
import re
import signal
import time

import pytest

from tests.registry.fixtures import Fault
from tests.registry.push_procs import Push, error_lines, immutable_tag, two_builds, wait_for
from tests.registry.staging_images import NAMESPACE, family, layer, refs, stage, write_plan
from tools.registry.push import IMMUTABLE_WINDOW


@pytest.fixture
def env(env):
    """conftest's env (no user credentials) on top of this process's environment."""
    return {**os.environ, **env}


def test_two_pushes_racing_for_one_immutable_tag_never_both_succeed(
    tmp_path, env, registries, proxy_for
):
    staging, target = registries("staging"), registries("target")
    # two builds of one target with different content and the same VCS_REF
    builds = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        image = stage(
            staging.host, tmp_path / name, "rocm-runtime", [layer(200_000, name)], vcs_ref="1234567"
        )
        builds.append(image)
    digests = [b.descriptor.digest for b in builds]
    assert digests[0] != digests[1]
    tag = immutable_tag(builds[0].spec)
    assert tag == immutable_tag(builds[1].spec)
    # every manifest PUT takes 1.5 s: both pushes pass the up-front check, and each
    # PUTs the immutable tag before the other one's has landed
    proxy = proxy_for(target)
    proxy.faults.append(Fault("PUT", r"/manifests/", "slow", count=1000, delay=1.5))
    plans = [write_plan(tmp_path / name, [b]) for name, b in zip("ab", builds, strict=True)]
    pushes = [Push(plan, f"{proxy.host}/{NAMESPACE}", env) for plan in plans]
    codes = [p.wait() for p in pushes]
    # should let at most one of them succeed ...
    assert codes.count(0) <= 1, [p.err for p in pushes]
    # ... and leave the tag on the digest of the one that did
    holds = target.all_refs()[f"{NAMESPACE}/rocm-runtime:{tag}"]
    assert holds in digests
    for push, code, digest in zip(pushes, codes, digests, strict=True):
        if code == 0:
            assert holds == digest
        else:
            # the loser fails loudly, naming its digest and the one the registry holds
            assert code == 1, push.err
            assert holds != digest
            errors = [line for line in push.err.splitlines() if "error" in line]
            assert len(errors) == 1, push.err
            assert tag in errors[0] and digests[0] in errors[0] and digests[1] in errors[0]


def test_a_tag_put_delayed_after_its_look_up_still_leaves_one_winner(
    tmp_path, env, registries, proxy_for
):
    """The probe of issue 32: one push's PUT of the immutable tag reaches the registry 4 s
    after its look-up; meanwhile another push looks the tag up, writes it and reads it back."""
    staging, target = registries("staging"), registries("target")
    builds, plans = two_builds(tmp_path, staging)
    digests = [b.descriptor.digest for b in builds]
    tag = immutable_tag(builds[0].spec)
    slow, fast = proxy_for(target), proxy_for(target)
    delayed = Fault("PUT", rf"/manifests/{re.escape(tag)}$", "slow", delay=4)
    slow.faults.append(delayed)
    first = Push(plans[0], f"{slow.host}/{NAMESPACE}", env)
    try:
        wait_for(lambda: delayed.hits == 1)  # looked up (absent), its PUT on its way
        second = Push(plans[1], f"{fast.host}/{NAMESPACE}", env)
        codes = [first.wait(), second.wait()]
    finally:
        first.kill()
    holds = target.all_refs()[f"{NAMESPACE}/rocm-runtime:{tag}"]
    # should let the delayed one win (it landed last, within the window) and fail the
    # other, which reported nothing it does not hold: one error line, the tag, both digests
    assert codes == [0, 1], [first.err, second.err]
    assert holds == digests[0]
    (line,) = error_lines(second.err)
    assert f"{fast.host}/{NAMESPACE}/rocm-runtime:{tag} is {digests[0]}" in line, line
    assert f"this build is {digests[1]}" in line, line
    assert "another push" in line and "  not pushed: rocm-runtime (gfx950)" in second.err


def test_a_tag_put_delayed_past_the_window_fails_the_push_that_sent_it(
    tmp_path, env, registries, proxy_for
):
    """The limit, as docs/publishing.md states it: a PUT answered more than the window after
    its look-up may land after the other push succeeded; the push that sent it fails."""
    staging, target = registries("staging"), registries("target")
    builds, plans = two_builds(tmp_path, staging)
    digests = [b.descriptor.digest for b in builds]
    tag = immutable_tag(builds[0].spec)
    slow, fast = proxy_for(target), proxy_for(target)
    delayed = Fault("PUT", rf"/manifests/{re.escape(tag)}$", "slow", delay=IMMUTABLE_WINDOW + 2)
    slow.faults.append(delayed)
    first = Push(plans[0], f"{slow.host}/{NAMESPACE}", env)
    try:
        wait_for(lambda: delayed.hits == 1)
        second = Push(plans[1], f"{fast.host}/{NAMESPACE}", env)
        codes = [first.wait(), second.wait()]
    finally:
        first.kill()
    # should never both exit 0: the late one fails, saying what it may have overwritten
    assert codes == [1, 0], [first.err, second.err]
    (line,) = error_lines(first.err)
    assert f"{slow.host}/{NAMESPACE}/rocm-runtime:{tag}: its PUT was answered" in line, line
    assert f"more than the {IMMUTABLE_WINDOW:g} s" in line and digests[0] in line, line
    assert target.all_refs()[f"{NAMESPACE}/rocm-runtime:{tag}"] == digests[0]


def test_a_tag_put_in_flight_at_sigint_that_landed_is_reported_pushed(
    tmp_path, env, registries, proxy_for
):
    staging, target = registries("staging"), registries("target")
    parent, child = images = family(staging.host, tmp_path / "images", vcs_ref="1234567")
    proxy = proxy_for(target)
    # the parent's floating tag lands at once; its answer comes a minute later
    late = Fault("PUT", r"/rocm-runtime/manifests/latest-", "late", delay=60)
    proxy.faults.append(late)
    push = Push(write_plan(tmp_path, images), f"{proxy.host}/{NAMESPACE}", env)
    try:
        wait_for(lambda: any(r[0] == "PUT" and late.path[1:] in r[1] for r in proxy.requests))
        push.proc.send_signal(signal.SIGINT)
        assert push.wait(timeout=15) == 130, push.err
    finally:
        push.kill()
    # should report the landed tag like every other: the parent is pushed
    floating = f"{proxy.host}/{NAMESPACE}/rocm-runtime:latest-gfx950"
    assert target.all_refs()[floating.removeprefix(f"{proxy.host}/")] == parent.descriptor.digest
    assert f"pushed {floating}" in push.lines, push.lines
    err = push.err.splitlines()
    assert "  pushed: rocm-runtime (gfx950)" in err, push.err
    assert "  not pushed: pytorch-base (gfx950)" in err, push.err
    assert "1/2 images pushed" in push.err
    assert not any("/base:" in r for r in target.all_refs())
    assert child.descriptor.digest not in push.err


@pytest.mark.parametrize(
    "fault,big",
    [
        (Fault("*", r"/blobs/uploads/", "hang", count=1000), 0),
        (Fault("*", r"/blobs/uploads/", "trickle", count=1000, delay=0.5), 0),
        (Fault("PUT", r"/blobs/uploads/.+digest=", "stall", count=1000, rate=0), 0),
        # more than the socket buffers hold: each send goes on, 20 kB a second
        (Fault("PUT", r"/blobs/uploads/.+digest=", "stall", count=1000, rate=20_000), 16 << 20),
    ],
    ids=["never-answers", "answers-a-byte-at-a-time", "upload-stalled", "upload-crawling"],
)
def test_the_timeout_is_the_whole_push_s_deadline(tmp_path, env, registries, proxy_for, fault, big):
    staging, target = registries("staging"), registries("target")
    images = family(staging.host, tmp_path / "images", big=big)
    proxy = proxy_for(target)
    proxy.faults.append(fault)
    start = time.monotonic()
    push = Push(write_plan(tmp_path, images), f"{proxy.host}/{NAMESPACE}", env, "--timeout", "3")
    try:
        code = push.wait(timeout=20)
    finally:
        push.kill()
    took = time.monotonic() - start
    # should stop at the deadline, within a second, whatever the registry is doing ...
    assert fault.hits > 0
    assert 2 <= took <= 4, (took, push.err)
    # ... with the documented line, naming the request it was waiting for, and the summary
    assert code == 1, push.err
    (line,) = error_lines(push.err)
    assert line.startswith(
        f"registry: error: no answer from {proxy.host} within --timeout 3 s, the push's deadline"
        f" ({fault.method if fault.method != '*' else 'POST'} http://{proxy.host}/v2/"
    ), line
    assert line.endswith("check the registry, or raise --timeout"), line
    assert "  not pushed: rocm-runtime (gfx950), pytorch-base (gfx950)" in push.err
    assert "0/2 images pushed" in push.err and "Traceback" not in push.err


@pytest.mark.parametrize("signum,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_push_stops_at_once_and_says_what_was_pushed(
    tmp_path, env, registries, proxy_for, signum, code
):
    staging, target = registries("staging"), registries("target")
    parent, child = images = family(staging.host, tmp_path / "images", vcs_ref="1234567")
    proxy = proxy_for(target)
    # the child's own blobs (its layer and config) hang in their upload for a minute
    proxy.faults.append(Fault("PUT", r"/base/blobs/uploads/", "slow", count=100, delay=60))
    push = Push(write_plan(tmp_path, images), f"{proxy.host}/{NAMESPACE}", env)
    try:
        # should print each `pushed` line as the tag lands: the parent's three, while
        # the child's blobs are still on their way
        deadline = time.monotonic() + 30
        while len(push.lines) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(push.lines) == 3, (push.lines, push.proc.poll())
        while not any("/base/blobs/uploads/" in r[1] for r in proxy.requests) and (
            time.monotonic() < deadline
        ):
            time.sleep(0.05)  # the child's mounts are answered: its uploads are in flight
        time.sleep(0.3)
        sent_at = len(proxy.requests)
        push.proc.send_signal(signum)
        # should stop at once, abandoning the uploads in flight, with rc 128 + signal
        start = time.monotonic()
        assert push.wait(timeout=15) == code, push.err
        assert time.monotonic() - start < 5
    finally:
        push.kill()
    assert "Traceback" not in push.err
    # should say what was and was not pushed
    name = signal.Signals(signum).name
    err = push.err.splitlines()
    assert f"registry: interrupted by {name}" in push.err
    assert "  pushed: rocm-runtime (gfx950)" in err
    assert "  not pushed: pytorch-base (gfx950)" in err
    # every `pushed` line is true; no tag written after the signal; no tag on a missing manifest
    published = target.all_refs()
    want = refs(images, NAMESPACE)
    assert sorted(push.lines) == sorted(
        f"pushed {proxy.host}/{r}" for r in want if "/rocm-runtime:" in r
    )
    for line in push.lines:
        ref = line.removeprefix(f"pushed {proxy.host}/")
        assert published[ref] == parent.descriptor.digest
    assert not [r for r in proxy.requests[sent_at:] if r[0] == "PUT" and "/manifests/" in r[1]]
    assert all(published[r] == want[r] for r in published)
    assert not any("/base:" in r for r in published)
    status, _, _ = target.get(
        f"/v2/{NAMESPACE}/base/manifests/{child.descriptor.digest}",
        {"Accept": child.descriptor.media_type},
    )
    assert status == 404  # the child's manifest never went up: nor did a tag of it


def test_two_identical_pushes_at_once_both_succeed(tmp_path, env, registries):
    # forty small layers shared by a parent and its child, staged on the target's host:
    # both pushes mount every blob and PUT each manifest while the other mounts
    layers = [layer(1000, f"l{i}") for i in range(40)]
    for n in range(5):
        registry = registries(f"registry{n}")
        images_dir = tmp_path / f"images{n}"
        images_dir.mkdir()
        # the first time with immutable tags too (both confirm the same digest, 5 s an
        # image); the others race the blobs alone, without those waits
        vcs_ref = "1234567" if n == 0 else None
        parent = stage(registry.host, images_dir, "rocm-runtime", layers, vcs_ref=vcs_ref)
        child = stage(
            registry.host,
            images_dir,
            "pytorch-base",
            [*layers, layer(1000, "own")],
            parents={"rocm-runtime": parent.descriptor.digest},
            vcs_ref=vcs_ref,
        )
        plan = write_plan(images_dir, [parent, child])
        pushes = [Push(plan, f"{registry.host}/{NAMESPACE}", env) for _ in range(2)]
        codes = [p.wait() for p in pushes]
        # should both succeed, and publish exactly the spec's tags
        assert codes == [0, 0], (n, [p.err for p in pushes])
        published = {r: d for r, d in registry.all_refs().items() if r.startswith(NAMESPACE)}
        assert published == refs([parent, child], NAMESPACE)
        registry.stop()
