"""RUN coverage: the RUN instructions of Dockerfiles against BuildKit's step list in logs."""

from pathlib import Path

import pytest

from tools.rehearsal import coverage

DOCKERFILE = """\
ARG BASE=debian
FROM ${BASE} AS build
ARG VERSION=1.0
RUN --mount=type=cache,target=/root/.cache \\
    /opt/build/make.sh --version "${VERSION}" \\
        /src /out
RUN echo second
FROM scratch AS final
COPY --from=build /out /out
FROM build AS extra
RUN echo never
"""

# BuildKit keeps the continuation lines' indentation: runs of spaces.
STEP = (
    "RUN --mount=type=cache,target=/root/.cache     /opt/build/make.sh"
    ' --version "2.5"         /src /out'
)
LOG = f"""\
#1 [internal] load build definition from Dockerfile.demo
#1 DONE 0.0s
#5 [build 1/3] {STEP}
#5 0.1 building
#5 DONE 3.2s
#6 [build 2/3] RUN echo second
#6 CACHED
#7 [final 1/1] COPY --from=build /out /out
#7 DONE 0.0s
"""


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    path = tmp_path / "Dockerfile.demo"
    path.write_text(DOCKERFILE)
    return path


def test_runs_lists_every_run_with_its_stage_and_line(demo):
    found = coverage.runs([demo])
    assert [(r.stage, r.line) for r in found] == [("build", 4), ("build", 7), ("extra", 11)]


def test_a_log_covers_the_runs_it_executed_or_reused(demo):
    cov = coverage.measure([demo], [LOG])
    first, second, never = coverage.runs([demo])
    assert cov.found == {first: "ran", second: "cached"}
    assert cov.missing == [never]
    assert cov.summary().startswith("RUN coverage: 2/3 RUN instructions")
    assert "(1 ran in these logs, 1 cached)" in cov.summary()


def test_a_step_of_another_dockerfile_or_stage_or_text_covers_nothing(demo):
    other = LOG.replace("Dockerfile.demo", "Dockerfile.other")
    assert coverage.measure([demo], [other]).found == {}
    moved = LOG.replace("[build 2/3] RUN echo second", "[extra 1/1] RUN echo second")
    assert len(coverage.measure([demo], [moved]).found) == 1
    # A RUN whose text changed is a new RUN: the old step does not cover it.
    demo.write_text(DOCKERFILE.replace("RUN echo second", "RUN echo second --now"))
    assert len(coverage.measure([demo], [LOG]).found) == 1


def test_a_failed_step_covers_nothing(demo):
    failed = LOG.replace("#5 DONE 3.2s", "#5 ERROR: process did not complete")
    cov = coverage.measure([demo], [failed])
    assert [r.line for r in cov.found] == [7]


def test_every_dockerfile_of_docker_parses_into_runs():
    found = coverage.runs(sorted(coverage.DOCKER.glob("Dockerfile.*")))
    assert {r.dockerfile for r in found} == {p.name for p in coverage.DOCKER.glob("Dockerfile.*")}
    assert all(r.text.startswith("RUN ") for r in found)


def test_require_fails_naming_the_runs_never_executed(tmp_path, capsys):
    log = tmp_path / "triton-wheel.log"
    log.write_text(
        "#1 [internal] load build definition from Dockerfile.triton\n"
        "#7 [triton-build 2/4] RUN --mount=type=bind,from=triton-scripts,target=/opt/build"
        ' /opt/build/fetch-source.sh https://github.com/triton-lang/triton.git "v3.9.0"'
        " /src/triton\n#7 DONE 0.2s\n"
    )
    assert coverage.main([str(log), "--require", "Dockerfile.triton"]) == 1
    out = capsys.readouterr().out
    assert "docker/Dockerfile.triton: 0/3" in out  # the mounts differ: not the same RUN
    assert "required RUN(s) never executed: docker/Dockerfile.triton:" in out
    assert coverage.main([str(log), "--require", "Dockerfile.triton:nope"]) == 2
    assert "no RUN there" in capsys.readouterr().out
    assert coverage.main([str(tmp_path / "missing.log")]) == 2
