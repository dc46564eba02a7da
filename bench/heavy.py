"""Heavy benchmark: a 1 GB image chain through the project's rules vs plain buildx.

    eval "$(python3 -m tools.engine env --registry)"
    python3 bench/heavy.py [--root-mb 1024] [--child-mb 50] [--grand-mb 5] [--reps 3]
    python3 bench/heavy.py --quick   # 1 MiB each, one repetition: about a minute
    python3 bench/heavy.py --release # the reproducible output mode (--config=release's)

Builds //bench/heavy (a root with a ROOT_MB random layer, a child adding
CHILD_MB, a grandchild adding GRAND_MB, on a FROM-scratch busybox stand-in)
with `bazel build` in the workspace's own output base, so the embedded
staging registry and BuildKit's cache are the real ones. A new RUN_ID per run
makes the root new; a new salt file per repetition (bench/heavy/child-salt.txt,
which only the child's RUN reads; put back at the end), the way a developer
edits a file, rebuilds the child and the grandchild while the root stays a
BuildKit cache hit; no --define changes between the timed builds. In the same run it
builds the same Dockerfile stages with plain `docker buildx build --load`
(each parent in the engine's store, reached as a `docker-image://` named
context) and measures:

- child and grandchild build times, ours (the ImageBuild action, from the
  execution log, and the whole `bazel build :child`) vs plain: min and
  median of the repetitions, ratios of the medians (the summary line uses
  the ImageBuild action: one `docker buildx build` each);
- host bytes: (staging growth + bazel-out bytes of the image targets) /
  unique blob bytes of the chain, over the first (cold) chain build;
- ImageBuild actions executed after `--image_registry=...` and, separately,
  `--define VCS_REF=...` (both should be 0);
- after the chain's descriptors are deleted (what `bazel clean` or a fresh
  runner on the same staging sees): the ImageBuild actions that run again,
  how many were staging hits (no BuildKit build), and the wall;
- a cold publish of the chain with the project's push (//bench/heavy:push)
  vs `crane copy` of the same three images from staging;
- the floor: the child and grandchild built by hand with the ImageBuild
  action's own `--output` in the run's mode (pushed to staging,
  SOURCE_DATE_EPOCH=0; with `--release` also `rewrite-timestamp`), each on
  its parent in staging. floor/plain is what BuildKit needs for staged
  images in that mode; ours/floor is the tooling (Bazel's spawn,
  imagebuild's start and checks).

The mode: by default the development one (no `--reproducible`:
BuildKit's plain output, a child built on its parent's own snapshot);
`--release` adds `--reproducible` (what `--config=release` sets:
every new layer's timestamps rewritten, and a child pulls its rewritten
parent back from staging).

`--dockerfile family` (default) builds bench/heavy/Dockerfile, whose stage
names differ from the parent names, as in the family's Dockerfiles;
`--dockerfile overlap` builds Dockerfile.overlap, where each parent is also
a stage of the same file (see bench/README.md for why that matters).

Numbers, not assertions. Progress goes to stderr, and each measurement to
the results file as it is made (bench/results.py; the path is printed at the
start); the table and, as the last line, the summary to stdout. At the end
it deletes its plain images, the two published namespaces (their manifests:
the registry's own gc reclaims the blobs) and its BuildKit cache records;
staging is left to `bazel run //tools/staging -- gc`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `tools` is a package at the root

from bench import results
from tools import places
from tools.imagebuild.outputs import staging_output
from tools.process.scratch_bazel import read_exec_log  # standard library only
from tools.staging import descriptor, embedded  # standard library only

ROOT = places.workspace()

PKG = "//bench/heavy"
IMAGES = {"root": "heavy-root", "child": "heavy-child", "grand": "heavy-grand"}
# --dockerfile: the file and the stage of each image (catalog.toml, catalog.overlap.toml).
DOCKERFILES = {
    "family": ("Dockerfile", {k: k for k in IMAGES}),
    "overlap": ("Dockerfile.overlap", IMAGES),
}
DOCKERFILE_DIR = ROOT / "bench/heavy"
# The child's salt, a context file its RUN bind-mounts: rewritten per repetition.
SALT = "bench/heavy/child-salt.txt"
# the static busybox of the bootstrap's sid tree, seen from the host or inside it
BUSYBOX = (
    "/usr/bin/busybox",
    os.environ.get("ROCM_PYTORCH_SID_PREFIX", "/opt/rocm-pytorch-sid") + "/usr/bin/busybox",
)
PLAIN_REPO = "bench-heavy-plain"
IMAGE_MNEMONIC = "ImageBuild"
# A user.bazelrc cache must not turn builds into downloads (build_graph.py does the same).
NO_CACHE = ["--disk_cache=", "--remote_cache="]
PUBLISH_CHANGES = [
    ("registry", "--image_registry=127.0.0.1:5999/elsewhere"),
    ("VCS_REF", "--define=VCS_REF=1a2b3c4"),
]


def progress(msg: str) -> None:
    print(f"heavy: {msg}", file=sys.stderr, flush=True)


def sh(cmd: list[str], **kw) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, **kw)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-30:])
        raise SystemExit(f"heavy: error: `{' '.join(cmd)}` failed ({proc.returncode}):\n{tail}")
    return proc


def timed(cmd: list[str], **kw) -> tuple[float, subprocess.CompletedProcess[str]]:
    t = time.monotonic()
    proc = sh(cmd, **kw)
    return time.monotonic() - t, proc


def seconds(value: str | None) -> float:
    return float(value.rstrip("s")) if value else 0.0


@dataclass
class Build:
    wall: float  # the bazel client, or Bazel's own elapsed time when it waited for a lock
    images: dict[str, float]  # ImageBuild target name -> action wall time
    outputs: dict[str, Path]  # ImageBuild target name -> its descriptor
    specs: int  # ImageSpec actions executed
    disturbed: bool  # another command held the server, or changed its options meanwhile
    hits: int = 0  # ImageBuild actions that were staging hits (no BuildKit build)


class Bazel:
    """`bazel build` in the workspace with the run's --define values and settings."""

    def __init__(self, workdir: Path, defines: dict[str, str], settings: list[str]) -> None:
        self.workdir = workdir
        self.defines = defines
        self.settings = settings  # flags: --heavy_dockerfile=..., --reproducible
        self.n = 0

    def flags(self, **extra: str) -> list[str]:
        values = {**self.defines, **extra}
        return [f"--define={k}={v}" for k, v in values.items()] + self.settings + NO_CACHE

    def build(self, targets: list[str], *more: str, **extra: str) -> Build:
        self.n += 1
        log = self.workdir / f"exec-{self.n}.json"
        cmd = ["bazel", "build", *targets, *self.flags(**extra), *more]
        wall, proc = timed([*cmd, f"--execution_log_json_file={log}"], cwd=ROOT)
        waited = "Another command" in proc.stderr
        if waited:  # the client queued behind someone else: Bazel's own clock
            m = re.search(r"Elapsed time: ([0-9.]+)s", proc.stderr)
            wall = float(m.group(1)) if m else wall
        disturbed = waited or "discarding analysis cache" in proc.stderr
        spawns = read_exec_log(log)
        log.unlink(missing_ok=True)
        images = {
            s.get("targetLabel", "?").rsplit(":", 1)[-1]: seconds(
                s.get("metrics", {}).get("executionWallTime")
            )
            for s in spawns
            if s.get("mnemonic") == IMAGE_MNEMONIC
        }
        outputs = {
            s.get("targetLabel", "?").rsplit(":", 1)[-1]: ROOT / s["listedOutputs"][0]
            for s in spawns
            if s.get("mnemonic") == IMAGE_MNEMONIC and s.get("listedOutputs")
        }
        specs = sum(1 for s in spawns if s.get("mnemonic") == "ImageSpec")
        hits = proc.stderr.count(": staging hit: ")
        return Build(wall, images, outputs, specs, disturbed, hits)


@dataclass
class Series:
    """Per-repetition seconds of one measurement."""

    values: list[float] = field(default_factory=list)

    @property
    def min(self) -> float:
        return min(self.values)

    @property
    def median(self) -> float:
        return statistics.median(self.values)


# ---- plain docker buildx -----------------------------------------------------


class Plain:
    """The same Dockerfile stages with plain `docker buildx build --load`."""

    def __init__(self, workdir: Path, run_id: str, sizes: dict[str, str], variant: str) -> None:
        self.ctx = workdir / "plain-context"
        self.ctx.mkdir()
        self.dockerfile, self.stages = DOCKERFILES[variant]
        for name in (self.dockerfile, "Dockerfile.upstream"):
            shutil.copy(DOCKERFILE_DIR / name, self.ctx / name)
        busybox = next((p for p in BUSYBOX if Path(p).is_file()), None)
        if busybox is None:
            raise SystemExit(f"heavy: error: no static busybox at {' or '.join(BUSYBOX)}")
        shutil.copy(busybox, self.ctx / "busybox")
        self.run_id = run_id
        self.sizes = sizes
        self.images: list[str] = []

    def ref(self, what: str, suffix: str = "") -> str:
        return f"{PLAIN_REPO}/{what}:{self.run_id}{suffix}"

    def command(self, dockerfile: str, stage: str | None, *args: str) -> list[str]:
        cmd = ["docker", "buildx", "build", "--progress=plain", "--network", "none"]
        cmd += ["--file", str(self.ctx / dockerfile)]
        if stage:
            cmd += ["--target", stage]
        for key, value in self.sizes.items():
            cmd += ["--build-arg", f"{key}={value}"]
        return [*cmd, *args, str(self.ctx)]

    def build(self, dockerfile: str, stage: str | None, tag: str, *args: str) -> float:
        self.images.append(tag)
        return timed(self.command(dockerfile, stage, *args, "--load", "--tag", tag))[0]

    def floor(
        self, what: str, ref: str, parent: str, reproducible: bool, *args: str
    ) -> tuple[float, str]:
        """Plain buildx with the ImageBuild action's output in ``reproducible``'s mode (pushed
        to staging as ``ref``), its parent in staging: what BuildKit itself needs, no
        tooling. Returns (seconds, staging reference by digest)."""
        meta = self.ctx.parent / f"floor-{what}.json"
        cmd = self.command(
            self.dockerfile,
            self.stages[what],
            *args,
            "--build-context",
            f"{parent}",
            "--provenance=false",
            "--sbom=false",
            "--metadata-file",
            str(meta),
            "--output",
            staging_output(ref, reproducible),
        )
        secs, _ = timed(cmd, env=dict(os.environ, SOURCE_DATE_EPOCH="0"))
        digest = json.loads(meta.read_text())["containerimage.digest"]
        return secs, f"{ref.rsplit(':', 1)[0]}@{digest}"

    def upstream(self) -> float:
        return self.build("Dockerfile.upstream", None, self.ref("upstream"))

    def root(self, upstream_context: str) -> float:
        return self.build(
            self.dockerfile,
            self.stages["root"],
            self.ref(IMAGES["root"]),
            "--build-context",
            f"{upstream_context}=docker-image://{self.ref('upstream')}",
        )

    def salt(self, salt: str) -> None:
        """The child's salt file in this context."""
        path = self.ctx / SALT
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(salt + "\n")

    def child(self, rep: int, salt: str) -> float:
        self.salt(salt)
        return self.build(
            self.dockerfile,
            self.stages["child"],
            self.ref(IMAGES["child"], f"-{rep}"),
            "--build-context",
            f"{IMAGES['root']}=docker-image://{self.ref(IMAGES['root'])}",
        )

    def grand(self, rep: int) -> float:
        return self.build(
            self.dockerfile,
            self.stages["grand"],
            self.ref(IMAGES["grand"], f"-{rep}"),
            "--build-context",
            f"{IMAGES['child']}=docker-image://{self.ref(IMAGES['child'], f'-{rep}')}",
        )

    def cleanup(self) -> None:
        for tag in self.images:
            subprocess.run(["docker", "image", "rm", "--force", tag], capture_output=True)


# Descriptions of the BuildKit cache records this benchmark leaves: its RUN
# lines and the parents it pulled from staging or loaded into the engine.
CACHE_MARKERS = ("/root.bin", "/child.bin", "/grand.bin", "/staging/heavy-", f"{PLAIN_REPO}/")


_UNITS = {"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}


def cache_records() -> list[dict]:
    """BuildKit's cache records (`docker buildx du --format json`), sizes in bytes."""
    du = subprocess.run(
        ["docker", "buildx", "du", "--format", "json"], capture_output=True, text=True
    )
    records = [json.loads(line) for line in du.stdout.splitlines() if line.strip()]
    for r in records:
        m = re.fullmatch(r"([0-9.]+)\s*([kMGT]?B)", str(r.get("Size", "0B")).strip())
        r["bytes"] = float(m.group(1)) * _UNITS[m.group(2)] if m else 0.0
    return records


def prune_bench_cache(known_before: set[str], min_bytes: float) -> int:
    """Remove the benchmark's BuildKit cache records (GBs per run); how many went.

    The benchmark's records: those its RUN lines and pulled parents describe,
    their descendants, and the undescribed records of at least ``min_bytes``
    that appeared during the run (the layers BuildKit keeps for the images it
    pulled back from staging). Parents go only after their children, so it
    prunes until nothing is left to prune.
    """
    removed = 0
    for _ in range(6):
        records = cache_records()
        ours = {
            r["ID"]
            for r in records
            if any(m in (r.get("Description") or "") for m in CACHE_MARKERS)
            or (
                not r.get("Description") and r["ID"] not in known_before and r["bytes"] >= min_bytes
            )
        }
        grew = True
        while grew:
            more = {r["ID"] for r in records if set(r.get("Parents") or []) & ours} - ours
            ours |= more
            grew = bool(more)
        if not ours:
            break
        ids = sorted(ours)
        # buildx turns `id=V` into the regexp filter `id~=V`: one alternation per call.
        for chunk in range(0, len(ids), 100):
            subprocess.run(
                [
                    "docker",
                    "buildx",
                    "prune",
                    "--force",
                    "--filter=id=" + "|".join(ids[chunk : chunk + 100]),
                ],
                capture_output=True,
            )
        after = {r["ID"] for r in cache_records()}
        removed += len(ours - after)
        if not ours - after:
            break
    return removed


# ---- staging and descriptors -------------------------------------------------


def staging_blobs(p: embedded.Paths) -> set[str]:
    """Digests of the blobs (layers, configs, manifests) the embedded registry holds."""
    root = p.data / "docker/registry/v2/blobs/sha256"
    if not root.is_dir():
        return set()
    return {f"sha256:{d.name}" for sub in root.iterdir() for d in sub.iterdir()}


def chain_blobs(descriptors: list[dict]) -> dict[str, int]:
    """digest -> bytes of every blob the chain's manifests need, manifests included."""
    blobs: dict[str, int] = {}
    for d in descriptors:
        blobs[d["digest"]] = len(d["manifest"].encode())
        manifest = json.loads(d["manifest"])
        for b in [manifest["config"], *manifest.get("layers", [])]:
            blobs[b["digest"]] = int(b["size"])
    return blobs


# ---- publishing ---------------------------------------------------------------


def crane_bin() -> str:
    found = shutil.which("crane")
    if not found:
        raise SystemExit(
            "heavy: error: crane is not on PATH (tools/bootstrap.sh installs it, and"
            ' eval "$(python3 -m tools.engine env --registry)" puts it there)'
        )
    return found


def tags_of(spec: dict) -> list[str]:
    return [t for t in spec["tags"].values() if t]


def crane_copy(crane: str, descriptors: list[dict], specs: list[dict], target: str) -> None:
    for d, spec in zip(descriptors, specs, strict=True):
        host = d["staging"]["registry"].split("/", 1)[0]
        src = f"{host}/{d['staging']['name']}@{d['digest']}"
        tags = tags_of(spec)
        first = f"{target}/{spec['repository']}:{tags[0]}"
        sh([crane, "copy", src, first])
        for tag in tags[1:]:
            sh([crane, "tag", first, tag])


def delete_namespace(crane: str, registry: str, ns: str, repositories: list[str]) -> None:
    """Delete every manifest under registry/ns/<repository> (the blobs wait for registry gc)."""
    for repo in repositories:
        ref = f"{registry}/{ns}/{repo}"
        listed = subprocess.run([crane, "ls", ref], capture_output=True, text=True)
        digests = set()
        for tag in listed.stdout.split():
            out = subprocess.run([crane, "digest", f"{ref}:{tag}"], capture_output=True, text=True)
            if out.returncode == 0:
                digests.add(out.stdout.strip())
        for digest in digests:
            subprocess.run([crane, "delete", f"{ref}@{digest}"], capture_output=True)


# ---- the run ------------------------------------------------------------------


def fmt_mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB"


def ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Sizes are MiB of random bytes; the defaults are the benchmark's real size.",
    )
    parser.add_argument("--root-mb", type=int, default=1024, help="root layer (default 1024)")
    parser.add_argument("--child-mb", type=int, default=50, help="child layer (default 50)")
    parser.add_argument("--grand-mb", type=int, default=5, help="grandchild layer (default 5)")
    parser.add_argument("--reps", type=int, default=3, help="repetitions (default 3)")
    parser.add_argument(
        "--dockerfile",
        choices=sorted(DOCKERFILES),
        default="family",
        help="family (default): stage names differ from the parent names, as in the"
        " family's Dockerfiles; overlap: each parent is also a stage of the Dockerfile, so"
        " its named context overrides that stage (Dockerfile.overlap)",
    )
    parser.add_argument(
        "--release",
        action="store_true",
        help="build ours with --reproducible (--config=release's output mode:"
        " timestamps rewritten) and the floor with that output; default: the plain mode",
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep the plain images, the published namespaces and the BuildKit cache records",
    )
    results.add_arguments(parser)
    args = parser.parse_args()
    if args.quick:
        args.root_mb = args.child_mb = args.grand_mb = args.reps = 1
    registry = os.environ.get("REGISTRY")
    if not registry or not os.environ.get("DOCKER_HOST"):
        print(
            "heavy: error: $REGISTRY or $DOCKER_HOST is unset;"
            ' eval "$(python3 -m tools.engine env --registry)"',
            file=sys.stderr,
        )
        return 2
    if args.reps < 1 or min(args.root_mb, args.child_mb, args.grand_mb) < 1:
        parser.error("sizes and --reps must be at least 1")
    crane = crane_bin()
    run_id = f"{int(time.time() * 1000):x}"
    sizes = {
        "ROOT_MB": str(args.root_mb),
        "CHILD_MB": str(args.child_mb),
        "GRAND_MB": str(args.grand_mb),
    }
    out = results.Results("heavy", args)
    known_records = {r["ID"] for r in cache_records()}
    salt = (ROOT / SALT).read_bytes()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind: put the salt back
    with tempfile.TemporaryDirectory(prefix="bench-heavy-") as tmp:
        workdir = Path(tmp)
        plain = Plain(workdir, run_id, sizes, args.dockerfile)
        namespaces = [f"bench-heavy-{run_id}-ours", f"bench-heavy-{run_id}-crane"]
        try:
            return run(args, out, registry, crane, run_id, sizes, workdir, plain, namespaces)
        finally:
            (ROOT / SALT).write_bytes(salt)
            if not args.keep:
                progress("cleanup: plain images, published namespaces, BuildKit cache records")
                plain.cleanup()
                for ns in namespaces:
                    delete_namespace(crane, registry, ns, list(IMAGES.values()))
                n = prune_bench_cache(known_records, args.grand_mb * 1048576)
                progress(f"cleanup: {n} BuildKit cache records of the benchmark pruned")


def run(args, out, registry, crane, run_id, sizes, workdir, plain, namespaces) -> int:
    bazel = Bazel(
        workdir,
        {**sizes, "RUN_ID": run_id},
        [f"--heavy_dockerfile={args.dockerfile}", *(["--reproducible"] if args.release else [])],
    )
    mode_name = "release mode" if args.release else "plain mode"
    labels = {k: f"{PKG}:{k}" for k in IMAGES}
    progress(
        f"run {run_id}: root {args.root_mb} MiB, child +{args.child_mb} MiB,"
        f" grand +{args.grand_mb} MiB, {args.reps} repetitions, {plain.dockerfile}, {mode_name}"
    )

    # The tools and the stand-in first: not part of any measurement.
    progress("warm-up: tools and the busybox stand-in (ours and plain)")
    bazel.build([f"{PKG}:upstream", "//tools/imagebuild", "//tools/registry", "//tools/tagconf"])
    plain.upstream()
    out.record(
        "warm-up",
        run_id=run_id,
        sizes=sizes,
        reps=args.reps,
        dockerfile=plain.dockerfile,
        release=args.release,
    )
    image_dir = None  # the images' outputs: the noarch configuration, not bazel-bin
    spaths = embedded.paths()

    ours_root: list[float] = []
    ours = {k: Series() for k in ("child", "grand")}
    action = {k: Series() for k in ("child", "grand")}
    plain_t = {k: Series() for k in ("child", "grand")}
    floor_t = {k: Series() for k in ("child", "grand")}
    disturbed = 0
    host: dict[str, float] = {}
    plain_root = 0.0

    for rep in range(1, args.reps + 1):
        (ROOT / SALT).write_text(f"o{rep}-{run_id}\n")
        if rep == 1:
            before_bytes = embedded.storage_bytes(spaths)
            before_blobs = staging_blobs(spaths)
        b = bazel.build([labels["root"]])
        ours_root.append(b.wall)
        if image_dir is None and "root" in b.outputs:
            image_dir = b.outputs["root"].parent
        if image_dir is None:
            raise SystemExit("heavy: error: the root's ImageBuild did not run (new RUN_ID?)")
        out.record("ours root", rep=rep, wall_s=b.wall)
        progress(
            f"rep {rep}: ours root {b.wall:6.1f}s"
            f" ({f'cold, new {args.root_mb} MiB layer' if rep == 1 else 'null build'})"
        )
        for what in ("child", "grand"):
            b = bazel.build([labels[what]])
            disturbed += b.disturbed
            ours[what].values.append(b.wall)
            action[what].values.append(b.images.get(what, float("nan")))
            out.record(
                f"ours {what}",
                rep=rep,
                wall_s=b.wall,
                imagebuild_s=b.images.get(what),
                disturbed=b.disturbed,
            )
            progress(
                f"rep {rep}: ours {what:5} {b.wall:6.1f}s (ImageBuild"
                f" {b.images.get(what, float('nan')):.1f}s; ran {sorted(b.images) or 'none'})"
            )
        if rep == 1:
            after_bytes = embedded.storage_bytes(spaths)
            descriptors = [json.loads((image_dir / f"{k}.json").read_text()) for k in IMAGES]
            outputs = [
                image_dir / f"{k}{suffix}"
                for k in IMAGES
                for suffix in (".json", ".spec.json", ".build.json")
            ]
            blobs = chain_blobs(descriptors)
            host = {
                "growth": after_bytes - before_bytes,
                "bazel_out": sum(p.stat().st_size for p in outputs),
                "largest_out": max(p.stat().st_size for p in outputs),
                "unique": sum(blobs.values()),
                "blobs": len(blobs),
                "preexisting": sum(s for d, s in blobs.items() if d in before_blobs),
                "embedded": all(d["staging"].get("embedded") for d in descriptors),
            }
            # The named context the Dockerfile's FROM ${UPSTREAM_IMAGE}:${ROCM_VERSION} reads.
            plain_root = plain.root(
                json.loads((image_dir / "root.spec.json").read_text())["upstream"]
            )
            out.record("host bytes", **host)
            out.record("plain root", wall_s=plain_root)
            progress(f"plain root {plain_root:6.1f}s (cold, new {args.root_mb} MiB layer, --load)")
        t = plain.child(rep, f"p{rep}-{run_id}")
        plain_t["child"].values.append(t)
        out.record("plain child", rep=rep, wall_s=t)
        progress(f"rep {rep}: plain child {t:6.1f}s")
        t = plain.grand(rep)
        plain_t["grand"].values.append(t)
        out.record("plain grand", rep=rep, wall_s=t)
        progress(f"rep {rep}: plain grand {t:6.1f}s")
        # The floor: the same builds as the ImageBuild actions, by hand (no Bazel, no tooling).
        root = descriptor.load(image_dir / "root.json")
        floor_repo = f"{root.staging_registry}/bench-heavy-floor"
        plain.salt(f"f{rep}-{run_id}")
        t, child_ref = plain.floor(
            "child",
            f"{floor_repo}/{IMAGES['child']}:{run_id}-{rep}",
            f"{IMAGES['root']}=docker-image://{root.staging_ref}",
            args.release,
        )
        floor_t["child"].values.append(t)
        out.record("floor child", rep=rep, wall_s=t)
        progress(f"rep {rep}: floor child {t:6.1f}s")
        t, _ = plain.floor(
            "grand",
            f"{floor_repo}/{IMAGES['grand']}:{run_id}-{rep}",
            f"{IMAGES['child']}=docker-image://{child_ref}",
            args.release,
        )
        floor_t["grand"].values.append(t)
        out.record("floor grand", rep=rep, wall_s=t)
        progress(f"rep {rep}: floor grand {t:6.1f}s")

    # Publishing changes: the last repetition's chain, up to date, then one define changed.
    targets = list(labels.values())
    null = bazel.build(targets)
    out.record("null build", imagebuild=len(null.images), imagespec=null.specs)
    changes = {}
    for name, flag in PUBLISH_CHANGES:
        b = bazel.build(targets, flag)
        changes[name] = b
        out.record(f"define {name}", imagebuild=len(b.images), imagespec=b.specs)
        progress(f"{flag}: ImageBuild {len(b.images)}, ImageSpec {b.specs}")

    # Lost outputs, as after `bazel clean` or on a fresh runner with the same staging:
    # every ImageBuild runs again, and each should be a staging hit (no BuildKit build).
    for k in IMAGES:
        (image_dir / f"{k}.json").unlink()
    lost = bazel.build(targets)
    out.record("lost outputs", imagebuild=len(lost.images), hits=lost.hits, wall_s=lost.wall)
    progress(
        f"lost outputs: ImageBuild {len(lost.images)}, staging hits {lost.hits}, {lost.wall:.1f}s"
    )

    # Cold publish: the project's push vs crane copy, each into a fresh namespace.
    # `bazel run --script_path` builds the push and writes the script `bazel run`
    # would exec (runfiles environment included): timing it leaves the Bazel client out.
    launcher = workdir / "push-run.sh"
    sh(["bazel", "run", f"--script_path={launcher}", f"{PKG}:push", *bazel.flags()], cwd=ROOT)
    specs = [json.loads((image_dir / f"{k}.spec.json").read_text()) for k in IMAGES]
    descriptors = [json.loads((image_dir / f"{k}.json").read_text()) for k in IMAGES]
    ns_ours, ns_crane = (f"{registry}/{ns}" for ns in namespaces)
    # tools/bootstrap.sh runs Bazel in its sid tree's /usr (rocm-pytorch-sid-run): the
    # runfiles tree links into it, so the script runs there too, as under `bazel run`.
    sid_run = shutil.which("rocm-pytorch-sid-run")
    t_ours, _ = timed([*([sid_run] if sid_run else []), str(launcher), "--registry", ns_ours])
    out.record("publish ours", wall_s=t_ours)
    progress(f"publish ours  {t_ours:6.1f}s -> {ns_ours}")
    t = time.monotonic()
    crane_copy(crane, descriptors, specs, ns_crane)
    t_crane = time.monotonic() - t
    out.record("publish crane", wall_s=t_crane)
    progress(f"publish crane {t_crane:6.1f}s -> {ns_crane}")

    # ---- the report ----------------------------------------------------------
    def row(name: str, s: Series) -> str:
        reps = " ".join(f"{v:6.2f}" for v in s.values)
        return f"  {name:<34} {s.min:8.2f} {s.median:9.2f}   {reps}"

    print(
        f"heavy chain {run_id}: root {args.root_mb} MiB + child {args.child_mb} MiB"
        f" + grand {args.grand_mb} MiB of random bytes, {args.reps} repetitions,"
        f" bench/heavy/{plain.dockerfile} (--dockerfile {args.dockerfile}), {mode_name}"
    )
    print(f"  {'build (seconds)':<34} {'min':>8} {'median':>9}   per repetition")
    print(f"  {'root   ours  bazel build :root, cold':<34} {ours_root[0]:8.2f}")
    if len(ours_root) > 1:  # a null build: the salt is no input of the root
        print(row("root   ours  null build", Series(ours_root[1:])))
    print(f"  {'root   plain buildx --load, cold':<34} {plain_root:8.2f}")
    for what in ("child", "grand"):
        print(row(f"{what:<6} ours  bazel build :{what}", ours[what]))
        print(row(f"{what:<6} ours  ImageBuild action", action[what]))
        print(row(f"{what:<6} plain buildx --load", plain_t[what]))
        print(row(f"{what:<6} floor buildx to staging", floor_t[what]))

    # The ImageBuild action is what compares with one `docker buildx build`; the
    # `bazel build` wall adds the client, ImageSpec and whatever else shares the server.
    def ratios(a: dict[str, Series], b: dict[str, Series], unit: str = "") -> str:
        return ", ".join(
            f"{w} {ratio(a[w].median, b[w].median):.2f}x{unit}" for w in ("child", "grand")
        )

    print(
        f"  ours/plain (medians): ImageBuild action {ratios(action, plain_t)};"
        f" bazel build wall {ratios(ours, plain_t)}"
    )
    # Bazel's own cost per command (client, analysis, ImageSpec/ImageSize, the output
    # checks) is a few tenths of a second whatever the layer size: beside a 0.5 s plain
    # build it doubles the wall ratio, beside an hour's build it is nothing. Absolute.
    around = {
        w: Series([t - a for t, a in zip(ours[w].values, action[w].values, strict=True)])
        for w in ("child", "grand")
    }
    null_s = f"; a null build {statistics.median(ours_root[1:]):.2f}s" if len(ours_root) > 1 else ""
    print(
        "  bazel build wall - ImageBuild action (medians, seconds, the same at any layer size):"
        f" child {around['child'].median:.2f}s, grand {around['grand'].median:.2f}s{null_s}"
    )
    print(
        f"  floor/plain (BuildKit's staged output, {mode_name}): {ratios(floor_t, plain_t)};"
        f" ours/floor (the tooling): {ratios(action, floor_t)}"
    )
    if disturbed:
        print(
            f"  ({disturbed} of the timed bazel builds shared the server with another command:"
            " queued behind it or re-analysed after its options; their wall times are noisy)"
        )
    host_total = host["growth"] + host["bazel_out"]
    host_ratio = ratio(host_total, host["unique"])
    print("host bytes (first repetition: the cold chain):")
    print(
        f"  staging growth {fmt_mb(host['growth'])}"
        + ("" if host["embedded"] else " (staging is not the embedded registry: not measured)")
        + f"; bazel-out image outputs {host['bazel_out'] / 1e3:.1f} kB (9 files,"
        f" largest {host['largest_out'] / 1e3:.1f} kB)"
    )
    print(
        f"  unique blob bytes of the chain {fmt_mb(host['unique'])} ({host['blobs']} blobs:"
        f" manifests, configs, layers; {fmt_mb(host['preexisting'])} already in staging)"
    )
    print(f"  (growth + bazel-out) / unique = {host_ratio:.3f}")
    print("publish changes (the chain up to date, one --define changed):")
    print(f"  null build: ImageBuild {len(null.images)}, ImageSpec {null.specs}")
    for (name, flag), b in zip(PUBLISH_CHANGES, changes.values(), strict=True):
        print(f"  {flag}: ImageBuild {len(b.images)}, ImageSpec {b.specs} ({name})")
    rebuilds = sum(len(b.images) for b in changes.values())
    cold = ours_root[0] + ours["child"].values[0] + ours["grand"].values[0]
    print("after bazel clean (the chain's descriptors deleted, staging kept):")
    print(
        f"  ImageBuild {len(lost.images)} ran, {lost.hits} staging hits (no BuildKit build),"
        f" bazel build {lost.wall:.2f}s (the cold chain: {cold:.2f}s)"
    )
    print("cold publish of the chain (3 images, fresh namespace each):")
    print(f"  ours  bazel run {PKG}:push -- --registry {ns_ours}: {t_ours:.2f}s")
    print(f"  crane copy from staging to {ns_crane}: {t_crane:.2f}s")
    print(f"  ours/crane {ratio(t_ours, t_crane):.2f}x")
    out.summary(
        f"heavy chain ({mode_name}): {ratios(action, plain_t, ' plain')},"
        f" host bytes {host_ratio:.2f}x unique, publish-change rebuilds {rebuilds}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
