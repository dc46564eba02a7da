"""A failed image build's message: a cause we recognise is its last line, after BuildKit's
own error line alone; an unrecognised one shows BuildKit's last lines."""

from __future__ import annotations

from tools.imagebuild import build

TAIL = [
    "# /x/docker-buildx build --progress=plain --file /w/context/docker/Dockerfile ...",
    "#2 [internal] load metadata for docker.io/rocm/dev-ubuntu-26.04:9.8.7-full",
    "#2 ERROR: failed to do request: Head ...: no such host",
    "Dockerfile.rocm-runtime:25",
    " 25 | >>> FROM ${UPSTREAM_IMAGE}:${ROCM_VERSION} AS rocm-runtime-pruned",
    "ERROR: failed to build: failed to solve: rocm/dev-ubuntu-26.04:9.8.7-full: failed to"
    " resolve source metadata for docker.io/rocm/dev-ubuntu-26.04:9.8.7-full: no such host",
]
SPEC = {"target": "rocm-runtime", "arch": "gfx950", "upstream": "rocm/dev-ubuntu-26.04:9.8.7-full"}
HEAD = "image build failed: target rocm-runtime, arch gfx950 (docker buildx exit 1)"
WHERE = " (whole log: /o/bazel-out/logs/images/rocm-runtime.gfx950.log)"


def test_a_recognised_cause_is_the_last_line_after_buildkits_error_alone():
    hints = build.hints(TAIL, SPEC)
    assert len(hints) == 1
    lines = build.failure(HEAD, TAIL, hints, None, WHERE).splitlines()
    assert lines == [f"{HEAD}{WHERE}; BuildKit says:", TAIL[-1], hints[0]]
    assert lines[-1].startswith("the upstream image rocm/dev-ubuntu-26.04:9.8.7-full cannot be")
    assert "--define UPSTREAM_IMAGE=<registry>/<path>" in lines[-1]
    assert "docker-buildx build" not in "\n".join(lines)  # no command line, no log screen


def test_a_stopped_staging_is_the_last_line_with_the_log():
    lines = build.failure(HEAD, TAIL[:-1], [], "the embedded staging registry stopped", WHERE)
    assert lines.splitlines()[-1] == f"the embedded staging registry stopped{WHERE}"
    # no ERROR: line in the tail: its last line stands for it
    assert lines.splitlines()[1] == TAIL[-2]


def test_an_unrecognised_failure_shows_buildkits_last_lines():
    text = build.failure(HEAD, TAIL, [], None, WHERE)
    assert text.splitlines() == [f"{HEAD}; last {len(TAIL)} lines of BuildKit's log{WHERE}:", *TAIL]
