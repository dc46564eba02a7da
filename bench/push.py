"""Push benchmark: our push vs crane and skopeo, the same fixture images from staging.

    eval "$(python3 -m tools.engine env --registry)"   # engine, $REGISTRY, crane/skopeo on PATH
    python3 bench/push.py [--rounds 3]
    python3 bench/push.py --quick   # the one image only, one no-op round

Builds //tests/e2e:push_default_e2e_archs (the default group, gfx950 and
gfx1201: 25 images, 50 tags), then, each tool into its own fresh namespace of
the loopback registry, through a counting proxy (tests/registry/fixtures.py):

- cold push: nothing in the namespace yet;
- no-op push: the same again, everything already there.

Every tool copies from the staging registry the image builds pushed to (the
embedded one: another host:port than the target, so blobs are streamed
registry to registry): ours through the push target's launcher, what `bazel
run` starts once it has built (`--registry NS` after it); crane `crane
copy`s each image by digest to its first tag and `crane tag`s the others;
skopeo copies it once per tag (`--preserve-digests`). The one-image no-op
is `//tests/e2e:rocm-runtime.push` (gfx950, 2 tags) against crane on the
same image. Where `bazel` runs in the bootstrap's tree (rocm-pytorch-sid-run
on PATH), the launcher runs in it too, as under `bazel run`, and so do the
crane and skopeo wrappers `tools.engine env` puts on PATH. Prints wall
times, requests per image, and ratios against crane measured in this run,
and as the last line `push: no-op ours/crane Rx, cold ours/crane Rx, ...`.
Each measurement goes to the results file (bench/results.py) as it is made.
Numbers, not assertions: the goal (no-op within 1.5x of crane, at most
1 + tags requests per image) is read off the output. `--quick` measures
the one-image target only (each tool, one no-op round).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `tools` is a package at the root

from bench import results
from tests.registry.fixtures import FaultProxy
from tools import places

ROOT = places.workspace()

TARGET = "//tests/e2e:push_default_e2e_archs"
ONE = "//tests/e2e:rocm-runtime.push"  # the default arch (gfx950): one image, 2 tags
# `bazel` runs in tools/bootstrap.sh's tree, and so does what `bazel run` starts
SID_RUN = shutil.which("rocm-pytorch-sid-run")
IN_TREE = [SID_RUN] if SID_RUN else []


def sh(cmd: list[str], **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, check=True, **kw)


def build(targets: list[str]) -> dict[str, tuple[Path, list[dict]]]:
    """Build the push targets; per target its launcher and images (staging ref, tags)."""
    sh(["bazel", "build", *targets], cwd=ROOT)
    bin_dir = Path(sh(["bazel", "info", "bazel-bin"], cwd=ROOT).stdout.strip())
    built = {}
    for target in targets:
        package, _, name = target[2:].partition(":")
        launcher = bin_dir / package / f"{name}.sh"
        runfiles = Path(f"{launcher}.runfiles/_main")
        plan = json.loads((bin_dir / package / f"{name}.json").read_text())
        images = []
        for entry in plan["images"]:
            spec = json.loads((runfiles / entry["spec"]).read_text())
            d = json.loads((runfiles / entry["descriptor"]).read_text())
            source = f"{d['staging']['registry'].split('/', 1)[0]}/{d['staging']['name']}"
            tags = [t for t in spec["tags"].values() if t]
            images.append(
                {"source": f"{source}@{d['digest']}", "repo": spec["repository"], "tags": tags}
            )
        built[target] = (launcher, images)
    return built


def ours(launcher: Path, target: str) -> None:
    # what `bazel run <push target> -- --registry NS` starts once Bazel has built
    sh([*IN_TREE, str(launcher), "--registry", target])


def crane(images: list[dict], target: str) -> None:
    for image in images:
        first = f"{target}/{image['repo']}:{image['tags'][0]}"
        sh(["crane", "copy", image["source"], first])
        for tag in image["tags"][1:]:
            sh(["crane", "tag", first, tag])


def skopeo(images: list[dict], target: str) -> None:
    for image in images:
        for tag in image["tags"]:
            sh(
                [
                    "skopeo",
                    "copy",
                    "-q",
                    "--preserve-digests",
                    "--src-tls-verify=false",
                    "--dest-tls-verify=false",
                    f"docker://{image['source']}",
                    f"docker://{target}/{image['repo']}:{tag}",
                ]
            )


def measure(name, fn, proxy: FaultProxy, rounds: int, n_images: int, out) -> dict:
    ns = f"{proxy.host}/bench-{name}-{int(time.time() * 1000)}"
    proxy.requests.clear()
    t = time.monotonic()
    fn(ns)
    cold = time.monotonic() - t
    cold_requests = len(proxy.requests)
    noop = []
    for _ in range(rounds):
        proxy.requests.clear()
        t = time.monotonic()
        fn(ns)
        noop.append(time.monotonic() - t)
    result = {
        "tool": name,
        "cold_s": cold,
        "noop_s": statistics.median(noop),
        "cold_req_per_image": cold_requests / n_images,
        "noop_req_per_image": len(proxy.requests) / n_images,
        "noop_writes": len(proxy.writes()),
    }
    out.record(name, images=n_images, noop_rounds_s=noop, **result)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="no-op rounds (median)")
    results.add_arguments(parser)
    args = parser.parse_args()
    if args.quick:
        args.rounds = 1
    registry = os.environ.get("REGISTRY")
    if not registry:
        print(
            "bench: error: $REGISTRY is unset; run this first (from the repository root):"
            ' eval "$(python3 -m tools.engine env --registry)"',
            file=sys.stderr,
        )
        return 2
    tools = ["ours"]
    for tool in ("crane", "skopeo"):
        if shutil.which(tool):
            tools.append(tool)
        else:
            print(
                f"bench: {tool} not on PATH; skipping it (tools/bootstrap.sh installs it, and"
                ' eval "$(python3 -m tools.engine env --registry)" puts it on PATH)',
                file=sys.stderr,
            )
    out = results.Results("push", args)
    target = ONE if args.quick else TARGET
    built = build(sorted({target, ONE}))
    launcher, images = built[target]
    one_launcher, one = built[ONE]
    n = len(images)
    n_tags = sum(len(i["tags"]) for i in images)
    print(f"{n} images, {n_tags} tags, from staging")
    proxy = FaultProxy(registry)
    measured = []
    try:
        runners = {
            "ours": lambda ns: ours(launcher, ns),
            "crane": lambda ns: crane(images, ns),
            "skopeo": lambda ns: skopeo(images, ns),
        }
        for name in tools:
            measured.append(measure(name, runners[name], proxy, args.rounds, n, out))
        single = {}
        if "crane" in tools and not args.quick:  # --quick: the runs above were the one image
            single["ours"] = measure(
                "ours-1", lambda ns: ours(one_launcher, ns), proxy, args.rounds, 1, out
            )
            single["crane"] = measure(
                "crane-1", lambda ns: crane(one, ns), proxy, args.rounds, 1, out
            )
    finally:
        proxy.stop()
    base = next((r for r in measured if r["tool"] == "crane"), measured[0])
    print(
        f"{'tool':8} {'cold s':>8} {'no-op s':>8} {'cold/crane':>10} {'no-op/crane':>11}"
        f" {'req/img cold':>12} {'req/img no-op':>13} {'no-op writes':>12}"
    )
    for r in measured:
        print(
            f"{r['tool']:8} {r['cold_s']:8.2f} {r['noop_s']:8.2f}"
            f" {r['cold_s'] / base['cold_s']:10.2f} {r['noop_s'] / base['noop_s']:11.2f}"
            f" {r['cold_req_per_image']:12.1f} {r['noop_req_per_image']:13.1f}"
            f" {r['noop_writes']:12d}"
        )
    print(f"goal: no-op <= 1.5x crane, <= {1 + n_tags / n:.0f} requests per image (1 + tags)")
    if "crane" in single:
        o, c = single["ours"]["noop_s"], single["crane"]["noop_s"]
        print(
            f"one image ({one[0]['repo']}, {len(one[0]['tags'])} tags) no-op: ours {o:.2f} s,"
            f" crane {c:.2f} s, ratio {o / c:.2f}x (goal <= 1.5x)"
        )
    mine, vs = measured[0], base["tool"]
    out.summary(
        f"push: {n} images, no-op ours/{vs} {mine['noop_s'] / base['noop_s']:.2f}x,"
        f" cold ours/{vs} {mine['cold_s'] / base['cold_s']:.2f}x,"
        f" no-op {mine['noop_req_per_image']:.1f} requests per image"
        f" (goal <= {1 + n_tags / n:.0f}),"
        f" no-op writes {mine['noop_writes']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
