"""The Dockerfile a build gets (model.view): what BuildKit acts on, line numbers kept.

ImageSpec puts the view into the build spec and ImageBuild builds from it, so
an edit the view drops (a comment, a stage the image does not read) leaves the
spec byte-identical and Bazel re-runs no image build. These are the rules of
the view, and the check that every target of the real family keeps every
instruction it builds, on its own line.
"""

from __future__ import annotations

import pytest

from tests.dockerfiles.family import TARGET_IDS, TARGETS, build_args, contexts
from tools.dockerfile import model

FILE = """\
# syntax=docker/dockerfile:1
# The header: what this file builds.
ARG BASE=scratch

# helper: scripts only
FROM scratch AS helper
COPY run.sh /run.sh

FROM ${BASE} AS wheel
# build the wheel
RUN echo build \\
  # a comment inside the RUN
  && echo done
COPY --from=helper /run.sh /run.sh

# the serving image
FROM wheel AS serve
RUN echo serve
# the end
"""


def view(text: str, target: str, parents=(), args=None) -> str:
    return model.view(model.parse("Dockerfile", text), target, parents, args or {})


def test_view_blanks_comments_and_unread_stages_and_keeps_every_line_number():
    lines = view(FILE, "wheel").splitlines()
    # should keep the directive, global ARG and the two stages wheel reads, on their lines
    assert lines[0] == "# syntax=docker/dockerfile:1"
    assert lines[1] == ""  # an ordinary comment
    assert lines[2] == "ARG BASE=scratch"
    assert lines[5:7] == ["FROM scratch AS helper", "COPY run.sh /run.sh"]
    assert lines[8] == "FROM ${BASE} AS wheel"
    assert lines[9] == ""
    # a comment inside a continued RUN stays (BuildKit drops it; an empty line would not do)
    assert lines[10:13] == ["RUN echo build \\", "  # a comment inside the RUN", "  && echo done"]
    # should drop the stage wheel does not read, and the trailing empty lines
    assert len(lines) == 14
    assert "serve" not in "\n".join(lines)


def test_view_of_the_last_stage_keeps_what_it_reads():
    text = view(FILE, "serve")
    assert text.splitlines()[16] == "FROM wheel AS serve"
    assert "COPY --from=helper" in text and text.endswith("RUN echo serve\n")
    assert view(FILE, "") == text  # no stage given: the last one


@pytest.mark.parametrize(
    "edit",
    [
        lambda t: t + "# one more comment\n",
        lambda t: t.replace("# build the wheel", "# build the wheel, faster"),
        lambda t: t.replace("RUN echo serve", "RUN echo serve && echo more"),
    ],
    ids=["comment-appended", "comment-edited", "other-stage-edited"],
)
def test_edits_the_build_does_not_see_leave_the_view_as_it_was(edit):
    assert view(edit(FILE), "wheel") == view(FILE, "wheel")


@pytest.mark.parametrize(
    "edit",
    [
        lambda t: t.replace("RUN echo build", "RUN echo build2"),
        lambda t: t.replace("COPY run.sh", "COPY --chmod=755 run.sh"),  # a stage it reads
        lambda t: t.replace("ARG BASE=scratch", "ARG BASE=busybox"),
        lambda t: t.replace("  # a comment inside the RUN", "  # inside, edited"),
    ],
    ids=["own-run", "read-stage", "global-arg", "comment-in-continuation"],
)
def test_edits_the_build_sees_change_the_view(edit):
    assert view(edit(FILE), "wheel") != view(FILE, "wheel")


def test_a_named_context_keeps_the_replaced_stage_and_what_it_copies_from():
    # BuildKit still resolves what a replaced stage COPYs --from (model.reach)
    text = view(FILE, "serve", parents=["wheel"])
    assert "FROM ${BASE} AS wheel" in text and "FROM scratch AS helper" in text


@pytest.mark.parametrize(
    "text,target",
    [
        (FILE.replace("RUN echo serve", "RUN <<EOT\n# not a comment\necho serve\nEOT"), "serve"),
        ("# escape=`\n" + FILE, "serve"),
        (FILE.replace("COPY --from=helper", "COPY --from=0"), "serve"),
        (FILE.replace("FROM wheel AS serve", "FROM wheel"), ""),
        (FILE.replace("RUN echo serve", 'COPY <<"1-conf" /x\n# kept\n1-conf'), "serve"),
        (FILE.replace("RUN echo serve", "ONBUILD RUN echo later"), "serve"),
        (FILE.replace("COPY --from=helper", "COPY --from=${HELPER}"), "serve"),
        (FILE.replace("COPY --from=helper", "COPY --from=serve"), "wheel"),
    ],
    ids=[
        "heredoc",
        "escape-directive",
        "stage-by-index",
        "unnamed-stage-built",
        "heredoc-any-delimiter",
        "onbuild",
        "from-a-variable",
        "from-a-later-stage",
    ],
)
def test_files_the_model_cannot_follow_are_left_whole(text, target):
    assert view(text, target) == text


def test_lines_end_at_newline_only_as_in_buildkit():
    # a form feed or a carriage return inside a line is no line break to BuildKit
    text = FILE.replace("RUN echo serve", "RUN printf 'p\x0cq\rr'")
    got = view(text, "serve")
    assert got.split("\n")[17] == "RUN printf 'p\x0cq\rr'"
    assert got.split("\n")[16] == "FROM wheel AS serve"


def test_a_directive_after_a_comment_is_a_comment():
    text = "# header\n# syntax=docker/dockerfile:1\nFROM scratch AS a\nRUN true\n"
    assert view(text, "a") == "\n\nFROM scratch AS a\nRUN true\n"


@pytest.mark.parametrize("target", TARGETS, ids=TARGET_IDS)
def test_every_target_of_the_family_keeps_each_instruction_it_builds_on_its_line(target):
    path = target.dockerfile
    full = model.parse(path)  # read as BuildKit reads it: lines end at \n only
    text = full.text
    got = model.view(full, target.stage, contexts(target), build_args(target))
    seen = model.parse(path, got)
    read = model.reach(full, target.stage, contexts(target), build_args(target)).read
    # should hold the stages the build reads, instruction for instruction, line for line
    assert [s.name for s in seen.stages] == [s for s in full.stage_names if s in read]
    for stage in seen.stages:
        assert stage.instructions == full.stage(stage.name).instructions
        assert stage.line == full.stage(stage.name).line
    assert seen.global_args == full.global_args
    # and none of the file's comments (docker/ has no here-documents): they rebuild nothing
    assert len(got) < len(text)
    assert not [ln for ln in got.splitlines() if ln.startswith("#")]
