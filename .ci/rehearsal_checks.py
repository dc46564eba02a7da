"""The rehearsal, run by .ci/run: the real recipes of docker/ on the stand-in upstream.

From a cold start (a staging registry, a mirror settings file and, through
them, action keys of this run's own):

- `python3 -m tools.rehearsal.sources start` serves the stand-in sources
  (rehearsal/sources.toml) on loopback and writes the mirror settings
  file with its [git.rewrite];
- `bazel build //rehearsal:upstream` builds the stand-in (one
  UpstreamBuild); `bazel build --config=rehearsal` of the default group for
  gfx1100 (every target push_default publishes there: aiter-wheel is not
  built for gfx1100), pytorch-test and pytorch-run, and aiter-wheel for gfx942
  builds them from docker/ (one ImageBuild each: MAGMA, AOTriton, torch, the
  wheels and UCX compiled with hipcc for the arch, the smoke test run in
  pytorch, pytorch-test and runtime); a second build runs nothing;
- tools/rehearsal/coverage.py reads BuildKit's step list in their logs: every
  RUN of every Dockerfile of docker/ executed;
- the builds were given a compiler cache that does not answer (COMPILER_CACHE):
  each compiling stage warned in one line and built with its local ccache;
  later, no built image's config or layer (the upstream's aside) holds its
  endpoint;
- the arch family gfx110X: rocm-runtime and base built once for
  gfx1100;gfx1101 keep exactly those archs' kernels (each member's
  rocBLAS kernels present), and hipcc in base makes a code object per member;
- tools/rehearsal/check.py reads the images: kernel files of gfx1100 only,
  the fat binaries, sizes and bytes pruned, ldconfig and gpu-arch, a hipcc
  code object for gfx1100 in base; the triton wheel installs in base and
  imports with its native module; pytorch-src has its submodule checked out;
  torchvision and cupy install in pytorch; runtime runs the smoke test as uid
  1001 (rocm) and its libtorch_hip.so carries amdgcn code objects for gfx1100
  only; runtime, pytorch-test, vllm and lmcache, as their user, compile and
  import a C extension as Triton compiles its launcher and build and import a
  C++ function with torch.utils.cpp_extension.load_inline (ninja, c++);
  vllm and lmcache, started with their default command, answer /health
  on loopback within SERVE_LIMIT seconds and their HEALTHCHECK passes, and
  /v1/completions through a Triton kernel; the stand-in upstream has no ROCm
  library outside /opt/rocm-*/lib;
- tools/imagecheck on every image that is run (RUN_IMAGES), for gfx1100 and
  for the family: every ROCm library loads, every package imports and links
  what the real project links, every kernel covers the arch;
- tools/rehearsal/breakage.py: images derived from lmcache, each without one
  library or one gfx1100 kernel directory, each failing tools/imagecheck
  with its name (0 misses);
- `bazel run //images:push_default` publishes the group to the engine's
  loopback registry without building anything again, and
  `push_default.verify` finds every tag of the plan on its digest, and
  `python3 -m tools.imagecheck --pull` passes on rocm-runtime and vllm by
  their published tags;
- `bazel run //images:report` writes the family report (every image published on the
  digest just built) and it holds up in headless chromium (.ci/report_check.py);
- the wheelhouse, collected from that registry, installs torch and vllm with
  `pip install --no-index` in a clean venv of runtime (their PyPI
  dependencies downloaded beside it);
- rocm-runtime for gfx950 fails with the prune script's "no rocBLAS kernels"
  line in Bazel's error;
- another mirror and compiler cache endpoint (the settings file rewritten)
  runs 0 UpstreamBuild and 0 ImageBuild actions (execution log);
- the stand-in rebuilt (another staging registry, so the action runs again)
  gives the same digest (reproducible).

Then it cleans what it made: its staging registry and storage, and the images
and build cache of the engine .ci/run started (never a developer's). It
prints the disk use at its peak, `PASS: ...`/`FAIL: ...` per check, and
`rehearsal checks: N passed, M failed` last.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `tools` is a package at the root

sys.path.insert(0, str(Path(__file__).resolve().parent))  # .ci: report_check

import report_check  # .ci/report_check.py

from tools import places
from tools.imagebuild import compile_stats
from tools.imagecheck import check as gpu_check
from tools.process import daemon
from tools.process.scratch_bazel import Checks, read_exec_log
from tools.rehearsal import breakage
from tools.rehearsal import check as image_check
from tools.tagconf import catalog

REPO = places.workspace()

ARCH = "gfx1100"
CDNA = "gfx942"  # aiter-wheel is built for the CDNA archs only (catalog.toml)
REFUSED_ARCH = "gfx950"
# An arch family (one image for all its members) whose members have kernels in
# Debian's rocBLAS (the stand-in's): gfx1100 and gfx1101. gfx1102 has kernels there
# too and is no member, so "no others" is a real check.
ARCH_FAMILY = "gfx110X"
CATALOG = catalog.load(REPO / "images" / "catalog.toml")
GROUP = "default"
# The default group for ARCH (what push_default publishes: aiter-wheel is not
# built there), pytorch-test and pytorch-run, which are pushed on their own,
# and aiter-wheel for CDNA, so every RUN of docker/ runs.
FAMILY = [t for t in CATALOG.group(GROUP) if CATALOG.builds(CATALOG.target(t), ARCH)]
EXTRA = ["pytorch-test", "pytorch-run"]


def label(name: str, arch: str = ARCH) -> str:
    """The Bazel target of catalogue target ``name`` for ``arch`` (none: arch-free)."""
    return f"//images:{name}.{arch}" if CATALOG.target(name).arch else f"//images:{name}"


# On CDNA, aiter-wheel and vllm-wheel (whose vllm-build stage builds CK
# flash-attention for gfx9 only) run what gfx1100 leaves out; with their
# parents, every image the build runs is listed.
CDNA_TARGETS = ["rocm-runtime", "pytorch-base", "pytorch", "aiter-wheel", "vllm-wheel"]
TARGETS = [label(t) for t in FAMILY + EXTRA] + [label(t, CDNA) for t in CDNA_TARGETS]
# Their logs (images/private/image.bzl: bazel-out/logs/<package>/<target>.log).
LOGS = [t.split(":", 1)[1] for t in TARGETS]
# Every Dockerfile of docker/: each RUN must have executed in one of the builds.
REQUIRED = sorted({Path(t.dockerfile).name for t in CATALOG.targets})
UPSTREAM = "//rehearsal:upstream"
# The serving images answer /health within this many seconds of `docker run`.
SERVE_LIMIT = 60
KV_TRANSFER_CONFIG = '{"kv_connector":"LMCacheConnectorV1","kv_role":"kv_both"}'
BUILDS = ("UpstreamBuild", "ImageBuild")
# The team compiler cache the builds are given: one that does not answer (port 9 of
# loopback refuses), so every compiling RUN warns once and builds with its local ccache;
# its endpoint, a marker, must appear in no image (docs/mirrors.md, "Compiler cache").
CACHE_MARKER = f"rehearsal-cache-{os.getpid()}-{time.time_ns()}"
COMPILER_CACHE = (
    '[compiler_cache]\nbackend = "sccache-webdav"\n'
    f'endpoint = "http://127.0.0.1:9/{CACHE_MARKER}"\n'
)
CACHE_WARNING = "does not answer"
# The builds that compile through hipcc alone or in part, as (name, a line of the
# step's output that names it, its compiles in the stand-in sources): the step's
# compiler cache line must count them all (Debian's hipcc reads no
# HIP_CLANG_LAUNCHER: build-env.sh's rocm_pytorch_cc_hip_clang).
HIPCC_STEPS = [
    ("MAGMA (hipcc for every compile)", re.compile(r"build-magma: "), 2),
    ("torchvision (2 .cpp, 1 .hip)", re.compile(r"\btorchvision-\S+\.whl\b"), 3),
    ("LMCache (1 .cpp, 1 hipified .cu)", re.compile(r"\blmcache-\S+\.whl\b"), 2),
]
STEP = re.compile(r"^#(\d+) ")
# bench/compile_cache.py's last line (issue #41)
SUMMARY = re.compile(
    r"^compile cache: base-change [0-9.]+\u00d7 cold, hit [0-9.]+%; machine B hit [0-9.]+%;"
    r" third-party re-runs [0-9]+$"
)
# The images that are run (a CMD or an ENTRYPOINT of their own or their parent's):
# tools/imagecheck checks each for what a GPU host needs of it.
RUN_IMAGES = ["rocm-runtime", "pytorch-base", "pytorch", "pytorch-run", "pytorch-test"]
RUN_IMAGES += ["vllm", "lmcache"]
# The image the derived images of tools/rehearsal/breakage.py start from: the one
# with the most packages (torch, torchvision, triton, vllm, lmcache, nixl, cupy).
BREAKAGE_IMAGE = "lmcache"


def gpu_host(image: str, name: str, arch: str) -> image_check.Result:
    """tools/imagecheck on ``image``, as one result: every check, or the ones that failed."""
    title = f"{name} would load and find its kernels on a {arch.replace(';', '/')} host"
    try:
        results = gpu_check.check(image, arch)
    except gpu_check.ImageCheckError as e:
        return image_check.Result(title, False, str(e))
    bad = [f"{r.name}: {r.detail}" for r in results if not r.ok]
    if bad:
        return image_check.Result(title, False, " | ".join(bad))
    loaded = next(r.detail for r in results if r.name == "ROCm libraries load")
    others = "; ".join(f"{r.name}: {r.detail[:160]}" for r in results[1:])
    return image_check.Result(title, True, f"{len(results)} checks: {loaded}; {others}")


class Run:
    """This run's environment: its staging registry and mirror settings file."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.stderr = ""  # the last build's
        root.mkdir(parents=True, exist_ok=True)
        self.mirrors = root / "mirrors.toml"
        self.mirrors.write_text(
            "# the defaults (tools/mirrors), written out: .ci/rehearsal_checks.py\n"
        )
        self.env = dict(
            os.environ,
            ROCM_PYTORCH_STAGING_DIR=str(root / "staging"),
            ROCM_PYTORCH_STAGING_PORT=str(daemon.free_port()),
            ROCM_PYTORCH_MIRRORS=str(self.mirrors),
            ROCM_PYTORCH_SOURCES_DIR=str(root / "sources"),
            # the pushes' publish history (the report reads it): this run's own
            ROCM_PYTORCH_HISTORY_DIR=str(root / "history"),
        )

    def bazel(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            ["bazel", *args], cwd=REPO, env=self.env, capture_output=True, text=True, check=False
        )
        if check and proc.returncode != 0:
            raise RuntimeError(
                f"bazel {' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-3000:]}"
            )
        return proc

    def build(
        self, *targets: str, config: bool = True, extra: tuple[str, ...] = ()
    ) -> tuple[dict[str, int], float]:
        """Build ``targets``; ({mnemonic: spawns run} of the image builds, wall seconds)."""
        log = self.root / f"exec-{time.monotonic_ns()}.json"
        start = time.monotonic()
        self.stderr = self.bazel(
            "build",
            *targets,
            *(["--config=rehearsal"] if config else []),
            *extra,
            f"--execution_log_json_file={log}",
        ).stderr
        wall = time.monotonic() - start
        spawns = read_exec_log(log)
        return {m: sum(1 for s in spawns if s.get("mnemonic") == m) for m in BUILDS}, wall

    def descriptor_ref(self, target: str, *extra: str) -> str:
        """The staging ref of ``target``'s image."""
        return image_check.desc.load(self.descriptor(target, *extra)).staging_ref

    def descriptor(self, target: str, *extra: str) -> Path:
        out = self.bazel(
            "cquery", target, "--config=rehearsal", *extra, "--output=files"
        ).stdout.split()
        return REPO / next(
            f for f in out if f.endswith(".json") and not f.endswith((".spec.json", ".size.json"))
        )


def _args():
    import argparse

    parser = argparse.ArgumentParser(
        prog="python3 .ci/rehearsal_checks.py",
        description="The rehearsal (run by .ci/run rehearsal): docker/'s whole family on the"
        " stand-in upstream and sources, every RUN executed, every image checked; about"
        " 35 minutes and 56 GB of disk on 2 cores. Needs CI's engine environment"
        " (python3 -m tools.engine env --private --registry) and the staging registry"
        " (bazel run //tools/staging -- start). docs/rehearsal.md.",
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="TEXT",
        help="run only the checks whose name holds TEXT (repeat); most need the builds of"
        " the earlier ones",
    )
    return parser.parse_args()


check = Checks()


class DiskPeak:
    """The most disk used on the file system of ``path`` while it runs (sampled every 2 s)."""

    def __init__(self, path: Path) -> None:
        self.path, self.start = path, shutil.disk_usage(path).used
        self.peak, self.stop = self.start, threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()

    def _sample(self) -> None:
        while not self.stop.wait(2):
            self.peak = max(self.peak, shutil.disk_usage(self.path).used)

    def report(self) -> str:
        self.stop.set()
        self.thread.join()
        end = shutil.disk_usage(self.path).used
        return (
            f"disk: {self.start / 1e9:.1f} GB used at the start, peak {self.peak / 1e9:.1f} GB"
            f" (+{(self.peak - self.start) / 1e9:.1f} GB), {end / 1e9:.1f} GB after the clean-up"
        )


def clean(run: Run) -> None:
    for tool in ("tools.staging", "tools.rehearsal.sources"):
        subprocess.run(
            [sys.executable, "-m", tool, "stop"], cwd=REPO, env=run.env, capture_output=True
        )
    target = Run(run.root / "target")  # the registry push_default published to
    subprocess.run(
        ["rocm-pytorch-sid-run", "python3", "-m", "tools.staging", "stop"],
        cwd=REPO, env=target.env, capture_output=True,
    )  # fmt: skip
    shutil.rmtree(run.root, ignore_errors=True)
    # the engine .ci/run started (ROCM_PYTORCH_ENGINE_DIR), never a developer's
    if os.environ.get("ROCM_PYTORCH_ENGINE_DIR"):
        for cmd in (["docker", "image", "prune", "-af"], ["docker", "buildx", "prune", "-af"]):
            subprocess.run(cmd, capture_output=True, check=False)


def main() -> int:
    check.only = _args().only or []
    disk = DiskPeak(REPO)
    run = Run(Path(tempfile.mkdtemp(prefix="rehearsal-ci-")))
    timings: dict[str, float] = {}

    @check("the stand-in sources (git, Rust channel, crates) are served on loopback")
    def _sources():
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "tools.rehearsal.sources",
                "start",
                "--mirrors",
                str(run.mirrors),
            ],
            cwd=REPO,
            env=run.env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        # `start` wrote the settings file: the builds also get a compiler cache that
        # does not answer (COMPILER_CACHE)
        run.mirrors.write_text(run.mirrors.read_text() + COMPILER_CACHE)
        return "; ".join(line for line in proc.stdout.splitlines() if " = " in line)

    @check("the stand-in upstream builds from Debian's ROCm (cold)")
    def _upstream():
        spawns, wall = run.build(UPSTREAM, config=False)
        timings["upstream"] = wall
        assert spawns["UpstreamBuild"] == 1, spawns
        log = REPO / "bazel-out/logs/rehearsal/upstream.log"
        summary = [line for line in log.read_text().splitlines() if line.startswith("# upstream:")]
        return f"{wall:.0f}s; {summary[-1][2:] if summary else ''}"

    @check(f"the family ({ARCH}; aiter and vllm wheels {CDNA}) builds from docker/ (cold)")
    def _family():
        spawns, wall = run.build(*TARGETS)
        timings["family"] = wall
        assert spawns == {"UpstreamBuild": 0, "ImageBuild": len(TARGETS)}, spawns
        return f"{wall:.0f}s, {len(TARGETS)} ImageBuild"

    @check("every RUN of every Dockerfile of docker/ executed (BuildKit's step list)")
    def _coverage():
        logs = REPO / "bazel-out" / "logs" / "images"
        required = [a for name in REQUIRED for a in ("--require", name)]
        proc = run.bazel(
            "run",
            "//tools/rehearsal:coverage",
            "--",
            *(str(logs / f"{name}.log") for name in LOGS),
            *required,
            check=False,
        )
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-1000:]
        return proc.stdout.strip().splitlines()[-1]

    @check(
        "a compiler cache that does not answer: each compiling RUN warns in one line and"
        " builds with its local ccache"
    )
    def _dead_cache():
        logs = REPO / "bazel-out" / "logs" / "images"
        warned = {}
        for name in LOGS:
            text = (logs / f"{name}.log").read_text(errors="replace")
            lines = [line for line in text.splitlines() if CACHE_WARNING in line]
            if lines:
                warned[name] = len(lines)
        # The compiling stages, each run by whichever of the images whose builds include it
        # gets to it first: pytorch-build is in pytorch's, pytorch-wheel's and
        # pytorch-test's (its `test` stage mounts the wheel, and its parent is
        # pytorch-base, so it may start the compile before pytorch does).
        compiling = [
            ("pytorch.gfx1100", "pytorch-wheel.gfx1100", "pytorch-test.gfx1100"),
            ("nixl-wheel.gfx1100",),
            ("vllm.gfx1100", "vllm-wheel.gfx1100"),
        ]
        silent = [group for group in compiling if not set(group) & set(warned)]
        seen = {
            name: [line[-160:] for line in (logs / f"{name}.log").read_text().splitlines()
                   if "compiler cache" in line][:4]
            for group in silent for name in group
        }  # fmt: skip
        assert not silent, f"no {CACHE_WARNING!r} in the logs of {silent}; theirs: {seen}"
        sample = next(
            line.split("build-env: ", 1)[-1]
            for name in sorted(warned)
            for line in (logs / f"{name}.log").read_text(errors="replace").splitlines()
            if CACHE_WARNING in line
        )
        return f"{sum(warned.values())} warnings in {len(warned)} builds, e.g. {sample!r}"

    @check("hipcc's compiles reach the compiler cache: MAGMA's, torchvision's, LMCache's")
    def _hipcc_counted():
        logs = REPO / "bazel-out" / "logs" / "images"
        found = {}
        for name in LOGS:
            lines = (logs / f"{name}.log").read_text(errors="replace").splitlines()
            for what, marker, _ in HIPCC_STEPS:
                steps = {m[1] for x in lines if (m := STEP.match(x)) and marker.search(x)}
                for x in lines:
                    m = STEP.match(x)
                    parsed = compile_stats.parse_line(x) if m and m[1] in steps else None
                    if parsed and parsed.hits is not None and what not in found:
                        found[what] = (name, parsed.hits + (parsed.misses or 0), x.strip()[-80:])
        short = [
            f"{what}: {found[what][1] if what in found else 'no counted step'} of {want}"
            for what, _, want in HIPCC_STEPS
            if what not in found or found[what][1] < want
        ]
        assert not short, f"compiles that did not reach the cache: {short}; found {found}"
        return "; ".join(f"{what}: {found[what][1]} compiles ({found[what][0]})"
                         for what, _, _ in HIPCC_STEPS)  # fmt: skip

    @check("a second build runs nothing (warm)")
    def _warm():
        spawns, wall = run.build(UPSTREAM, *TARGETS)
        assert spawns == {"UpstreamBuild": 0, "ImageBuild": 0}, spawns
        return f"{wall:.1f}s"

    @check("lost outputs (bazel clean, a new runner) are staging hits: no mmdebstrap, no BuildKit")
    def _hits():
        files = [run.descriptor(UPSTREAM), *(run.descriptor(t) for t in TARGETS)]
        before = [json.loads(f.read_text())["digest"] for f in files]
        for f in files:
            f.unlink()  # as `bazel clean` or a fresh runner would have it: Bazel runs them again
        spawns, wall = run.build(UPSTREAM, *TARGETS)
        assert spawns == {"UpstreamBuild": 1, "ImageBuild": len(TARGETS)}, spawns
        hits = run.stderr.count("staging hit: ")
        want = 1 + len(TARGETS)
        assert hits == want, f"{hits} staging hits of {want} builds:\n{run.stderr[-2000:]}"
        after = [json.loads(f.read_text())["digest"] for f in files]
        assert after == before, "a staging hit gave another digest"
        return (
            f"{want} builds, {want} staging hits in {wall:.1f}s (cold: {timings['upstream']:.0f}s +"
            f" {timings['family']:.0f}s)"
        )

    built: dict[str, image_check.desc.Descriptor] = {}  # target -> its descriptor, read once
    try:
        paths = {
            "upstream": run.descriptor(UPSTREAM),
            "runtime": run.descriptor(label("rocm-runtime")),
            "base": run.descriptor(label("pytorch-base")),
        }
        results = image_check.run(ARCH, paths["upstream"], paths["runtime"], paths["base"])
        built.update((t, image_check.desc.load(run.descriptor(t))) for t in TARGETS)
        images = {t: d.staging_ref for t, d in built.items()}
        defaults = CATALOG.defaults
        base = images[label("pytorch-base")]
        results.append(
            image_check.check_triton(
                base,
                images[label("triton-wheel")],
                defaults["TRITON_VERSION"],
                defaults["PYTHON_VERSION"],
            )
        )
        results.append(image_check.check_source_tree(images[label("pytorch-src")], "/src/pytorch"))
        results.append(
            image_check.check_extension_wheels(
                images[label("pytorch")],
                [images[label("torchvision-wheel")], images[label("cupy-wheel")]],
                ARCH,
            )
        )
        results.append(
            image_check.check_nixl_wheel(
                images[label("pytorch")],
                images[label("nixl-wheel")],
                defaults["NIXL_REF"].removeprefix("v"),
                defaults["PYTHON_VERSION"],
                ARCH,
            )
        )
        results += image_check.check_runtime(
            images[label("pytorch-run")], base, ARCH, defaults["PYTHON_VERSION"]
        )
        # what runs on a GPU host compiles C at run time (Triton's launcher, inductor) and
        # C++ (torch.utils.cpp_extension's JIT, with ninja)
        for serving in ("pytorch-run", "pytorch-test", "vllm", "lmcache"):
            results.append(image_check.check_c_extension(images[label(serving)], serving))
            results.append(image_check.check_load_inline(images[label(serving)], serving))
        for name in RUN_IMAGES:
            results.append(gpu_host(images[label(name)], name, ARCH))
        results.append(
            image_check.check_serving(
                images[label("vllm")], "vllm", daemon.free_port(), SERVE_LIMIT
            )
        )
        results.append(
            image_check.check_serving(
                images[label("lmcache")],
                "lmcache",
                daemon.free_port(),
                SERVE_LIMIT,
                "--kv-transfer-config",
                KV_TRANSFER_CONFIG,
            )
        )
    except Exception as e:
        results = [image_check.Result("the images", False, str(e))]
    for r in results:
        check.add(r.name, r.ok, r.detail)

    @check(
        f"tools/imagecheck notices each library and each {ARCH} kernel directory taken from"
        f" {BREAKAGE_IMAGE} (one derived image each: FROM it, RUN rm)"
    )
    def _breakage():
        image = built[label(BREAKAGE_IMAGE)].staging_ref
        tried, named, misses = breakage.run(image, ARCH)
        assert tried and not misses, f"{len(misses)} misses of {tried}: " + " | ".join(misses)
        return f"{tried} derived images, {named} failures named what was removed, 0 misses"

    @check("the compiler cache's endpoint is in no image: no config, history or layer names it")
    def _cache_in_no_image():
        upstream = {b.digest for b in image_check.desc.load(run.descriptor(UPSTREAM)).layers}
        scanned, skipped, found = {}, 0, []
        for target, d in built.items():
            config = json.dumps(d.config)
            if CACHE_MARKER in config:
                found.append(f"{target}: its config (labels, env, history)")
            for layer in d.layers:
                if layer.digest in upstream:
                    skipped += 1
                    continue
                if layer.digest not in scanned:
                    scanned[layer.digest] = image_check.blob_holds(
                        d.staging_host, d.staging_name, layer, CACHE_MARKER.encode()
                    )
                if scanned[layer.digest]:
                    found.append(f"{target}: layer {layer.digest[:19]}")
        assert not found, "; ".join(found)
        return (
            f"{len(built)} images: configs and {len(scanned)} layers scanned"
            f" ({skipped} upstream layers skipped), none holds {CACHE_MARKER!r}"
        )

    pushed = {"registry": "", "refs": {}}

    @check(f"push_default publishes the family for {ARCH} to a loopback registry")
    def _push():
        # a registry of this run's own (a second staging instance: a docker-registry
        # on loopback), so the clean-up removes what was pushed
        target = Run(run.root / "target")
        port = target.env["ROCM_PYTORCH_STAGING_PORT"]
        subprocess.run(
            ["rocm-pytorch-sid-run", "python3", "-m", "tools.staging", "start"],
            cwd=REPO, env=target.env, capture_output=True, check=True,
        )  # fmt: skip
        registry = f"127.0.0.1:{port}"
        pushed["registry"] = f"{registry}/rh"
        defines = [
            "--config=rehearsal",
            f"--define=arch={ARCH}",
            f"--image_registry={registry}/rh",
        ]
        log = run.root / "exec-push.json"
        start = time.monotonic()
        proc = run.bazel(
            "run", f"//images:push_{GROUP}", *defines, f"--execution_log_json_file={log}"
        )
        wall = time.monotonic() - start
        spawns = read_exec_log(log)
        built = sum(1 for s in spawns if s.get("mnemonic") in BUILDS)
        assert built == 0, f"{built} image builds: push_{GROUP} rebuilt what was built"
        tail = (proc.stdout + proc.stderr).strip().splitlines()
        return (
            f"{len(FAMILY)} images to {registry}/rh in {wall:.0f}s, 0 image builds;"
            f" {tail[-1][:160] if tail else ''}"
        )

    @check("every tag of the plan names the image built for it, with the documented labels")
    def _tags():
        assert pushed["registry"], "nothing was pushed"
        defines = ["--config=rehearsal", f"--define=arch={ARCH}"]
        plan = json.loads(
            run.bazel(
                "run",
                f"//images:push_{GROUP}.plan",
                *defines,
                f"--image_registry={pushed['registry']}",
                "--",
                "--json",
            ).stdout
        )
        wrong, refs = [], 0
        for image in plan["images"]:
            target = label(image["target"])
            d = built.get(target) or image_check.desc.load(run.descriptor(target, *defines))
            labels = d.config.get("config", {}).get("Labels", {})
            want = {
                "org.rocm-pytorch.image.target": image["target"],
                "org.rocm-pytorch.image.arch": image["arch"] or "noarch",
                "org.opencontainers.image.title": CATALOG.target(image["target"]).repository,
            }
            wrong += [
                f"{image['target']}: label {k}={labels.get(k)!r}, not {v!r}"
                for k, v in want.items()
                if labels.get(k) != v
            ]
            pushed["refs"].setdefault(image["target"], image["refs"][0])
            for ref in image["refs"]:
                refs += 1
                digest = image_check.registry_digest(ref)
                if digest != d.digest:
                    wrong.append(f"{ref} names {digest}, built {d.digest}")
        assert not wrong, "; ".join(wrong[:10])
        return f"{refs} tags of {len(plan['images'])} images on their digests, labels as documented"

    @check("a published image is checked from the registry: python3 -m tools.imagecheck --pull")
    def _published():
        assert pushed["refs"], "nothing was pushed"
        lines = []
        for target in ("rocm-runtime", "vllm"):
            ref = pushed["refs"][target]
            proc = subprocess.run(
                [sys.executable, "-m", "tools.imagecheck", "--pull", ref],
                cwd=REPO, env=run.env, capture_output=True, text=True, check=False,
            )  # fmt: skip
            subprocess.run(["docker", "rmi", ref], capture_output=True, check=False)
            last = (proc.stdout.strip().splitlines() or [proc.stderr.strip()])[-1]
            assert proc.returncode == 0, f"{ref}: exit {proc.returncode}: {proc.stdout[-1500:]}"
            lines.append(f"{ref}: {last}")
        return "; ".join(lines)

    @check("the family report: every image published as built, the page holds up in chromium")
    def _report():
        assert pushed["registry"], "nothing was pushed"
        defines = [
            "--config=rehearsal",
            f"--define=arch={ARCH}",
            f"--image_registry={pushed['registry']}",
        ]
        images = FAMILY + EXTRA
        ids = [label(t).split(":", 1)[1] for t in images]
        return report_check.check_family_report(
            run.bazel,
            "//images:report",
            defines,
            run.root / "report.html",
            len(images),
            unchanged=[i for i, t in zip(ids, images, strict=True) if t in FAMILY],
        )

    @check("the wheelhouse from the registry installs torch and vllm with no index")
    def _wheelhouse():
        assert pushed["registry"], "nothing was pushed"
        house, deps = run.root / "wheelhouse", run.root / "deps"
        run.bazel(
            "run", "//tools/wheelhouse", "--config=rehearsal", "--", "--arch", ARCH,
            "--out", str(house), "--from-registry", pushed["registry"],
        )  # fmt: skip
        projects = ["torch", "vllm"]
        image_check.download_dependencies(house, deps, projects, CATALOG.defaults["PYTHON_VERSION"])
        runtime = image_check.desc.load(run.descriptor(label("pytorch-run"))).staging_ref
        result = image_check.check_wheelhouse(runtime, house, deps, projects)
        assert result.ok, result.detail
        outside = image_check.check_outside_images(
            runtime, house, deps, CATALOG.defaults["PYTHON_VERSION"]
        )
        assert outside.ok, outside.detail
        assert (house / "README.txt").read_text().startswith("these wheels are for the")
        return f"{result.detail}; {outside.detail}; README.txt says what they are for"

    @check(f"rocm-runtime for {REFUSED_ARCH} is refused, named in Bazel's error")
    def _refused():
        proc = run.bazel(
            "build", f"//images:rocm-runtime.{REFUSED_ARCH}", "--config=rehearsal", check=False
        )
        want = f"prune-rocm-arch: this ROCm ships no rocBLAS kernels for {REFUSED_ARCH}"
        assert proc.returncode != 0, "the build succeeded"
        assert want in proc.stderr, proc.stderr[-2000:]
        assert f"target rocm-runtime, arch {REFUSED_ARCH}" in proc.stderr, proc.stderr[-2000:]
        return f"exit {proc.returncode}: {want!r}"

    @check(
        f"the arch family {ARCH_FAMILY}: one rocm-runtime and base for all its members, keeping"
        " every member's kernels and no others"
    )
    def _arch_family():
        members = ";".join(CATALOG.members(ARCH_FAMILY))
        runtime, base = label("rocm-runtime", ARCH_FAMILY), label("pytorch-base", ARCH_FAMILY)
        spawns, wall = run.build(runtime, base)
        assert spawns == {"UpstreamBuild": 0, "ImageBuild": 2}, spawns
        results = image_check.run(
            members, run.descriptor(UPSTREAM), run.descriptor(runtime), run.descriptor(base)
        )
        results += [gpu_host(run.descriptor_ref(t), t, members) for t in (runtime, base)]
        bad = [f"{r.name}: {r.detail}" for r in results if not r.ok]
        assert not bad, "\n".join(bad)
        kernels = next(r.detail for r in results if r.name == "kernel files")
        # what a member's node pulls more for the family's image than for its own
        sizes = {
            a: sum(layer["size"] for layer in json.loads(run.descriptor(t).read_text())["layers"])
            for a, t in ((ARCH_FAMILY, runtime), (ARCH, label("rocm-runtime")))
        }
        mib = ", ".join(f"{a} {n / 2**20:,.0f} MiB" for a, n in sizes.items())
        checked = ", ".join(f"{r.name.split()[0]} {r.detail.split(':')[0]}" for r in results[-2:])
        return (
            f"2 builds in {wall:.0f}s; {kernels}; rocm-runtime compressed: {mib};"
            f" tools/imagecheck for {members}: {checked} passed"
        )

    @check("another mirror setting and compiler cache endpoint run 0 image builds (execution log)")
    def _mirror_change():
        run.mirrors.write_text(
            '[apt.options]\n"Acquire::Retries" = "7"\n'
            '[pip]\nextra_index_urls = ["http://127.0.0.1:9/simple"]\n'
            '[git.rewrite]\n"https://github.com/" = "http://127.0.0.1:9/github/"\n'
            '[compiler_cache]\nbackend = "ccache-http"\nendpoint = "http://127.0.0.1:9/other"\n'
        )
        spawns, wall = run.build(UPSTREAM, *TARGETS)
        assert spawns == {"UpstreamBuild": 0, "ImageBuild": 0}, spawns
        return f"{spawns} in {wall:.1f}s"

    first = json.loads(paths["upstream"].read_text())["digest"] if "paths" in locals() else None
    clean(run)
    print(disk.report(), flush=True)

    # After the clean-up, so its engines and staging have the disk the family had.
    @check(
        "bench/compile_cache.py --quick: a base change and machine B with the team's compiler"
        " cache, to its summary line; the stand-in it builds into its own staging is the same"
        " digest (reproducible)"
    )
    def _compile_cache_bench():
        out = REPO / ".ci" / ".cache" / "bench"
        out.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(
            [sys.executable, "bench/compile_cache.py", "--quick", "--results-dir", str(out)],
            cwd=REPO, capture_output=True, text=True, check=False,
        )  # fmt: skip
        (out / "compile_cache.err").write_text(proc.stderr)
        last = (proc.stdout.strip().splitlines() or [""])[-1]
        assert proc.returncode == 0 and SUMMARY.match(last), (
            f"exit {proc.returncode}, last line {last!r}:\n{proc.stderr[-3000:]}"
        )
        files = sorted(out.glob("compile-cache-*-quick.jsonl"), key=lambda f: f.stat().st_mtime)
        steps = [json.loads(line) for line in files[-1].read_text().splitlines()]
        ref = next(step["ref"] for step in steps if step["step"] == "upstream")
        assert first and ref.endswith("@" + first), f"the stand-in again: {ref}, first {first}"
        return f"{last}; the stand-in {first[:19]} twice"

    print(
        f"rehearsal: stand-in {timings.get('upstream', 0):.0f}s,"
        f" {len(TARGETS)} images from docker/ {timings.get('family', 0):.0f}s (cold)"
    )
    line, ok = check.summary("rehearsal checks")
    print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
