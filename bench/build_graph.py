"""Build-graph benchmarks: analysis time, null build, incremental image rebuilds.

Measures, in one run and in a throwaway output base (so no other Bazel
server or cache is touched, and the numbers start from nothing):

1. analysis of PATTERN for all catalogue archs
   (`bazel build --nobuild PATTERN --define arch=<all nine>`):
   - first: a fresh output base (server start, external repositories, loading,
     analysis);
   - cold: after `bazel shutdown` (a new server: no analysis cache; the
     external repositories are already on disk);
   - warm: the same command again (Skyframe's analysis cache);
   - re-analysis: one `--define` changed (a version bump), loading cached;
2. the fixture family build `bazel build //tests/e2e:all --define arch=gfx950`
   once, then again as a null build (nothing changed);
3. incremental: append a line to tests/e2e/docker/Dockerfile.cupy (a
   comment, then a LABEL), rebuild, count the ImageBuild actions that really
   ran (execution log) and name their targets, next to the Dockerfile's
   dependents in that build (cquery rdeps); restore the file (always) and
   rebuild again.

It prints numbers and ratios, each step also to the results file as it is
measured (bench/results.py), and last the line `build graph: ...`; it
asserts nothing (exit 0 unless a Bazel command fails). Needs the Docker
engine for step 2 and 3 (`eval "$(python3 -m tools.engine env)"`, from the
repository root). stdlib only.

    python3 bench/build_graph.py [--pattern //images:family] [--keep]
    python3 bench/build_graph.py --quick   # the fixture family, the LABEL touch only
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT_DIR = str(Path(__file__).resolve().parents[1])
if ROOT_DIR not in sys.path:  # run as a script: `tools` is a package at the root
    sys.path.insert(0, ROOT_DIR)

from bench import results  # noqa: E402
from tools import places  # noqa: E402
from tools.process.scratch_bazel import ScratchBazel, read_exec_log, rmtree  # noqa: E402

REPO = places.workspace()

CATALOG = REPO / "images" / "catalog.toml"
REAL_FAMILY = "//images:family"
FIXTURE_FAMILY = "//tests/e2e:family"
FIXTURE_BUILD = "//tests/e2e:all"
FIXTURE_ARCH = "gfx950"
TOUCHED = REPO / "tests" / "e2e" / "docker" / "Dockerfile.cupy"
TOUCHED_LABEL = "//tests/e2e/docker:Dockerfile.cupy"
IMAGE_MNEMONIC = "ImageBuild"
# Reproducible numbers: no disk or remote cache from a user.bazelrc.
NO_CACHE = ["--disk_cache=", "--remote_cache="]


@dataclass
class Result:
    """One timed Bazel command."""

    wall: float
    rc: int
    stdout: str
    stderr: str
    phases: dict[str, float] = field(default_factory=dict)

    @property
    def analyzed(self) -> str:
        m = re.search(r"Analyzed (?:\d+ targets?|target \S+) \((.*?)\)", self.stderr)
        return m.group(1) if m else "?"

    @property
    def processes(self) -> str:
        m = re.search(r"INFO: (\d+ process(?:es)?[^\n]*)", self.stderr)
        return m.group(1).rstrip(".") if m else "?"


class Bazel(ScratchBazel):
    """The bench's server: each call a `Result`, with phases if `profile`."""

    def __init__(self, output_base: Path, workdir: Path) -> None:
        super().__init__(output_base)
        self.workdir = workdir

    def __call__(self, *args: str, profile: bool = False, check: bool = True) -> Result:
        profile_path = self.workdir / f"profile-{self.calls + 1}.json"
        extra = [f"--profile={profile_path}"] if profile else []
        run = self.run(*args, *extra)
        result = Result(run.wall, run.rc, run.stdout, run.stderr)
        if profile and profile_path.exists():
            result.phases = phases(profile_path)
        if check and run.rc != 0:
            sys.stderr.write(run.stderr[-4000:])
            raise RuntimeError(f"{' '.join(self.command(*args, *extra))} exited {run.rc}")
        return result


def phases(profile: Path) -> dict[str, float]:
    """Seconds per Bazel build phase, from the JSON trace profile's phase markers."""
    events = json.loads(profile.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    markers = sorted(
        (e["ts"], e["name"], e.get("dur", 0))
        for e in events
        if e.get("cat") == "build phase marker"
    )
    out: dict[str, float] = {}
    for i, (ts, name, dur) in enumerate(markers):
        if dur:  # "Launch Blaze": a complete event before ts 0
            out[name] = dur / 1e6
        elif i + 1 < len(markers):
            out[name] = (markers[i + 1][0] - ts) / 1e6
    return out


def image_builds(spawns: list[dict]) -> list[str]:
    return sorted(s.get("targetLabel", "?") for s in spawns if s.get("mnemonic") == IMAGE_MNEMONIC)


def short(labels: list[str]) -> str:
    return ", ".join(label.rsplit(":", 1)[-1] for label in labels) or "none"


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "n/a"


# ---- the benchmarks ----------------------------------------------------------


def analysis(bazel: Bazel, pattern: str | None, out: results.Results) -> str:
    archs = tomllib.loads(CATALOG.read_text())["archs"]["known"]
    # Loading the pattern's package starts the server on the fresh output base.
    note = ""
    if pattern is None:
        start = bazel("query", REAL_FAMILY, check=False)
        pattern = REAL_FAMILY if start.rc == 0 else FIXTURE_FAMILY
        note = "" if start.rc == 0 else f" ({REAL_FAMILY} does not exist yet)"
        if start.rc != 0:
            start = bazel("query", pattern)
    else:
        start = bazel("query", pattern)
    print(f"pattern: {pattern}{note}")
    print(f"archs:   {','.join(archs)} ({len(archs)})")
    cmd = ["build", "--nobuild", pattern, f"--define=arch={','.join(archs)}", *NO_CACHE]

    def line(name: str, r: Result) -> None:
        p = r.phases
        print(
            f"  {name:<11} wall {r.wall:6.2f}s | server start {p.get('Launch Blaze', 0):5.2f}s,"
            f" target patterns {p.get('Evaluate target patterns', 0):5.2f}s,"
            f" load+analyze {p.get('Load and analyze dependencies', 0):6.2f}s | {r.analyzed}"
        )
        out.record(f"analysis {name}", pattern=pattern, wall_s=r.wall, phases_s=p)

    print("analysis (`bazel build --nobuild`):")
    print(
        f"  {'new server':<11} wall {start.wall:6.2f}s | fresh output base, `bazel query {pattern}`"
    )
    first = bazel(*cmd, profile=True)
    line("first", first)
    bazel.shutdown()
    cold = bazel(*cmd, profile=True)
    line("cold", cold)
    warm = bazel(*cmd, profile=True)
    line("warm", warm)
    bump = bazel(*cmd, "--define=PYTORCH_VERSION=2.16.0", profile=True)
    line("re-analysis", bump)
    key = "Load and analyze dependencies"
    print(
        f"  ratios: cold/warm wall {ratio(cold.wall, warm.wall)},"
        f" cold/warm load+analyze {ratio(cold.phases.get(key, 0), warm.phases.get(key, 0))},"
        f" first/cold wall {ratio(first.wall, cold.wall)},"
        f" re-analysis/cold load+analyze"
        f" {ratio(bump.phases.get(key, 0), cold.phases.get(key, 0))}"
    )
    return f"analysis cold/warm wall {ratio(cold.wall, warm.wall)}"


def builds(bazel: Bazel, workdir: Path, touches, out: results.Results) -> str:
    cmd = ["build", FIXTURE_BUILD, f"--define=arch={FIXTURE_ARCH}", *NO_CACHE]
    print(f"fixture family (`bazel build {FIXTURE_BUILD} --define arch={FIXTURE_ARCH}`):")

    def build(name: str) -> tuple[Result, list[str], int]:
        log = workdir / f"exec-{name}.json"
        r = bazel(*cmd, f"--execution_log_json_file={log}")
        spawns = read_exec_log(log)
        out.record(f"build {name}", wall_s=r.wall, spawns=len(spawns), images=image_builds(spawns))
        return r, image_builds(spawns), len(spawns)

    full, full_images, full_spawns = build("full")
    print(
        f"  full build  wall {full.wall:6.2f}s | {full_spawns} spawns, {len(full_images)}"
        f" ImageBuild (fresh output base; BuildKit's own cache as it is) | {full.processes}"
    )
    null, null_images, null_spawns = build("null")
    print(
        f"  null build  wall {null.wall:6.2f}s | {null_spawns} spawns,"
        f" {len(null_images)} ImageBuild | {null.processes}"
    )

    # The images of this build that depend on the Dockerfile: the most a touch
    # may rebuild. (cquery: a plain query would load the coverage tools of
    # the tests, which cannot be fetched offline.)
    rdeps = bazel(
        "cquery",
        f"kind(rocm_image_rule, rdeps({FIXTURE_BUILD}, {TOUCHED_LABEL}))",
        f"--define=arch={FIXTURE_ARCH}",
        *NO_CACHE,
    ).stdout.splitlines()
    dependents = sorted({line.split()[0] for line in rdeps if line.strip()} & set(full_images))

    rel = TOUCHED.relative_to(REPO)
    rebuilt = {}
    for what, line in touches:
        touched, images, spawns = touch_and_build(build, what, line)
        restored, restored_images, _ = build(f"{what}-restored")
        rebuilt[what] = images
        print(
            f"  touch {rel}: append {line.decode().strip()!r} ({what}):\n"
            f"    wall {touched.wall:6.2f}s | {spawns} spawns; ImageBuild ran"
            f" {len(images)} of {len(full_images)}: {short(images)}\n"
            f"    restored: wall {restored.wall:6.2f}s | ImageBuild ran"
            f" {len(restored_images)}: {short(restored_images)}"
        )
    among = "yes" if all(set(i) <= set(dependents) for i in rebuilt.values()) else "no"
    print(
        f"  the Dockerfile's dependents in this build (cquery rdeps): {len(dependents)}:"
        f" {short(dependents)}; every touch ran only among them: {among}"
    )
    touched = ", ".join(f"{what} {len(i)}/{len(full_images)}" for what, i in rebuilt.items())
    print(f"  ratios: full/null wall {ratio(full.wall, null.wall)}; images rebuilt {touched}")
    return (
        f"null build {null.wall:.2f}s ({len(null_images)} ImageBuild), images rebuilt"
        f" {touched}, only among the dependents: {among}"
    )


# A comment leaves the image byte-identical (same layers, same config), so
# Bazel prunes the dependents; a LABEL changes the manifest, so they rebuild.
TOUCHES = [
    ("comment", b"# bench/build_graph.py was here (restored right after)\n"),
    ("label", b"LABEL org.rocm-pytorch.bench=touched\n"),
]


def touch_and_build(build, what: str, line: bytes):
    """Append `line` to the Dockerfile, build, and always put the file back."""
    original = TOUCHED.read_bytes()
    touched = original + (b"" if original.endswith(b"\n") else b"\n") + line
    try:
        TOUCHED.write_bytes(touched)
        return build(what)
    finally:
        current = TOUCHED.read_bytes()
        if current == touched:
            TOUCHED.write_bytes(original)
        elif line in current:  # edited meanwhile by someone else: drop only our line
            TOUCHED.write_bytes(current.replace(line, b"", 1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pattern",
        help=f"what to analyse (default: {REAL_FAMILY} if it exists, else {FIXTURE_FAMILY})",
    )
    parser.add_argument(
        "--skip-builds", action="store_true", help="analysis only (no Docker needed)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the output base and logs")
    results.add_arguments(parser)
    args = parser.parse_args(argv)
    touches = TOUCHES
    if args.quick:  # the fixture family (not the real one), the touch that rebuilds
        args.pattern = args.pattern or FIXTURE_FAMILY
        touches = TOUCHES[1:]

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind: restore, clean up
    if not args.skip_builds and not os.environ.get("DOCKER_HOST"):
        print(
            'DOCKER_HOST is not set: run eval "$(python3 -m tools.engine env)" (from the'
            " repository root) first, or pass --skip-builds",
            file=sys.stderr,
        )
        return 2
    out = results.Results("build_graph", args)
    start = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="build-graph-bench-"))
    bazel = Bazel(workdir / "output-base", workdir)
    try:
        summary = analysis(bazel, args.pattern, out)
        if not args.skip_builds:
            summary += "; " + builds(bazel, workdir, touches, out)
    except RuntimeError as e:
        print(f"bench stopped: {e}", file=sys.stderr)
        return 1
    finally:
        bazel.shutdown()
        if args.keep:
            print(f"kept {workdir}")
        else:
            rmtree(workdir)
        print(f"bench wall time {time.monotonic() - start:.1f}s")
    out.summary(f"build graph: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
