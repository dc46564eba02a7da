"""Which RUN instructions of docker/ the rehearsal executed, read from BuildKit's step list.

Every image build writes BuildKit's plain progress to its log
(``bazel-out/logs/images/<target>.log`` of the workspace that built it): a vertex per
step, ``#7 [triton-build 1/4] RUN --mount=... /opt/build/apt-install.sh ...``,
then ``#7 DONE 17.1s`` when it ran or ``#7 CACHED`` when BuildKit reused an
earlier run of it. The log's first vertex names its Dockerfile (``load build
definition from Dockerfile.triton``).

A RUN instruction of a Dockerfile is covered when a log of that Dockerfile
has a step of the same stage whose text is the instruction's, its
``${ARG}`` references standing for any value (BuildKit prints them
expanded) and white space collapsed. ``ran`` counts the steps a log saw
executed, ``cached`` those reused (executed by an earlier build on that
engine's cache). A RUN nobody executed is listed by file, line and stage.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tools import places
from tools.dockerfile import model
from tools.imagebuild import progress

DOCKER = places.workspace() / "docker"
LOGS = ("bazel-out", "logs", "images")  # of the workspace (images/private/image.bzl)
_VAR = re.compile(r"\\\$\\\{[A-Za-z_][A-Za-z0-9_]*(?::?[-+?][^}]*)?\\\}|\\\$[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Run:
    """One RUN instruction of a Dockerfile."""

    dockerfile: str  # the file name, e.g. Dockerfile.triton
    stage: str
    line: int
    text: str

    def pattern(self) -> re.Pattern[str]:
        """The step text BuildKit prints for it: ARG references stand for any value."""
        return re.compile(_VAR.sub(".*?", re.escape(progress.normal(self.text))))

    def __str__(self) -> str:
        return f"docker/{self.dockerfile}:{self.line} ({self.stage})"


@dataclass(frozen=True)
class Step:
    stage: str
    text: str
    status: str  # "ran", "cached" or "failed"


@dataclass
class Coverage:
    runs: list[Run]
    found: dict[Run, str] = field(default_factory=dict)  # run -> "ran" or "cached"

    @property
    def missing(self) -> list[Run]:
        return [r for r in self.runs if r not in self.found]

    def of(self, dockerfile: str, stage: str | None = None) -> list[Run]:
        return [
            r
            for r in self.runs
            if r.dockerfile == dockerfile and (stage is None or r.stage == stage)
        ]

    def summary(self) -> str:
        ran = sum(1 for s in self.found.values() if s == "ran")
        return (
            f"RUN coverage: {len(self.found)}/{len(self.runs)} RUN instructions of docker/"
            f" executed ({ran} ran in these logs, {len(self.found) - ran} cached)"
        )


def runs(dockerfiles: list[Path]) -> list[Run]:
    """Every RUN instruction of ``dockerfiles``, in file order."""
    found = []
    for path in sorted(dockerfiles):
        parsed = model.parse(path)
        for stage in parsed.stages:
            for ins in stage.instructions:
                if ins.keyword == "RUN":
                    found.append(Run(path.name, stage.name, ins.line, f"RUN {ins.value}"))
    return found


def steps(log: str) -> tuple[str | None, list[Step]]:
    """The Dockerfile a build log is of, and its RUN steps with what became of them
    (tools/imagebuild/progress.py reads the log; a step the log does not end, or that
    was canceled, counts as failed)."""
    found = [
        Step(s.stage, s.text, s.status if s.status in ("ran", "cached") else "failed")
        for s in progress.steps(log)
        if s.keyword == "RUN"
    ]
    return progress.definition(log), found


def measure(dockerfiles: list[Path], logs: list[str]) -> Coverage:
    """Which RUNs of ``dockerfiles`` the build ``logs`` (their texts) executed."""
    cov = Coverage(runs(dockerfiles))
    for log in logs:
        name, found = steps(log)
        for run in cov.runs:
            if run.dockerfile != name:
                continue
            pattern = run.pattern()
            for step in found:
                if step.stage == run.stage and step.status != "failed":
                    if pattern.fullmatch(step.text):
                        if cov.found.get(run) != "ran":
                            cov.found[run] = step.status
    return cov


def logs_dir() -> Path:
    """The image logs of the workspace (``bazel run``'s, else this checkout's)."""
    return places.workspace().joinpath(*LOGS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m tools.rehearsal.coverage",
        description="Which RUN instructions of docker/ the image builds executed, read from"
        " BuildKit's step list in their logs.",
    )
    parser.add_argument(
        "logs",
        nargs="*",
        type=Path,
        help="image build logs (default: the workspace's bazel-out/logs/images/*.log)",
    )
    parser.add_argument(
        "--require",
        action="append",
        default=[],
        metavar="DOCKERFILE[:STAGE]",
        help="fail (exit 1) unless every RUN of this Dockerfile (or of this stage of it) ran;"
        " 'all' for every Dockerfile of docker/; repeatable",
    )
    args = parser.parse_args(argv)
    texts = []
    logs = args.logs or sorted(logs_dir().glob("*.log"))
    if not logs:
        print(
            f"coverage: no image build logs in {logs_dir()}: build the images in this"
            " workspace first, or name the logs",
            file=sys.stderr,
        )
        return 2
    for log in logs:
        try:
            texts.append(log.read_text(errors="replace"))
        except OSError as e:
            print(f"coverage: cannot read {log}: {e.strerror}", file=sys.stderr)
            return 2
    cov = measure(sorted(DOCKER.glob("Dockerfile.*")), texts)
    failed = []
    for req in args.require:
        name, _, stage = req.partition(":")
        wanted = cov.runs if name == "all" else cov.of(name, stage or None)
        if not wanted:
            print(f"coverage: --require {req}: no RUN there (no such Dockerfile or stage)")
            return 2
        failed += [r for r in wanted if r not in cov.found and r not in failed]
    for name in sorted({r.dockerfile for r in cov.runs}):
        mine = cov.of(name)
        done = sum(1 for r in mine if r in cov.found)
        print(f"  docker/{name}: {done}/{len(mine)}")
    for run in cov.missing:
        print(f"  not executed: {run}")
    print(cov.summary())
    if failed:
        print(f"coverage: {len(failed)} required RUN(s) never executed: ", end="")
        print(", ".join(str(r) for r in failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
