"""registry_test's helpers: the Bazel-built push binaries over the fixture family, and
plans of its images (the registry and proxy fixtures are in conftest.py)."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tools.tagconf import catalog as catalog_mod
from tools.tagconf.spec import image_spec, upstream_ref
from tools.tagconf.tags import ImageTags, render_many, render_tags, resolve_values

CATALOG = catalog_mod.load("images/catalog.toml")
ARCHS = os.environ["E2E_ARCHS"].split(",")
NAMESPACE = "rocm-pytorch"


@dataclass
class Run:
    code: int
    out: str
    err: str


def run(cmd: list[str], env: dict | None = None) -> Run:
    proc = subprocess.run(
        cmd, capture_output=True, text=True, check=False, env={**os.environ, **(env or {})}
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


def push_default(host: str, *args: str, env: dict | None = None) -> Run:
    """The real `push_default` binary over the two e2e archs."""
    return run([os.environ["PUSH_DEFAULT_BIN"], "--registry", f"{host}/{NAMESPACE}", *args], env)


def registry_tool(*args: str, env: dict | None = None) -> Run:
    return run([os.environ["REGISTRY_BIN_TOOL"], *args], env)


def default_images() -> list[ImageTags]:
    """tagconf's images of the default group for the e2e archs (what push_default pushes)."""
    return render_many(CATALOG, CATALOG.group("default"), ARCHS, resolve_values(CATALOG))


def expected_default_refs() -> list[str]:
    """tagconf's refs for the default group and the e2e archs, without registry."""
    return [ref for i in default_images() for ref in i.refs("all", NAMESPACE)]


def tags(target: str, arch: str | None = None, vcs_ref: str | None = None) -> ImageTags:
    """The tags the catalogue gives ``target`` for ``arch`` (with VCS_REF ``vcs_ref``)."""
    values = resolve_values(CATALOG, vcs_ref=vcs_ref)
    return render_tags(CATALOG, CATALOG.target(target), arch, values)


def upstream() -> str:
    """The upstream image reference of the catalogue's defaults (UPSTREAM_IMAGE:ROCM_VERSION)."""
    return upstream_ref(resolve_values(CATALOG))


def metadata(name: str) -> dict:
    return json.loads(Path(f"tests/e2e/{name}.json").read_text())


def write_plan(
    tmp: Path, entries: list[tuple[str, str | None, str, str | None]], release: bool = False
) -> Path:
    """A plan whose specs tagconf renders now: (target, arch, built image, VCS_REF).

    The e2e images are built in the tests' configuration: BuildKit's plain output, not
    reproducible, so the push refuses their immutable tags. With ``release``, the plan
    names copies of their descriptors that say reproducible, as a `--config=release`
    build's would (same image): for the tests of the immutable-tag guard itself.
    """
    images = []
    for i, (target, arch, image_of, vcs_ref) in enumerate(entries):
        values = resolve_values(CATALOG, vcs_ref=vcs_ref)
        spec = image_spec(CATALOG, CATALOG.target(target), arch, values, NAMESPACE)
        path = tmp / f"spec{i}.json"
        path.write_text(json.dumps(spec))
        descriptor = Path(f"tests/e2e/{image_of}.json")
        if release and descriptor.exists():
            copy = tmp / f"release-{len(list(tmp.glob('release-*')))}-{descriptor.name}"
            copy.write_text(
                json.dumps({**json.loads(descriptor.read_text()), "reproducible": True})
            )
            descriptor = copy
        images.append({"spec": str(path), "descriptor": str(descriptor)})
    plan = tmp / f"plan{len(list(tmp.glob('plan*.json')))}.json"
    plan.write_text(json.dumps({"images": images}))
    return plan


def push_one(tmp: Path, registry: str, *args: str, env: dict | None = None) -> Run:
    """Push triton-wheel alone (a one-image plan) to ``registry``/rocm-pytorch."""
    plan = write_plan(tmp, [("triton-wheel", None, "triton-wheel", None)])
    return registry_tool(
        "push", "--plan", str(plan), "--registry", f"{registry}/{NAMESPACE}", *args, env=env
    )
