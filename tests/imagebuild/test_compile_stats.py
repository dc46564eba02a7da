"""The compiler cache's line in an image's BuildKit log, and the build record that keeps
its counts (tools/imagebuild/compile_stats.py, build.write_record).

The lines are docker/scripts/build-env.sh's (rocm_pytorch_cc_stats); the log is
BuildKit's plain progress as imagebuild writes it: its `# ` header, steps that
came from BuildKit's cache, steps running side by side, a step whose output was
clipped, and imagebuild's timing line at the end.
"""

from __future__ import annotations

import json

import pytest

from tools.imagebuild import build, compile_stats
from tools.imagebuild.compile_stats import Line, Stats

# The pytorch image of one arch: MAGMA from BuildKit's cache, AOTriton and torch
# built (each prints its line), the smoke test compiles nothing through the cache.
PYTORCH_LOG = """\
# pytorch.gfx950 (docker/Dockerfile.pytorch, stage pytorch)
# staging: 127.0.0.1:5000/rocm-pytorch/pytorch:c-1234 not in staging: building
# docker buildx build --progress=plain --target pytorch ...
# mirrors (none): no mirrors
#0 building with "default" instance using docker driver

#1 [internal] load build definition from Dockerfile.pytorch
#1 transferring dockerfile: 12.34kB done
#1 DONE 0.0s

#9 [magma 2/2] RUN --mount=type=bind,from=pytorch-scripts,target=/opt/build \
--mount=type=cache,target=/root/.cache/ccache     /opt/build/build-magma.sh --arch gfx950 ...
#9 CACHED

#12 [aotriton 2/2] RUN --mount=type=bind,from=pytorch-scripts,target=/opt/build \
/opt/build/build-aotriton.sh --arch gfx950 --pytorch-src /src/pytorch /opt/aotriton
#12 0.112 build-env: compiler cache: ccache
#12 0.113 build-env: PYTORCH_ROCM_ARCH=gfx950 MAX_JOBS=2

#13 [test 1/2] RUN python -c 'import torch'
#13 0.514 build-env: compiler cache: none
#12 12.41 [1/220] Building CXX object v3src/CMakeFiles/aotriton_v2.dir/flash/attn_fwd.cc.o
#13 DONE 3.1s
#12 1834.2 build-aotriton: AOTriton 0.11b 6f8cbcac for gfx950 -> /opt/aotriton
#12 1834.3 compiler cache: ccache (local): 200 hits, 20 misses, 90.9 % hits
#12 DONE 1834.5s

#14 [torch 3/3] RUN --mount=type=bind,from=pytorch-scripts,target=/opt/build \
/opt/build/build-pytorch.sh --version 4.5.6 ...
#14 0.101 build-env: compiler cache: ccache
#14 45.67 [1/9125] Building CXX object c10/CMakeFiles/c10.dir/core/Allocator.cpp.o
#14 45.67
#14 45.67 [output clipped, log limit 2MiB reached]
#14 9876.5 compiler cache: ccache (local): 612 hits, 0 misses, 100.0 % hits
#14 DONE 9877.0s

#15 exporting to image
#15 DONE 12.0s
# imagebuild: start 0.25s, staging checks 0.10s, docker buildx build 11723.40s; total 11723.75s
"""


def test_a_line_of_each_form():
    assert compile_stats.parse_line(
        "#12 1834.3 compiler cache: ccache (local): 812 hits, 20 misses, 97.6 % hits"
    ) == Line("ccache", "local", 812, 20)
    assert compile_stats.parse_line(
        "compiler cache: sccache (sccache-webdav at http://127.0.0.1:8080/cc): 0 hits,"
        " 120 misses, 0.0 % hits"
    ) == Line("sccache", "sccache-webdav at http://127.0.0.1:8080/cc", 0, 120)
    assert compile_stats.parse_line("#3 0.2 compiler cache: ccache (local): no compiles") == Line(
        "ccache", "local", 0, 0
    )
    assert compile_stats.parse_line(
        "#3 5.25 compiler cache: ccache (local): no stats (ccache --show-log-stats failed"
        " (exit 139))"
    ) == Line("ccache", "local", None, None, "ccache --show-log-stats failed (exit 139)")
    assert compile_stats.parse_line("#3 5.25 compiler cache: none") == Line(
        "none", None, None, None
    )


@pytest.mark.parametrize(
    "text",
    [
        # build-env.sh's first line: which cache, not what it did
        "#12 0.112 build-env: compiler cache: ccache",
        "#12 0.112 build-env: compiler cache: none",
        "#12 0.112 build-env: compiler cache: sccache (sccache-webdav at http://c:8080/cc)",
        "build-env: compiler cache sccache-webdav at http://c:9/x does not answer"
        " ([Errno 111] Connection refused): building with the local ccache",
        # not the whole form
        "#12 1.0 compiler cache: ccache (local): 812 hits, 20 misses",
        "#12 1.0 compiler cache: ccache (local): 812 hits, 20 misses, 97.6 % hits, more",
        "#12 1.0 compiler cache: ccache: 812 hits, 20 misses, 97.6 % hits",
        "#12 1.0 compiler cache: distcc (local): 812 hits, 20 misses, 97.6 % hits",
        "",
    ],
)
def test_what_is_not_a_stats_line(text):
    assert compile_stats.parse_line(text) is None


def test_a_line_after_a_partial_line_of_the_step_is_still_read():
    # BuildKit prints a step's output as it comes: a line of stdout without its newline
    # gets the next bit of output (stderr, where the line goes) appended
    line = (
        "#14 9876.5 [9125/9125] Linking libtorch_hip.so"
        "compiler cache: ccache (local): 1 hits, 3 misses, 25.0 % hits"
    )
    assert compile_stats.parse_line(line) == Line("ccache", "local", 1, 3)


def test_a_log_sums_its_steps_lines_and_skips_what_came_from_cache():
    assert [x.hits for x in compile_stats.lines(PYTORCH_LOG)] == [200, 612]
    stats = compile_stats.summed(PYTORCH_LOG)
    assert stats == Stats(hits=812, misses=20, lines=2)
    assert stats.compiles == 832 and round(stats.rate, 1) == 97.6


def test_a_log_without_counts_has_no_stats():
    staging_hit = (
        "# pytorch.gfx950 (docker/Dockerfile.pytorch)\n"
        "# staging hit: 127.0.0.1:5000/rocm-pytorch/pytorch@sha256:abcd (BuildKit not run)\n"
    )
    assert compile_stats.summed(staging_hit) is None
    # every compiling step from BuildKit's cache
    cached = PYTORCH_LOG.replace("compiler cache: ccache (local)", "built earlier")
    assert compile_stats.summed(cached) is None
    # steps that could not read their counts, or had no cache
    unknown = (
        "#12 1.5 compiler cache: ccache (local): no stats (ccache --show-log-stats failed"
        " (exit 139))\n#13 2.5 compiler cache: none\n"
    )
    assert compile_stats.summed(unknown) is None
    assert compile_stats.summed("") is None


def test_no_compiles_are_counted_as_zero():
    log = (
        "#12 1.5 compiler cache: ccache (local): no compiles\n"
        "#13 2.5 compiler cache: ccache (local): no stats (CCACHE_STATSLOG is not set)\n"
    )
    stats = compile_stats.summed(log)
    assert stats == Stats(hits=0, misses=0, lines=1) and stats.rate is None


def phases() -> build.Phases:
    p = build.Phases(started=0.5)
    p.done("docker buildx build")
    return p


def test_the_build_record_keeps_the_logs_compile_counts(tmp_path):
    log = tmp_path / "pytorch.gfx950.log"
    log.write_text(PYTORCH_LOG)
    build.write_record(log, "sha256:" + "d" * 64, "sha256:" + "k" * 64, False, phases())
    record = json.loads((tmp_path / "pytorch.gfx950.build-record.json").read_text())
    assert record["compile_hits"] == 812 and record["compile_misses"] == 20
    assert record["staging_hit"] is False and record["digest"] == "sha256:" + "d" * 64


@pytest.mark.parametrize(
    "text",
    [
        None,  # no log at all
        "# pytorch.gfx950\n# staging hit: 127.0.0.1:5000/p@sha256:abcd\n",  # a staging hit
        "#5 [base 2/2] RUN apt-get install\n#5 DONE 3.0s\n",  # no step compiles
        "#12 0.9 compiler cache: none\n",
        "\udcff\x00 not text \x89PNG\n",  # not UTF-8 when written: read with replacements
    ],
)
def test_a_build_record_without_counts_has_no_compile_fields(tmp_path, text):
    log = tmp_path / "wheel.log"
    if text is not None:
        log.write_bytes(text.encode("utf-8", "surrogateescape"))
    build.write_record(log, "sha256:" + "d" * 64, "sha256:" + "k" * 64, text is not None, phases())
    record = json.loads((tmp_path / "wheel.build-record.json").read_text())
    assert "compile_hits" not in record and "compile_misses" not in record
    assert record["seconds"] > 0
