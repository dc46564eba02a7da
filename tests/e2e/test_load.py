"""`bazel run //tests/e2e:pytorch-run.gfx950.load`, then `docker run` of its real tag."""

from __future__ import annotations

import os
import subprocess

from tools.tagconf import catalog as catalog_mod
from tools.tagconf.tags import render_tags, resolve_values

CATALOG = catalog_mod.load("images/catalog.toml")


def docker(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["docker", *args], capture_output=True, text=True, check=False)


def test_load_puts_the_runtime_image_under_its_real_tags_and_it_runs():
    tags = render_tags(CATALOG, CATALOG.target("pytorch-run"), "gfx950", resolve_values(CATALOG))
    refs = [f"{CATALOG.registry}/runtime:{t}" for t in (tags.versioned, tags.floating)]
    for ref in refs:  # a loaded image from an earlier run must not make this pass
        docker("image", "rm", "--force", ref)

    load = subprocess.run([os.environ["LOAD_BIN"]], capture_output=True, text=True, check=False)
    assert load.returncode == 0, load.stderr
    # should report each real ref it loaded
    for ref in refs:
        assert ref in load.stdout, load.stdout

    # should run under the versioned tag: the runtime has its arch's torch installed
    run = docker(
        "run",
        "--rm",
        "--network",
        "none",
        refs[0],
        "cat",
        "/usr/lib/python/site-packages/torch/__init__.py",
    )
    assert run.returncode == 0, run.stderr
    assert "'arch': 'gfx950'" in run.stdout
    # should be the same image under the floating tag
    ids = {docker("image", "inspect", "--format", "{{.Id}}", ref).stdout.strip() for ref in refs}
    assert len(ids) == 1 and "" not in ids
