"""End-to-end: the fixture family built by the real rules with real BuildKit.

The images are data of this test, so `bazel test` builds them (for the two
archs in E2E_ARCHS) before it runs. Bazel holds only their descriptors; each
case reads the images back from the staging registry the descriptors name.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.images import PACKAGE, Image, apply_layers, check_blob, e2e_archs, image_name
from tools.tagconf import catalog as catalog_mod
from tools.tagconf.spec import upstream_ref
from tools.tagconf.tags import render_tags, resolve_values

CATALOG = catalog_mod.load("images/catalog.toml")
VALUES = resolve_values(CATALOG)
ARCHS = e2e_archs()

# Which image each target's final stage is FROM (wheel stages are FROM scratch).
FROM_PARENT = {
    "pytorch-base": "rocm-runtime",
    "pytorch": "pytorch-base",
    "pytorch-test": "pytorch-base",
    "pytorch-run": "rocm-runtime",
    "vllm": "pytorch-run",
    "lmcache": "vllm",
}


def images():
    """(target, arch or None) of every image the test builds."""
    for t in CATALOG.targets:
        for arch in ARCHS if t.arch else [None]:
            if CATALOG.builds(t, arch):
                yield t, arch


IMAGES = list(images())
IDS = [image_name(t.name, a) for t, a in IMAGES]


def layout(target: str, arch: str | None) -> Image:
    return Image(image_name(target, arch if CATALOG.target(target).arch else None))


@pytest.mark.parametrize("target,arch", IMAGES, ids=IDS)
def test_staging_holds_the_image_the_descriptor_names(target, arch):
    image = layout(target.name, arch)
    # should be in staging under the descriptor's digest, every blob matching
    image.verify()
    assert image.metadata["target"] == target.name
    assert image.metadata["arch"] == arch
    # should keep the manifest alive under the content-key tag
    assert image.staging["tag"] == "c-" + image.metadata["content_key"].removeprefix("sha256:")


def test_bazel_holds_descriptors_not_image_bytes():
    descriptors = sorted(PACKAGE.glob("*.json"))
    sizes = {p.name: p.stat().st_size for p in descriptors}
    # should hold one small descriptor per image (no layout, no blob)
    assert len(
        [n for n in sizes if not n.endswith((".spec.json", ".build.json", ".size.json"))]
    ) >= len(IMAGES)
    assert max(sizes.values()) < 64_000, sizes
    assert sum(sizes.values()) < 1_000_000, sum(sizes.values())
    assert not [p for p in PACKAGE.glob("*.layout") if p.name != "pytorch-run.gfx950.layout"]


def test_layout_target_writes_a_valid_oci_layout_of_the_staged_image():
    root = PACKAGE / "pytorch-run.gfx950.layout"
    image = Image("pytorch-run.gfx950")
    index = json.loads((root / "index.json").read_text())
    assert json.loads((root / "oci-layout").read_text()) == {"imageLayoutVersion": "1.0.0"}
    (entry,) = index["manifests"]
    # should be the very image the descriptor names, blob for blob
    assert entry["digest"] == image.metadata["digest"]

    def blob(digest: str) -> bytes:
        return (root / "blobs" / "sha256" / digest.removeprefix("sha256:")).read_bytes()

    manifest = json.loads(blob(entry["digest"]))
    for d in [manifest["config"], *manifest["layers"]]:
        check_blob("pytorch-run.gfx950.layout", d, blob(d["digest"]))
    files = apply_layers(blob(d["digest"]) for d in manifest["layers"])
    assert files == image.files


@pytest.mark.parametrize("target,arch", IMAGES, ids=IDS)
def test_labels_and_tags_come_from_tagconf(target, arch):
    image = layout(target.name, arch)
    tags = render_tags(CATALOG, target, arch, VALUES)
    labels = image.config["config"]["Labels"]
    # should carry the OCI version label and our target/arch labels
    assert labels["org.opencontainers.image.version"] == tags.versioned
    assert labels["org.opencontainers.image.title"] == target.repository
    assert labels["org.rocm-pytorch.image.target"] == target.name
    assert labels["org.rocm-pytorch.image.arch"] == (arch or "noarch")
    assert labels["org.opencontainers.image.source"] == CATALOG.source
    # should never name a commit: that would rebuild every image on every commit
    assert "org.opencontainers.image.revision" not in labels
    # should put exactly tagconf's tags in the spec the push tool reads
    spec = json.loads((PACKAGE / f"{image.name}.spec.json").read_text())
    assert spec["tags"] == {
        "versioned": tags.versioned,
        "floating": tags.floating,
        "immutable": None,
    }


@pytest.mark.parametrize("child,parent", sorted(FROM_PARENT.items()))
@pytest.mark.parametrize("arch", ARCHS)
def test_child_layers_start_with_its_parent_layers(child, parent, arch):
    child_layers = layout(child, arch).layers
    parent_layers = layout(parent, arch).layers
    # should reuse the parent artifact itself, layer for layer
    assert child_layers[: len(parent_layers)] == parent_layers
    assert len(child_layers) > len(parent_layers)


@pytest.mark.parametrize("arch", ARCHS)
def test_runtime_contains_the_torch_wheel_of_pytorch_wheel(arch):
    wheel = layout("pytorch-wheel", arch).glob("/wheels/torch-", ".whl")
    runtime = layout("pytorch-run", arch).glob("/opt/wheels/torch-", ".whl")
    # should hold one torch wheel for this arch, the same bytes in both
    assert len(wheel) == 1
    ((path, data),) = wheel.items()
    assert f".{arch}-py3-none-any.whl" in path
    assert list(runtime.values()) == [data]
    # should have installed it
    init = layout("pytorch-run", arch).files["/usr/lib/python/site-packages/torch/__init__.py"]
    assert f"'arch': '{arch}'" in init.decode()


@pytest.mark.parametrize("arch", ARCHS)
def test_arch_reaches_the_build_as_pytorch_rocm_arch(arch):
    files = layout("rocm-runtime", arch).files
    # should keep the kernels of this arch only
    kernels = [f for f in files if f.startswith("/opt/rocm/lib/kernels-")]
    assert kernels == [f"/opt/rocm/lib/kernels-{arch}.dat"]


@pytest.mark.parametrize("shared", ["triton-wheel", "pytorch-src"])
def test_arch_free_targets_are_built_once_and_shared(shared):
    digest = Image(shared).metadata["digest"]
    # should feed every arch variant the one noarch build
    for arch in ARCHS:
        assert layout("pytorch", arch).metadata["parents"][shared] == digest
    assert Image(shared).metadata["arch"] is None


@pytest.mark.parametrize("target", [t.name for t in CATALOG.targets if t.stage == "wheel"])
def test_wheel_images_hold_only_wheels(target):
    for arch in [a for a in ARCHS if CATALOG.builds(CATALOG.target(target), a)]:
        files = layout(target, arch).files
        # should hold exactly one wheel and nothing else
        assert len(files) == 1, sorted(files)
        (path,) = files
        assert path.startswith("/wheels/") and path.endswith("-py3-none-any.whl")


@pytest.mark.parametrize("arch", ARCHS)
def test_vllm_gets_aiter_where_it_is_built_and_says_why_not_elsewhere(arch):
    aiter = CATALOG.target("aiter-wheel")
    files = layout("vllm", arch).files
    record = files["/fixture/vllm-aiter.txt"].decode()
    wheels = [f for f in files if f.startswith("/opt/wheels/aiter-")]
    if CATALOG.builds(aiter, arch):
        # should install the aiter wheel built for this arch
        assert record == "installed\n"
        assert len(wheels) == 1
        assert "aiter-wheel" in layout("vllm", arch).metadata["parents"]
    else:
        # should build without it, from an empty context that says why
        assert record == CATALOG.not_built(aiter, arch) + "\n"
        assert wheels == []
        assert "aiter-wheel" not in layout("vllm", arch).metadata["parents"]


def test_pytorch_test_ran_its_smoke_test():
    for arch in ARCHS:
        report = layout("pytorch-test", arch).files["/fixture/pytorch-test.txt"].decode()
        assert report == f"target=pytorch-test arch={arch} smoke=ok\n"


def imagebuild(
    tmp_path,
    spec: Path | str,
    *extra: str,
    staging: str = "127.0.0.1:9/unused",
    env: dict | None = None,
    dockerfile: str = "Dockerfile.rocm-runtime",
):
    """Run the ImageBuild tool on ``spec`` (a path, or a build spec name in PACKAGE).

    The default staging address is never contacted: these builds fail first.
    Returns the process and the path of BuildKit's log.
    """
    log = tmp_path / "logs" / "image.log"
    proc = subprocess.run(
        [
            os.environ["IMAGEBUILD_BIN"],
            "--spec",
            str(spec if isinstance(spec, Path) else PACKAGE / spec),
            "--dockerfile",
            f"tests/e2e/docker/{dockerfile}",
            "--network",
            "none",
            "--output",
            str(tmp_path / "out.json"),
            "--staging",
            staging,
            "--log",
            str(log),
            *extra,
        ],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
    )
    return proc, log


def test_wrong_dockerfile_stage_fails_naming_target_arch_and_dockerfile(tmp_path):
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "target": "rocm-runtime",
                "arch": "gfx950",
                "stage": "no-such-stage",
                "build_args": {},
                "labels": {},
            }
        )
    )
    proc, _ = imagebuild(tmp_path, spec)
    # should fail, name the target, arch, Dockerfile and stage, and show BuildKit's log
    assert proc.returncode == 1
    assert (
        "imagebuild: error: image build failed: target rocm-runtime, arch gfx950,"
        " tests/e2e/docker/Dockerfile.rocm-runtime stage no-such-stage" in proc.stderr
    )
    assert 'target stage "no-such-stage" could not be found' in proc.stderr
    assert not Path(tmp_path / "out.json").exists()


def test_upstream_that_cannot_be_pulled_points_to_the_mirror_define(tmp_path):
    # rocm-runtime without the stand-in: BuildKit would have to pull the real upstream
    proc, log = imagebuild(tmp_path, "rocm-runtime.gfx950.build.json")
    assert proc.returncode == 1
    # should say what failed, where the whole log is, and the way out
    assert f"(whole log: {log})" in proc.stderr
    assert "failed to resolve source metadata" in log.read_text()
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(
        f"the upstream image {upstream_ref(VALUES)} cannot be pulled from here: give a"
        " mirror that holds it with --define UPSTREAM_IMAGE=<registry>/<path>"
    ), proc.stderr
    # the cause and the fix, not a screen of BuildKit's log before them
    assert len(proc.stderr.strip().splitlines()) <= 4, proc.stderr


def test_no_engine_says_which_docker_host_and_what_to_do(tmp_path):
    host = f"unix://{tmp_path}/no-engine.sock"
    env = {
        "DOCKER_HOST": host,
        "ROCM_PYTORCH_ENGINE_AUTOSTART": "0",
        # neither the host's engine nor a private one a developer left running
        "ROCM_PYTORCH_ENGINE_DIR": str(tmp_path / "engine"),
        "ROCM_PYTORCH_HOST_DOCKER_SOCKET": str(tmp_path / "no-host-engine.sock"),
    }
    proc, _ = imagebuild(tmp_path, "triton-wheel.build.json", env=env)
    assert proc.returncode == 1
    assert f"no Docker engine answers (DOCKER_HOST={host}, nothing at" in proc.stderr
    assert "start an engine and point DOCKER_HOST at it" in proc.stderr
    # should not tell the user to pass flags .bazelrc already passes
    assert "--action_env" not in proc.stderr


def test_child_build_of_a_parent_staging_lost_fails_with_the_forget_hint(tmp_path):
    parent = json.loads((PACKAGE / "rocm-runtime.gfx950.json").read_text())
    # a staging registry that was wiped or garbage-collected no longer has it
    parent["staging"]["name"] += "-gone"
    gone = tmp_path / "rocm-runtime.gfx950.json"
    gone.write_text(json.dumps(parent))
    out = tmp_path / "out.json"
    proc, _ = imagebuild(
        tmp_path,
        "pytorch-base.gfx950.build.json",
        "--parent",
        f"rocm-runtime={gone}",
        staging=parent["staging"]["registry"],
        dockerfile="Dockerfile.base",
    )
    # should stop before building, name the lost image and how to rebuild it
    assert proc.returncode == 1
    host = parent["staging"]["registry"].split("/", 1)[0]
    assert proc.stderr.strip() == (
        f"imagebuild: error: staging has lost rocm-runtime (gfx950) {parent['digest']}"
        f" ({host}/{parent['staging']['name']}@{parent['digest']}); run"
        " `bazel run //tools/staging -- forget` and build again (it rebuilds what is missing)"
    )
    assert not out.exists()


def test_stale_targets_bzl_fails_naming_update_targets(tmp_path):
    # the catalogue gives pytorch-base the parent rocm-runtime; a stale
    # targets.bzl would wire it with none (or old ones)
    proc, _ = imagebuild(tmp_path, "pytorch-base.gfx950.build.json", dockerfile="Dockerfile.base")
    # should refuse before building, and say how to regenerate the graph
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        "imagebuild: error: pytorch-base: the catalogue says parents ['rocm-runtime'], but the"
        " Bazel graph gives []; images/targets.bzl is stale: run"
        " `bazel run //images:update_targets` and build again"
    )


def docker_config_with_context(tmp_path, name: str, host: str) -> dict:
    """A DOCKER_CONFIG of this test holding one docker context NAME -> HOST."""
    config = tmp_path / "docker-config"
    config.mkdir(exist_ok=True)
    env = {**os.environ, "DOCKER_CONFIG": str(config)}
    subprocess.run(
        ["docker", "context", "create", name, "--docker", f"host={host}"],
        env=env,
        capture_output=True,
        check=True,
    )
    return {"DOCKER_CONFIG": str(config)}


def test_unknown_builder_fails_in_one_line_listing_the_known_ones(tmp_path):
    env = docker_config_with_context(tmp_path, "e2e-hostb", f"unix://{tmp_path}/b.sock")
    proc, _ = imagebuild(tmp_path, "triton-wheel.build.json", "--builder", "e2e-nope", env=env)
    # should name the builder and the arch, list what exists, in one line, before building
    assert proc.returncode == 1
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith(
        "imagebuild: error: builder e2e-nope (for arch noarch) is not a buildx builder or"
        " docker context here; known: "
    )
    assert "e2e-hostb" in proc.stderr and "(`docker buildx ls`)" in proc.stderr
    assert not (tmp_path / "out.json").exists()


def test_builder_that_is_down_fails_within_seconds_naming_builder_and_arch(tmp_path):
    env = docker_config_with_context(tmp_path, "e2e-down", f"unix://{tmp_path}/nothing.sock")
    start = time.monotonic()
    proc, _ = imagebuild(
        tmp_path, "rocm-runtime.gfx1201.build.json", "--builder", "e2e-down", env=env
    )
    took = time.monotonic() - start
    assert proc.returncode == 1
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith(
        "imagebuild: error: builder e2e-down (for arch gfx1201) is down or unreachable:"
    )
    assert "Cannot connect to the Docker daemon" in proc.stderr
    assert took < 10, f"{took:.1f}s"
