"""Remote cache check: a real HTTP cache, two fresh output bases, 100 % hits.

Starts a loopback Bazel HTTP cache, the team cache of tools/teamcache (Debian's
nginx with WebDAV, the sid tree's through `rocm-pytorch-sid-run`), with its state in
the check's temp dir, on a free 127.0.0.1 port, then runs a small real subset of
the repository twice with `--config=ci` against it:

- run A, output base A, empty cache: builds and tests everything and uploads
  every cacheable result;
- run B, a fresh output base B (no action cache, no outputs), same cache.

and checks, from run B's execution log (`--execution_log_json_file`):

- every cacheable spawn (everything but ImageBuild) was a remote cache hit;
- the ImageBuild actions (the Docker image builds) ran locally, uncached;

and from the cache directory itself:

- no image file is in the CAS: neither an ImageBuild output (the descriptor)
  nor any blob of the image it describes (manifest, config, layers: the CAS
  key of a blob is its sha256, the same digest the image names it by), and
  no CAS entry is larger than the largest output of a cacheable action (a
  cache size bound that an uploaded image would break).

Then the team check (`team`), as a team hits it: machine C (this checkout,
this engine, output base C) builds //tests/e2e:pytorch.gfx950 into a shared
loopback staging registry (`--staging=127.0.0.1:PORT/team`) with the
same cache; machine D (a copy of the checkout in another directory, a second
private engine with its own socket and docker config, output base D) builds
the same target and must run 0 ImageBuild actions (all cache hits), then
load one of them into its own engine and build a child on them.

Prints `PASS: ...`/`FAIL: ...` per check, the hit rate, the cache size and the
wall times of A and B, then `remote cache checks: N passed, M failed`; exits
non-zero on any failure. nginx, both Bazel servers and every temporary file
(output bases included) are gone at the end, whatever happens.

Needs: the Docker engine (`eval "$(python3 -m tools.engine env)"`; the
actions learn DOCKER_HOST/DOCKER_CONFIG outside their keys, see
tools/client_env.py) and nginx (`rocm-pytorch-sid-run`, tools/bootstrap.sh).
Python 3.11, stdlib only.

    python3 .ci/remote_cache_check.py [--keep]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT_DIR = str(Path(__file__).resolve().parents[1])
if ROOT_DIR not in sys.path:  # run as a script: `tools` is a package at the root
    sys.path.insert(0, ROOT_DIR)

from tools import places  # noqa: E402
from tools.process.scratch_bazel import ScratchBazel, read_exec_log, rmtree  # noqa: E402
from tools.teamcache import server as teamcache  # noqa: E402

REPO = places.workspace()

# A small real subset: two pytest/diff tests (Python toolchain, pip deps,
# generated files) and one real image build (the stand-in upstream image and
# triton-wheel: two ImageBuild actions, plus the cacheable ImageSpec).
TARGETS = [
    "//tests/tagconf:tagconf_test",
    "//tests/generated:targets_bzl_test",
    "//tests/e2e:triton-wheel",
]
IMAGE_MNEMONIC = "ImageBuild"
BAZEL_TIMEOUT = 600  # per invocation; a run takes well under a minute here

RESULTS: list[tuple[str, bool]] = []


def report(name: str, ok: bool, detail: str = "") -> bool:
    RESULTS.append((name, ok))
    print(f"{'PASS' if ok else 'FAIL'}: {name}{': ' + detail if detail else ''}", flush=True)
    return ok


def info(line: str) -> None:
    print(f"  {line}", flush=True)


# ---- the cache ---------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Nginx:
    """The team cache (tools/teamcache: nginx, WebDAV) on a free 127.0.0.1 port, its state
    dir (data, config, logs, pid) in ``workdir``: the one code path that serves Bazel's
    HTTP cache protocol, here and on a team's machine."""

    def __init__(self, workdir: Path) -> None:
        self.paths = teamcache.Paths(workdir / "teamcache")
        self.root = self.paths.data  # ac/ and cas/
        self.port = 0

    @property
    def url(self) -> str:
        return teamcache.url(self.port)

    def start(self) -> None:
        last_error = ""
        for _ in range(3):  # another process may take the free port first
            try:
                self.port = teamcache.start(self.paths, port=free_port()).port
                return
            except teamcache.TeamCacheError as e:
                last_error = str(e)
        raise RuntimeError(f"nginx did not start:\n{last_error}")

    def stop(self) -> None:
        teamcache.stop(self.paths)

    def self_test(self) -> None:
        """PUT, GET and DELETE one object, as Bazel's HTTP cache client does."""
        body = os.urandom(4096)
        url = f"{self.url}/selftest/{hashlib.sha256(body).hexdigest()}"
        req = urllib.request.Request(url, data=body, method="PUT")
        with urllib.request.urlopen(req, timeout=10) as resp:
            if resp.status not in (200, 201, 204):
                raise RuntimeError(f"PUT {url}: HTTP {resp.status}")
        with urllib.request.urlopen(url, timeout=10) as resp:
            if resp.read() != body:
                raise RuntimeError(f"GET {url}: different bytes back")
        urllib.request.urlopen(urllib.request.Request(url, method="DELETE"), timeout=10).close()

    def uploads(self) -> tuple[int, int]:
        """PUT requests to /ac/ and /cas/ so far, and their request bytes."""
        count = size = 0
        log = self.paths.access_log
        if log.exists():
            for line in log.read_text(errors="replace").splitlines():
                parts = line.split()
                if len(parts) == 4 and parts[0] == "PUT" and parts[1].startswith(("/ac/", "/cas/")):
                    count += 1
                    size += int(parts[3]) if parts[3].isdigit() else 0
        return count, size


def cache_entries(root: Path, kind: str) -> dict[str, int]:
    """{sha256: size} of the cache's `ac` or `cas` directory."""
    folder = root / kind
    if not folder.is_dir():
        return {}
    return {p.name: p.stat().st_size for p in folder.iterdir() if p.is_file()}


def label(spawn: dict) -> str:
    return spawn.get("targetLabel") or spawn.get("progressMessage") or "?"


def is_image(spawn: dict) -> bool:
    return spawn.get("mnemonic") == IMAGE_MNEMONIC


def output_files(spawn: dict) -> list[dict]:
    return spawn.get("actualOutputs") or []


def remote_hit(spawn: dict) -> bool:
    return spawn.get("runner") == "remote cache hit" or bool(spawn.get("remoteCacheHit"))


def image_output_digests(spawns: list[dict]) -> dict[str, str]:
    """{sha256: path} of every file the ImageBuild spawns wrote (layout files, metadata).

    The log lists each file of a tree artifact (the OCI layout) with its
    sha256, which is also its name in the cache's CAS if it was ever uploaded.
    """
    return {
        o["digest"]["hash"]: o["path"]
        for s in spawns
        if is_image(s)
        for o in output_files(s)
        if o.get("digest", {}).get("hash")
    }


def image_blobs(execroot: Path | None, spawns: list[dict]) -> dict[str, str]:
    """{sha256: label} of every blob of the images the ImageBuild descriptors name.

    The manifest, the config and each layer (the images are in staging; a
    cache must hold none of them).
    """
    out: dict[str, str] = {}
    for s in spawns:
        if not is_image(s) or execroot is None:
            continue
        for item in s.get("listedOutputs") or []:
            path = execroot / item
            if path.suffix == ".json" and path.is_file():
                d = json.loads(path.read_text())
                manifest = json.loads(d["manifest"])
                for blob in [d["digest"], manifest["config"]["digest"]] + [
                    layer["digest"] for layer in manifest.get("layers") or []
                ]:
                    out[blob.removeprefix("sha256:")] = label(s)
    return out


def largest_cacheable_output(execroot: Path | None, spawns: list[dict]) -> int:
    """Bytes of the largest file a cacheable spawn produced, test logs included.

    A test's log is its stdout, not a listed output, but it goes to the cache
    too, so read it from the output base.
    """
    sizes = [
        int(o.get("digest", {}).get("sizeBytes", 0))
        for s in spawns
        if not is_image(s)
        for o in output_files(s)
    ]
    for s in spawns:
        if s.get("mnemonic") == "TestRunner" and execroot is not None:
            for item in s.get("listedOutputs") or []:
                log = execroot / Path(item).parent / "test.log"
                if log.is_file():
                    sizes.append(log.stat().st_size)
    return max(sizes, default=0)


# ---- the check ---------------------------------------------------------------


def bazel_run(
    bazel: ScratchBazel, cache_url: str, exec_log: Path, extra: list[str]
) -> tuple[bool, str, float, str]:
    """Run the subset; (passed, output tail, wall seconds, Bazel's critical path)."""
    rc, out, err, wall = bazel.run(
        "test",
        *TARGETS,
        "--config=ci",
        f"--remote_cache={cache_url}",
        "--disk_cache=",  # only the cache under test
        f"--execution_log_json_file={exec_log}",
        *extra,
    )
    lines = (out + err).strip().splitlines()
    keep = [i for i, line in enumerate(lines) if re.search(r"ERROR|FAILED|error:", line)]
    keep = sorted(set(keep[-20:]) | set(range(max(0, len(lines) - 6), len(lines))))
    tail = "\n".join(lines[i] for i in keep)
    m = re.search(r"Critical Path: ([0-9.]+)s", err)
    critical = f"critical path {m.group(1)}s" if m else "no critical path line"
    return rc == 0 and exec_log.exists(), tail, wall, critical


# ---- the team check: two machines, one cache, one staging ------------------

# The images machine C builds and machine D must get from the cache: the
# fixture pytorch image and its parents (stand-in upstream, rocm-runtime,
# base, pytorch-src, triton-wheel). D then loads one and builds a child.
TEAM_TARGET = "//tests/e2e:pytorch.gfx950"
TEAM_LOAD = "//tests/e2e:pytorch-base.gfx950.load"
TEAM_CHILD = "//tests/e2e:pytorch-wheel.gfx950"


def copy_checkout(dest: Path) -> None:
    """The checkout's files (tracked, and new ones git does not ignore) in a second
    directory: another clone, with this one's uncommitted changes."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (n.decode() for n in listed)):
        src = REPO / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


def engine_env(state_dir: Path, command: str) -> dict[str, str]:
    """`python3 -m tools.engine --dir DIR COMMAND --private` for a second engine: its
    exported variables (env), or {} (stop)."""
    from tools import engine

    proc = subprocess.run(
        [sys.executable, "-m", "tools.engine", "--dir", str(state_dir), command, "--private"]
        if command == "env"
        else [sys.executable, "-m", "tools.engine", "--dir", str(state_dir), command],
        env=engine.unpointed_env(),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
        check=command == "env",
    )
    return dict(
        line.removeprefix("export ").split("=", 1)
        for line in proc.stdout.splitlines()
        if line.startswith("export ") and not line.startswith("export PATH")
    )


def staging_env(state_dir: Path, port: int) -> dict[str, str]:
    return dict(
        os.environ, ROCM_PYTORCH_STAGING_DIR=str(state_dir), ROCM_PYTORCH_STAGING_PORT=str(port)
    )


def team(workdir: Path, nginx: Nginx, extra: list[str]) -> None:
    """Machine C (this checkout, this engine) and machine D (a second checkout in another
    directory, a second engine with its own socket and docker config, its own output
    base) share the HTTP cache and a staging registry: D must run no ImageBuild."""
    clone = workdir / "clone-d"
    copy_checkout(clone)
    staging_dir, port = workdir / "team-staging", free_port()
    subprocess.run(  # the sid tree's Python: docker-registry is in that tree
        ["rocm-pytorch-sid-run", "python3", "-m", "tools.staging", "start"],
        cwd=REPO,
        env=staging_env(staging_dir, port),
        capture_output=True,
        check=True,
        timeout=60,
    )
    engine_d = Path(tempfile.mkdtemp(prefix="rpd-", dir="/tmp"))  # short socket paths
    bazel_c = ScratchBazel(workdir / "output-base-c", timeout=BAZEL_TIMEOUT)
    bazel_d = ScratchBazel(workdir / "output-base-d", timeout=BAZEL_TIMEOUT, cwd=clone)
    shared = [
        "--config=ci",
        f"--remote_cache={nginx.url}",
        "--disk_cache=",
        f"--staging=127.0.0.1:{port}/team",
        *extra,
    ]
    try:
        env_d = dict(os.environ, **engine_env(engine_d / "e", "env"))
        differ = [k for k in ("DOCKER_HOST", "DOCKER_CONFIG") if env_d.get(k) == os.environ.get(k)]
        if not report(
            "team: a second engine for machine D (own socket and docker config)",
            not differ,
            f"C: {os.environ.get('DOCKER_HOST')}, D: {env_d.get('DOCKER_HOST')}",
        ):
            return
        log_c, log_d, log_child = (workdir / f"exec-{n}.json" for n in ("c", "d", "child"))
        run = bazel_c.run("build", TEAM_TARGET, *shared, f"--execution_log_json_file={log_c}")
        built = [s for s in read_exec_log(log_c) if is_image(s)] if log_c.exists() else []
        ran_c = [s for s in built if not remote_hit(s)]
        if not report(
            "team: machine C builds into the shared staging and uploads",
            run.rc == 0 and bool(ran_c),
            f"{len(ran_c)} ImageBuild actions ran, {run.wall:.1f}s",
        ):
            info(run.stderr[-3000:].replace("\n", "\n  "))
            return
        bazel_c.shutdown()

        run = bazel_d.run(
            "build", TEAM_TARGET, *shared, f"--execution_log_json_file={log_d}", env=env_d
        )
        images_d = [s for s in read_exec_log(log_d) if is_image(s)] if log_d.exists() else []
        ran_d = [label(s) for s in images_d if not remote_hit(s)]
        report(
            "team: machine D (other directory, engine, output base) runs 0 ImageBuild actions",
            run.rc == 0 and not ran_d and len(images_d) == len(built),
            f"C ran {len(ran_c)}, D ran {len(ran_d)} and got {len(images_d) - len(ran_d)} from"
            f" the cache, {run.wall:.1f}s"
            + "".join(f"\n    ran on D: {n}" for n in ran_d)
            + ("" if run.rc == 0 else "\n  " + run.stderr[-3000:].replace("\n", "\n  ")),
        )
        run = bazel_d.run("run", TEAM_LOAD, *shared, env=env_d)
        loaded = [line for line in run.stdout.splitlines() if line.startswith("loaded ")]
        report(
            "team: machine D loads a cached image into its own engine",
            run.rc == 0 and bool(loaded),
            "; ".join(loaded) or run.stderr[-2000:],
        )
        run = bazel_d.run(
            "build", TEAM_CHILD, *shared, f"--execution_log_json_file={log_child}", env=env_d
        )
        child = [s for s in read_exec_log(log_child) if is_image(s)] if log_child.exists() else []
        report(
            "team: machine D builds a child on the cached parents",
            run.rc == 0
            and [label(s).rpartition("//")[2] for s in child if not remote_hit(s)]
            == [TEAM_CHILD.removeprefix("//")],
            f"ran: {', '.join(label(s) for s in child if not remote_hit(s)) or 'nothing'}"
            + ("" if run.rc == 0 else "\n  " + run.stderr[-3000:].replace("\n", "\n  ")),
        )
    finally:
        bazel_c.shutdown()
        bazel_d.shutdown()
        engine_env(engine_d / "e", "stop")
        rmtree(engine_d)
        subprocess.run(
            ["rocm-pytorch-sid-run", "python3", "-m", "tools.staging", "stop"],
            cwd=REPO,
            env=staging_env(staging_dir, port),
            capture_output=True,
            check=False,
            timeout=60,
        )


def check(workdir: Path, extra: list[str]) -> None:
    if not os.environ.get("DOCKER_HOST"):
        report(
            "Docker engine",
            False,
            'DOCKER_HOST is not set; run eval "$(python3 -m tools.engine env)" first',
        )
        return
    nginx = Nginx(workdir)
    bazel_a = ScratchBazel(workdir / "output-base-a", timeout=BAZEL_TIMEOUT)
    bazel_b = ScratchBazel(workdir / "output-base-b", timeout=BAZEL_TIMEOUT)
    try:
        try:
            nginx.start()
            nginx.self_test()
            report("loopback HTTP cache up (nginx WebDAV PUT/GET)", True, nginx.url)
        except Exception as e:  # nothing else can run without it
            report("loopback HTTP cache up (nginx WebDAV PUT/GET)", False, str(e))
            return

        # ---- run A: cold cache, fresh output base
        log_a = workdir / "exec-a.json"
        ok, tail, wall_a, critical_a = bazel_run(bazel_a, nginx.url, log_a, extra)
        puts, put_bytes = nginx.uploads()
        if not report(
            "run A (empty cache) passes and uploads",
            ok and puts > 0,
            f"{wall_a:.1f}s ({critical_a}), {puts} uploads, {put_bytes / 1e6:.2f} MB",
        ):
            info(tail.replace("\n", "\n  "))
            return
        spawns_a = read_exec_log(log_a)
        rc, out, _, _ = bazel_a.run("info", "execution_root")
        execroot = Path(out.strip()) if rc == 0 and out.strip() else None
        image_digests = image_output_digests(spawns_a)
        blobs = image_blobs(execroot, spawns_a)
        largest = largest_cacheable_output(execroot, spawns_a)
        bazel_a.shutdown()  # one server at a time on a 2-core host

        # ---- run B: same cache, a fresh output base
        log_b = workdir / "exec-b.json"
        ok, tail, wall_b, critical_b = bazel_run(bazel_b, nginx.url, log_b, extra)
        detail = f"{wall_b:.1f}s ({critical_b})"
        if not report("run B (fresh output base, warm cache) passes", ok, detail):
            info(tail.replace("\n", "\n  "))
            return
        spawns_b = read_exec_log(log_b)
        bazel_b.shutdown()

        cacheable = [s for s in spawns_b if not is_image(s)]
        hits = [s for s in cacheable if remote_hit(s)]
        misses = [s for s in cacheable if not remote_hit(s)]
        rate = 100.0 * len(hits) / len(cacheable) if cacheable else 0.0
        report(
            "run B: every cacheable spawn was a remote cache hit",
            bool(cacheable) and not misses,
            f"{len(hits)}/{len(cacheable)} = {rate:.1f} %"
            + "".join(
                f"\n    miss: {s.get('mnemonic')} {label(s)} (runner {s.get('runner')!r},"
                f" remoteCacheable {s.get('remoteCacheable')})"
                for s in misses
            ),
        )

        images_b = [s for s in spawns_b if is_image(s)]
        bad = [
            s
            for s in images_b
            if remote_hit(s)
            or s.get("remoteCacheable")
            or s.get("remotable")
            # a persistent worker is a local process too (tools/process/worker.py)
            or s.get("runner") not in ("local", "worker", "processwrapper-sandbox", "linux-sandbox")
        ]
        report(
            "run B: the ImageBuild actions ran locally, uncached",
            bool(images_b) and not bad and any("triton-wheel" in label(s) for s in images_b),
            ", ".join(f"{label(s)} ({s.get('runner')})" for s in images_b or bad)
            or "no ImageBuild spawn in run B",
        )

        cas = cache_entries(nginx.root, "cas")
        ac = cache_entries(nginx.root, "ac")
        leaked = sorted(image_digests[d] for d in image_digests.keys() & cas.keys())
        leaked += sorted(f"{blobs[d]} blob {d[:12]}" for d in blobs.keys() & cas.keys())
        too_big = sorted(d for d, size in cas.items() if size > largest)
        report(
            "no descriptor nor image blob in the cache",
            bool(image_digests) and bool(blobs) and not (leaked or too_big),
            f"{len(image_digests)} descriptors and {len(blobs)} blobs of their images: "
            f"{len(leaked)} of them among the {len(cas)} CAS entries; largest CAS entry"
            f" {max(cas.values(), default=0)} B, bound (largest cacheable output) {largest} B"
            + "".join(f"\n    uploaded: {p}" for p in leaked)
            + "".join(f"\n    CAS entry over the bound: {d} ({cas[d]} B)" for d in too_big),
        )

        team(workdir, nginx, extra)

        total = sum(cas.values()) + sum(ac.values())
        print(
            f"hit rate {rate:.1f} % ({len(hits)}/{len(cacheable)} cacheable spawns,"
            f" {len(images_b) - len(bad)}/{len(images_b)} ImageBuild local and uncached);"
            f" cache {total / 1e6:.2f} MB"
            f" ({len(cas)} CAS + {len(ac)} AC entries); wall time A {wall_a:.1f}s,"
            f" B {wall_b:.1f}s (B/A {wall_b / wall_a:.2f})",
            flush=True,
        )
    finally:
        bazel_a.shutdown()
        bazel_b.shutdown()
        nginx.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (logs, cache)")
    parser.add_argument(
        "--bazel-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="one more option for both runs (repeatable), e.g. --bazel-arg=--jobs=4",
    )
    args = parser.parse_args(argv)

    # SIGTERM (a CI timeout) unwinds like Ctrl-C, so the cleanup below runs.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    start = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="remote-cache-check-"))
    try:
        check(workdir, args.bazel_arg)
    except Exception as e:
        report("remote cache check ran to the end", False, f"{type(e).__name__}: {e}")
    finally:
        if args.keep:
            print(f"kept {workdir}")
        else:
            rmtree(workdir)
    passed = sum(ok for _, ok in RESULTS)
    failed = len(RESULTS) - passed
    print(f"total {time.monotonic() - start:.1f}s")
    print(f"remote cache checks: {passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
