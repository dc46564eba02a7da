"""Edit-only rebuilds under load use the engine, staging and mirrors their user gave.

A user with a non-default engine (`ROCM_PYTORCH_ENGINE_DIR`, its `DOCKER_HOST`
and `DOCKER_CONFIG`), staging (`ROCM_PYTORCH_STAGING_DIR`/`_PORT`) and mirror
settings (`ROCM_PYTORCH_MIRRORS`, with a netrc) builds the fixture lmcache
image, then edits its Dockerfile's RUN line 20 times and rebuilds after each
edit, with two CPU burners running: each rebuild runs one ImageBuild and
nothing else, the action that once read the volatile status file in the
window Bazel deletes it (tools/client_env.py). After every rebuild:

- the descriptor names the given staging registry, and that registry holds
  the manifest it names;
- the image's build log names the given client settings, the given mirrors
  file and its netrc, and the given engine's buildx;
- the given staging's lease directory was written by the build (a build
  holds a lease there while it runs).

Then a mirrors file changed between two builds (with an edit) reaches the
next image build.

Runs in a copy of the checkout with its own output base, engine and staging,
all removed at the end. Prints `PASS:`/`FAIL:` per check, then
`client settings checks: N passed, M failed`.

    python3 .ci/client_settings_check.py [--rebuilds N] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent  # .ci, beside `tools`, a package at the root
sys.path[:0] = [str(HERE.parent), str(HERE)]

import remote_cache_check as team  # noqa: E402  (copy_checkout, engine_env, free_port)

from tools import client_env, places  # noqa: E402
from tools.process.scratch_bazel import Checks, ScratchBazel, read_exec_log, rmtree  # noqa: E402

REPO = places.workspace()

TARGET = "//tests/e2e:lmcache.gfx950"
DOCKERFILE = "tests/e2e/docker/Dockerfile.lmcache"
ANCHOR = "> /fixture/lmcache.txt"
DESCRIPTOR = "bazel-bin/tests/e2e/lmcache.gfx950.json"
LOG_NAME = "lmcache.gfx950.log"

check = Checks()


def burners(n: int = 2) -> list[subprocess.Popen]:
    """``n`` busy processes (one per core here): the loaded build host."""
    code = "import time\nend = time.monotonic() + 1800\nwhile time.monotonic() < end: pass\n"
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(n)]


def build_log(output_base: Path) -> Path:
    """The newest build log of the lmcache image this output base's builds wrote."""
    found = list((output_base / "execroot").glob(f"*/bazel-out/**/{LOG_NAME}"))
    found += list(Path.home().glob(f".cache/rocm-pytorch-images/logs/tests/e2e/{LOG_NAME}"))
    if not found:
        raise AssertionError(f"no {LOG_NAME} written")
    return max(found, key=lambda p: p.stat().st_mtime)


def in_registry(registry: str, repository: str, digest: str) -> bool:
    host, _, prefix = registry.partition("/")
    url = f"http://{host}/v2/{prefix}/{repository}/manifests/{digest}".replace("//v2", "/v2")
    req = urllib.request.Request(url, method="HEAD")
    req.add_header("Accept", "application/vnd.oci.image.manifest.v1+json")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status == 200
    except OSError:
        return False


def verify(given: dict[str, str], output_base: Path, clone: Path, port: int, since: float) -> str:
    """The last build's descriptor, log and lease name ``given``; a one-line summary."""
    d = json.loads((clone / DESCRIPTOR).read_text())
    staging = d["staging"]
    want = f"127.0.0.1:{port}/staging"
    assert staging["registry"] == want, f"descriptor names {staging['registry']}, not {want}"
    assert in_registry(staging["registry"], d["repository"], d["digest"]), (
        f"{staging['registry']} lacks {d['digest']}"
    )
    log = build_log(output_base)
    text = log.read_text(errors="replace")
    line = client_env.describe(client_env.BAZEL_FILE, given)  # given: the whole client environment
    assert f"# {line}\n" in text, f"{log} lacks the line '# {line}'"
    assert f"# mirrors ({given['ROCM_PYTORCH_MIRRORS']})" in text, f"{log}: not the given mirrors"
    netrc = str(Path(given["ROCM_PYTORCH_MIRRORS"]).with_name("mirrors.netrc"))
    assert f"credentials: {netrc}" in text, f"{log}: the mirrors' netrc is not used"
    engine = given["ROCM_PYTORCH_ENGINE_DIR"]
    assert f"# {engine}/" in text and "docker-buildx build" in text, f"{log}: not {engine}'s buildx"
    leases = Path(given["ROCM_PYTORCH_STAGING_DIR"]) / "leases"
    assert leases.stat().st_mtime >= since, f"no lease in {leases} during the build"
    return d["digest"][:19]


def run(workdir: Path, rebuilds: int) -> None:
    clone = workdir / "clone"
    team.copy_checkout(clone)
    engine_dir = Path(tempfile.mkdtemp(prefix="rpc-", dir="/tmp"))  # short socket paths
    staging_dir, port = workdir / "staging", team.free_port()
    mirrors = workdir / "mirrors.toml"
    (workdir / "mirrors.netrc").write_text("machine mirror.invalid login ci password secret\n")
    (workdir / "mirrors.netrc").chmod(0o600)
    mirrors.write_text(f'[auth]\nnetrc = "{workdir / "mirrors.netrc"}"\n')
    base = {k: v for k, v in os.environ.items() if k not in client_env.NAMES}
    engine_vars = team.engine_env(engine_dir, "env")
    given = {
        "DOCKER_HOST": engine_vars["DOCKER_HOST"],
        "DOCKER_CONFIG": engine_vars["DOCKER_CONFIG"],
        "ROCM_PYTORCH_ENGINE_DIR": str(engine_dir),
        "ROCM_PYTORCH_STAGING_DIR": str(staging_dir),
        "ROCM_PYTORCH_STAGING_PORT": str(port),
        "ROCM_PYTORCH_MIRRORS": str(mirrors),
    }
    env = {**base, **given}
    subprocess.run(  # the sid tree's Python: docker-registry is in that tree
        ["rocm-pytorch-sid-run", "python3", "-m", "tools.staging", "start"],
        cwd=REPO,
        env=env,
        capture_output=True,
        check=True,
        timeout=60,
    )
    bazel = ScratchBazel(workdir / "output-base", timeout=900, cwd=clone)
    load: list[subprocess.Popen] = []
    try:

        @check(f"cold build of {TARGET} with the given engine, staging and mirrors")
        def _cold():
            since = time.time() - 1
            r = bazel.run("build", TARGET, env=env)
            assert r.rc == 0, r.stderr[-3000:]
            return verify(env, bazel.output_base, clone, port, since)

        load.extend(burners())
        dockerfile = clone / DOCKERFILE
        original = dockerfile.read_text()
        assert ANCHOR in original, f"{DOCKERFILE} lacks {ANCHOR!r}"
        exec_log = workdir / "exec.json"
        bad: list[str] = []
        walls: list[float] = []
        for i in range(1, rebuilds + 1):
            dockerfile.write_text(original.replace(ANCHOR, f"{ANCHOR} && echo edit-{i} >/dev/null"))
            since = time.time() - 1
            r = bazel.run("build", TARGET, f"--execution_log_json_file={exec_log}", env=env)
            walls.append(r.wall)
            try:
                assert r.rc == 0, r.stderr[-2000:]
                ran = [s.get("mnemonic") for s in read_exec_log(exec_log)]
                assert ran.count("ImageBuild") == 1, f"ImageBuild ran {ran.count('ImageBuild')}x"
                verify(env, bazel.output_base, clone, port, since)
            except AssertionError as e:
                bad.append(f"rebuild {i}: {e}")

        @check(f"{rebuilds} edit-only rebuilds under load name the given settings")
        def _rebuilds():
            assert not bad, f"{len(bad)} of {rebuilds} wrong; first: {bad[0]}"
            return (
                f"{rebuilds} of {rebuilds}, one ImageBuild each;"
                f" wall median {sorted(walls)[len(walls) // 2]:.1f}s, max {max(walls):.1f}s"
            )

        @check("a setting changed between two builds reaches the next image build")
        def _changed():
            other = dict(env, ROCM_PYTORCH_MIRRORS=str(workdir / "other-mirrors.toml"))
            Path(other["ROCM_PYTORCH_MIRRORS"]).write_text(mirrors.read_text())
            dockerfile.write_text(original.replace(ANCHOR, f"{ANCHOR} && echo other >/dev/null"))
            since = time.time() - 1
            r = bazel.run("build", TARGET, env=other)
            assert r.rc == 0, r.stderr[-2000:]
            return verify(other, bazel.output_base, clone, port, since)

    finally:
        for p in load:
            p.kill()
        bazel.shutdown()
        subprocess.run(
            ["rocm-pytorch-sid-run", "python3", "-m", "tools.staging", "stop"],
            cwd=REPO,
            env=env,
            capture_output=True,
            timeout=60,
            check=False,
        )
        team.engine_env(engine_dir, "stop")
        rmtree(engine_dir)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rebuilds", type=int, default=20, help="edit-only rebuilds (20)")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (logs)")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind: the cleanup runs
    workdir = Path(tempfile.mkdtemp(prefix="client-settings-check-"))
    try:
        run(workdir, args.rebuilds)
    except Exception as e:
        check.add("client settings check ran to the end", False, f"{type(e).__name__}: {e}")
    finally:
        if args.keep:
            print(f"kept {workdir}")
        else:
            rmtree(workdir)
    line, ok = check.summary("client settings checks")
    print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
