"""Which RUNs of an image's build executed and why (tools/imagebuild/executed.py), read
from BuildKit's plain progress (tools/imagebuild/progress.py) and the Dockerfile.

The Dockerfile is shaped as docker/Dockerfile.pytorch: a FROM-scratch scripts stage
bind-mounted by the builds, a pin stage, MAGMA and torch built on the pytorch-base
parent (a named context), the PyTorch source a named context replacing its stage, and
a stage built on another stage of the file. The log is BuildKit's: steps CACHED, DONE
with seconds, ERROR, output lines between.
"""

from __future__ import annotations

import pytest

from tools.dockerfile import model
from tools.imagebuild import executed, progress

DOCKERFILE = """\
ARG UPSTREAM_IMAGE=rocm/dev-ubuntu-26.04
ARG ROCM_VERSION=9.8.7-full

FROM scratch AS pytorch-scripts
COPY docker/scripts/build-magma.sh \\
     docker/scripts/build-pytorch.sh \\
     /

FROM scratch AS pytorch-src
COPY --from=pytorch-src-fetch /src/pytorch /src/pytorch

FROM scratch AS magma-pin
COPY --from=pytorch-src /src/pytorch/.ci/magma-rocm/build_magma.sh /pytorch/

FROM pytorch-base AS magma-build
ARG PYTORCH_ROCM_ARCH=gfx950
RUN --mount=type=bind,from=pytorch-scripts,target=/opt/build \\
    --mount=type=bind,from=magma-pin,source=/pytorch,target=/src/pytorch \\
    /opt/build/build-magma.sh --arch "${PYTORCH_ROCM_ARCH}" /opt/rocm/magma

FROM pytorch-base AS pytorch-build
RUN --mount=type=bind,from=triton-wheel,source=/wheels,target=/tmp/triton-wheels \\
    pip install /tmp/triton-wheels/*.whl
ARG PYTORCH_VERSION=4.5.6
COPY docker/scripts/build-env.sh /usr/local/lib/build-env.sh
RUN --mount=type=bind,from=pytorch-scripts,target=/opt/build \\
    --mount=type=bind,from=pytorch-src,source=/src/pytorch,target=/src/pytorch,rw \\
    --mount=type=bind,from=magma-build,source=/opt/rocm/magma,target=/opt/rocm/magma \\
    /opt/build/build-pytorch.sh --version "${PYTORCH_VERSION}" /src/pytorch /wheels

FROM pytorch-build AS pytorch
ARG PYTORCH_ROCM_ARCH=gfx950
RUN --mount=type=bind,source=docker/scripts/smoke-test-torch.py,target=/opt/smoke.py \\
    python /opt/smoke.py --arch "${PYTORCH_ROCM_ARCH}"
"""

STEPS = {  # vertex: its name line, as BuildKit prints it (continuations joined)
    6: "[pytorch-scripts 1/1] COPY docker/scripts/build-magma.sh      "
    "docker/scripts/build-pytorch.sh      /",
    7: "[magma-pin 1/1] COPY --from=pytorch-src /src/pytorch/.ci/magma-rocm/build_magma.sh"
    " /pytorch/",
    8: "[magma-build 1/1] RUN --mount=type=bind,from=pytorch-scripts,target=/opt/build     "
    "--mount=type=bind,from=magma-pin,source=/pytorch,target=/src/pytorch     "
    '/opt/build/build-magma.sh --arch "gfx950" /opt/rocm/magma',
    9: "[pytorch-build 1/3] RUN --mount=type=bind,from=triton-wheel,source=/wheels,"
    "target=/tmp/triton-wheels     pip install /tmp/triton-wheels/*.whl",
    10: "[pytorch-build 2/3] COPY docker/scripts/build-env.sh /usr/local/lib/build-env.sh",
    11: "[pytorch-build 3/3] RUN --mount=type=bind,from=pytorch-scripts,target=/opt/build     "
    "--mount=type=bind,from=pytorch-src,source=/src/pytorch,target=/src/pytorch,rw     "
    "--mount=type=bind,from=magma-build,source=/opt/rocm/magma,target=/opt/rocm/magma     "
    '/opt/build/build-pytorch.sh --version "4.5.6" /src/pytorch /wheels',
    12: "[pytorch 1/1] RUN --mount=type=bind,source=docker/scripts/smoke-test-torch.py,"
    'target=/opt/smoke.py     python /opt/smoke.py --arch "gfx950"',
}
HEAD = """\
# target pytorch, arch gfx950, docker/Dockerfile.pytorch stage pytorch
# staging: 127.0.0.1:5480/staging/pytorch:c-1234 not staged: building
#0 building with "default" instance using docker driver

#1 [internal] load build definition from Dockerfile.pytorch
#1 transferring dockerfile: 2.10kB done
#1 DONE 0.0s

#2 [context pytorch-base] load metadata for 127.0.0.1:5480/staging/base@sha256:{d}
#2 DONE 0.0s

#3 [context pytorch-src] 127.0.0.1:5480/staging/pytorch-src@sha256:{d}
#3 resolve 127.0.0.1:5480/staging/pytorch-src@sha256:{d} 0.0s done
#3 DONE 0.0s

""".replace("{d}", "e" * 64)
ERROR = '#{n} ERROR: process "/bin/sh -c python /opt/smoke.py" did not complete successfully'


def log(ran=(), failed=()):
    """The build's log: the steps of ``ran`` DONE (vertex n took n*10.5 s, with an
    output line), those of ``failed`` ERROR, the rest CACHED."""
    out = [HEAD]
    for n, name in STEPS.items():
        out.append(f"#{n} {name}\n")
        if n in ran:
            out.append(f"#{n} 1.250 compiler cache: ccache (local): no compiles\n")
            out.append(f"#{n} DONE {n * 10.5:.1f}s\n\n")
        elif n in failed:
            out.append(f"#{n} 3.400 AssertionError: no GPU arch\n" + ERROR.format(n=n) + "\n\n")
        else:
            out.append(f"#{n} CACHED\n\n")
    out.append("#13 exporting to image\n#13 DONE 12.0s\n")
    out.append("# imagebuild: start 0.25s, docker buildx build 700.00s; total 700.25s\n")
    return "".join(out)


A, B = "sha256:" + "a" * 64, "sha256:" + "b" * 64
PARENTS = {"pytorch-base": A, "pytorch-src": A, "triton-wheel": A}
ARGS = {"PYTORCH_ROCM_ARCH": "gfx950", "PYTORCH_VERSION": "4.5.6"}
FILES = {
    "docker/scripts/build-magma.sh": "1" * 64,
    "docker/scripts/build-pytorch.sh": "2" * 64,
    "docker/scripts/build-env.sh": "3" * 64,
    "docker/scripts/smoke-test-torch.py": "4" * 64,
}
CONTEXTS = {"pytorch-base", "pytorch-src", "triton-wheel"}


def inputs(parents=(), args=(), files=()):
    return executed.inputs(
        {**PARENTS, **dict(parents)}, {**ARGS, **dict(args)}, {**FILES, **dict(files)}
    )


def previous(text=None, **changes):
    """The previous build's record fields: ``changes`` of inputs, its run lines those of
    ``text`` (default: the log's own, so no line changed)."""
    report = executed.explain(text or log(), None, inputs(), None, "pytorch")
    return {**executed.record_fields(report, inputs(**changes)), "executed_runs": []}


def explain(text, now=None, before=None):
    return executed.explain(
        text,
        model.parse("Dockerfile.pytorch", DOCKERFILE),
        now or inputs(),
        before,
        "pytorch",
        CONTEXTS,
    )


def whys(report):
    return {
        (r.stage, r.step.split()[1] if len(r.step.split()) > 1 else r.step): r.why
        for r in report.runs
    }


# -- the log ------------------------------------------------------------------------


def test_the_steps_of_a_log_with_what_became_of_each():
    steps = progress.steps(log(ran={6, 8}, failed={12}))
    assert [(s.vertex, s.stage, s.index, s.total, s.status) for s in steps] == [
        (6, "pytorch-scripts", 1, 1, "ran"),
        (7, "magma-pin", 1, 1, "cached"),
        (8, "magma-build", 1, 1, "ran"),
        (9, "pytorch-build", 1, 3, "cached"),
        (10, "pytorch-build", 2, 3, "cached"),
        (11, "pytorch-build", 3, 3, "cached"),
        (12, "pytorch", 1, 1, "failed"),
    ]
    assert steps[2].seconds == 84.0 and steps[1].seconds is None
    assert steps[6].seconds == 3.4  # a failed step: its last output line's time
    assert steps[2].text.endswith('--arch "gfx950" /opt/rocm/magma')
    assert "  " not in steps[2].text  # BuildKit's continuation indent collapsed
    assert progress.definition(log()) == "Dockerfile.pytorch"


def test_a_canceled_step_or_one_the_log_ends_in_did_not_finish():
    text = "#4 [a 1/2] RUN make\n#4 0.5 cc -c x.c\n#4 CANCELED\n#5 [a 2/2] RUN make install\n"
    steps = progress.steps(text)
    assert [(s.status, s.executed) for s in steps] == [("canceled", False), ("unknown", False)]


def test_the_rehearsals_coverage_reads_the_same_run_steps():
    from tools.rehearsal import coverage

    text = log(ran={6, 8, 11}, failed={12})
    name, theirs = coverage.steps(text)
    mine = [s for s in progress.steps(text) if s.keyword == "RUN"]
    assert name == progress.definition(text)
    assert [(s.stage, s.text, s.status) for s in theirs] == [
        (s.stage, s.text, s.status if s.status in ("ran", "cached") else "failed") for s in mine
    ]


# -- the line -----------------------------------------------------------------------


def test_all_cached():
    report = explain(log(), before=previous())
    assert report.runs == [] and report.total == 4
    assert report.line() == "ran 0 of 4 RUNs (all cached)"


def test_a_pytorch_bump_reruns_torch_and_none_of_the_third_party_stages():
    # the PyTorch source is a new named context and PYTORCH_VERSION changed; the MAGMA
    # pin did not (its COPY came from BuildKit's cache), so MAGMA did not run
    before = previous(parents={"pytorch-src": B}, args={"PYTORCH_VERSION": "4.5.5"})
    report = explain(log(ran={11, 12}), before=before)
    assert report.line() == (
        "ran 2 of 4 RUNs: [pytorch-build] RUN /opt/build/build-pytorch.sh --version"
        ' "4.5.6" /src/pytorch /wheels (mounts pytorch-src, which is new'
        " (sha256:bbbbbbbbbbbb… → sha256:aaaaaaaaaaaa…) + build arg PYTORCH_VERSION changed"
        " (4.5.5 → 4.5.6), 115.5s); [pytorch] RUN python /opt/smoke.py --arch"
        ' "gfx950" (its stage\'s FROM pytorch-build ran, 126.0s)'
    )
    assert report.runs[0].record() == {
        "stage": "pytorch-build",
        "step": 'RUN /opt/build/build-pytorch.sh --version "4.5.6" /src/pytorch /wheels',
        "seconds": 115.5,
        "why": "mounts pytorch-src, which is new (sha256:bbbbbbbbbbbb… → sha256:aaaaaaaaaaaa…)"
        " + build arg PYTORCH_VERSION changed (4.5.5 → 4.5.6)",
    }


def test_a_script_edit_reruns_the_stages_that_mount_it_and_names_the_file():
    before = previous(files={"docker/scripts/build-magma.sh": "0" * 64})
    report = explain(log(ran={6, 8, 11, 12}), before=before)
    assert whys(report) == {
        ("magma-build", "/opt/build/build-magma.sh"): "mounts pytorch-scripts, which ran"
        " (docker/scripts/build-magma.sh changed)",
        ("pytorch-build", "/opt/build/build-pytorch.sh"): "mounts pytorch-scripts, which ran"
        " (docker/scripts/build-magma.sh changed) + mounts magma-build, which ran",
        ("pytorch", "python"): "its stage's FROM pytorch-build ran",
    }


def test_after_an_earlier_step_of_the_stage_ran():
    before = previous(files={"docker/scripts/build-env.sh": "0" * 64})
    report = explain(log(ran={10, 11, 12}), before=before)
    assert whys(report)[("pytorch-build", "/opt/build/build-pytorch.sh")] == (
        "after COPY docker/scripts/build-env.sh /usr/local/lib/build-env.sh ran"
        " (docker/scripts/build-env.sh changed)"
    )


def test_a_new_parent_image_in_the_from_and_in_a_mount():
    before = previous(parents={"pytorch-base": B, "triton-wheel": B})
    report = explain(log(ran={8, 9, 11, 12}), before=before)
    new = "(sha256:bbbbbbbbbbbb… → sha256:aaaaaaaaaaaa…)"
    assert whys(report) == {
        ("magma-build", "/opt/build/build-magma.sh"): f"FROM pytorch-base is new {new}",
        ("pytorch-build", "pip"): f"FROM pytorch-base is new {new}"
        f" + mounts triton-wheel, which is new {new}",
        ("pytorch-build", "/opt/build/build-pytorch.sh"): "after RUN pip install"
        " /tmp/triton-wheels/*.whl ran + mounts magma-build, which ran",
        ("pytorch", "python"): "its stage's FROM pytorch-build ran",
    }


def test_a_mounted_context_file_and_a_build_arg():
    before = previous(
        files={"docker/scripts/smoke-test-torch.py": "0" * 64}, args={"PYTORCH_ROCM_ARCH": "gfx942"}
    )
    report = explain(log(ran={12}), before=before)
    assert whys(report) == {
        ("pytorch", "python"): "mounted file docker/scripts/smoke-test-torch.py changed"
        " + build arg PYTORCH_ROCM_ARCH changed (gfx942 → gfx950)"
    }


def test_its_own_line_changed():
    # the previous build's smoke test ran another command: its line is not in the record
    before = previous(text=log().replace("/opt/smoke.py --arch", "/opt/smoke.py -v --arch"))
    assert whys(explain(log(ran={12}), before=before)) == {
        ("pytorch", "python"): "its line changed"
    }


def test_nothing_changed_that_the_record_keeps():
    report = explain(log(ran={9}), before=previous())
    assert report.runs[0].why == (
        "no change seen in its inputs since the last build here: BuildKit's cache did not"
        " have its result (pruned, another builder, or that build never ran it)"
    )


def test_without_an_earlier_record():
    report = explain(log(ran={6, 8, 12}), before=None)
    assert whys(report) == {
        # what the log and the Dockerfile show still counts
        ("magma-build", "/opt/build/build-magma.sh"): "mounts pytorch-scripts, which ran",
        # its stage starts at a parent image: nothing to compare with
        ("pytorch", "python"): "its line, a build arg or a file it mounts changed"
        " (no earlier record to say which)",
    }
    report = explain(log(ran={9}), before=None)
    assert report.runs[0].why == "first build of pytorch here (no earlier record)"


def test_a_failed_run_is_listed_as_failed():
    report = explain(log(ran={12}, failed=()), before=previous())
    assert "126.0s" in report.line()
    report = explain(log(failed={12}), before=previous())
    assert report.runs[0].failed and report.runs[0].seconds == 3.4
    assert report.line().endswith(", failed)")
    assert report.runs[0].record()["failed"] is True


def test_a_pulled_image_in_the_from():
    dockerfile = model.parse("Dockerfile.x", "FROM debian:sid AS fetch\nRUN apt-get update\n")
    text = (
        f"#5 [fetch 1/2] FROM docker.io/library/debian:sid@{A}\n#5 resolve x 0.0s done\n"
        "#5 DONE 3.1s\n\n#6 [fetch 2/2] RUN apt-get update\n#6 DONE 9.0s\n"
    )
    now = executed.inputs({}, {}, {})
    first = executed.explain(text, dockerfile, now, None, "x")
    assert first.runs[0].why == "first build of x here (no earlier record)"
    record = executed.record_fields(first, now)
    assert record["parents"] == {"docker.io/library/debian:sid": A}
    before = {**record, "parents": {"docker.io/library/debian:sid": B}}
    again = executed.explain(text, dockerfile, now, before, "x")
    assert again.runs[0].why == (
        "FROM docker.io/library/debian:sid is new (sha256:bbbbbbbbbbbb… → sha256:aaaaaaaaaaaa…)"
    )


def test_without_the_dockerfile_the_log_alone_still_names_earlier_steps():
    report = executed.explain(log(ran={10, 11}), None, inputs(), None, "pytorch", CONTEXTS)
    assert report.runs[0].why.startswith("after COPY docker/scripts/build-env.sh")


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("RUN --mount=type=cache,target=/x --network=none make  -j8", "RUN make -j8"),
        ("COPY --from=pytorch-src /a /b", "COPY --from=pytorch-src /a /b"),
        ("RUN " + "x" * 80, "RUN " + "x" * 67 + "…"),
    ],
)
def test_a_step_is_shortened_to_its_command(text, want):
    assert executed.short(text) == want


# -- the build: its log's line, stderr and the record, from one build to the next ----


class _Staging:
    embedded = False
    host = "127.0.0.1:9"

    def name(self, repository):
        return f"staging/{repository}"

    def placement(self, name, tag):
        return {}


class _Parent:
    embedded = False

    def __init__(self, digest):
        self.digest = digest
        self.staging_ref = f"127.0.0.1:9/staging/x@{digest}"


class _Builder:
    def key(self):
        return "local"

    def identity(self):
        return "local"


class _Claim:
    def add(self, **_):
        pass


class _Descriptor:
    def __init__(self, **_):
        pass

    def write(self, path):
        path.write_text("{}")


@pytest.fixture
def builds(tmp_path, monkeypatch):
    """``run(text, parents, hit)``: one ImageBuild of target pytorch whose BuildKit writes
    ``text`` (None: a staging hit), its parents' digests ``parents``; returns its log's
    text, its stderr and its record."""
    from tools.imagebuild import build

    monkeypatch.chdir(tmp_path)
    for path in FILES:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(f"# {path}\n")
    spec = {
        "target": "pytorch",
        "arch": "gfx950",
        "stage": "pytorch",
        "parents": sorted(PARENTS),
        "build_args": ARGS,
        "dockerfile_text": DOCKERFILE,
    }
    (tmp_path / "spec.json").write_text(__import__("json").dumps(spec))
    log_file = tmp_path / "logs" / "images" / "pytorch.gfx950.log"
    state = {}
    monkeypatch.setattr(build, "resolve", lambda _: _Staging())
    monkeypatch.setattr(
        build, "load_parent", lambda item, what: (item, _Parent(state["parents"][item]))
    )
    monkeypatch.setattr(build, "check_inputs", lambda inputs: None)
    monkeypatch.setattr(build, "resolve_builder", lambda request, spec: _Builder())
    monkeypatch.setattr(build.mirrors, "load", lambda: None)
    monkeypatch.setattr(build.mirrors, "resolve", lambda settings: None)
    monkeypatch.setattr(
        build.reads, "hit", lambda s, n, t: (A if state["text"] is None else None, "not staged")
    )
    monkeypatch.setattr(build.reads, "hit_note", lambda *a: "staged: reused")
    monkeypatch.setattr(build, "fetch_staged", lambda s, n, d: (b"{}", "m", {}))
    monkeypatch.setattr(build.desc, "Descriptor", _Descriptor)

    def run_buildx(request, *rest):
        explain = rest[-1]
        path = build.places.log_file(request.log)
        path.write_text(state["text"])
        return B, path, explain(path)

    monkeypatch.setattr(build, "run_buildx", run_buildx)

    def run(text, parents, capsys):
        state.update(text=text, parents=parents)
        argv = ["--spec", "spec.json", "--dockerfile", "docker/Dockerfile.pytorch"]
        argv += ["--output", "out.json", "--log", str(log_file)]
        argv += [x for p in sorted(parents) for x in ("--parent", p)]
        argv += [x for p in FILES for x in ("--src", p)]
        request = build.BuildRequest.from_argv(argv)
        build.build(request, spec, b"spec", build.Phases(started=0.0), _Claim())
        record = __import__("json").loads(build.record_path(log_file).read_text())
        return log_file.read_text(), capsys.readouterr().err, record

    return run


def test_the_line_in_the_log_on_stderr_and_in_the_record_from_build_to_build(builds, capsys):
    text, err, record = builds(log(ran=set(STEPS)), PARENTS, capsys)
    line = text.splitlines()[-2]
    assert line.startswith("# imagebuild: ran 4 of 4 RUNs: [magma-build] RUN /opt/build/")
    assert text.splitlines()[-1].startswith("# imagebuild: start ")  # the timing line last
    assert (
        "imagebuild: target pytorch, arch gfx950, docker/Dockerfile.pytorch stage pytorch:"
        f" {line.removeprefix('# imagebuild: ')}\n"
    ) in err
    assert record["runs_total"] == 4 and len(record["executed_runs"]) == 4
    assert record["executed_runs"][1] == {
        "stage": "pytorch-build",
        "step": "RUN pip install /tmp/triton-wheels/*.whl",
        "seconds": 94.5,
        "why": "first build of pytorch here (no earlier record)",
    }
    assert record["parents"] == PARENTS and record["build_args"] == ARGS
    assert set(record["files"]) == set(FILES) and record["staging_hit"] is False

    # the next build: a new PyTorch source; the record of the first says what changed
    text, err, record = builds(log(ran={11, 12}), {**PARENTS, "pytorch-src": B}, capsys)
    assert [r["why"] for r in record["executed_runs"]] == [
        "mounts pytorch-src, which is new (sha256:aaaaaaaaaaaa… → sha256:bbbbbbbbbbbb…)",
        "its stage's FROM pytorch-build ran",
    ]
    assert record["parents"]["pytorch-src"] == B
    assert "# imagebuild: ran 2 of 4 RUNs: [pytorch-build] RUN" in text


def test_a_staging_hit_runs_no_buildkit(builds, capsys):
    text, err, record = builds(None, PARENTS, capsys)
    assert "# imagebuild: ran 0 RUNs: staging hit\n" in text
    assert "ran 0 RUNs: staging hit" in err
    assert record["staging_hit"] is True and record["executed_runs"] == []
    assert record["parents"] == PARENTS  # the inputs the next build compares with
    # a build after the hit compares with the hit's inputs
    text, err, record = builds(log(ran={9, 11, 12}), {**PARENTS, "triton-wheel": B}, capsys)
    assert record["executed_runs"][0]["why"] == (
        "mounts triton-wheel, which is new (sha256:aaaaaaaaaaaa… → sha256:bbbbbbbbbbbb…)"
    )


def test_a_record_of_before_these_fields_is_no_earlier_record(tmp_path):
    from tools.imagebuild import build

    log_file = tmp_path / "x.log"
    assert build.previous_record(log_file) is None
    build.record_path(log_file).write_text('{"digest": "sha256:1", "seconds": 3.0}')
    assert build.previous_record(log_file) is None
    build.record_path(log_file).write_text("[1, 2]")
    assert build.previous_record(log_file) is None
    build.record_path(log_file).write_text(
        '{"parents": {"a": "sha256:1"}, "build_args": {"X": 1}, "files": [], "run_lines": ["ab"]}'
    )
    assert build.previous_record(log_file) == {
        "parents": {"a": "sha256:1"},
        "build_args": {"X": "1"},
        "run_lines": ["ab"],
    }
