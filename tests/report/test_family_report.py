"""The fixture family's report, for real: the images built by Bazel (two archs), a
loopback registry, the push, a tag moved behind the push's back, the report before and
after, each page opened in Debian's headless chromium."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.report import browser
from tools.oci.client import RegistryClient

NAMESPACE = "rocm-pytorch"
IMAGES = 29  # 14 arch targets x 2 + 2 arch-free - aiter-wheel on gfx1201 (not built there)


def execroot() -> Path:
    """The execution root this (local) test runs in: bazel-out/logs/ is under it."""
    cwd = Path.cwd().resolve()
    return Path(*cwd.parts[: cwd.parts.index("bazel-out")])


def run(cmd: list[str], env: dict) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **env})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def report(tmp: Path, registry, env: dict, name: str) -> tuple[Path, dict]:
    out = tmp / f"{name}.html"
    proc = run(
        [
            os.environ["REPORT_BIN"],
            "--registry",
            f"{registry.host}/{NAMESPACE}",
            "--out",
            str(out),
            "--logs-root",
            str(execroot()),
            "--json",
        ],
        env,
    )
    assert proc.stderr.strip().splitlines()[-1] == str(out)
    return out, json.loads(proc.stdout)


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """Reports before and after a push (with SBOM and provenance) and a moved tag."""
    from tests.registry.fixtures import Registry

    tmp = tmp_path_factory.mktemp("family")
    registry = Registry(tmp / "registry")
    env = {"ROCM_PYTORCH_HISTORY_DIR": str(tmp / "history")}
    try:
        before = report(tmp, registry, env, "before")
        run([os.environ["PUSH_BIN"], "--registry", f"{registry.host}/{NAMESPACE}", "--attest"], env)
        # someone else's push moves rocm-runtime's gfx950 tag to the gfx1201 image
        images = {i["id"]: i for i in before[1]["images"]}
        moved = images["rocm-runtime.gfx950"]["tags"][0].rsplit(":", 1)[1]
        client = RegistryClient(registry.host)
        try:
            body, media, _ = client.get_manifest(
                f"{NAMESPACE}/rocm-runtime", images["rocm-runtime.gfx1201"]["digest"]
            )
            client.put_manifest(f"{NAMESPACE}/rocm-runtime", moved, body, media)
        finally:
            client.close()
        after = report(tmp, registry, env, "after")
        yield before, after, images
    finally:
        registry.stop()


def test_before_the_first_push_nothing_is_published(published):
    (_page, model), _, _ = published
    assert len(model["images"]) == IMAGES
    assert all(i["published"]["digest"] is None for i in model["images"])
    assert all(i["published"]["source"] == "registry" for i in model["images"])


def test_every_image_has_its_build_record_size_budget_and_parents(published):
    (_page, model), _, _ = published
    images = {i["id"]: i for i in model["images"]}
    assert all(i["build"] is not None for i in images.values())
    assert all(i["budget_bytes"] for i in images.values())  # tests/e2e/budgets.toml
    base = images["pytorch-base.gfx950"]
    assert base["parents"] == ["rocm-runtime.gfx950"]
    # base is built FROM rocm-runtime: all of rocm-runtime's layers are shared
    runtime = images["rocm-runtime.gfx950"]
    assert base["shared_layers"] == runtime["layers"]
    assert base["shared_bytes"] == runtime["size"] - _config_size("rocm-runtime.gfx950")
    assert sorted(images["vllm.gfx1201"]["parents"]) == [
        "pytorch-run.gfx1201",
        "pytorch.gfx1201",
        "torchvision-wheel.gfx1201",
        "triton-wheel",
    ]


def _config_size(name: str) -> int:
    d = json.loads(Path(f"tests/e2e/{name}.json").read_text())
    return json.loads(d["manifest"])["config"]["size"]


def test_after_the_push_only_the_moved_tag_is_a_change(published):
    _, (_page, model), _ = published
    images = {i["id"]: i for i in model["images"]}
    changed = sorted(
        k for k, i in images.items() if i["published"]["digest"] not in (None, i["digest"])
    )
    assert changed == ["rocm-runtime.gfx950"]
    moved = images["rocm-runtime.gfx950"]["published"]
    assert moved["digest"] == images["rocm-runtime.gfx1201"]["digest"]
    assert moved["size"] == images["rocm-runtime.gfx1201"]["size"]
    # pytorch-run and pytorch-test are in no group push_default pushes
    never = sorted(k for k, i in images.items() if i["published"]["digest"] is None)
    assert never == [
        "pytorch-run.gfx1201",
        "pytorch-run.gfx950",
        "pytorch-test.gfx1201",
        "pytorch-test.gfx950",
    ]


def test_attached_sboms_and_provenance_are_counted_unsigned(published):
    _, (_page, model), _ = published
    vllm = next(i for i in model["images"] if i["id"] == "vllm.gfx950")
    assert vllm["supply"] == {"signatures": 0, "sboms": 1, "provenances": 1}


def test_the_push_is_in_the_history_one_point_before_this_build(published):
    _, (_page, model), _ = published
    vllm = next(i for i in model["images"] if i["id"] == "vllm.gfx950")
    assert [h["digest"] for h in vllm["history"]] == [vllm["digest"]]
    assert vllm["history"][0]["size"] == vllm["size"]


def test_both_pages_hold_up_in_the_browser(published):
    (before, _), (after, model), _ = published
    for page in (before, after):
        facts = browser.inspect(page)
        assert browser.problems(facts, images=IMAGES) == []
        assert len(facts.edges) == sum(len(i["parents"]) for i in model["images"])
        assert {t["id"] for t in facts.times} == set(facts.nodes)
    facts = browser.inspect(after)
    assert facts.changed == ["rocm-runtime.gfx950"]
    assert len(facts.points["vllm.gfx950"]) == 2
    assert len(facts.points["pytorch-run.gfx950"]) == 1
    assert facts.supply["vllm.gfx950"] == ["signatures:no", "sboms:yes", "provenances:yes"]
