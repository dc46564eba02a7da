"""Which RUN steps of an image's build executed (not from BuildKit's cache), and why.

BuildKit runs a step again when its cache holds no result for the step's inputs:
the step before it in its stage (or the stage's FROM), its own line (build args
expanded), the build args its stage declared before it, and what it mounts (stages,
named contexts, context files). The log (tools/imagebuild/progress.py) says which
steps ran; the Dockerfile (tools/dockerfile/model.py) says what each stage's FROM is
and which ARGs come before a RUN; the build record of the target's previous build
(``build.write_record``) says what the named contexts, build args and context files
were then. From these, each RUN that executed gets one reason, or several joined by
`` + ``:

- ``after RUN ... ran``: an earlier step of its stage executed (the first such one);
- ``its stage's FROM <stage> ran``: the stage is built on a stage of this file that
  executed steps;
- ``mounts <stage>, which ran``: a ``--mount=...,from=<stage>`` of such a stage;
- ``FROM <parent> is new (sha256:... → sha256:...)``, ``mounts <parent>, which is new
  (...)``: a named context (a parent image, the upstream) or a pulled image whose digest
  differs from the previous build's;
- ``build arg X changed (old → new)``, ``mounted file docker/scripts/x.sh changed``,
  ``its line changed``: against the previous build's record;
- ``first build of <target> here (no earlier record)`` when its stage starts at a parent
  and there is no record to compare with; ``its line, a build arg or a file it mounts
  changed (no earlier record to say which)`` otherwise;
- ``no change seen in its inputs since the last build here ...``: the record says they
  are as they were, so BuildKit's cache did not have the result (pruned, another
  builder, or that build was a staging hit and never ran BuildKit).

Nothing else is claimed: a reason is named only when the log, the Dockerfile or the two
records show it.
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field

from tools.dockerfile import model
from tools.imagebuild import progress

STAGING_HIT = "ran 0 RUNs: staging hit"
STEP_WIDTH = 72  # a step's text in the line, at most
# ${NAME}, $NAME in a Dockerfile's RUN: BuildKit prints the value instead
_VAR = re.compile(r"\\\$\\\{[A-Za-z_][A-Za-z0-9_]*(?::?[-+?][^}]*)?\\\}|\\\$[A-Za-z_][A-Za-z0-9_]*")
_FROM_IMAGE = re.compile(r"^FROM (\S+?)@(sha256:[0-9a-f]{64})\b")


@dataclass(frozen=True)
class Ran:
    """One RUN that executed: its stage, its line (shortened), seconds, and why."""

    stage: str
    step: str
    seconds: float | None
    why: str
    failed: bool = False

    def record(self) -> dict:
        out = {"stage": self.stage, "step": self.step, "seconds": self.seconds, "why": self.why}
        if self.failed:
            out["failed"] = True
        return out

    def __str__(self) -> str:
        took = (
            "failed" if self.failed else f"{self.seconds:.1f}s" if self.seconds is not None else "?"
        )
        return f"[{self.stage}] {self.step} ({self.why}, {took})"


@dataclass
class Report:
    """The RUNs of one build: those that executed, how many there were, and what the
    record keeps of the build's step lines and pulled images."""

    runs: list[Ran]
    total: int  # RUN steps in the log, cached ones too
    run_lines: list[str] = field(default_factory=list)  # digests of (stage, RUN text)
    pulled: dict[str, str] = field(default_factory=dict)  # image a FROM pulled -> digest

    def line(self) -> str:
        """``ran N of M RUNs: ...`` (the log's ``# imagebuild:`` line, without that)."""
        if not self.runs:
            return f"ran 0 of {self.total} RUNs (all cached)"
        return f"ran {len(self.runs)} of {self.total} RUNs: " + "; ".join(map(str, self.runs))


def short(text: str, width: int = STEP_WIDTH) -> str:
    """A step's text for the line: ``RUN`` and its command, without its --mount and
    --network flags (they are in the Dockerfile), cut at ``width``."""
    keyword, _, rest = progress.normal(text).partition(" ")
    flags, body = model.split_flags(rest)
    kept = [f"--from={v}" for v in flags.get("from", [])] if keyword != "RUN" else []
    out = " ".join([keyword, *kept, body]).strip()
    return out if len(out) <= width else out[: width - 1].rstrip() + "…"


def short_digest(digest: str | None) -> str:
    if not digest:
        return "none"
    algo, _, hexa = str(digest).partition(":")
    return f"{algo}:{hexa[:12]}…" if hexa else str(digest)[:19]


def _value(value: object) -> str:
    if value is None:
        return "unset"
    text = str(value)
    return text if len(text) <= 40 else text[:39] + "…"


def line_digest(stage: str, text: str) -> str:
    """What the record keeps of a RUN's line: 16 hex digits of its stage and text."""
    return hashlib.sha256(f"{stage}\0{progress.normal(text)}".encode()).hexdigest()[:16]


def _pattern(text: str) -> re.Pattern[str]:
    """A Dockerfile instruction as BuildKit prints it: its ARG references any value."""
    return re.compile(_VAR.sub(".*?", re.escape(progress.normal(text))))


def _model_name(log_stage: str) -> str:
    """The Dockerfile model's name of a stage BuildKit calls ``stage-K`` (unnamed)."""
    m = re.fullmatch(r"stage-(\d+)", log_stage)
    return m.group(1) if m else log_stage


def _matches(path: str, source: str) -> bool:
    """Context file ``path`` is (under) what a COPY or a bind mount names as ``source``."""
    source = source.removeprefix("./").rstrip("/")
    if source in ("", "."):
        return True
    return path == source or path.startswith(source + "/") or fnmatch.fnmatch(path, source)


class _Explainer:
    def __init__(
        self,
        steps: list[progress.Step],
        dockerfile: model.Dockerfile | None,
        now: Mapping,
        before: Mapping | None,
        target: str,
        contexts: set[str],
    ) -> None:
        self.steps = steps
        self.dockerfile = dockerfile
        self.now = now
        self.before = before
        self.target = target
        self.contexts = contexts
        self.by_stage: dict[str, list[progress.Step]] = {}
        for s in steps:
            self.by_stage.setdefault(_model_name(s.stage), []).append(s)

    # -- the Dockerfile --

    def stage(self, name: str) -> model.Stage | None:
        if self.dockerfile is None:
            return None
        try:
            return self.dockerfile.stage(name)
        except KeyError:
            return None

    def file_stage(self, ref: str, before: model.Stage) -> model.Stage | None:
        """The stage of this file ``ref`` names from ``before`` (not a named context)."""
        if self.dockerfile is None or ref.lower() in self.contexts:
            return None
        found = self.dockerfile.lookup(ref, before.index)
        return found if found is not None and found.name not in self.contexts else None

    def base(self, stage: model.Stage) -> str:
        return self.dockerfile.base_ref(stage, self.now.get("build_args", {}))  # type: ignore[union-attr]

    # -- the log --

    def first_executed(self, name: str, below: int | None = None) -> progress.Step | None:
        for s in self.by_stage.get(name, []):
            if s.keyword != "FROM" and s.executed and (below is None or s.index < below):
                return s
        return None

    def stage_ran(self, stage: model.Stage, seen: frozenset = frozenset()) -> bool:
        """Steps of ``stage`` executed, or it has none and its FROM (a stage here) ran."""
        if stage.name in seen:
            return False
        if self.first_executed(stage.name):
            return True
        if any(s.keyword != "FROM" for s in self.by_stage.get(stage.name, [])):
            return False
        parent = self.file_stage(self.base(stage), stage)
        return parent is not None and self.stage_ran(parent, seen | {stage.name})

    # -- the two records --

    def changed_files(self, sources: list[str]) -> list[str]:
        if not self.before or "files" not in self.before:
            return []
        new, old = self.now.get("files", {}), self.before["files"]
        paths = sorted(set(new) | set(old))
        return [
            p
            for p in paths
            if new.get(p) != old.get(p) and any(_matches(p, src) for src in sources)
        ]

    def files_note(self, sources: list[str]) -> str:
        changed = self.changed_files(sources)
        if not changed:
            return ""
        more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        return f" ({', '.join(changed[:3])}{more} changed)"

    def parent_change(self, name: str) -> tuple[str, str | None, str | None] | None:
        """(name, old, new) when named context or pulled image ``name`` is not the
        previous build's; None when it is, or nothing says."""
        if not self.before or "parents" not in self.before:
            return None
        new = self.now.get("parents", {}).get(name)
        old = self.before["parents"].get(name)
        if new is None or new == old:
            return None
        return name, old, new

    # -- the reasons --

    def copied_note(self, step: progress.Step) -> str:
        """The context files an executed COPY/ADD step copies that changed."""
        if step.keyword not in ("COPY", "ADD"):
            return ""
        flags, body = model.split_flags(step.text.split(" ", 1)[1] if " " in step.text else "")
        if flags.get("from"):
            return ""
        try:
            words = shlex.split(body)
        except ValueError:
            return ""
        return self.files_note(words[:-1])

    def stage_files_note(self, stage: model.Stage) -> str:
        executed = [s for s in self.by_stage.get(stage.name, []) if s.executed]
        if not any(s.keyword in ("COPY", "ADD") for s in executed):
            return ""
        return self.files_note([f.path for f in stage.context_files() if f.how != "RUN --mount"])

    def from_reasons(
        self, step: progress.Step, stage: model.Stage | None
    ) -> tuple[list[str], bool]:
        """Why the stage's start changed; True when it starts at a parent or an image."""
        if stage is None:
            return [], False
        base = self.base(stage)
        if base == model.SCRATCH:
            return [], False
        parent = self.file_stage(base, stage)
        if parent is not None:
            if self.stage_ran(parent):
                return [f"its stage's FROM {parent.name} ran{self.stage_files_note(parent)}"], False
            return [], False
        name = base.lower() if base.lower() in self.contexts else base
        pulled = [m for s in self.by_stage.get(stage.name, []) if (m := _FROM_IMAGE.match(s.text))]
        if name not in self.now.get("parents", {}) and pulled:
            name = pulled[0].group(1)
        change = self.parent_change(name)
        if change:
            return [
                f"FROM {name} is new ({short_digest(change[1])} → {short_digest(change[2])})"
            ], True
        return [], True

    def mount_reasons(self, step: progress.Step, stage: model.Stage | None) -> list[str]:
        out = []
        flags, _ = model.split_flags(step.text.split(" ", 1)[1] if " " in step.text else "")
        context_sources = []
        for spec in flags.get("mount", []):
            mount = model.parse_mount(spec)
            if mount["type"] != "bind":
                continue
            src = mount.get("from")
            if not src:
                context_sources.append(mount.get("source", "."))
                continue
            mounted = self.file_stage(src, stage) if stage is not None else None
            if mounted is not None:
                if self.stage_ran(mounted):
                    out.append(f"mounts {mounted.name}, which ran{self.stage_files_note(mounted)}")
                continue
            change = self.parent_change(src.lower() if src.lower() in self.contexts else src)
            if change:
                out.append(
                    f"mounts {change[0]}, which is new"
                    f" ({short_digest(change[1])} → {short_digest(change[2])})"
                )
        for path in self.changed_files(context_sources):
            out.append(f"mounted file {path} changed")
        return out

    def arg_reasons(self, step: progress.Step, stage: model.Stage | None) -> list[str]:
        if stage is None or not self.before or "build_args" not in self.before:
            return []
        line = None
        for ins in stage.instructions:
            if ins.keyword == "RUN" and _pattern(f"RUN {ins.value}").fullmatch(step.text):
                line = ins.line
                break
        new, old = self.now.get("build_args", {}), self.before["build_args"]
        out = []
        for name, _, at in stage.args():
            if (line is None or at < line) and new.get(name) != old.get(name):
                reason = (
                    f"build arg {name} changed ({_value(old.get(name))} → {_value(new.get(name))})"
                )
                if reason not in out:
                    out.append(reason)
        return out

    def why(self, step: progress.Step) -> str:
        name = _model_name(step.stage)
        stage = self.stage(name)
        reasons: list[str] = []
        starts_at_parent = False
        earlier = self.first_executed(name, below=step.index)
        if earlier is not None:
            reasons.append(f"after {short(earlier.text)} ran{self.copied_note(earlier)}")
        else:
            reasons, starts_at_parent = self.from_reasons(step, stage)
        reasons += self.mount_reasons(step, stage)
        args = self.arg_reasons(step, stage)
        reasons += args
        if self.before and "run_lines" in self.before and not args:
            if line_digest(step.stage, step.text) not in self.before["run_lines"]:
                reasons.append("its line changed")
        if reasons:
            return " + ".join(reasons)
        if not self.before:
            if starts_at_parent:
                return f"first build of {self.target} here (no earlier record)"
            return (
                "its line, a build arg or a file it mounts changed (no earlier record to say which)"
            )
        return (
            "no change seen in its inputs since the last build here: BuildKit's cache"
            " did not have its result (pruned, another builder, or that build never ran it)"
        )


def explain(
    log: str,
    dockerfile: model.Dockerfile | None,
    now: Mapping,
    before: Mapping | None,
    target: str,
    contexts: set[str] | frozenset[str] = frozenset(),
) -> Report:
    """The RUNs of the build in ``log`` that executed, each with why.

    ``dockerfile``: the one BuildKit read (None: the reasons the log alone gives);
    ``now``/``before``: this build's and the previous build's record fields
    (``inputs``), or None for no previous record; ``contexts``: the named contexts
    (they replace the same-named stage).
    """
    steps = progress.steps(log)
    pulled = {m.group(1): m.group(2) for s in steps if (m := _FROM_IMAGE.match(s.text))}
    now = {**now, "parents": {**pulled, **now.get("parents", {})}}
    who = _Explainer(steps, dockerfile, now, before, target, {c.lower() for c in contexts})
    runs = [s for s in steps if s.keyword == "RUN"]
    out = [
        Ran(
            stage=s.stage,
            step=short(s.text),
            seconds=s.seconds,
            why=who.why(s),
            failed=s.status == "failed",
        )
        for s in runs
        if s.executed
    ]
    lines = sorted({line_digest(s.stage, s.text) for s in runs})
    return Report(out, len(runs), lines, pulled)


def inputs(
    parents: Mapping[str, str], build_args: Mapping[str, str], files: Mapping[str, str]
) -> dict:
    """What the build record keeps of a build's inputs, for the next build to compare:
    the named contexts' digests, the build args, the context files' sha256."""
    return {
        "parents": dict(sorted(parents.items())),
        "build_args": dict(sorted(build_args.items())),
        "files": dict(sorted(files.items())),
    }


def record_fields(report: Report | None, now: Mapping, staging_hit: bool = False) -> dict:
    """The build record's fields of this module: ``executed_runs`` ([{stage, step,
    seconds, why}]), ``runs_total``, ``run_lines`` and the inputs (``parents`` with the
    images FROMs pulled). A staging hit ran no RUN (an empty list); without a report
    (the log could not be read) only the inputs."""
    fields = dict(now)
    if staging_hit:
        return {**fields, "executed_runs": []}
    if report is None:
        return fields
    fields["parents"] = dict(sorted({**report.pulled, **now.get("parents", {})}.items()))
    return {
        **fields,
        "executed_runs": [r.record() for r in report.runs],
        "runs_total": report.total,
        "run_lines": report.run_lines,
    }
