"""Ours vs plain `docker buildx bake`: the heavy chain, then the fixture family.

    eval "$(python3 -m tools.engine env --registry)"   # engine, $REGISTRY, crane
    python3 bench/bake.py [--archs gfx950,gfx1201] [--rounds 3] [--root-mb 1024]
    python3 bench/bake.py --quick   # 1 MiB chain, gfx950 only, one round, 1 s to settle

Both build the same images from the same Dockerfiles on the same engine, in
one run. Bake's files are what `tagconf bake` writes from the catalogues
(every image a target, parents as `target:` contexts), built in a copy of the
context with BuildKit's plain output, each image pushed to the loopback
registry (`$REGISTRY/bench-bake-*`); no staging. Ours: `bazel build`, each
image an ImageBuild into the embedded staging registry, plain mode.

1. The heavy chain (bench/heavy: a --root-mb random root, +50 MiB child,
   +5 MiB grandchild; a new root per run): ours `bazel build
   //bench/heavy:grand`, bake the chain's three targets.
   - one-file: the child's salt file (bench/heavy/child-salt.txt, which its
     RUN reads) changed: child and grandchild rebuild in both;
   - base-change: a RUN added to the root's stage: all three rebuild.
2. The fixture family (tests/e2e/docker, the twins of docker/ on a busybox
   stand-in upstream) for --archs: ours `bazel build //tests/e2e:all`.
   - one-file: a comment appended to tests/e2e/docker/Dockerfile.lmcache (a
     leaf: lmcache-wheel and lmcache per arch get new inputs; every step is
     in BuildKit's cache). Ours builds from each image's view of its
     Dockerfile (tools/dockerfile model.view), so no image build runs; bake
     re-solves all;
   - one-run (printed, not in the summary line): a RUN added to the lmcache
     wheel's build stage, so BuildKit runs it: lmcache-wheel and lmcache per
     arch get new bytes in both;
   - base-change: a RUN appended to base's stage of Dockerfile.base: base and
     everything built on it changes.

Each part: one build each (the first timings printed), --warm null builds
(not counted), then per round null and each change, undone after its round
(and both rebuilt, unmeasured). Each timed build starts after --settle
seconds of quiet (measured: a build right after a bake took 4.7 s, the same
after 5 s idle 1.8 s). Prints each measurement as it is taken and writes it
to the results file (bench/results.py; partial results survive an
interrupt), the medians with ours/bake, the line `heavy chain vs bake: ...`
and last `family vs bake: null Rx, one-file Rx, base-change Rx`. The files it
edits are restored on any exit; at the end it deletes the heavy chain's bake
images (manifests) and the benchmark's BuildKit cache records.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `tools` is a package at the root

from bench import results
from bench.heavy import (  # standard library only
    BUSYBOX,
    SALT,
    cache_records,
    crane_bin,
    delete_namespace,
    prune_bench_cache,
)
from tools import places

ROOT = places.workspace()

TWINS = "tests/e2e/docker"
HEAVY = "bench/heavy"
HEAVY_PKG = "//bench/heavy"
FAMILY = "//tests/e2e:all"
LEAF = f"{TWINS}/Dockerfile.lmcache"
BASE = f"{TWINS}/Dockerfile.base"


def progress(msg: str) -> None:
    print(f"bake-bench: {msg}", file=sys.stderr, flush=True)


def sh(cmd: list[str], **kw) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, **kw)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-30:])
        raise SystemExit(
            f"bake-bench: error: `{' '.join(cmd)}` failed ({proc.returncode}):\n{tail}"
        )
    return proc


def timed(cmd: list[str], **kw) -> float:
    start = time.monotonic()
    sh(cmd, **kw)
    return time.monotonic() - start


class Edits:
    """Appends to a file under each of ``roots`` (the repository, bake's context copy);
    ``undo`` restores them."""

    def __init__(self, *roots: Path) -> None:
        self.roots = roots
        self.saved: dict[Path, bytes] = {}

    def append(self, rel: str, text: str) -> None:
        for path in (root / rel for root in self.roots):
            self.saved.setdefault(path, path.read_bytes())
            path.write_bytes(self.saved[path] + text.encode())

    def insert(self, rel: str, before: str, text: str) -> None:
        """Puts ``text`` in front of the first ``before`` in the file."""
        for path in (root / rel for root in self.roots):
            self.saved.setdefault(path, path.read_bytes())
            old = self.saved[path].decode()
            if before not in old:
                raise SystemExit(f"bake-bench: error: {path} no longer has {before!r}")
            path.write_text(old.replace(before, text + before, 1))

    def undo(self) -> None:
        for path, data in self.saved.items():
            path.write_bytes(data)
        self.saved.clear()


def leaf_change(n: int) -> tuple[str, str]:
    return LEAF, f"\n# bench {n}\n"


def leaf_run(n: int) -> tuple[str, str, str]:
    # the build stage of lmcache-wheel, which lmcache copies from too
    return LEAF, "\n\nFROM scratch AS wheel", f'\nRUN echo "bench {n}" > /out/bench.txt\n'


def heavy_base_change(n: int) -> tuple[str, str, str]:
    # a RUN at the end of the root's stage: root, child and grandchild change
    return f"{HEAVY}/Dockerfile", "\nFROM heavy-root AS child", f'\nRUN echo "bench {n}" > /marker'


def base_change(n: int) -> tuple[str, str]:
    # the base stage is the file's last: a RUN at the end changes base's image
    return BASE, f'\nRUN echo "bench {n}" > /bench-marker\n'


def bake_file(out: Path, registry: str, catalog: str, upstream_dir: str, *args: str) -> Path:
    """``tagconf --catalog CATALOG bake ARGS...`` into ``out``, each target pushed to
    ``registry``, plus the stand-in upstream built from ``upstream_dir``/Dockerfile.upstream."""
    sh(
        [
            sys.executable, "-m", "tools.tagconf", "--catalog", catalog, "bake", *args,
            "--network", "none", "--upstream", "target:upstream",
            "--registry", registry, "--output", str(out),
        ],
        cwd=ROOT,
    )  # fmt: skip
    data = json.loads(out.read_text())
    for entry in data["target"].values():
        entry["output"] = ["type=image,push=true,registry.insecure=true"]
    data["target"]["upstream"] = {
        "context": ".",
        "dockerfile": f"{upstream_dir}/Dockerfile.upstream",
        "network": "none",
        "output": ["type=cacheonly"],
    }
    out.write_text(json.dumps(data, indent=2) + "\n")
    return out


Pairs = dict[str, list[tuple[float, float]]]


def compare(
    what: str,
    ours: list[str],
    bake: list[str],
    ctx: Path,
    changes: dict[str, Callable[[int], None]],
    edits: Edits,
    args: argparse.Namespace,
    out: results.Results,
) -> tuple[tuple[float, float], Pairs]:
    """Ours and bake after one build each and --warm null builds: null, then each of
    ``changes`` (undone after its round), per round; (first build, measurements)."""

    def both(label: str) -> tuple[float, float]:
        time.sleep(args.settle)
        o = timed(ours, cwd=ROOT)
        time.sleep(args.settle)
        b = timed(bake, cwd=ctx)
        progress(f"{what}, {label}: ours {o:.2f}s, bake {b:.2f}s")
        out.record(f"{what}, {label}", ours_s=o, bake_s=b)
        return o, b

    first = both("first build (warm-up)")
    # A new Bazel server (a new output base, the first build of the day), or new
    # --define values, make the next builds slower while the JVM warms up or the
    # analysis is redone; users keep their server and their flags.
    for n in range(args.warm):
        both(f"null, warm-up {n + 1} (not counted)")
    measured: Pairs = {"null": [], **{name: [] for name in changes}}
    for n in range(args.rounds):
        measured["null"].append(both(f"null, round {n + 1}"))
        for name, change in changes.items():
            change(time.time_ns())
            measured[name].append(both(f"{name}, round {n + 1}"))
            edits.undo()
            both(f"{name} undone (not counted)")
    return first, measured


def table(what: str, first: tuple[float, float], measured: Pairs) -> dict[str, float]:
    """Print the medians with ours/bake; the ratios."""
    print(f"{what}: first build ours {first[0]:.2f}s, bake {first[1]:.2f}s (warm-up)")
    print(f"  {'scenario':12} {'ours s':>8} {'bake s':>8} {'ours/bake':>10}")
    ratios = {}
    for name, pairs in measured.items():
        o = statistics.median(p[0] for p in pairs)
        b = statistics.median(p[1] for p in pairs)
        ratios[name] = o / b
        print(f"  {name:12} {o:8.2f} {b:8.2f} {o / b:10.2f}")
    return ratios


def line(what: str, ratios: dict[str, float]) -> str:
    return (
        f"{what} vs bake: null {ratios['null']:.2f}x, one-file {ratios['one-file']:.2f}x,"
        f" base-change {ratios['base-change']:.2f}x"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archs", default="gfx950,gfx1201", help="archs (default: the e2e two)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per scenario (median)")
    parser.add_argument(
        "--settle",
        type=float,
        default=5.0,
        help="seconds of quiet before each timed build (default 5): the engine keeps working"
        " for a few seconds after a bake returns, and the next build would pay for it",
    )
    parser.add_argument(
        "--warm",
        type=int,
        default=2,
        help="null builds of both after the first, not counted (default 2): a new Bazel"
        " server's first builds are slower while its JVM warms up (measured: a null build"
        " 1.70 s on a new server, 0.66 s on a warm one)",
    )
    parser.add_argument(
        "--root-mb",
        type=int,
        default=1024,
        help="the heavy chain's root layer, MiB of random bytes (default 1024; child +50,"
        " grandchild +5, as bench/heavy.py)",
    )
    results.add_arguments(parser)
    args = parser.parse_args()
    heavy_sizes = {"ROOT_MB": str(args.root_mb), "CHILD_MB": "50", "GRAND_MB": "5"}
    if args.quick:
        args.archs, args.rounds, args.settle, args.warm = "gfx950", 1, 1.0, 0
        heavy_sizes = {"ROOT_MB": "1", "CHILD_MB": "1", "GRAND_MB": "1"}
    registry = os.environ.get("REGISTRY")
    if not registry or not os.environ.get("DOCKER_HOST"):
        progress(
            "error: $REGISTRY or $DOCKER_HOST is unset; run first (repository root):"
            ' eval "$(python3 -m tools.engine env --registry)"'
        )
        return 2
    busybox = next((p for p in BUSYBOX if Path(p).is_file()), None)
    if busybox is None:
        progress(f"error: no static busybox at {' or '.join(BUSYBOX)}; run tools/bootstrap.sh")
        return 2
    crane = crane_bin()
    out = results.Results("bake", args)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind: undo the edits
    ctx = Path(tempfile.mkdtemp(prefix="bench-bake-"))
    edits = Edits(ROOT, ctx)
    run_id = f"bake{int(time.time())}"
    ns = f"bench-bake-{int(time.time())}"
    known_records = {r["ID"] for r in cache_records()}
    try:
        shutil.copytree(ROOT / TWINS, ctx / TWINS)
        shutil.copytree(ROOT / HEAVY, ctx / HEAVY)
        shutil.copy2(busybox, ctx / "busybox")

        # The heavy chain: a new root this run, both cold for the first build.
        values = {**heavy_sizes, "RUN_ID": run_id}
        sets = [f"--set={k}={v}" for k, v in values.items()]
        heavy_file = bake_file(
            ctx / "docker-bake.heavy.json",
            f"{registry}/{ns}",
            f"{HEAVY}/catalog.toml",
            HEAVY,
            *sets,
        )
        progress(f"heavy chain: root {values['ROOT_MB']} MiB, bake file {heavy_file}")
        heavy = compare(
            "heavy chain",
            [
                "bazel",
                "build",
                f"{HEAVY_PKG}:grand",
                *[f"--define={k}={v}" for k, v in values.items()],
            ],
            ["docker", "buildx", "bake", "-f", str(heavy_file), "--progress=plain"],
            ctx,
            {
                "one-file": lambda n: edits.append(SALT, f"{n}\n"),
                "base-change": lambda n: edits.insert(*heavy_base_change(n)),
            },
            edits,
            args,
            out,
        )

        # The fixture family for the archs.
        family_file = bake_file(
            ctx / "docker-bake.json",
            f"{registry}/{ns}",
            "images/catalog.toml",
            TWINS,
            *("--arch", args.archs, "--dockerfile-dir", TWINS),
        )
        bake = ["docker", "buildx", "bake", "-f", str(family_file)]
        n_bake = len(json.loads((ctx / "docker-bake.json").read_text())["target"])
        progress(f"family: bake file {n_bake} targets ({args.archs}); context copy {ctx}")
        family = compare(
            "family",
            ["bazel", "build", FAMILY, f"--define=arch={args.archs}"],
            [*bake, "--progress=plain"],
            ctx,
            {
                "one-file": lambda n: edits.append(*leaf_change(n)),
                "one-run": lambda n: edits.insert(*leaf_run(n)),
                "base-change": lambda n: edits.append(*base_change(n)),
            },
            edits,
            args,
            out,
        )
    finally:
        edits.undo()
        shutil.rmtree(ctx, ignore_errors=True)
        progress("cleanup: the heavy chain's bake images and BuildKit cache records")
        delete_namespace(crane, registry, ns, ["heavy-root", "heavy-child", "heavy-grand"])
        prune_bench_cache(known_records, 1 << 20)
    heavy_line = line("heavy chain", table("heavy chain", *heavy))
    print(heavy_line)
    out.summary(line("family", table("family", *family)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
