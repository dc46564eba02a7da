"""BuildKit's own lint (`docker buildx build --check`) on every catalogue target.

Each target's Dockerfile and stage is checked with the build args the image
rule passes (tagconf's image_spec, default arch) and with named contexts
for exactly its catalogue parents, plus the upstream image for the targets
built FROM it. A stage that needs any other image fails here: BuildKit
would try to pull it, and nothing can be pulled. Any warning fails too.
"""

from __future__ import annotations

import pytest

from tests.dockerfiles import buildx
from tests.dockerfiles.family import (
    TARGET_IDS,
    TARGETS,
    UPSTREAM_TARGETS,
    build_args,
    contexts,
)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Every target's check, run in parallel once for the module."""
    ctx = buildx.assemble_context(tmp_path_factory.mktemp("context"))
    commands = {
        t.name: buildx.command(ctx, t.dockerfile, "check", t.stage, build_args(t), contexts(t))
        for t in TARGETS
    }
    return buildx.run_all(commands)


def describe(warnings: list[dict], dockerfile: str) -> str:
    lines = []
    for w in warnings:
        ranges = (w.get("location") or {}).get("ranges") or [{}]
        line = ranges[0].get("start", {}).get("line", "?")
        lines.append(f"  {dockerfile}:{line}: {w['ruleName']}: {w.get('detail')} ({w.get('url')})")
    return "\n".join(lines)


@pytest.mark.parametrize("target", TARGETS, ids=TARGET_IDS)
def test_check_passes_without_warnings(results, target):
    result = results[target.name]
    warnings = (result.data or {}).get("warnings") or []
    # should report no BuildKit lint warning
    assert not warnings, (
        f"{target.name} ({target.dockerfile} --target {target.stage}):"
        f" {len(warnings)} BuildKit check warning(s):\n{describe(warnings, target.dockerfile)}"
    )
    # should resolve every FROM / --from reference from the named contexts
    assert result.code == 0 and result.data is not None, (
        f"{target.name}: `docker buildx build --check` failed. If BuildKit tried to pull an"
        " image, the stage reaches a reference that is neither a catalogue parent nor (for"
        f" {', '.join(sorted(UPSTREAM_TARGETS))}) the upstream image.\n"
        f"{buildx.docker_env_hint()}\n{result.explain()}"
    )
