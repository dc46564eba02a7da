"""`registry floating`: a floating tag that does not name its versioned tag's digest fails."""

from __future__ import annotations

import json

import httpx

from tests.registry.staging_images import NAMESPACE, family, registry_tool, write_plan


def test_floating_tags_against_their_versioned_tags(tmp_path, env, registries):
    staging, target = registries("staging"), registries("target")
    old = family(staging.host, tmp_path / "old")
    new = family(staging.host, tmp_path / "new", big=100_000)  # other bytes, the same tags
    where = f"{target.host}/{NAMESPACE}"
    plan = write_plan(tmp_path, new, descriptors=False)

    def floating():
        return registry_tool("floating", "--plan", str(plan), "--registry", where, env=env)

    # nothing published: said, not failed
    result = floating()
    assert result.code == 0, result.err
    assert result.out.splitlines()[-1] == (
        "floating: 2 floating tags: 0 current, 0 stale, 0 missing, 2 not published yet"
    )
    # last month's publish, then this one: every floating tag moves with its versioned tag
    for images in (old, new):
        pushed = registry_tool(
            "push", "--plan", str(write_plan(tmp_path, images)), "--registry", where, env=env
        )
        assert pushed.code == 0, pushed.err
    result = floating()
    assert (result.code, result.out.splitlines()) == (
        0,
        ["floating: 2 floating tags: 2 current, 0 stale, 0 missing"],
    ), result.err
    # a floating tag left on last month's digest: stale, naming both and the fix
    parent_old, parent_new = old[0], new[0]
    name = f"{NAMESPACE}/{parent_new.descriptor.repository}"
    tags = json.loads(parent_new.spec.read_text())["tags"]
    floating_tag, versioned_tag = tags["floating"], tags["versioned"]
    put = httpx.put(
        f"http://{target.host}/v2/{name}/manifests/{floating_tag}",
        content=parent_old.descriptor.manifest,
        headers={"Content-Type": parent_old.descriptor.media_type},
    )
    assert put.status_code == 201, put.text
    result = floating()
    assert result.code == 1
    (fail,) = [line for line in result.out.splitlines() if line.startswith("FAIL: ")]
    assert fail == (
        f"FAIL: {where}/{parent_new.descriptor.repository}:{floating_tag} names"
        f" {parent_old.descriptor.digest[:19]}…, but the newest versioned tag"
        f" {parent_new.descriptor.repository}:{versioned_tag} names"
        f" {parent_new.descriptor.digest[:19]}…: stale; publish again"
        " (bazel run the group's push target)"
    )
    assert result.out.splitlines()[-1] == "floating: 2 floating tags: 1 current, 1 stale, 0 missing"
