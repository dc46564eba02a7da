"""ImageBuild: build one image with `docker buildx build` into the staging registry.

Called by the image rule's ImageBuild action (see images/private/image.bzl),
never by hand. It assembles the build context from the action's declared
inputs as real files (BuildKit does not follow the symlinks Bazel's execroot
is made of), passes each parent image as a named build context pointing at
its manifest in staging (`docker-image://<staging>/<repo>@sha256:…`), pushes
the result to staging under a tag derived from the content key, and writes a
small descriptor (tools/staging/descriptor.py): no blob bytes leave BuildKit
and the staging registry.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from tools import client_env, engine, envvars, mirrors, places
from tools.dockerfile import model
from tools.imagebuild import builders, compile_stats, executed, proxies, workdir
from tools.imagebuild import upstream as upstream_mod
from tools.imagebuild.outputs import output, staging_output
from tools.oci.credhelpers import helper_path
from tools.oci.errors import RegistryError
from tools.oci.reference import DOCKER_HUB, BadReference, Reference, split_host
from tools.process import registryd
from tools.staging import Staging, StagingError, embedded, lease, reads, resolve
from tools.staging import descriptor as desc
from tools.staging.clients import Lost, check_staged

LOG_TAIL = 40


def builders_cache() -> Path:
    """Where builders.resolve keeps the local engine's identity (places.cache_dir)."""
    try:
        return places.cache_dir() / "builders"
    except ValueError as e:
        raise BuildError(str(e)) from None


class BuildError(Exception):
    """A user-facing build failure; the message names target, arch and Dockerfile."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="imagebuild", description=__doc__.splitlines()[0])
    p.add_argument(
        "--spec",
        dest="spec_file",
        metavar="SPEC",
        type=Path,
        required=True,
        help="build spec JSON from `tagconf spec`",
    )
    client_env.add_argument(p)
    p.add_argument(
        "--dockerfile",
        type=Path,
        required=True,
        help="repository-relative path; a context file, unless the spec holds the text"
        " BuildKit gets (`dockerfile_text`, from `tagconf spec --dockerfile`)",
    )
    p.add_argument("--network", choices=["host", "none"], default="host")
    p.add_argument("--output", type=Path, required=True, help="descriptor JSON to write")
    p.add_argument(
        "--src", dest="sources", metavar="SRC", action="append", default=[], type=Path,
        help="context file",
    )  # fmt: skip
    p.add_argument(
        "--host-file", dest="host_files", metavar="DEST=ABS", action="append", default=[],
        help="host file",
    )  # fmt: skip
    p.add_argument(
        "--parent", dest="parents", metavar="NAME=DESCRIPTOR", action="append", default=[],
        help="parent image",
    )  # fmt: skip
    p.add_argument("--upstream", metavar="DESCRIPTOR", help="stand-in upstream image")
    p.add_argument(
        "--staging",
        default="embedded",
        metavar="HOST[:PORT]/PREFIX",
        help="staging registry (default: the project's embedded loopback registry)",
    )
    p.add_argument(
        "--builder",
        default=builders.LOCAL,
        metavar="NAME",
        help="buildx builder or docker context that builds the image (--builders=);"
        " default: the local engine. Its identity and version are part of the content key",
    )
    p.add_argument(
        "--log",
        default="",
        metavar="PATH",
        help="write BuildKit's log here (`~` is the user's home); default: a temporary file",
    )
    p.add_argument("--docker", default=os.environ.get("DOCKER", "docker"), help="docker CLI")
    p.add_argument(
        "--reproducible",
        action="store_true",
        help="rewrite every layer's timestamps to $SOURCE_DATE_EPOCH (`--reproducible`,"
        " --config=release): a clean rebuild gives the same digest, at about 27 s per GB of new"
        " layer; without it, BuildKit's plain output. The mode is part of the content key",
    )
    p.add_argument(
        "--no-reuse",
        action="store_true",
        help="build with BuildKit even if staging holds an image of this content key",
    )
    return p


@dataclass(frozen=True)
class BuildRequest:
    """One ImageBuild action's command line (``build_parser``), read once at the entry
    (``from_argv``) and handed down the build in place of argparse's namespace."""

    spec_file: Path
    dockerfile: Path
    output: Path
    network: str = "host"
    sources: tuple[Path, ...] = ()
    host_files: tuple[str, ...] = ()  # DEST=ABS
    parents: tuple[str, ...] = ()  # NAME=DESCRIPTOR
    upstream: str | None = None  # a stand-in upstream image's descriptor
    staging: str = "embedded"
    builder: str = builders.LOCAL
    log: str = ""
    docker: str = "docker"
    reproducible: bool = False
    no_reuse: bool = False
    client_settings: str | None = None

    @classmethod
    def from_argv(cls, argv: list[str] | None = None) -> BuildRequest:
        """The request of a command line; each option's dest is a field's name."""
        given = vars(build_parser().parse_args(argv)).items()
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in given})


@dataclass(frozen=True)
class Inputs:
    """The images a build starts from, loaded: its parents by name, and the stand-in
    upstream image (``--upstream``) if one is given."""

    parents: dict[str, desc.Descriptor]
    upstream: desc.Descriptor | None = None

    def all(self) -> list[desc.Descriptor]:
        return [*self.parents.values(), *([self.upstream] if self.upstream else [])]

    def parent_digests(self) -> dict[str, str]:
        return {n: d.digest for n, d in self.parents.items()}


@dataclass(frozen=True)
class Scratch:
    """A BuildKit run's files in its private build directory: the context, the
    metadata file BuildKit writes, the rendered mirror secrets, the empty contexts of
    absent parents (``absent_contexts``)."""

    context: Path
    metadata: Path
    secrets: Mapping[str, Path] | None = None
    absent: Mapping[str, Path] | None = None


@dataclass(frozen=True)
class Plan:
    """What ``build`` resolved for a BuildKit run: the context files, the inputs, the
    staging registry and the image's ref there, the builder, the mirror settings and
    what they resolve to, why staging's copy could not be used, and the log to keep
    (``places.log_file(request.log)``; None: a temporary one)."""

    files: list[Path]
    inputs: Inputs
    staging: Staging
    image_ref: str
    builder: builders.Builder
    mirrors: tuple[mirrors.Settings, mirrors.Resolved]
    why: str
    log: Path | None = None


def context_files(request: BuildRequest, spec: dict) -> list[Path]:
    """The action's files that go into the build context (and its content key): the
    Dockerfile too, unless the spec holds its text (then the spec's bytes key it)."""
    return [*([] if "dockerfile_text" in spec else [request.dockerfile]), *request.sources]


def assemble_context(
    ctx: Path,
    files: list[Path],
    host_files: tuple[str, ...],
    dockerfile: tuple[Path, str] | None = None,
) -> None:
    """Copy each input to its repository-relative path under ``ctx`` as a real file;
    ``dockerfile``: (path, text) written there."""
    if dockerfile:
        dest = ctx / dockerfile[0]
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(dockerfile[1], encoding="utf-8")
    for src in files:
        if src.is_absolute() or src.parts[0] == "bazel-out":
            raise BuildError(f"{src}: build-context files must be source files of this repository")
        dest = ctx / src
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, dest)  # follows the execroot symlink
    for item in host_files:
        dest_name, _, host_path = item.partition("=")
        if not Path(host_path).is_file():
            raise BuildError(f"--host-file {item}: {host_path} does not exist on this host")
        dest = ctx / dest_name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(host_path, dest)


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def context_digests(files: list[Path], host_files: tuple[str, ...]) -> dict[str, str]:
    """The sha256 of each context file, by its path, and of each host file (`DEST=PATH`),
    by its place in the context (DEST): read once, for the content key and the record."""
    sums = {str(path): file_digest(path) for path in files}
    for item in host_files:
        dest, _, host_path = item.partition("=")
        sums[dest] = file_digest(Path(host_path))
    return sums


def content_key(
    request: BuildRequest,
    spec_bytes: bytes,
    files: list[Path],
    inputs: Inputs,
    builder: str,
    digests: dict[str, str] | None = None,
) -> str:
    """sha256 over everything that shapes the image's bytes (and nothing else): how
    BuildKit writes it (``output(request.reproducible)``: the mode), the spec, network,
    builder, files (and the request's host files), parents, upstream. A staged image
    under this key's tag is reused as is (``reads.hit``), so a release build never takes
    a non-reproducible image, nor the other way round.

    ``builder`` is the resolved builder's identity and versions (``Builder.key()``):
    an upgraded or re-pointed builder gives a new key, never the old descriptor's.
    ``digests``: ``context_digests(files, host_files)``, when the caller has them.
    """
    host_files = request.host_files
    sums = digests if digests is not None else context_digests(files, host_files)
    h = hashlib.sha256()
    h.update(b"output\0" + output(request.reproducible).encode() + b"\0")  # how it is written
    h.update(b"spec\0" + spec_bytes + b"\0network\0" + request.network.encode())
    h.update(b"\0builder\0" + builder.encode())
    for path in sorted(files):
        h.update(f"\0file\0{path}\0{sums[str(path)]}".encode())
    for item in sorted(host_files):
        dest = item.partition("=")[0]
        h.update(f"\0host\0{dest}\0{sums[dest]}".encode())
    for name, digest in sorted(inputs.parent_digests().items()):
        h.update(f"\0parent\0{name}\0{digest}".encode())
    if inputs.upstream:
        h.update(f"\0upstream\0{inputs.upstream.digest}".encode())
    return "sha256:" + h.hexdigest()


def load_parent(item: str, what: str) -> tuple[str, desc.Descriptor]:
    name, sep, path = item.partition("=") if what == "parent" else ("", "=", item)
    if not sep:
        raise BuildError(f"--{what} {item}: want NAME=DESCRIPTOR")
    try:
        return name, desc.load(Path(path))
    except desc.DescriptorError as e:
        raise BuildError(str(e)) from None


def check_parents(spec: dict, given: list[str]) -> None:
    """The catalogue's parents (in the spec) must be the ones Bazel passed.

    They differ when catalog.toml changed and images/targets.bzl (which wires
    the Bazel graph) was not regenerated: building would silently use the
    old parents.
    """
    if "parents" not in spec:  # a stand-in image: no catalogue entry
        return
    want = sorted(spec["parents"])
    if want != given:
        raise BuildError(
            f"{spec.get('target')}: the catalogue says parents {want}, but the Bazel graph"
            f" gives {given}; images/targets.bzl is stale: run"
            " `bazel run //images:update_targets` and build again"
        )


def check_inputs(inputs: list[desc.Descriptor]) -> None:
    """Staging still holds each parent (and the upstream) whole: its manifest and blobs."""
    for d in inputs:
        try:
            check_staged(d)
        except Lost as e:
            raise BuildError(str(e)) from None
        except RegistryError as e:
            raise BuildError(f"staging {d.staging_registry} cannot be reached: {e}") from None


def absent_contexts(spec: dict, root: Path) -> dict[str, Path]:
    """An empty context for each optional parent not built for this arch (``absent_parents``).

    Each holds only ``/NOT-BUILT``, the catalogue's sentence why, so the
    Dockerfile can tell "not built here" from a broken parent.
    """
    out = {}
    for name, reason in sorted(spec.get("absent_parents", {}).items()):
        path = root / name
        path.mkdir(parents=True)
        (path / "NOT-BUILT").write_text(reason + "\n", encoding="utf-8")
        out[name] = path
    return out


def buildx_command(
    request: BuildRequest,
    spec: dict,
    scratch: Scratch,
    inputs: Inputs,
    image_ref: str,
    builder: builders.Builder,
) -> list[str]:
    docker, ctx = request.docker, scratch.context
    plugin = None
    if docker == "docker" and not builder.docker_args():
        plugin = builders.buildx_binary(builder.env)
    cmd = [plugin, "build"] if plugin else [docker, *builder.docker_args(), "buildx", "build"]
    cmd += [*builder.build_args(), "--progress=plain"]
    cmd += ["--file", str(ctx / request.dockerfile), "--network", request.network]
    if spec.get("stage"):
        cmd += ["--target", spec["stage"]]
    for key, value in sorted(spec.get("build_args", {}).items()):
        cmd += ["--build-arg", f"{key}={value}"]
    # the client's proxies: names only, the values in the CLI's environment (run_buildx)
    cmd += proxies.build_args(os.environ)[0]
    for key, value in sorted(spec.get("labels", {}).items()):
        cmd += ["--label", f"{key}={value}"]
    # One manifest per image: no provenance/SBOM attestation index.
    cmd += ["--provenance=false", "--sbom=false"]
    for name, d in inputs.parents.items():
        cmd += ["--build-context", f"{name}=docker-image://{d.staging_ref}"]
    for name, path in (scratch.absent or {}).items():
        cmd += ["--build-context", f"{name}={path}"]
    if inputs.upstream:
        ref = inputs.upstream.staging_ref
        cmd += ["--build-context", f"{spec['upstream']}=docker-image://{ref}"]
    else:  # the upstream's tag, pinned to the digest images/upstream.lock holds
        cmd += upstream_mod.pin(spec)
    if spec.get("cache_ref"):
        cache = spec["cache_ref"]
        cmd += ["--cache-from", f"type=registry,ref={cache}"]
        cmd += ["--cache-to", f"type=registry,ref={cache},mode=max,ignore-error=true"]
    # The build host's mirror settings (tools/mirrors): secrets, so they reach
    # neither the image nor the cache keys, and this action's key does not
    # hold them either (read when it runs): a new mirror rebuilds nothing.
    cmd += mirrors.buildx_args(dict(scratch.secrets or {}))
    cmd += ["--metadata-file", str(scratch.metadata)]
    cmd += ["--output", staging_output(image_ref, request.reproducible), str(ctx)]
    return cmd


def staging_stopped(staging: Staging) -> str | None:
    """One line when ``staging`` does not answer now (after a failed build: it stopped
    during it, BuildKit's tail then ends in `connection refused`), else None."""
    if staging.embedded:
        port = int(staging.host.rsplit(":", 1)[1])
        if registryd.answers(port):
            return None
        return (
            f"the embedded staging registry ({staging.host}, state dir {embedded.state_dir()})"
            " stopped during this build, so BuildKit could not reach it: build again, which"
            " starts it again (`bazel run //tools/staging -- status` shows it; its log:"
            f" {embedded.paths().log})"
        )
    name, port = split_host(staging.host)
    loopback = name in ("localhost", "[::1]") or name.startswith("127.")
    try:  # a TCP connection: TLS and auth are BuildKit's (the build said what it got)
        address = (name.strip("[]"), int(port or (80 if loopback else 443)))
        socket.create_connection(address, timeout=5).close()
        return None
    except OSError as e:
        return (
            f"the staging registry {staging.host} does not answer ({e.strerror or e}), so"
            " BuildKit could not reach it: start it again (or fix --staging=),"
            " then build again"
        )


def hints(
    tail: list[str], spec: dict, builder: str = "", stopped: Staging | None = None
) -> list[str]:
    """What to do about the failures we recognise in BuildKit's log; ``stopped``: the
    staging registry that no longer answers (its refused connections are not the
    builder's)."""
    text = "\n".join(
        line for line in tail if not (stopped and stopped.host in line and "refused" in line)
    )
    out = []
    lost = (
        "Cannot connect to the Docker daemon",
        "docker.sock: connect",
        "connection refused",
        "connection reset",
        "error reading from server: EOF",
    )
    if builder and any(m in text for m in lost):
        out.append(
            f"builder {builder} (for arch {spec.get('arch') or 'noarch'}) stopped answering"
            " during the build: check it, then build again (what finished is kept)"
        )
    elif "Cannot connect to the Docker daemon" in text or "docker.sock: connect" in text:
        out.append(
            f"no Docker engine answers at DOCKER_HOST={os.environ.get('DOCKER_HOST', '(unset)')}:"
            " start one, or point DOCKER_HOST at a running engine before `bazel build`"
            " (the image builds take DOCKER_HOST and DOCKER_CONFIG from that shell)"
        )
    if "failed to push" in text and "blob upload invalid" in text:
        out.append(
            "the staging registry refused a blob upload (`blob upload invalid`): a full disk"
            " does that; check its free space and retention (`bazel run //tools/staging -- gc"
            " --staging HOST/PREFIX --dry-run` lists what could go)"
        )
    upstream = spec.get("upstream") or ""
    try:  # as BuildKit names it: docker.io/library/ubuntu for ubuntu
        name = Reference.parse(upstream, default_registry=DOCKER_HUB).context
    except BadReference:
        name = ""
    if "failed to resolve source metadata" in text and name and name in text:
        out.append(
            f"the upstream image {upstream} cannot be pulled from here: give a mirror that holds"
            " it with --define UPSTREAM_IMAGE=<registry>/<path> (its tag is ROCM_VERSION), and"
            ' see README.md "The upstream image" for air-gapped hosts'
        )
    return out


def failure(
    head: str, tail: list[str], recognised: list[str], stopped: str | None, where: str
) -> str:
    """A failed build's message. A cause we recognise (``recognised``, ``stopped``) ends it,
    after BuildKit's own error line alone: the fix is the last line, not under a screen
    of log. Otherwise BuildKit's last lines, which the user must read."""
    if not (recognised or stopped):
        return f"{head}; last {len(tail)} lines of BuildKit's log{where}:\n" + "\n".join(tail)
    error = [line for line in tail if line.startswith("ERROR:")][-1:] or tail[-1:]
    ends = [*recognised, *([f"{stopped}{where}"] if stopped else [])]
    return f"{head}{where}; BuildKit says:\n" + "\n".join([*error, *ends])


def describe(spec: dict, request: BuildRequest) -> str:
    on = f", builder {request.builder}" if request.builder else ""
    return (
        f"target {spec.get('target')}, arch {spec.get('arch') or 'noarch'},"
        f" {request.dockerfile} stage {spec.get('stage') or '(last)'}{on}"
    )


def resolve_builder(request: BuildRequest, spec: dict) -> builders.Builder:
    """The builder of this image, checked to answer: the local engine (found or started
    by tools/engine) or the named buildx builder / docker context."""
    arch = spec.get("arch") or "noarch"
    try:  # $DOCKER_HOST, the host's engine, else the private one (started if needed)
        env = builders.docker_env(request.builder)
    except engine.EngineError as e:
        raise BuildError(f"no Docker engine for {describe(spec, request)}: {e}") from None
    try:
        return builders.resolve(request.builder, arch, request.docker, env, cache=builders_cache())
    except builders.BuilderError as e:
        raise BuildError(str(e)) from None


def fetch_staged(staging: Staging, name: str, digest: str) -> tuple[bytes, str, dict]:
    """The manifest (exact bytes), its media type and the config, from staging."""
    try:
        return reads.fetch(staging, name, digest)
    except RegistryError as e:
        raise BuildError(str(e)) from None


def die_with_parent() -> None:
    """In the child, before exec: SIGKILL when this process ends, however it ends.

    Bazel's process-wrapper kills what an action leaves behind; a persistent
    worker (tools/process/worker.py) runs without one, and Bazel kills only the worker on
    an interrupted build. Without this its `docker buildx build` would go on
    building and pushing, unleased.
    """
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
    except (OSError, AttributeError):
        pass


def process_age() -> float:
    """Seconds since this process started (interpreter start and imports included), or 0."""
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return max(0.0, uptime - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


class Phases:
    """Wall time of imagebuild's phases, written at the end of BuildKit's log."""

    def __init__(self, started: float | None = None) -> None:
        """``started``: seconds before this (default: the process's age)."""
        self.start = time.monotonic()
        self.started = process_age() if started is None else started
        self.last = self.start
        self.parts: list[tuple[str, float]] = []

    def done(self, name: str) -> None:
        now = time.monotonic()
        self.parts.append((name, now - self.last))
        self.last = now

    @property
    def total(self) -> float:
        return self.last - self.start + self.started

    def line(self) -> str:
        parts = ", ".join(f"{name} {secs:.2f}s" for name, secs in self.parts)
        return f"# imagebuild: start {self.started:.2f}s, {parts}; total {self.total:.2f}s\n"


def record_path(log: Path) -> Path:
    """The build record next to an image's log: `<name>.log` -> `<name>.build-record.json`."""
    return log.with_name(log.name.removesuffix(".log") + ".build-record.json")


def log_compile_stats(log: Path) -> compile_stats.Stats | None:
    """The compiler cache's hits and misses in the image's log (its compiling steps'
    `compiler cache:` lines, tools/imagebuild/compile_stats.py), or None."""
    try:
        return compile_stats.summed(log.read_text(errors="replace"))
    except OSError:
        return None


def previous_record(log: Path | None) -> dict | None:
    """The inputs the target's previous build kept in its record (``executed.inputs``,
    ``run_lines``), read before this build's record replaces it; None without a record,
    or with one of before this field set (nothing to compare with)."""
    if log is None:
        return None
    try:
        r = json.loads(record_path(log).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(r, dict) or not isinstance(r.get("parents"), dict):
        return None
    kept = {
        key: {str(k): str(v) for k, v in r[key].items()}
        for key in ("parents", "build_args", "files")
        if isinstance(r.get(key), dict)
    }
    if isinstance(r.get("run_lines"), list):
        kept["run_lines"] = [str(x) for x in r["run_lines"]]
    return kept


def build_inputs(spec: dict, sums: dict[str, str], inputs: Inputs) -> dict:
    """This build's inputs as the record keeps them (``executed.inputs``): each named
    context's digest (the upstream's under its name), the build args, and the sha256 of
    each context file (``context_digests``: a host file under its name in the context)."""
    digests = inputs.parent_digests()
    if inputs.upstream is not None and spec.get("upstream"):
        digests[str(spec["upstream"])] = inputs.upstream.digest
    return executed.inputs(digests, spec.get("build_args", {}), sums)


def explain_runs(
    request: BuildRequest, spec: dict, log: Path, now: Mapping, before: Mapping | None
) -> executed.Report | None:
    """Which RUNs of the build in ``log`` executed and why (tools/imagebuild/executed.py),
    or None when that cannot be told: the image is built, so this never fails it."""
    contexts = {*now.get("parents", {}), *spec.get("absent_parents", {})}  # the upstream too
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return None
    try:
        dockerfile = model.parse(request.dockerfile, spec.get("dockerfile_text"))
    except (OSError, ValueError, UnicodeDecodeError):
        dockerfile = None  # the reasons the log alone gives
    try:
        return executed.explain(
            text, dockerfile, now, before, str(spec.get("target") or ""), contexts
        )
    except Exception as e:  # a bug here must not fail an image BuildKit built
        print(f"imagebuild: which RUNs ran: not told ({type(e).__name__}: {e})", file=sys.stderr)
        return None


def runs_line(report: executed.Report | None, hit: bool) -> str | None:
    """The log's `# imagebuild: ran N of M RUNs: ...` line (without `# imagebuild: `)."""
    if hit:
        return executed.STAGING_HIT
    return report.line() if report is not None else None


def write_record(
    log: Path,
    digest: str,
    key: str,
    hit: bool,
    phases: Phases,
    runs: Mapping | None = None,
) -> None:
    """What this run of the image's build did, next to its log (not an output of the
    action, so no cache key holds its wall time): the digest, whether it was a staging
    hit, the seconds it took, per phase, and the compiler cache's hits and misses
    (`compile_hits`, `compile_misses`: only when a step of the log printed them).
    ``runs``: ``executed.record_fields``, the RUNs that executed (`executed_runs`:
    stage, step, seconds, why; `runs_total`) and the inputs the next build compares
    with (`parents`, `build_args`, `files`, `run_lines`).
    `bazel run //images:report` reads it."""
    record = {
        "digest": digest,
        "content_key": key,
        "staging_hit": hit,
        "seconds": round(phases.total, 3),
        "phases": {name: round(secs, 3) for name, secs in phases.parts},
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **(runs or {}),
    }
    stats = log_compile_stats(log)
    if stats is not None:
        record["compile_hits"] = stats.hits
        record["compile_misses"] = stats.misses
    places.write_atomic(record_path(log), json.dumps(record, indent=2, sort_keys=True) + "\n")


def run(request: BuildRequest, started: float | None = None) -> None:
    phases = Phases(started)
    spec_bytes = request.spec_file.read_bytes()
    spec = json.loads(spec_bytes)
    if shutil.which(request.docker) is None:
        raise BuildError(
            f"docker CLI {request.docker!r} not found on PATH; install Docker with buildx"
        )
    # what a SIGKILLed build left (its context, its rendered mirror secrets) goes first
    workdir.sweep()
    # held until the descriptor is written: `gc` keeps what it names and leaves staging up
    with lease.hold(describe(spec, request)) as claim:
        build(request, spec, spec_bytes, phases, claim)


def load_inputs(request: BuildRequest, spec: dict) -> Inputs:
    """The parents (checked against the catalogue's) and the stand-in upstream, loaded."""
    parents = dict(load_parent(item, "parent") for item in request.parents)
    check_parents(spec, sorted(parents))
    upstream = load_parent(request.upstream, "upstream")[1] if request.upstream else None
    return Inputs(parents, upstream)


def build(
    request: BuildRequest, spec: dict, spec_bytes: bytes, phases: Phases, claim: lease.Lease
) -> None:
    try:
        staging = resolve(None if request.staging == "embedded" else request.staging)
    except StagingError as e:
        raise BuildError(f"staging: {e}") from None
    inputs = load_inputs(request, spec)
    try:  # a release: only from a locked upstream whose tag has not moved
        upstream_mod.check_release(
            spec,
            request.reproducible,
            inputs.upstream is not None,
            lambda ref: upstream_mod.current_digest(
                ref, dict(os.environ, PATH=helper_path()), request.docker
            ),
        )
    except upstream_mod.UpstreamError as e:
        raise BuildError(str(e)) from None
    claim.add(digests=[d.digest for d in inputs.all()])
    if not staging.embedded and any(d.embedded for d in inputs.all()):
        try:
            resolve(None)  # parents in the embedded registry, which may have been stopped
        except StagingError as e:
            raise BuildError(f"staging: {e}") from None
    check_inputs(inputs.all())
    phases.done("staging checks")
    files = context_files(request, spec)
    builder = resolve_builder(request, spec)
    phases.done("builder")
    digests = context_digests(files, request.host_files)
    key = content_key(request, spec_bytes, files, inputs, builder.key(), digests)
    try:
        mirror_settings = mirrors.load()
        resolved = mirrors.resolve(mirror_settings)
    except mirrors.MirrorError as e:
        raise BuildError(f"mirror settings: {e} (see `python3 -m tools.mirrors check`)") from None
    repository = spec.get("repository") or spec["target"]
    name = staging.name(repository)
    tag = "c-" + key.removeprefix("sha256:")
    claim.add(tags=[f"{name}:{tag}"])
    digest, why = (None, "--no-reuse") if request.no_reuse else reads.hit(staging, name, tag)
    log_path = places.log_file(request.log)
    before = previous_record(log_path)  # before this build's record replaces it
    now = build_inputs(spec, digests, inputs)
    hit = digest
    record = None
    report = None
    if digest:
        phases.done("staging hit")
        note = reads.hit_note(staging, name, tag, digest, "BuildKit")
        print(f"imagebuild: {describe(spec, request)}: {note}", file=sys.stderr, flush=True)
        if log_path:
            log_path.write_text(f"# {describe(spec, request)}\n# {note}\n")
    else:
        image_ref = str(Reference(staging.host, name, tag))
        settings = (mirror_settings, resolved)
        plan = Plan(files, inputs, staging, image_ref, builder, settings, why, log_path)
        digest, log_path, report = run_buildx(
            request,
            spec,
            plan,
            phases,
            lambda log: explain_runs(request, spec, log, now, before),
        )
    if not digest:
        raise BuildError(f"{describe(spec, request)}: buildx wrote no containerimage.digest")
    claim.add(digests=[digest])
    manifest, media_type, config = fetch_staged(staging, name, digest)
    phases.done("read back")
    ran = runs_line(report, bool(hit))
    if ran:
        print(f"imagebuild: {describe(spec, request)}: {ran}", file=sys.stderr, flush=True)
    if request.log:  # the temporary log went with its directory
        with log_path.open("a") as log:
            if ran:
                log.write(f"# imagebuild: {ran}\n")
            log.write(phases.line())
        fields = executed.record_fields(report, now, bool(hit))
        record = (log_path, digest, key, bool(hit), phases, fields)
    desc.Descriptor(
        target=spec["target"],
        arch=spec.get("arch"),
        repository=repository,
        digest=digest,
        media_type=media_type,
        manifest=manifest,
        config=config,
        content_key=key,
        parents=inputs.parent_digests(),
        dockerfile=str(request.dockerfile),
        stage=spec.get("stage") or "",
        builder=builder.identity(),
        reproducible=request.reproducible,
        **staging.placement(name, tag),
    ).write(request.output)
    if record:
        write_record(*record)


def run_buildx(
    request: BuildRequest,
    spec: dict,
    plan: Plan,
    phases: Phases,
    explain: Callable[[Path], executed.Report | None] = lambda log: None,
) -> tuple[str | None, Path | None, executed.Report | None]:
    """Build with BuildKit into staging as ``plan.image_ref``: (its digest, the log if
    kept, ``explain`` of the log: which RUNs executed and why); ``plan.why``: why
    staging's copy could not be used."""
    staging, image_ref = plan.staging, plan.image_ref
    mirror_settings, resolved = plan.mirrors
    # the context and the rendered secrets: this user's alone (0700), removed when the
    # build ends, or by the next build if this one is SIGKILLed (tools/imagebuild/workdir.py)
    with workdir.build_dir() as tmp:
        ctx = Path(tmp) / "context"
        ctx.mkdir()
        text = spec.get("dockerfile_text")
        view = (request.dockerfile, text) if text is not None else None
        assemble_context(ctx, plan.files, request.host_files, view)
        try:
            secrets = mirrors.render(resolved, Path(tmp) / "secrets")
        except mirrors.MirrorError as e:
            raise BuildError(f"mirror settings: {e}") from None
        absent = absent_contexts(spec, Path(tmp) / "absent")
        scratch = Scratch(ctx, Path(tmp) / "metadata.json", secrets, absent)
        cmd = buildx_command(request, spec, scratch, plan.inputs, image_ref, plan.builder)
        log_path = plan.log or Path(tmp) / "buildx.log"
        env = dict(plan.builder.env, SOURCE_DATE_EPOCH="0", **proxies.build_args(os.environ)[1])
        registry_log = embedded.log_offset() if staging.embedded else 0
        phases.done("context")
        with log_path.open("w") as log:
            log.write(f"# {describe(spec, request)}\n# staging: {image_ref} {plan.why}: building\n")
            log.write(f"# {' '.join(cmd)}\n")
            log.write(f"# mirrors ({mirror_settings.source}): {'; '.join(resolved.describe())}\n")
            log.write(f"# {client_env.describe(request.client_settings)}\n")
            log.flush()
            proc = subprocess.run(
                cmd,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                check=False,
                preexec_fn=die_with_parent,
            )
        phases.done("docker buildx build")
        if proc.returncode != 0:
            where = f" (whole log: {log_path.absolute()})" if request.log else ""
            full = embedded.out_of_space(registry_log) if staging.embedded else None
            if full:
                raise BuildError(f"{describe(spec, request)}: {full}{where}")
            tail = log_path.read_text(errors="replace").splitlines()[-LOG_TAIL:]
            # only when BuildKit talked to it (our "# " header lines name it too): a build
            # that failed before its push does not blame a registry it never reached
            talked = any(staging.host in line for line in tail if not line.startswith("# "))
            stopped = staging_stopped(staging) if talked else None
            raise BuildError(
                failure(
                    f"image build failed: {describe(spec, request)} (docker buildx exit"
                    f" {proc.returncode})",
                    tail,
                    hints(tail, spec, request.builder, stopped and staging),
                    stopped,
                    where,
                )
            )
        digest = json.loads(scratch.metadata.read_text()).get("containerimage.digest")
        report = explain(log_path)  # before a temporary log goes with its directory
    return digest, log_path if request.log else None, report


def main(argv: list[str] | None = None, started: float | None = None) -> int:
    request = BuildRequest.from_argv(argv)
    try:
        # this build's engine, staging and mirrors (tools/client_env.py): not in the key
        client_env.apply(request.client_settings)
        run(request, started)
    except (
        BuildError,
        client_env.ClientSettingsError,
        envvars.SettingError,
        workdir.WorkDirError,
    ) as e:
        print(f"imagebuild: error: {e}", file=sys.stderr)
        return 1
    return 0


def work_request(argv: list[str]) -> int:
    """One ImageBuild action of the persistent worker (tools/process/worker.py): no start-up."""
    return main(argv, started=0.0)


if __name__ == "__main__":
    from tools.process import worker

    sys.exit(worker.run(work_request, once=main))
