"""A static model of the real Dockerfiles: stages, references, ARGs, context files.

dockerfile-parse splits a Dockerfile into instructions (continuation lines
joined, comments kept as COMMENT entries); this module reads what BuildKit
acts on from them: the FROM reference and name of every stage, the stages and
images a stage COPYs from or bind-mounts (`COPY --from=`, `RUN --mount=...,
from=`), the ARGs it declares and the variables it uses, and the files it
takes from the build context. No Docker is needed.
"""

from __future__ import annotations

import io
import json
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dockerfile_parse import DockerfileParser

SCRATCH = "scratch"

# $NAME, ${NAME} and ${NAME:-word} / ${NAME#pattern} / ... (the name only).
_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)[^}]*\}|([A-Za-z_][A-Za-z0-9_]*))")
# A flag at the start of an instruction's value: --from=x, --mount=..., --link.
_FLAG = re.compile(r"--([a-z-]+)(?:=(\"[^\"]*\"|'[^']*'|\S*))?(?:\s+|$)")


def variables(text: str) -> list[str]:
    """Names of the variables ``text`` expands, in order (``$(...)`` is not one)."""
    return [m.group(1) or m.group(2) for m in _VAR.finditer(text)]


def substitute(text: str, env: Mapping[str, str]) -> str:
    """Expand ``$NAME`` / ``${NAME}`` from ``env`` (unset names expand to '')."""
    return _VAR.sub(lambda m: env.get(m.group(1) or m.group(2), ""), text)


def split_flags(value: str) -> tuple[dict[str, list[str]], str]:
    """Leading ``--flag[=value]`` options of an instruction and the rest of it."""
    flags: dict[str, list[str]] = {}
    rest = value.lstrip()
    while rest.startswith("--"):
        m = _FLAG.match(rest)
        if not m:
            break
        flags.setdefault(m.group(1), []).append((m.group(2) or "").strip("\"'"))
        rest = rest[m.end() :]
    return flags, rest


def parse_mount(spec: str) -> dict[str, str]:
    """``type=bind,from=x,source=/a,target=/b,rw`` as a dict (type defaults to bind)."""
    options = {"type": "bind"}
    for item in spec.split(","):
        key, _, val = item.partition("=")
        options[key.strip()] = val.strip() if _ else "true"
    if "src" in options:
        options.setdefault("source", options["src"])
    return options


def parse_arg(value: str) -> list[tuple[str, str | None]]:
    """``ARG A=1 B`` as ``[("A", "1"), ("B", None)]`` (quotes removed)."""
    out = []
    for word in shlex.split(value):
        name, sep, default = word.partition("=")
        out.append((name, default if sep else None))
    return out


@dataclass(frozen=True)
class Instruction:
    """One instruction: its keyword (upper case), value and 1-based line."""

    keyword: str
    value: str
    line: int

    @property
    def flags(self) -> dict[str, list[str]]:
        return split_flags(self.value)[0]

    @property
    def body(self) -> str:
        return split_flags(self.value)[1]

    def mounts(self) -> list[dict[str, str]]:
        """The ``RUN --mount`` options of this instruction."""
        if self.keyword != "RUN":
            return []
        return [parse_mount(m) for m in self.flags.get("mount", [])]

    def copy_sources(self) -> list[str]:
        """Source operands of COPY/ADD (everything but the destination)."""
        if self.keyword not in ("COPY", "ADD"):
            return []
        body = self.body.strip()
        words = json.loads(body) if body.startswith("[") else shlex.split(body)
        return words[:-1]


@dataclass(frozen=True)
class Reference:
    """A stage or image a stage reads from, other than its FROM: where and how."""

    name: str
    line: int
    how: str  # "COPY --from" or "RUN --mount from="


@dataclass(frozen=True)
class ContextFile:
    """A path a stage takes from the build context, as written."""

    path: str
    line: int
    how: str  # "COPY", "ADD" or "RUN --mount"


@dataclass
class Stage:
    """One FROM and the instructions after it."""

    index: int
    name: str  # the AS name (lower case, as BuildKit matches it), else the index
    base: str  # the FROM reference as written, e.g. ${UPSTREAM_IMAGE}:${ROCM_VERSION}
    line: int
    instructions: list[Instruction] = field(default_factory=list)

    def args(self) -> list[tuple[str, str | None, int]]:
        """(name, default or None, line) of every ARG in this stage."""
        return [
            (name, default, ins.line)
            for ins in self.instructions
            if ins.keyword == "ARG"
            for name, default in parse_arg(ins.value)
        ]

    def references(self) -> list[Reference]:
        """Stages or images this stage COPYs from or bind-mounts (not its FROM)."""
        refs = []
        for ins in self.instructions:
            for src in ins.flags.get("from", []) if ins.keyword in ("COPY", "ADD") else []:
                refs.append(Reference(src, ins.line, f"{ins.keyword} --from"))
            for mount in ins.mounts():
                if mount.get("from") and mount["type"] in ("bind", "cache"):
                    refs.append(Reference(mount["from"], ins.line, "RUN --mount from="))
        return refs

    def context_files(self) -> list[ContextFile]:
        """Paths this stage reads from the build context (COPY/ADD, bind mounts)."""
        files = []
        for ins in self.instructions:
            if ins.keyword in ("COPY", "ADD") and not ins.flags.get("from"):
                for src in ins.copy_sources():
                    if ins.keyword == "ADD" and re.match(r"^[a-z]+://|^git@", src):
                        continue  # a URL, not the context
                    files.append(ContextFile(src, ins.line, ins.keyword))
            for mount in ins.mounts():
                if mount["type"] == "bind" and not mount.get("from"):
                    files.append(ContextFile(mount.get("source", "."), ins.line, "RUN --mount"))
        return files


@dataclass
class Dockerfile:
    """A parsed Dockerfile: global ARGs and stages in order."""

    path: str
    global_args: list[tuple[str, str | None, int]]
    stages: list[Stage]
    text: str = field(default="", repr=False)  # as read: lines end at \n only
    # dockerfile-parse's items, comments too: instruction, value, startline, endline (0-based)
    items: list[dict] = field(default_factory=list, repr=False, compare=False)

    def stage(self, name: str) -> Stage:
        for s in self.stages:
            if s.name == name.lower():
                return s
        raise KeyError(f"{self.path}: no stage {name!r} (stages: {self.stage_names})")

    @property
    def stage_names(self) -> list[str]:
        return [s.name for s in self.stages]

    def lookup(self, ref: str, before: int) -> Stage | None:
        """The stage ``ref`` names if it is defined before stage ``before``, else None.

        BuildKit resolves a name to a stage only if that stage comes earlier
        in the file (or by its index); anything else is an image reference.
        """
        if ref.isdigit():
            i = int(ref)
            return self.stages[i] if i < before else None
        for s in self.stages[:before]:
            if s.name == ref.lower():
                return s
        return None

    def global_env(self, build_args: Mapping[str, str]) -> dict[str, str]:
        """Values of the global ARGs (defaults, overridden by ``build_args``)."""
        env = {}
        for name, default, _ in self.global_args:
            env[name] = build_args.get(name, default if default is not None else "")
        return env

    def base_ref(self, stage: Stage, build_args: Mapping[str, str]) -> str:
        return substitute(stage.base, self.global_env(build_args))


def parse(path: str | Path, text: str | None = None) -> Dockerfile:
    """Parse the Dockerfile at ``path`` (or ``text``, reported as ``path``)."""
    data = Path(path).read_bytes() if text is None else text.encode()
    parser = DockerfileParser(fileobj=io.BytesIO(data), env_replace=False)
    items = parser.structure
    global_args: list[tuple[str, str | None, int]] = []
    stages: list[Stage] = []
    for item in items:
        keyword = item["instruction"].upper()
        line = item["startline"] + 1
        if keyword == "COMMENT":
            continue
        ins = Instruction(keyword, item["value"], line)
        if keyword == "FROM":
            _, rest = split_flags(ins.value)
            words = rest.split()
            if len(words) not in (1, 3) or (len(words) == 3 and words[1].upper() != "AS"):
                raise ValueError(f"{path}:{line}: cannot read FROM {ins.value!r}")
            name = words[2].lower() if len(words) == 3 else str(len(stages))
            stages.append(Stage(index=len(stages), name=name, base=words[0], line=line))
        elif not stages:
            if keyword != "ARG":
                raise ValueError(f"{path}:{line}: {keyword} before the first FROM")
            global_args += [(n, d, line) for n, d in parse_arg(ins.value)]
        else:
            stages[-1].instructions.append(ins)
    return Dockerfile(str(path), global_args, stages, data.decode(), items)


@dataclass
class Reach:
    """What a build of one stage touches, with named contexts in place."""

    built: list[str]  # stages of the file whose instructions it runs, target first
    external: dict[str, str]  # external reference -> where it was met
    read: list[str] = field(default_factory=list)  # every stage BuildKit reads: built + replaced


def reach(
    dockerfile: Dockerfile,
    target: str,
    contexts: Iterable[str],
    build_args: Mapping[str, str],
) -> Reach:
    """The stages and external references a build of stage ``target`` resolves.

    BuildKit's rule, verified here with buildx 0.29: a named build context
    replaces the same-named stage (and names an image reference, e.g. FROM
    pytorch-base). Of a replaced stage BuildKit no longer follows the FROM,
    but it still resolves the stages and images that stage COPYs --from or
    bind-mounts; so does this model. ``scratch`` is nothing to resolve.
    """
    contexts = set(contexts)
    seen: list[str] = []
    built: list[str] = []
    external: dict[str, str] = {}
    todo = [dockerfile.stage(target)]
    while todo:
        stage = todo.pop(0)
        if stage.name in seen:
            continue
        seen.append(stage.name)
        deps: list[tuple[str, str]] = []  # (reference, where)
        if stage.name in contexts:
            external.setdefault(stage.name, f"stage {stage.name}, replaced by the named context")
        else:
            built.append(stage.name)
            deps.append((dockerfile.base_ref(stage, build_args), f"line {stage.line} FROM"))
        deps += [(r.name, f"line {r.line} {r.how}") for r in stage.references()]
        for ref, where in deps:
            if ref == SCRATCH:
                continue
            found = dockerfile.lookup(ref, stage.index)
            if found is not None:
                todo.append(found)
            else:
                external.setdefault(ref, f"{dockerfile.path} {where}, stage {stage.name}")
    return Reach(built, external, seen)


def build_arg_names(
    dockerfile: Dockerfile,
    target: str,
    contexts: Iterable[str],
    build_args: Mapping[str, str],
) -> set[str]:
    """The build args a build of stage ``target`` can read.

    The global ARGs (FROM lines read them) and the ARGs declared by every
    stage the build runs (``reach``). Any other build arg is ignored by
    BuildKit, so it must not be an input of the build either: changing it
    would re-run the build for identical bytes.
    """
    names = {name for name, _, _ in dockerfile.global_args}
    for stage in reach(dockerfile, target, contexts, build_args).built:
        names |= {name for name, _, _ in dockerfile.stage(stage).args()}
    return names


def replaced_base(
    dockerfile: Dockerfile,
    target: str,
    contexts: Iterable[str],
    build_args: Mapping[str, str],
) -> tuple[Stage, str] | None:
    """(stage, name) when ``target``'s FROM chain reaches a stage a named context replaces.

    BuildKit then knows the context's image only as a replaced stage, not as
    the base image, and with `rewrite-timestamp=true` its exporter rewrites
    (decompresses, re-tars, recompresses) every layer of that parent chain
    on every build (bench/README.md, heavy.py). A parent reached by a FROM
    that names no stage of the file keeps its layers as they are.
    """
    contexts = set(contexts)
    stage: Stage | None = dockerfile.stage(target)
    while stage is not None:
        base = dockerfile.lookup(dockerfile.base_ref(stage, build_args), stage.index)
        if base is not None and base.name in contexts:
            return stage, base.name
        stage = base
    return None


# Parser directives: only at the very top of a Dockerfile, before any other line.
_DIRECTIVE = re.compile(r"^#\s*(syntax|escape|check)\s*=", re.IGNORECASE)
# A here-document (`RUN <<EOF`, `COPY <<-"1-conf" /x`): dockerfile-parse reads
# its body as instructions and comments, so a file with `<<` in any instruction
# is left as it is (a shift `$((1<<2))` too: whole is always right).
_HEREDOC = "<<"


def view(
    dockerfile: Dockerfile,
    target: str,
    contexts: Iterable[str],
    build_args: Mapping[str, str],
) -> str:
    """The Dockerfile a build of stage ``target`` needs: what BuildKit acts on, nothing else.

    The stages the build does not read (``reach``) and the comments between
    instructions become empty lines, and trailing empty lines go, so every
    kept line keeps its number (BuildKit's errors point at the real file).
    Two files with the same view build the same image: an edited comment, or
    an edit to a stage this target does not read, changes nothing here. Kept
    as they are: parser directives, comments inside a continued instruction
    (BuildKit drops those itself; an empty line there would be another
    instruction's end), and the whole file when it has what this model does not
    follow: a here-document, an ``escape`` directive, ONBUILD, a stage named by
    its index, or a ``--from`` that is a variable or names a later stage.
    Lines are split at ``\n`` only, as BuildKit does (``parse`` reads the
    file's bytes; text given to it instead should be read with ``newline=""``).
    """
    text, structure = dockerfile.text, dockerfile.items
    lines = text.split("\n")
    if any(
        item["instruction"].upper() == "ONBUILD"
        or (item["instruction"].upper() != "COMMENT" and _HEREDOC in item["value"])
        for item in structure
    ):
        return text
    for stage in dockerfile.stages:
        later = {s.name for s in dockerfile.stages[stage.index + 1 :]}
        if any("$" in r.name or r.name.lower() in later for r in stage.references()):
            return text
    directives = 0
    for line in lines:
        if not _DIRECTIVE.match(line):
            break
        if line.lstrip("# \t").lower().startswith("escape"):
            return text
        directives += 1
    numbered = [s for s in dockerfile.stages if s.name.isdigit()]
    if any(r.name.isdigit() for s in dockerfile.stages for r in s.references()) or any(
        dockerfile.base_ref(s, build_args).isdigit() for s in dockerfile.stages
    ):
        return text
    name = target or dockerfile.stages[-1].name
    read = set(reach(dockerfile, name, contexts, build_args).read)
    if numbered and any(s.name in read for s in numbered):
        return text  # an unnamed stage's name is its index, which a blanked stage would shift
    blank: set[int] = set()  # 0-based line numbers
    inside: set[int] = set()
    for item in structure:
        if item["instruction"].upper() != "COMMENT":
            inside.update(range(item["startline"], item["endline"] + 1))
    for item in structure:
        line = item["startline"]
        if item["instruction"].upper() == "COMMENT" and line >= directives and line not in inside:
            blank.add(line)
    starts = [s.line - 1 for s in dockerfile.stages] + [len(lines)]
    for stage, start, end in zip(dockerfile.stages, starts, starts[1:], strict=False):
        if stage.name not in read:
            blank.update(range(start, end))
    out = ["" if i in blank else line for i, line in enumerate(lines)]
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out) + "\n"
