"""Rehearsal benchmark: rocm-runtime and base from docker/ at real size, ours vs plain vs floor.

    python3 bench/rehearsal.py [--archs gfx1100,gfx942] [--keep]

On the rehearsal's stand-in upstream (a 4.9 GiB ROCm tree, //rehearsal),
for each arch, three ways, each from a cold BuildKit (its cache and images
pruned before), all in one run on a private engine and staging registry of
its own (state in a temporary directory, removed at the end):

- ours: `bazel build //images:rocm-runtime.<arch> --config=rehearsal`, then
  base (the ImageBuild action's time from the execution log, and Bazel's wall);
- plain: `docker buildx build --load` of the same Dockerfiles and stages with
  the same build args, build contexts (the upstream from staging by digest,
  rocm-runtime from the engine's store for base) and mirror secrets;
- floor: the same by hand with the ImageBuild action's output in ours' mode
  (the plain one: pushed to staging, SOURCE_DATE_EPOCH=0, no timestamp
  rewrite), base on rocm-runtime in staging: what BuildKit needs for staged
  images, no tooling.

Reports seconds, ratios (ours/plain, ours/floor, floor/plain), bytes (the
upstream's root file system and layer, what rocm-runtime keeps, the images'
compressed layers) and how the cost grows with the bytes: the archs keep
different amounts of the same tree, so their times per GiB kept compare.
Numbers, not assertions. Each measurement is printed (stderr) and written to
the results file as soon as it is made (--results, default
~/.cache/rocm-pytorch-images/bench/rehearsal-<time>.json), so a run that
stops keeps what it measured; the table and the summary line go to stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `tools` is a package at the root

from tools import engine, mirrors, places
from tools.imagebuild.outputs import staging_output
from tools.process import daemon
from tools.process.scratch_bazel import read_exec_log
from tools.rehearsal import check
from tools.staging import descriptor

ROOT = places.workspace()

UPSTREAM = "//rehearsal:upstream"
UPSTREAM_CONTEXT = "rocm/dev-ubuntu-26.04:10.1.0-full"
IMAGES = {  # name: (Dockerfile, stage, Bazel target stem, context files)
    "rocm-runtime": (
        "docker/Dockerfile.rocm-runtime",
        "rocm-runtime",
        "rocm-runtime",
        ["docker/scripts/prune-rocm-arch.sh"],
    ),
    "base": (
        "docker/Dockerfile.base",
        "base",
        "pytorch-base",
        [
            "docker/scripts/apt-install.sh",
            "docker/scripts/install-python.sh",
            "docker/scripts/build-tools.txt",
            "docker/scripts/build-env.sh",
        ],
    ),
}


def progress(msg: str) -> None:
    print(f"rehearsal-bench: {msg}", file=sys.stderr, flush=True)


class Bench:
    def __init__(self, root: Path, results: Path) -> None:
        self.root = root
        self.results = results
        self.data: dict = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "archs": {}}
        self.env = engine.unpointed_env()
        self.env.update(
            ROCM_PYTORCH_ENGINE_DIR=str(root / "engine"),
            ROCM_PYTORCH_STAGING_DIR=str(root / "staging"),
            ROCM_PYTORCH_STAGING_PORT=str(daemon.free_port()),
        )
        out = self.sh([sys.executable, "-m", "tools.engine", "env", "--private"]).stdout
        for key, value in re.findall(r"^export (\w+)=(.*)$", out, re.M):
            self.env[key] = shlex.split(value)[0] if value else ""
        for extra in re.findall(r'export PATH="\$PATH":(\S+) ;;', out):  # the docker CLI
            self.env["PATH"] += ":" + shlex.split(extra)[0]
        os.environ.update(self.env)  # every docker command of this run talks to its engine
        self.resolved = mirrors.resolve(mirrors.load())

    def sh(self, cmd: list[str], env: dict | None = None) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            cmd, cwd=ROOT, env=env or self.env, capture_output=True, text=True, check=False
        )
        if proc.returncode != 0:
            tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-30:])
            raise SystemExit(f"rehearsal-bench: `{' '.join(cmd[:6])} ...` failed:\n{tail}")
        return proc

    def record(self, path: list[str], value) -> None:
        node = self.data
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value
        self.results.parent.mkdir(parents=True, exist_ok=True)
        self.results.write_text(json.dumps(self.data, indent=2))

    def cold(self) -> None:
        """An empty BuildKit: no cache, no images (the bench's own engine only)."""
        self.sh(["docker", "image", "prune", "-af"])
        self.sh(["docker", "buildx", "prune", "-af"])

    # -- ours -----------------------------------------------------------------------

    def bazel(self, target: str) -> tuple[float, float, Path]:
        """(ImageBuild/UpstreamBuild seconds, Bazel wall, descriptor) of one target."""
        log = self.root / f"exec-{time.monotonic_ns()}.json"
        start = time.monotonic()
        self.sh(
            ["bazel", "build", target, "--config=rehearsal", "--disk_cache=", "--remote_cache=",
             f"--execution_log_json_file={log}"]
        )  # fmt: skip
        wall = time.monotonic() - start
        spawns = [
            s for s in read_exec_log(log) if s.get("mnemonic") in ("ImageBuild", "UpstreamBuild")
        ]
        action = sum(float(s["metrics"]["executionWallTime"].rstrip("s")) for s in spawns)
        out = self.sh(["bazel", "cquery", target, "--config=rehearsal", "--output=files"]).stdout
        desc = ROOT / next(
            f
            for f in out.split()
            if f.endswith(".json") and not f.endswith((".spec.json", ".size.json"))
        )
        return action, wall, desc

    # -- plain and floor ---------------------------------------------------------------

    def context(self, image: str) -> Path:
        dockerfile, _, _, files = IMAGES[image]
        ctx = self.root / f"context-{image}"
        if not ctx.exists():
            for rel in [dockerfile, *files]:
                (ctx / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(ROOT / rel, ctx / rel)
        return ctx

    def buildx(self, image: str, arch: str, contexts: dict[str, str], output: list[str]) -> float:
        dockerfile, stage, _, _ = IMAGES[image]
        ctx = self.context(image)
        secrets = mirrors.render(self.resolved, self.root / "secrets")
        cmd = ["docker", "buildx", "build", "--progress=plain", "--network", "host"]
        cmd += ["--file", str(ctx / dockerfile), "--target", stage]
        cmd += ["--build-arg", f"PYTORCH_ROCM_ARCH={arch}", "--provenance=false", "--sbom=false"]
        for name, ref in contexts.items():
            cmd += ["--build-context", f"{name}=docker-image://{ref}"]
        cmd += mirrors.buildx_args(secrets) + output + [str(ctx)]
        start = time.monotonic()
        self.sh(cmd, env=dict(self.env, SOURCE_DATE_EPOCH="0"))
        return time.monotonic() - start

    def staging(self) -> str:
        return f"127.0.0.1:{self.env['ROCM_PYTORCH_STAGING_PORT']}/staging"

    # -- one arch ---------------------------------------------------------------------

    def arch(self, arch: str, upstream_ref: str) -> dict:
        rec = lambda *path, value: self.record(["archs", arch, *path], value)  # noqa: E731
        up = {UPSTREAM_CONTEXT: upstream_ref}
        progress(f"{arch}: ours (bazel, cold)")
        self.cold()
        ours = {}
        for image in IMAGES:
            action, wall, desc = self.bazel(f"//images:{IMAGES[image][2]}.{arch}")
            ours[image] = {"action": action, "wall": wall, "descriptor": str(desc)}
            rec("ours", image, value=ours[image])
            progress(f"{arch}: ours {image}: action {action:.1f}s, bazel {wall:.1f}s")
        progress(f"{arch}: plain (docker buildx build --load, cold)")
        self.cold()
        tag = f"bench-rehearsal/rocm-runtime:{arch}"
        plain = {"rocm-runtime": self.buildx("rocm-runtime", arch, up, ["--load", "--tag", tag])}
        rec("plain", "rocm-runtime", value=plain["rocm-runtime"])
        plain["base"] = self.buildx(
            "base", arch, {"rocm-runtime": tag}, ["--load", "--tag", f"bench-rehearsal/base:{arch}"]
        )
        rec("plain", "base", value=plain["base"])
        progress(
            f"{arch}: plain rocm-runtime {plain['rocm-runtime']:.1f}s, base {plain['base']:.1f}s"
        )
        progress(f"{arch}: floor (ImageBuild's output by hand, cold)")
        self.cold()
        meta = self.root / "floor.json"
        ref = f"{self.staging()}/bench-floor-rocm-runtime:{arch}"
        floor = {
            "rocm-runtime": self.buildx(
                "rocm-runtime",
                arch,
                up,
                ["--metadata-file", str(meta), "--output", staging_output(ref, False)],
            )
        }
        digest = json.loads(meta.read_text())["containerimage.digest"]
        rec("floor", "rocm-runtime", value=floor["rocm-runtime"])
        floor["base"] = self.buildx(
            "base",
            arch,
            {"rocm-runtime": f"{ref.rsplit(':', 1)[0]}@{digest}"},
            ["--output", staging_output(f"{self.staging()}/bench-floor-base:{arch}", False)],
        )
        rec("floor", "base", value=floor["base"])
        progress(
            f"{arch}: floor rocm-runtime {floor['rocm-runtime']:.1f}s, base {floor['base']:.1f}s"
        )
        loaded = {image: descriptor.load(Path(ours[image]["descriptor"])) for image in IMAGES}
        kept = check.rocm_bytes(loaded["rocm-runtime"].staging_ref)
        sizes = {image: sum(b.size for b in d.layers) for image, d in loaded.items()}
        rec("bytes", value={"rocm_kept": kept, "layers": sizes})
        return {"ours": ours, "plain": plain, "floor": floor, "kept": kept, "layers": sizes}

    def close(self, keep: bool) -> None:
        subprocess.run(
            [sys.executable, "-m", "tools.staging", "stop"],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
        )
        subprocess.run(
            [sys.executable, "-m", "tools.engine", "stop"],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
        )
        if not keep:
            shutil.rmtree(self.root, ignore_errors=True)


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "n/a"


GIB = 2**30


def report(measured: dict, archs: list[str], action: float, layer: int, rootfs: int) -> None:
    print(
        f"stand-in upstream: {action:.0f}s (mmdebstrap, zstd, push), layer {layer / GIB:.2f} GiB,"
        f" /opt/rocm {rootfs / GIB:.2f} GiB"
    )
    print("| arch | image | ours (action / bazel) | plain --load | floor |", end="")
    print(" ours/plain | ours/floor | floor/plain |\n" + "|---" * 8 + "|")
    for arch, m in measured.items():
        for image in IMAGES:
            o, pl, fl = m["ours"][image], m["plain"][image], m["floor"][image]
            print(
                f"| {arch} | {image} | {o['action']:.1f} / {o['wall']:.1f} s | {pl:.1f} s"
                f" | {fl:.1f} s | {ratio(o['action'], pl)} | {ratio(o['action'], fl)}"
                f" | {ratio(fl, pl)} |"
            )
    print("| arch | /opt/rocm kept | layers: rocm-runtime, base |", end="")
    print(" rocm-runtime s per GiB kept: ours, plain |\n" + "|---" * 4 + "|")
    for arch, m in measured.items():
        gib = m["kept"] / GIB
        runtime, base = m["layers"]["rocm-runtime"] / GIB, m["layers"]["base"] / GIB
        per = m["ours"]["rocm-runtime"]["action"] / gib, m["plain"]["rocm-runtime"] / gib
        print(f"| {arch} | {gib:.2f} GiB | {runtime:.2f}, {base:.2f} GiB", end="")
        print(f" | {per[0]:.0f}, {per[1]:.0f} |")
    first = measured[archs[0]]
    ours, plain, floor = first["ours"], first["plain"], first["floor"]
    print(
        f"rehearsal ({archs[0]}): rocm-runtime"
        f" {ratio(ours['rocm-runtime']['action'], plain['rocm-runtime'])} plain,"
        f" base {ratio(ours['base']['action'], plain['base'])} plain; floor/plain"
        f" {ratio(floor['rocm-runtime'], plain['rocm-runtime'])},"
        f" {ratio(floor['base'], plain['base'])}"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench/rehearsal.py", description=__doc__.splitlines()[0])
    p.add_argument(
        "--archs", default="gfx1100,gfx942", help="comma-separated (default: %(default)s)"
    )
    p.add_argument("--results", type=Path, help="the results JSON (written as measured)")
    p.add_argument("--keep", action="store_true", help="keep the engine and staging state dir")
    args = p.parse_args(argv)
    archs = [a.strip() for a in args.archs.split(",") if a.strip()]
    results = args.results or Path(
        places.home(), *places.CACHE_DIR, "bench", f"rehearsal-{int(time.time())}.json"
    )
    root = Path(tempfile.mkdtemp(prefix="bench-rehearsal-", dir=places.cache_dir()))
    bench = Bench(root, results)
    progress(f"state in {root}; results in {results}")
    try:
        progress("the stand-in upstream (bazel, into this run's staging)")
        action, wall, desc = bench.bazel(UPSTREAM)
        upstream = descriptor.load(desc)
        layer = upstream.layers[0].size
        rootfs = check.rocm_bytes(upstream.staging_ref)
        bench.record(["upstream"], {"action": action, "wall": wall, "layer": layer, "rocm": rootfs})
        progress(
            f"stand-in: {action:.1f}s, layer {layer / GIB:.2f}, /opt/rocm {rootfs / GIB:.2f} GiB"
        )
        measured = {arch: bench.arch(arch, upstream.staging_ref) for arch in archs}
    finally:
        bench.close(args.keep)
    report(measured, archs, action, layer, rootfs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
