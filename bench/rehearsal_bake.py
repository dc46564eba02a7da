"""The rehearsal family vs plain `docker buildx bake`: size and build time, cold and one-file.

    eval "$(python3 -m tools.engine env --registry)"   # the engine, $REGISTRY
    python3 bench/rehearsal_bake.py [--arch gfx1100]     # the default group, ~50 GB free disk
    python3 bench/rehearsal_bake.py --quick              # rocm-runtime and base only

The real recipes of docker/ on the rehearsal's stand-ins (docs/rehearsal.md),
for one arch: the catalogue's default group built for it (what push_default
publishes there; on gfx1100 not aiter-wheel), two ways, on the same engine,
in one run:

- ours: `bazel build --config=rehearsal <the targets>`; per image the
  ImageBuild's `docker buildx build` time (the phases line at the end of its
  log, ~/.cache/rocm-pytorch-images/logs/images/<target>.log) and its size
  (the descriptor's layers), and Bazel's wall;
- bake: `docker buildx bake --push` of the file `tagconf bake` writes from
  the catalogue (every image a target, parents as `target:` contexts, the
  stand-in upstream by its staging digest, the mirror secrets, the
  rehearsal's optional args of rehearsal/pins.bazelrc as `--arg`),
  each image pushed to `$REGISTRY/bench-rbake-<time>` (left there, as
  bench/bake.py does); timed whole, sizes from the pushed manifests. Not per
  image: bake inlines each parent's steps into its children's builds, and a
  step shared by several (every parent's) carries in the progress the name
  of whichever target reached it first, so a target's steps are not its own
  image's work (its span from rawjson progress goes to the results file
  only, as `span_with_parents_s`).

Cold means after `docker buildx prune -af` (only on the project's engine:
$ROCM_PYTORCH_ENGINE_DIR must be set), and for ours a staging registry and
mirror settings of this run's own (so no image and no action is reused).
Order: ours cold, ours one-file, prune, bake cold, bake one-file: each
one-file build follows its own cold one. One-file: a comment appended to
docker/scripts/nixl-rocm.py (only nixl-wheel's context; lmcache builds
on it; --quick: docker/scripts/build-tools.txt, in
base's); restored after, and on any exit.

It sets up what it needs in a state dir of its own (removed at the end): a
Bazel output base (so no action of an earlier run is reused, and the
workspace's outputs are left alone), the stand-in sources served
(`python3 -m tools.rehearsal.sources start`), their
mirror settings file, a staging registry, the stand-in upstream built into
it (unmeasured). Each measurement is printed (stderr) and appended to the
results file as it is taken (bench/results.py); the table goes to stdout,
last the line `rehearsal vs bake: cold Rx, one-file Rx`. At the end it stops
its servers and prunes the engine's build cache.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `tools` is a package at the root

from bench import results
from bench.bake import Edits
from tools import places
from tools.process import daemon
from tools.process.scratch_bazel import ScratchBazel, read_exec_log, rmtree
from tools.staging import descriptor
from tools.tagconf import catalog as catalog_mod

ROOT = places.workspace()

UPSTREAM = "//rehearsal:upstream"
PINS = ROOT / "rehearsal/pins.bazelrc"
ONE_FILE = "docker/scripts/nixl-rocm.py"  # in nixl-wheel's context only
ONE_FILE_QUICK = "docker/scripts/build-tools.txt"  # in base's context (and triton's)
QUICK = ["rocm-runtime", "pytorch-base"]
# a cold full run: the stand-in tree and its pulls, two BuildKit caches in turn, staging
DISK_GB = {False: 50, True: 20}
# the image builds' logs (images/private/image.bzl), through the workspace's bazel-out link
LOGS = ROOT / "bazel-out" / "logs" / "images"
PHASE = re.compile(r"^# imagebuild: .*docker buildx build ([0-9.]+)s", re.M)
VERTEX = re.compile(r"^\[([A-Za-z0-9_.-]+)(?: ([^\]]*))?\]")
GIB = 2**30


# the name in front of its messages (bench/compile_cache.py, which builds on it, sets its own)
NAME = ["rehearsal-bake"]


def progress(msg: str) -> None:
    print(f"{NAME[0]}: {msg}", file=sys.stderr, flush=True)


class Failed(SystemExit):
    def __init__(self, msg: str) -> None:
        super().__init__(f"{NAME[0]}: error: {msg}")


def pins(text: str) -> dict[str, str]:
    """The optional build args `--config=rehearsal` defines (pins.bazelrc)."""
    return dict(re.findall(r"^build:rehearsal --define ([A-Z][A-Z0-9_]*)=(\S+)$", text, re.M))


def label(catalog, name: str, arch: str) -> str:
    return f"//images:{name}.{arch}" if catalog.target(name).arch else f"//images:{name}"


def buildx_seconds(log: Path, since: float) -> float | None:
    """The `docker buildx build` phase of the last ImageBuild that wrote ``log`` after ``since``.

    None: no ImageBuild ran for it (a staging hit says "BuildKit not run").
    """
    if not log.is_file() or log.stat().st_mtime < since:
        return None
    found = PHASE.findall(log.read_text(errors="replace"))
    return float(found[-1]) if found else None


def _when(stamp: str) -> float:
    """An RFC 3339 time of BuildKit's (nanoseconds) as epoch seconds."""
    stamp = re.sub(r"(\.\d{6})\d+", r"\1", stamp).replace("Z", "+00:00")
    return datetime.fromisoformat(stamp).timestamp()


def bake_spans(lines: list[str], names: set[str]) -> dict[str, float]:
    """Per bake target: first step started to last step done (rawjson progress).

    Steps are the vertices bake names `[<target> ...]`, its `internal` ones
    (loading the Dockerfile and context) left out. A step shared by two
    targets (a parent's, inlined in each child) carries the name of the one
    that reached it first: the span of a child holds parents' work, and a
    parent's span can be near zero. For the results file, not the table.
    """
    vertices: dict[str, dict] = {}
    for line in lines:
        try:
            status = json.loads(line)
        except ValueError:
            continue
        for v in (status.get("vertexes") if isinstance(status, dict) else None) or []:
            seen = vertices.setdefault(v["digest"], {})
            for key in ("name", "started", "completed"):
                if v.get(key):
                    seen[key] = v[key]
    spans: dict[str, list[float]] = {}
    for v in vertices.values():
        m = VERTEX.match(v.get("name", ""))
        if not m or m.group(1) not in names or (m.group(2) or "").startswith("internal"):
            continue
        if "started" not in v or "completed" not in v:
            continue
        span = spans.setdefault(m.group(1), [float("inf"), 0.0])
        span[0] = min(span[0], _when(v["started"]))
        span[1] = max(span[1], _when(v["completed"]))
    return {name: end - start for name, (start, end) in spans.items()}


def manifest_bytes(registry: str, name: str, digest: str) -> int:
    """Layer bytes of an image pushed to a loopback registry (http), by digest."""
    repo = name.split("/", 1)[1].rsplit(":", 1)[0]
    accept = ", ".join(
        "application/vnd." + t
        for t in (
            "oci.image.manifest.v1+json",
            "docker.distribution.manifest.v2+json",
            "oci.image.index.v1+json",
            "docker.distribution.manifest.list.v2+json",
        )
    )
    req = urllib.request.Request(
        f"http://{registry}/v2/{repo}/manifests/{digest}", headers={"Accept": accept}
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        data = json.load(r)
    if "manifests" in data:  # an index: the image, not an attestation
        image = next(
            m for m in data["manifests"] if m.get("platform", {}).get("os") not in (None, "unknown")
        )
        return manifest_bytes(registry, name, image["digest"])
    return sum(layer["size"] for layer in data["layers"])


class Bench:
    def __init__(self, state: Path, arch: str, names: list[str], out: results.Results) -> None:
        self.state, self.arch, self.names, self.out = state, arch, names, out
        self.catalog = catalog_mod.load(ROOT / "images/catalog.toml")
        self.labels = {n: label(self.catalog, n, arch) for n in names}
        self.mirrors = state / "mirrors.toml"
        self.registry = os.environ["REGISTRY"]
        self.env = dict(
            os.environ,
            ROCM_PYTORCH_STAGING_DIR=str(state / "staging"),
            ROCM_PYTORCH_STAGING_PORT=str(daemon.free_port()),
            ROCM_PYTORCH_MIRRORS=str(self.mirrors),
            ROCM_PYTORCH_SOURCES_DIR=str(state / "sources"),
            BUILDX_NO_DEFAULT_ATTESTATIONS="1",  # one manifest per image, as ours
        )
        # A Bazel server on an output base of the run's own: no action of an earlier run is
        # reused (Bazel's action cache does not know that run's staging is gone), and the
        # workspace's outputs and bazel-* links stay as they were.
        self.scratch = ScratchBazel(state / "bazel")
        self.bazel = self.scratch.command()
        self.bazel_flags = [
            "--config=rehearsal", "--disk_cache=", "--remote_cache=", "--symlink_prefix=/",
        ]  # fmt: skip
        self.execroot: Path | None = None

    def sh(self, cmd: list[str], **kw) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            cmd, cwd=ROOT, env=self.env, capture_output=True, text=True, check=False, **kw
        )
        if proc.returncode != 0:
            tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-30:])
            raise Failed(f"`{' '.join(cmd[:8])} ...` exited {proc.returncode}:\n{tail}")
        return proc

    def prune(self) -> None:
        """An empty build cache, on the project's engine only."""
        self.sh(["docker", "buildx", "prune", "-af"])

    # -- set-up --------------------------------------------------------------------

    def setup(self) -> str:
        """Sources served, mirror settings, staging, the stand-in upstream: its staging ref."""
        self.mirrors.write_text("")
        self.sh([sys.executable, "-m", "tools.rehearsal.sources", "start", "--mirrors",
                 str(self.mirrors)])  # fmt: skip
        progress(f"stand-in sources served; mirror settings {self.mirrors}")
        progress("the stand-in upstream into this run's staging (unmeasured; about 2 min)")
        start = time.monotonic()
        self.sh([*self.bazel, "build", UPSTREAM, *self.bazel_flags])
        desc = self.descriptor(UPSTREAM)
        ref = descriptor.load(desc).staging_ref
        self.out.record("upstream", wall_s=round(time.monotonic() - start, 1), ref=ref)
        progress(f"upstream {ref} ({time.monotonic() - start:.0f}s)")
        return ref

    def descriptor(self, target: str) -> Path:
        if self.execroot is None:
            info = self.sh([*self.bazel, "info", "execution_root", *self.bazel_flags])
            self.execroot = Path(info.stdout.strip())
        out = self.sh([*self.bazel, "cquery", target, *self.bazel_flags, "--output=files"]).stdout
        return self.execroot / next(
            f
            for f in out.split()
            if f.endswith(".json") and not f.endswith((".spec.json", ".size.json"))
        )

    # -- ours ------------------------------------------------------------------------

    def ours(self, step: str) -> dict:
        """`bazel build` of the targets: wall, ImageBuild count, {image: buildx seconds}."""
        log = self.state / f"exec-{time.monotonic_ns()}.json"
        since = time.time()
        start = time.monotonic()
        self.sh([*self.bazel, "build", *self.labels.values(), *self.bazel_flags,
                 f"--execution_log_json_file={log}"])  # fmt: skip
        wall = time.monotonic() - start
        builds = sum(1 for s in read_exec_log(log) if s.get("mnemonic") == "ImageBuild")
        per = {}
        for name, target in self.labels.items():
            stem = target.split(":", 1)[1]
            per[name] = buildx_seconds(LOGS / f"{stem}.log", since)
        self.out.record(step, wall_s=round(wall, 2), image_builds=builds, buildx_s=per)
        progress(f"{step}: bazel {wall:.1f}s, {builds} ImageBuild actions")
        return {"wall": wall, "builds": builds, "per": per}

    def ours_sizes(self) -> dict[str, int]:
        sizes = {}
        for name, target in self.labels.items():
            sizes[name] = sum(b.size for b in descriptor.load(self.descriptor(target)).layers)
        self.out.record("ours sizes", bytes=sizes)
        return sizes

    # -- bake ------------------------------------------------------------------------

    def bake_file(self, upstream: str, quick: bool) -> Path:
        out = self.state / "docker-bake.json"
        ns = f"{self.registry}/bench-rbake-{int(time.time())}"
        secrets = self.state / "secrets"  # rendered again for each bake, removed after
        self.sh([sys.executable, "-m", "tools.mirrors", "render", str(secrets)])
        select = ["--group", "default"]
        if quick:
            select = [a for n in self.names for a in ("--target", n)]
        args = [a for k, v in pins(PINS.read_text()).items() for a in ("--arg", f"{k}={v}")]
        try:
            self.sh(
                [sys.executable, "-m", "tools.tagconf", "bake", *select, "--arch", self.arch,
                 "--secrets-dir", str(secrets), "--upstream", upstream, "--registry", ns,
                 *args, "--output", str(out)]
            )  # fmt: skip
        finally:
            shutil.rmtree(secrets, ignore_errors=True)
        data = json.loads(out.read_text())
        for entry in data["target"].values():
            # pushed, not kept in the engine's image store: the output ours has
            entry["output"] = ["type=image,push=true,store=false,registry.insecure=true"]
        out.write_text(json.dumps(data, indent=2) + "\n")
        progress(f"bake file: {len(data['target'])} targets, pushed to {ns}")
        return out

    def bake(self, step: str, bakefile: Path) -> dict:
        """`docker buildx bake --push`, timed whole; per-target spans; the metadata."""
        secrets = self.state / "secrets"
        self.sh([sys.executable, "-m", "tools.mirrors", "render", str(secrets)])
        meta = self.state / f"bake-meta-{time.monotonic_ns()}.json"
        progress_file = self.state / f"bake-progress-{time.monotonic_ns()}.jsonl"
        try:
            with progress_file.open("w") as err:
                start = time.monotonic()
                proc = subprocess.run(
                    ["docker", "buildx", "bake", "--file", str(bakefile), "--progress=rawjson",
                     "--allow=network.host", f"--allow=fs.read={self.state}",
                     "--metadata-file", str(meta)],
                    cwd=ROOT, env=self.env, stdout=err, stderr=err, check=False,
                )  # fmt: skip
                wall = time.monotonic() - start
        finally:
            shutil.rmtree(secrets, ignore_errors=True)
        lines = progress_file.read_text(errors="replace").splitlines()
        if proc.returncode != 0:
            tail = "\n".join(line for line in lines[-400:] if not line.startswith("{"))
            raise Failed(f"docker buildx bake exited {proc.returncode}:\n{tail[-3000:]}")
        targets = set(json.loads(bakefile.read_text())["target"])
        spans = bake_spans(lines, targets)
        self.out.record(
            step,
            wall_s=round(wall, 2),
            span_with_parents_s={k: round(v, 2) for k, v in spans.items()},
        )
        progress(f"{step}: bake {wall:.1f}s")
        return {"wall": wall, "spans": spans, "meta": json.loads(meta.read_text())}

    def bake_sizes(self, meta: dict) -> dict[str, int]:
        sizes = {}
        for target, m in meta.items():
            if not isinstance(m, dict) or "containerimage.digest" not in m:
                continue
            name = m["image.name"].split(",")[0]
            try:
                sizes[target] = manifest_bytes(self.registry, name, m["containerimage.digest"])
            except (OSError, ValueError, KeyError, StopIteration) as e:
                progress(f"warning: {target}: no size from {name}: {e}")
        self.out.record("bake sizes", bytes=sizes)
        return sizes

    def close(self) -> None:
        self.scratch.calls += 1  # shut it down even if no command got as far
        self.scratch.shutdown()
        for tool in ("tools.staging", "tools.rehearsal.sources"):
            subprocess.run([sys.executable, "-m", tool, "stop"], cwd=ROOT, env=self.env,
                           capture_output=True, check=False)  # fmt: skip


def build_cache_gb() -> float:
    """The engine's reclaimable build cache (`docker system df`), in GB."""
    proc = subprocess.run(["docker", "system", "df", "--format", "{{json .}}"],
                          capture_output=True, text=True, check=False)  # fmt: skip
    units = {"B": 1e-9, "kB": 1e-6, "KB": 1e-6, "MB": 1e-3, "GB": 1, "TB": 1e3}
    for line in proc.stdout.splitlines():
        row = json.loads(line)
        m = re.match(r"([0-9.]+)\s*([kKMGT]?B)", row.get("Reclaimable", ""))
        if row.get("Type") == "Build Cache" and m:
            return float(m.group(1)) * units[m.group(2)]
    return 0.0


def ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}x" if a and b else "n/a"


def secs(v: float | None) -> str:
    return f"{v:.1f} s" if v is not None else "-"


def size(v: int | None) -> str:
    if not v:
        return "-"
    if v >= GIB:
        return f"{v / GIB:.2f} GiB"
    return f"{v / 1e6:.1f} MB" if v >= 1e6 else f"{v / 1e3:.1f} kB"


def table(bench: Bench, m: dict) -> list[str]:
    rows = ["| image | size ours | size bake | ours cold (`docker buildx build`) |",
            "|---|---|---|---|"]  # fmt: skip
    for name in bench.names:
        bake = next((k for k in (f"{name}-{bench.arch}", name) if k in m["bake_sizes"]), None)
        rows.append(
            f"| {name} | {size(m['ours_sizes'].get(name))} | {size(m['bake_sizes'].get(bake))}"
            f" | {secs(m['ours_cold']['per'].get(name))} |"
        )
    oc, bc = m["ours_cold"]["wall"], m["bake_cold"]["wall"]
    of, bf = m["ours_one"]["wall"], m["bake_one"]["wall"]
    rows += [
        "",
        "| | ours (bazel wall) | bake (wall) | ours/bake |",
        "|---|---|---|---|",
        f"| cold | {secs(oc)} ({m['ours_cold']['builds']} image builds) | {secs(bc)}"
        f" | {ratio(oc, bc)} |",
        f"| one-file | {secs(of)} ({m['ours_one']['builds']} image builds) | {secs(bf)}"
        f" | {ratio(of, bf)} |",
    ]
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench/rehearsal_bake.py", description=__doc__.splitlines()[0])
    p.add_argument("--arch", default="gfx1100", help="the arch (default: %(default)s)")
    p.add_argument("--keep", action="store_true", help="keep the state dir (staging, sources)")
    results.add_arguments(p)
    p.epilog = (
        f"--quick: rocm-runtime and base (pytorch-base) only, the one file {ONE_FILE_QUICK}"
        " (base's context)"
    )
    args = p.parse_args(argv)
    for var, how in (
        ("REGISTRY", 'eval "$(python3 -m tools.engine env --registry)"'),
        ("DOCKER_HOST", 'eval "$(python3 -m tools.engine env --registry)"'),
        ("ROCM_PYTORCH_ENGINE_DIR", "the project's engine: it prunes that engine's build cache"),
    ):
        if not os.environ.get(var):
            progress(f"error: ${var} is unset ({how})")
            return 2
    free = shutil.disk_usage(ROOT).free / 1e9
    cache = build_cache_gb()  # the run prunes it before its first measured build
    if free + cache < DISK_GB[args.quick]:
        progress(
            f"error: {free:.0f} GB free and {cache:.0f} GB of build cache;"
            f" {'--quick' if args.quick else 'a full run'} needs"
            f" about {DISK_GB[args.quick]} GB{'' if args.quick else ' (--quick: 20)'}"
        )
        return 2
    progress(f"disk: {free:.0f} GB free, {cache:.0f} GB of build cache to prune")
    catalog = catalog_mod.load(ROOT / "images/catalog.toml")
    arch = catalog.check_arch(args.arch)
    names = (
        QUICK
        if args.quick
        else [n for n in catalog.group("default") if catalog.builds(catalog.target(n), arch)]
    )
    out = results.Results("rehearsal-bake", args)
    state = Path(tempfile.mkdtemp(prefix="bench-rbake-", dir=places.cache_dir()))
    bench = Bench(state, arch, names, out)
    edit = Edits(ROOT)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # restore the file, stop servers
    changed = ONE_FILE_QUICK if args.quick else ONE_FILE
    m: dict = {}
    try:
        progress(f"{arch}: {len(names)} images ({', '.join(names)}); state in {state}")
        upstream = bench.setup()
        bakefile = bench.bake_file(upstream, args.quick)

        progress("ours, cold (build cache pruned)")
        bench.prune()
        m["ours_cold"] = bench.ours("ours cold")
        m["ours_sizes"] = bench.ours_sizes()
        progress(f"ours, one-file ({changed} +1 comment line)")
        edit.append(changed, f"# bench {time.time_ns()}\n")
        m["ours_one"] = bench.ours("ours one-file")
        edit.undo()

        progress("bake, cold (build cache pruned)")
        bench.prune()
        m["bake_cold"] = bench.bake("bake cold", bakefile)
        m["bake_sizes"] = bench.bake_sizes(m["bake_cold"]["meta"])
        progress(f"bake, one-file ({changed} +1 comment line)")
        edit.append(changed, f"# bench {time.time_ns()}\n")
        m["bake_one"] = bench.bake("bake one-file", bakefile)
        edit.undo()
    finally:
        edit.undo()
        bench.close()
        subprocess.run(["docker", "buildx", "prune", "-af"], capture_output=True, check=False)
        if not args.keep:
            rmtree(state)
    for row in table(bench, m):
        print(row)
    cold = ratio(m["ours_cold"]["wall"], m["bake_cold"]["wall"])
    one = ratio(m["ours_one"]["wall"], m["bake_one"]["wall"])
    out.summary(f"rehearsal vs bake: cold {cold}, one-file {one}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
