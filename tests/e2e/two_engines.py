"""Two engines, one `bazel build`: `--builders=gfx1201=<context>` end to end.

A test cannot run the Bazel that runs it, so this runs from the repository root
against the workspace's own output base: `.ci/e2e_checks.py` calls ``check``
after its one-engine build of the fixture family, and
`python3 tests/e2e/two_engines.py` runs it alone (one-engine build first).

1. start a second Docker engine as a second "host" (tools/engine with a state
   dir of its own, unix socket only) and create a docker context for it in a
   DOCKER_CONFIG of this check (the user's or CI's config is not touched);
2. build the fixture family for gfx950 and gfx1201 (reproducible output:
   `--reproducible`, as the one-engine build it compares with) with
   `--builders=gfx1201=<context>`: the mapping re-runs the gfx1201
   image builds only (the new DOCKER_CONFIG is in no action key:
   tools/client_env.py);
3. assert: every gfx1201 image was built by the second engine and none by
   the first (each engine's BuildKit build history: the record whose
   attachments hold the descriptor's manifest digest), no other image was
   built again, the descriptors name their builder, the digests equal the
   one-engine build's, the push plan is unchanged;
4. with the context pointing at a dead socket and `--keep_going`: the gfx1201
   images fail in one line naming the builder and the arch, within seconds,
   and the gfx950 images are complete; with the builder back, a re-run builds
   only the missing gfx1201 images, on it;
5. stop the second engine and remove its state.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

FAMILY = "//tests/e2e:all"
# The fixture family is the real catalogue's targets: how many images it has is the
# catalogue's to say (``images``), never a number written here.
CATALOG = Path(__file__).resolve().parents[2] / "images" / "catalog.toml"
OVER_BUDGET = "//tests/e2e:rocm-runtime.over_budget"
PLAN = "//tests/e2e:push_default.plan"
ARCHS = "gfx950,gfx1201"
# Digests equal across engines only in the reproducible output mode (timestamps rewritten;
# BuildKit's plain output keeps each engine's own RUN times): every build here uses it.
REPRODUCIBLE = "--reproducible"
REMOTE_ARCH = "gfx1201"
CONTEXT = "rocm-e2e-hostb"
DOWN_CONTEXT = "rocm-e2e-down"


def run(cmd: list[str], env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if check and proc.returncode != 0:
        sys.stderr.write(proc.stderr[-4000:])
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}")
    return proc


def bazel(*args: str, env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
    return run(["bazel", *args], env=env, check=check)


def descriptors(*defines: str, env: dict | None = None) -> dict[str, dict]:
    """{descriptor file name: descriptor} of every fixture image built for ARCHS."""
    proc = bazel(
        "cquery",
        # not the image built against a budget it cannot keep (a check of its own: its
        # descriptor is written, its build fails)
        f"kind(rocm_image_rule, deps({FAMILY})) except {OVER_BUDGET}",
        f"--define=arch={ARCHS}",
        REPRODUCIBLE,
        *defines,
        "--output=files",
        env=env,
    )
    from tools.process.scratch_bazel import descriptors_in  # the repository root is on sys.path

    return descriptors_in(proc.stdout)


def images(archs: str = ARCHS, group: str | None = None) -> list:
    """tagconf's images (``ImageTags``) of the fixture family for ``archs`` (comma-separated):
    one per target and arch it is built for, one per arch-free target; ``group``: only
    that group's (what its push publishes)."""
    from tools.tagconf import catalog  # the repository root is on sys.path (stdlib only)
    from tools.tagconf.tags import render_many, resolve_values

    c = catalog.load(CATALOG)
    targets = c.group(group) if group else c.target_names
    return render_many(c, targets, archs.split(","), resolve_values(c))


def digests(env: dict | None = None) -> dict[str, str]:
    return {name: d["digest"] for name, d in descriptors(env=env).items()}


class SecondEngine:
    """A private engine in a state dir of its own, and a DOCKER_CONFIG with a context for it."""

    def __init__(self) -> None:
        # unix socket paths are short: keep the state dir directly under /tmp
        self.root = Path(tempfile.mkdtemp(prefix="rpe2-", dir="/tmp"))
        self.dir = self.root / "e"
        self.config = self.root / "docker-config"
        self.host = ""

    def start(self) -> None:
        from tools import engine  # the repository root is on sys.path

        self.host = run(
            [sys.executable, "-m", "tools.engine", "--dir", str(self.dir), "start", "--private"],
            env=engine.unpointed_env(),
        ).stdout.strip()
        engine.client_config(self.config)  # this check's contexts, the caller's buildx
        for name, host in ((CONTEXT, self.host), (DOWN_CONTEXT, f"unix://{self.root}/down.sock")):
            self.docker("context", "create", name, "--docker", f"host={host}")

    def env(self) -> dict[str, str]:
        """The environment of the Bazel client: Bazel passes DOCKER_CONFIG to the actions."""
        return dict(os.environ, DOCKER_CONFIG=str(self.config))

    def docker(self, *args: str) -> str:
        return run(["docker", *args], env=self.env()).stdout

    def stop(self) -> None:
        from tools import engine

        run(
            [sys.executable, "-m", "tools.engine", "--dir", str(self.dir), "stop"],
            env=engine.unpointed_env(),
            check=False,
        )
        shutil.rmtree(self.root, ignore_errors=True)


def built_since(engine: SecondEngine, context: str | None, since: str) -> dict[str, dict]:
    """{manifest digest: BuildKit history record} of the builds an engine finished after
    ``since`` (RFC 3339): its build history, read through the docker CLI."""
    pre = ["--context", context] if context else []
    env = engine.env()
    if not context:
        env["DOCKER_HOST"] = os.environ["DOCKER_HOST"]
    lines = run(["docker", *pre, "buildx", "history", "ls", "--format", "json"], env=env).stdout
    out = {}
    for line in lines.splitlines():
        record = json.loads(line)
        if record.get("created_at", "") < since or record.get("status") != "Completed":
            continue
        ref = record["ref"].rsplit("/", 1)[-1]
        text = run(
            ["docker", *pre, "buildx", "history", "inspect", ref, "--format", "json"], env=env
        ).stdout
        info = json.loads(text)
        for att in info.get("Attachments") or []:
            if att.get("Type", "").endswith("image.manifest.v1+json"):
                out[att["Digest"]] = info
    return out


def executed(log: Path) -> list[tuple[str, str, str]]:
    """(mnemonic, target label, --builder or 'local') of every ImageBuild spawn in an
    execution log (`--execution_log_json_file`)."""
    from tools.process.scratch_bazel import read_exec_log  # the repository root is on sys.path

    out = []
    for spawn in read_exec_log(log):
        if spawn.get("mnemonic") != "ImageBuild":
            continue
        argv = spawn.get("commandArgs", [])
        builder = argv[argv.index("--builder") + 1] if "--builder" in argv else "local"
        out.append((spawn["mnemonic"], spawn.get("targetLabel", "?"), builder))
    return out


def check(before: dict[str, str], log_dir: Path | str) -> str:
    """Run steps 1-5 against the one-engine digests ``before``; returns a summary."""
    log_dir = Path(log_dir)
    family = images()
    want_remote = len([i for i in family if i.arch == REMOTE_ARCH])
    others = len(family) - want_remote  # the other arch's and the arch-free ones
    assert len(before) == len(family), (
        f"one-engine build gave {len(before)} images, want {len(family)}"
    )
    second = SecondEngine()
    try:
        second.start()
        env = second.env()
        since = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() - 1))
        log = log_dir / "two-engines-exec-log.json"
        mapping = f"--builders={REMOTE_ARCH}={CONTEXT}"
        start = time.monotonic()
        bazel(
            "build",
            FAMILY,
            f"--define=arch={ARCHS}",
            REPRODUCIBLE,
            mapping,
            "--jobs=8",
            f"--execution_log_json_file={log}",
            env=env,
        )
        wall = time.monotonic() - start
        after = descriptors(mapping, env=env)
        spawns = executed(log)
        per_builder = Counter(b for _, _, b in spawns)

        # the same images as the one-engine build
        changed = sorted(n for n in before if after.get(n, {}).get("digest") != before[n])
        assert not changed, f"digests differ from the one-engine build: {changed}"

        # each descriptor names its builder, each engine's history holds its images
        on_b = built_since(second, CONTEXT, since)
        on_a = built_since(second, None, since)
        remote = {n for n, d in after.items() if d.get("arch") == REMOTE_ARCH}
        assert len(remote) == want_remote, f"{len(remote)} {REMOTE_ARCH} images, want {want_remote}"
        rebuilt = {label.rsplit(":", 1)[-1] + ".json" for _, label, _ in spawns}
        assert rebuilt == remote, f"rebuilt {sorted(rebuilt ^ remote)} against the mapping"
        for name, d in after.items():
            want = CONTEXT if name in remote else "local"
            assert d["builder"]["name"] == want, f"{name}: descriptor builder {d['builder']}"
            assert d["builder"].get("engine"), f"{name}: no engine version in its descriptor"
            if name in remote:  # gfx950 and gfx1201 images never share a digest
                assert d["digest"] in on_b, f"{name} {d['digest']} is not in {CONTEXT}'s history"
                assert d["digest"] not in on_a, f"{name} was also built on the first engine"

        # the plan does not depend on where images are built
        plan = bazel("run", PLAN, f"--define=arch={ARCHS}", REPRODUCIBLE, env=env).stdout
        plan_b = bazel("run", PLAN, f"--define=arch={ARCHS}", REPRODUCIBLE, mapping, env=env).stdout
        assert plan == plan_b and plan.strip(), "push plan changed with --builders="

        # a builder that is down: one line, within seconds; the other arch completes
        start_down = time.monotonic()
        proc = bazel(
            "build",
            FAMILY,
            f"--define=arch={ARCHS}",
            REPRODUCIBLE,
            f"--builders={REMOTE_ARCH}={DOWN_CONTEXT}",
            "--keep_going",
            env=env,
            check=False,
        )
        down_wall = time.monotonic() - start_down
        assert proc.returncode != 0, "a build on a dead builder succeeded"
        want = f"builder {DOWN_CONTEXT} (for arch {REMOTE_ARCH}) is down or unreachable:"
        assert want in proc.stderr, proc.stderr[-3000:]
        failed = re.findall(r"ERROR: .*?: Building image //tests/e2e:(\S+)", proc.stderr)
        assert failed and all(n.endswith(REMOTE_ARCH) for n in failed), failed
        still = descriptors(env=env)
        done = sorted(n for n, d in still.items() if d.get("arch") != REMOTE_ARCH)
        assert len(done) == others, f"{len(done)} non-{REMOTE_ARCH} images complete, want {others}"

        # the builder is back: a re-run builds only what is missing, on it
        relog = log_dir / "two-engines-rerun-exec-log.json"
        bazel(
            "build",
            FAMILY,
            f"--define=arch={ARCHS}",
            REPRODUCIBLE,
            mapping,
            f"--execution_log_json_file={relog}",
            env=env,
        )
        rerun = executed(relog)
        assert rerun and all(b == CONTEXT for _, _, b in rerun), rerun
        assert all(label.endswith(REMOTE_ARCH) for _, label, _ in rerun), rerun
        again = descriptors(mapping, env=env)
        assert {n: d["digest"] for n, d in again.items()} == {
            n: d["digest"] for n, d in after.items()
        }, "the re-run changed digests"
        return (
            f"{wall:.0f}s; ImageBuild spawns by builder {dict(per_builder)};"
            f" {len(family)} digests equal;"
            f" history: {len(on_b)} on {CONTEXT}, {len(on_a)} on the local engine; plan"
            f" unchanged; dead builder: {len(failed)} {REMOTE_ARCH} failures, {others} others"
            f" complete, {down_wall:.0f}s; re-run with the builder back: {len(rerun)}"
            f" ImageBuild ({', '.join(label.rsplit(':', 1)[-1] for _, label, _ in rerun)})"
        )
    finally:
        second.stop()


def main() -> int:
    os.chdir(Path(__file__).resolve().parents[2])
    sys.path.insert(0, os.getcwd())
    bazel("build", FAMILY, f"--define=arch={ARCHS}", REPRODUCIBLE)
    log_dir = Path(".ci/.cache")
    log_dir.mkdir(parents=True, exist_ok=True)
    print(check(digests(), log_dir.resolve()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
