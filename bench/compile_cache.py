"""The compiler cache on the rehearsal: a base change, machine B, a PyTorch bump.

    eval "$(python3 -m tools.engine env --registry)"   # the engine, $REGISTRY
    python3 bench/compile_cache.py [--arch gfx1100]     # the default group: ~30 min, 60 GB free
    python3 bench/compile_cache.py --quick              # triton-wheel only (what CI runs)

What users pay after a weekly upstream update is compilation (issue #41). On
the rehearsal's real recipes of docker/ and its stand-ins (docs/rehearsal.md),
for one arch, in one run, with the team's compiler cache (`tools/teamcache`:
a loopback nginx, ccache's http remote storage) in this run's mirror settings:

1. **cold**: the stand-in upstream, then the targets (the catalogue's default
   group for the arch; `--quick`: triton-wheel), an empty BuildKit cache, an
   empty team cache; then the engine's build cache is pruned but for its
   cache mounts (`--filter type=regular`: no layer of the cold round serves a
   build on another upstream, and the disk is needed);
2. **base change**: `--upstream=rehearsal-rebuild`, AMD's rebuild 1 of
   the same release (//rehearsal:upstream-rebuild: one layer more, the
   same compilers, a new digest): every image builds again;
3. **PyTorch bump** (not `--quick`): a new commit of the stand-in PyTorch,
   tagged v<version>+1 in the served repository (one C++ source of c10
   changed; the version comes from PYTORCH_VERSION), `--define PYTORCH_VERSION=` it: the RUNs of the
   third-party stages (THIRD_PARTY: MAGMA, AOTriton, UCX/NIXL, CuPy) that
   executed again are counted; 0 is the goal;
4. **machine B**: a second private engine (empty BuildKit cache, empty local
   ccache), its own output base and staging (holding only the upstream, as a
   pull would), the same team cache: PyTorch's compile (`--quick`: Triton's)
   on the base-changed upstream;
5. **bake** (not `--quick`): today's design on the same change, `docker
   buildx bake` of the same group (tagconf bake), cold and then on the
   rebuilt upstream, with its warm engine-local ccache mount (no team
   cache): the family's wall after the base change, ours against bake's.

Per build it reads each image's log: the RUN steps that compile (a script of
COMPILE_SCRIPTS), their seconds, and their `compiler cache:` lines
(tools/imagebuild/compile_stats.py). Numbers go to the results file as they
are measured (bench/results.py); the table to stdout, last the line

    compile cache: base-change R× cold, hit P%; machine B hit P%; third-party re-runs N

R: the compile steps' seconds after the base change over their cold seconds;
the first P: hits over compiles of those steps; machine B's P: of PyTorch's
step (`--quick`: Triton's); N: third-party RUNs run again by the bump
(`--quick` builds no third-party stage: 0 of 0 RUNs).

It sets up what it needs in a state dir of its own (removed at the end): an
output base, the stand-in sources served, mirror settings, a staging
registry, a team cache, engine B. It prunes the build cache of the project's
engine before the cold build and at the end (only when
ROCM_PYTORCH_ENGINE_DIR names it).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `tools` is a package at the root

from bench import rehearsal_bake, results
from bench.rehearsal_bake import Bench, Failed, progress
from tools import places
from tools.imagebuild import compile_stats
from tools.imagebuild import progress as buildkit
from tools.process import daemon
from tools.process.scratch_bazel import ScratchBazel, read_exec_log, rmtree
from tools.staging import descriptor

ROOT = places.workspace()

UPSTREAM = "//rehearsal:upstream"
REBUILD = "//rehearsal:upstream-rebuild"
# The scripts of docker/scripts that compile: a RUN that calls one is a compile step.
COMPILE_SCRIPTS = (
    "build-pytorch.sh",
    "build-magma.sh",
    "build-aotriton.sh",
    "build-triton.sh",
    "build-wheel.sh",
    "build-ucx.sh",
    "build-flash-attn.sh build",
)
# The stages of third-party projects that do not build on torch: a PyTorch bump with
# their pins unchanged should run none of their RUNs (issue #41 §5).
THIRD_PARTY = ("magma-build", "aotriton-build", "nixl-build", "cupy-build")
QUICK = ["triton-wheel"]
DISK_GB = {False: 60, True: 20}
_VERTEX_OUTPUT = re.compile(r"^#(\d+) [0-9.]+ ")


@dataclass
class Step:
    """A RUN step of an image build's log."""

    stage: str
    text: str
    ran: bool = False
    seconds: float = 0.0
    cache: list[compile_stats.Line] = field(default_factory=list)

    @property
    def compiles(self) -> bool:
        return any(s in self.text for s in COMPILE_SCRIPTS)


def log_steps(text: str) -> list[Step]:
    """The RUN steps of a BuildKit plain-progress log (tools/imagebuild/progress.py), with
    their seconds and the compiler cache lines of their output."""
    found = {
        s.vertex: Step(s.stage, s.text, s.status == "ran", s.seconds or 0.0)
        for s in buildkit.steps(text)
        if s.keyword == "RUN"
    }
    for line in text.splitlines():
        m = _VERTEX_OUTPUT.match(line)
        if m and int(m.group(1)) in found:
            if (parsed := compile_stats.parse_line(line)) is not None:
                found[int(m.group(1))].cache.append(parsed)
    return list(found.values())


@dataclass
class Round:
    """One build of the targets: wall, ImageBuild count, the steps of each image built."""

    wall: float
    builds: int
    steps: dict[str, list[Step]]

    def compile_steps(self, images=None) -> list[Step]:
        """The compile steps that ran, each once: two images built at once from one
        Dockerfile (pytorch and pytorch-wheel) share their stages, and BuildKit runs a shared
        step once but shows it as run in both logs (the same stage and text, args expanded)."""
        seen: dict[tuple[str, str], Step] = {}
        for name, steps in self.steps.items():
            if images is not None and name not in images:
                continue
            for s in steps:
                if s.ran and s.compiles:
                    seen.setdefault((s.stage, s.text), s)
        return list(seen.values())

    def compile_seconds(self, images=None) -> float:
        return sum(s.seconds for s in self.compile_steps(images))

    def hits(self, images=None, script: str | None = None) -> tuple[int, int]:
        hits = misses = 0
        for s in self.compile_steps(images):
            if script and script not in s.text:
                continue
            for c in s.cache:
                hits += c.hits or 0
                misses += c.misses or 0
        return hits, misses

    def third_party(self) -> tuple[int, int]:
        """(RUNs of THIRD_PARTY stages that ran, all of them seen), each step once."""
        seen: dict[tuple[str, str], Step] = {}
        for steps in self.steps.values():
            for s in steps:
                if s.stage in THIRD_PARTY:
                    seen[(s.stage, s.text)] = seen.get((s.stage, s.text)) or s
        return sum(s.ran for s in seen.values()), len(seen)


def rate(hits: int, misses: int) -> float:
    return 100 * hits / (hits + misses) if hits + misses else 0.0


class CompileBench(Bench):
    """bench/rehearsal_bake.py's set-up (output base, sources, staging, upstream) and
    the compiler cache's rounds."""

    def __init__(self, state: Path, arch: str, names: list[str], out, quick: bool) -> None:
        super().__init__(state, arch, names, out)
        self.quick = quick
        self.env["ROCM_PYTORCH_TEAMCACHE_DIR"] = str(state / "teamcache")
        self.env["ROCM_PYTORCH_TEAMCACHE_PORT"] = str(daemon.free_port())
        self.engine_b: Path | None = None

    def logs(self) -> Path:
        if self.execroot is None:
            info = self.sh([*self.bazel, "info", "execution_root", *self.bazel_flags])
            self.execroot = Path(info.stdout.strip())
        return self.execroot / "bazel-out" / "logs" / "images"

    def team_cache(self) -> str:
        """Start this run's team cache; the [compiler_cache] table that points at it."""
        self.sh([sys.executable, "-m", "tools.teamcache", "start"])
        table = self.sh([sys.executable, "-m", "tools.teamcache", "settings"]).stdout
        start = table.index("[compiler_cache]")
        return table[start:]

    def build(self, step: str, *flags: str, bazel=None, logs: Path | None = None) -> Round:
        bazel = bazel or self.bazel
        log = self.state / f"exec-{time.monotonic_ns()}.json"
        since = time.time()
        start = time.monotonic()
        self.sh([*bazel, "build", *self.labels.values(), *self.bazel_flags, *flags,
                 f"--execution_log_json_file={log}"])  # fmt: skip
        wall = time.monotonic() - start
        builds = sum(1 for s in read_exec_log(log) if s.get("mnemonic") == "ImageBuild")
        steps = {}
        for name, target in self.labels.items():
            path = (logs or self.logs()) / f"{target.split(':', 1)[1]}.log"
            if path.is_file() and path.stat().st_mtime >= since:
                steps[name] = log_steps(path.read_text(errors="replace"))
        r = Round(wall, builds, steps)
        hits, misses = r.hits()
        self.out.record(
            step,
            wall_s=round(wall, 2),
            image_builds=builds,
            compile_s=round(r.compile_seconds(), 2),
            compile_steps={
                n: [[s.stage, s.text[-80:], s.seconds] for s in st if s.ran and s.compiles]
                for n, st in steps.items()
            },
            hits=hits,
            misses=misses,
            third_party_ran=r.third_party(),
        )
        progress(
            f"{step}: bazel {wall:.1f}s, {builds} ImageBuild, compile steps"
            f" {r.compile_seconds():.1f}s, {hits} hits / {misses} misses"
        )
        return r

    # -- PyTorch bump ----------------------------------------------------------------

    def bump_pytorch(self) -> str:
        """A new commit of the served stand-in PyTorch, tagged with the next version."""
        version = self.catalog.defaults["PYTORCH_VERSION"]
        major, minor, patch = (int(x) for x in version.split(".")[:3])
        new = f"{major}.{minor}.{patch + 1}"
        bare = self.state / "sources" / "repos" / "github.com" / "pytorch" / "pytorch.git"
        if not bare.is_dir():
            raise Failed(f"no served stand-in PyTorch at {bare}")
        work = self.state / "pytorch-bump"
        git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
        self.sh([*git, "clone", "-q", "--branch", f"v{version}", str(bare), str(work)])
        # one source file's code changed, as a release changes some (not a comment: the
        # preprocessor drops it, and the compile would be a hit): the rest must be hits
        source = next(iter(sorted((work / "c10").rglob("*.cpp"))))
        source.write_text(
            source.read_text()
            + f'\nnamespace {{ [[maybe_unused]] const char* bench_bump = "{new}"; }}\n'
        )
        self.sh([*git, "-C", str(work), "commit", "-q", "-am", f"PyTorch {new}"])
        self.sh([*git, "-C", str(work), "tag", f"v{new}"])
        self.sh([*git, "-C", str(work), "push", "-q", "origin", f"v{new}"])
        rmtree(work)
        progress(f"stand-in PyTorch v{new}: {source.relative_to(self.state)} changed")
        return new

    # -- machine B -------------------------------------------------------------------

    def machine_b(self, upstream: Path, step: str) -> Round:
        """The targets on a second engine, output base and staging: the same team cache."""
        self.engine_b = self.state / "engine-b"
        env_b = dict(self.env, ROCM_PYTORCH_ENGINE_DIR=str(self.engine_b))
        env_b["ROCM_PYTORCH_STAGING_DIR"] = str(self.state / "staging-b")
        env_b["ROCM_PYTORCH_STAGING_PORT"] = str(daemon.free_port())
        scratch = ScratchBazel(self.state / "bazel-b")
        bazel = scratch.command()
        scratch.calls += 1  # shut down in the end, however far it got
        saved, self.env = self.env, env_b
        try:
            out = self.sh([sys.executable, "-m", "tools.engine", "env", "--private"]).stdout
            for m in re.finditer(r"^export ([A-Z_]+)=(.*)$", out, re.M):
                env_b[m.group(1)] = shlex.split(m.group(2))[0]
            # machine B pulls the upstream (its staging holds it); it builds all else itself
            # the sid tree's Python: docker-registry is in that tree
            self.sh(["rocm-pytorch-sid-run", "python3", "-m", "tools.staging", "start"])
            staged = descriptor.load(upstream)
            b_host = f"127.0.0.1:{env_b['ROCM_PYTORCH_STAGING_PORT']}"
            start = time.monotonic()
            self.sh(["crane", "copy", "--insecure", staged.staging_ref,
                     f"{b_host}/{staged.staging_name}:{staged.staging_tag}"])  # fmt: skip
            progress(
                f"machine B: the upstream copied to its staging ({time.monotonic() - start:.0f}s)"
            )
            info = self.sh([*bazel, "info", "execution_root", *self.bazel_flags])
            logs = Path(info.stdout.strip()) / "bazel-out" / "logs" / "images"
            return self.build(step, "--upstream=rehearsal-rebuild", bazel=bazel, logs=logs)
        finally:
            self.env = saved
            scratch.shutdown()
            for tool in ("tools.staging", "tools.engine"):
                subprocess.run([sys.executable, "-m", tool, "stop"], cwd=ROOT, env=env_b,
                               capture_output=True, check=False)  # fmt: skip
            for d in (self.engine_b, self.state / "staging-b", self.state / "bazel-b"):
                rmtree(d)  # its disk, for what follows


def table(rounds: dict[str, Round], cold_key: str = "cold") -> str:
    cold = rounds[cold_key]
    lines = ["| build | wall s | images built | compile s | x cold | hits | third-party RUNs |"]
    lines.append("|---|---|---|---|---|---|---|")
    for name, r in rounds.items():
        hits, misses = r.hits()
        ran, seen = r.third_party()
        ratio = r.compile_seconds() / cold.compile_seconds() if cold.compile_seconds() else 0
        lines.append(
            f"| {name} | {r.wall:.0f} | {r.builds} | {r.compile_seconds():.0f} | {ratio:.2f} |"
            f" {hits}/{hits + misses} ({rate(hits, misses):.1f} %) | {ran} of {seen} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="compile_cache.py",
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[2:6]),
    )
    p.add_argument("--arch", default="gfx1100", help="the arch to build (default gfx1100)")
    p.add_argument("--keep", action="store_true", help="keep the state dir")
    results.add_arguments(p)
    args = p.parse_args(argv)
    rehearsal_bake.NAME[0] = "compile-cache"
    needed = ["ROCM_PYTORCH_ENGINE_DIR", "DOCKER_HOST"] + ([] if args.quick else ["REGISTRY"])
    for var in needed:
        if not os.environ.get(var):
            raise Failed(
                f"${var} is unset: it runs on the project's engine, whose build cache it prunes"
                ' (eval "$(python3 -m tools.engine env --registry)")'
            )
    free = shutil.disk_usage(places.cache_dir()).free / 1e9
    if free < DISK_GB[args.quick]:
        raise Failed(
            f"{free:.0f} GB free in {places.cache_dir()}; {'--quick' if args.quick else 'a full'}"
            f" run needs about {DISK_GB[args.quick]} GB"
        )
    state = Path(tempfile.mkdtemp(prefix="bench-compile-cache-", dir=places.cache_dir()))
    out = results.Results("compile-cache", args)
    from tools.tagconf import catalog as catalog_mod

    catalog = catalog_mod.load(ROOT / "images/catalog.toml")
    names = QUICK if args.quick else [
        t for t in catalog.group("default") if catalog.builds(catalog.target(t), args.arch)
    ]  # fmt: skip
    bench = CompileBench(state, args.arch, names, out, args.quick)

    def stop(signum, _frame):
        raise SystemExit(f"compile-cache: stopped by signal {signum}")

    signal.signal(signal.SIGTERM, stop)
    progress(f"{args.arch}: {len(names)} images ({', '.join(names)}); state in {state}")
    rounds: dict[str, Round] = {}
    try:
        bench.setup()  # sources, mirror settings, the stand-in upstream (unmeasured)
        bench.mirrors.write_text(bench.mirrors.read_text() + "\n" + bench.team_cache())
        bench.sh([*bench.bazel, "build", REBUILD, *bench.bazel_flags])
        bench.prune()
        rounds["cold"] = bench.build("cold")
        # the cold round's layers are of no use to a build on another upstream; its cache
        # mounts (ccache's, apt's, pip's) are what an engine keeps from build to build
        bench.sh(["docker", "buildx", "prune", "-af", "--filter", "type=regular"])
        rounds["base change"] = bench.build("base change", "--upstream=rehearsal-rebuild")
        if not args.quick:
            version = bench.bump_pytorch()
            rounds["PyTorch bump"] = bench.build(
                "PyTorch bump",
                "--define",
                "upstream=rehearsal-rebuild",
                "--define",
                f"PYTORCH_VERSION={version}",
            )
        b_names = ["pytorch-wheel"] if not args.quick else QUICK
        saved = bench.labels
        bench.labels = {n: saved[n] for n in b_names if n in saved} or {
            n: f"//images:{n}.{args.arch}" for n in b_names
        }
        try:
            rounds["machine B"] = bench.machine_b(bench.descriptor(UPSTREAM), "machine B")
        finally:
            bench.labels = saved
        if not args.quick:
            bake_rounds(bench, rounds)
        print(table({k: v for k, v in rounds.items() if isinstance(v, Round)}))
        cold, change = rounds["cold"], rounds["base change"]
        ratio = change.compile_seconds() / cold.compile_seconds() if cold.compile_seconds() else 0
        script = "build-triton.sh" if args.quick else "build-pytorch.sh"
        b_rate = rate(*rounds["machine B"].hits(script=script))
        third = rounds["PyTorch bump"].third_party()[0] if "PyTorch bump" in rounds else 0
        line = (
            f"compile cache: base-change {ratio:.2f}× cold, hit {rate(*change.hits()):.1f}%;"
            f" machine B hit {b_rate:.1f}%; third-party re-runs {third}"
        )
        out.summary(line)
    finally:
        subprocess.run([sys.executable, "-m", "tools.teamcache", "stop"], cwd=ROOT,
                       env=bench.env, capture_output=True, check=False)  # fmt: skip
        bench.close()
        subprocess.run(["docker", "buildx", "prune", "-af"], capture_output=True, check=False)
        if not args.keep:
            rmtree(state)
    return 0


def bake_rounds(bench: CompileBench, rounds: dict) -> None:
    """Today's design on the same change: bake cold, then on the rebuilt upstream."""
    upstream = descriptor.load(bench.descriptor(UPSTREAM)).staging_ref
    rebuilt = descriptor.load(bench.descriptor(REBUILD)).staging_ref
    # bake's compile cache is the engine-local ccache mount: no team cache in its settings
    team = bench.mirrors.read_text()
    bench.mirrors.write_text(team[: team.index("[compiler_cache]")])
    try:
        bench.prune()
        cold = bench.bake("bake cold", bench.bake_file(upstream, quick=False))
        change = bench.bake("bake base change", bench.bake_file(rebuilt, quick=False))
    finally:
        bench.mirrors.write_text(team)
    ours = rounds["base change"].wall
    rounds["bake"] = {"cold": cold["wall"], "change": change["wall"]}
    bench.out.record(
        "family after the base change",
        ours_s=round(ours, 1),
        bake_s=round(change["wall"], 1),
        ours_over_bake=round(ours / change["wall"], 3),
        ours_over_our_cold=round(ours / rounds["cold"].wall, 3),
    )
    print(
        f"family after the base change: ours {ours:.0f}s ({ours / rounds['cold'].wall:.2f}×"
        f" our cold), bake {change['wall']:.0f}s (cold {cold['wall']:.0f}s):"
        f" ours/bake {ours / change['wall']:.2f}×"
    )


if __name__ == "__main__":
    sys.exit(main())
