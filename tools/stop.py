"""stop: stop everything this project's builds and tests started on this machine.

Builds and tests leave processes running on purpose, so the next build is
fast: this workspace's Bazel server and its persistent workers (an image
build worker may hold a scoped Docker engine of its own), the private Docker
engine (`python3 -m tools.engine start`), the embedded staging registry,
the rehearsal's source servers and the team cache (`python3 -m
tools.teamcache start`). `stop` ends them all, in that order, each
with its own tool (which never stops another engine or registry), then lists
any process still running from their state directories and exits 1 if one is.
It reads the same settings the builds read (ROCM_PYTORCH_ENGINE_DIR,
ROCM_PYTORCH_STAGING_DIR, ...): run it in the shell you build in. Nothing is
deleted: images stay in staging and in the engine's store.

    python3 -m tools.stop                # from the workspace
    python3 -m tools.stop --keep-bazel   # leave the Bazel server and its workers running
    python3 -m tools.stop --interrupt    # end a running build instead of waiting for it
    python3 -m tools.stop --shared       # also what other workspaces' Bazel servers use

A build that holds this workspace's Bazel server (it may run for hours) is
named while `stop` waits for it; `--interrupt` ends it first (SIGINT, as
Ctrl-C in its terminal).

The engine, staging, sources and team cache are the user's, not the
workspace's: another clone's Bazel server whose settings name the same state
dir may be building with them right now (a second clone's rehearsal would
lose its sources mid-fetch). Those are named and left running;
`--shared` stops them anyway.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from tools import places

REPO = places.workspace()

# What each tool's `stop` ends, in this order (after Bazel: its workers' engines first),
# with the setting that names its state dir (else one under the user's cache dir).
SERVERS = {
    "tools.engine": ("the private engine", "ROCM_PYTORCH_ENGINE_DIR"),
    "tools.staging": ("the staging registry", "ROCM_PYTORCH_STAGING_DIR"),
    "tools.rehearsal.sources": ("the rehearsal's source servers", "ROCM_PYTORCH_SOURCES_DIR"),
    "tools.teamcache": ("the team cache", "ROCM_PYTORCH_TEAMCACHE_DIR"),
}
TOOLS = tuple(SERVERS)
# what else decides where a state dir is (tools/places.py)
_PLACES = ("HOME", "XDG_CACHE_HOME")
_WORKSPACE_FLAG = b"--workspace_directory="


def bazel_servers() -> list[tuple[int, Path, dict[str, str]]]:
    """(pid, workspace, environment) of each running Bazel server of this user: another
    workspace's may be building with the same engine, staging and sources right now."""
    out = []
    for d in Path("/proc").glob("[0-9]*"):
        try:
            if d.stat().st_uid != os.getuid():
                continue
            args = (d / "cmdline").read_bytes().split(b"\0")
            flag = next((a for a in args if a.startswith(_WORKSPACE_FLAG)), None)
            if flag is None:
                continue
            environ = (d / "environ").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        workspace = Path(flag[len(_WORKSPACE_FLAG) :].decode(errors="replace"))
        env = dict(item.split("=", 1) for item in environ if "=" in item)
        out.append((int(d.name), workspace, env))
    return sorted(out)


def other_users(
    tool: str, servers: list[tuple[int, Path, dict[str, str]]], mine: dict[str, str]
) -> list[tuple[int, Path]]:
    """The Bazel servers of other workspaces whose settings name the same state dir for
    ``tool`` as ``mine``: they use that server too."""
    names = (SERVERS[tool][1], *_PLACES)
    return [
        (pid, workspace)
        for pid, workspace, env in servers
        if workspace.resolve() != REPO and all(env.get(n, "") == mine.get(n, "") for n in names)
    ]


def state_roots() -> list[Path]:
    """The state directories of the engine, staging and sources these settings name."""
    from tools.engine import state
    from tools.rehearsal import sources
    from tools.staging import embedded
    from tools.teamcache import server

    return [state.paths().root, embedded.paths().root, sources.paths().dir, server.state_dir()]


def leftovers(roots: list[Path], me: int | None = None) -> list[tuple[int, str]]:
    """(pid, command line) of each process whose command line names one of ``roots``."""
    me = os.getpid() if me is None else me
    out = []
    for d in Path("/proc").glob("[0-9]*"):
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        pid = int(d.name)
        if (
            pid != me
            and cmd
            and any(f"{root}/" in cmd or cmd.endswith(str(root)) for root in roots)
        ):
            out.append((pid, cmd.strip()))
    return sorted(out)


# what Bazel's client prints while another command holds the server
_WAITING = re.compile(r"Another command \(pid=(\d+)\) is running")


def command_line(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()[:160] or "?"


def shutdown_bazel(interrupt: bool) -> tuple[int, str]:
    """`bazel shutdown` in the workspace. When another command holds the server (a build
    that may run for hours), say which and that it waits, or with ``interrupt`` end that
    command (SIGINT, as Ctrl-C in its terminal) first."""
    proc = subprocess.Popen(
        ["bazel", "shutdown"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line.rstrip())
        m = _WAITING.search(line)
        if not m:
            continue
        pid = int(m.group(1))
        cmd = command_line(pid)
        if interrupt:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGINT)
            print(f"stop: interrupted the running Bazel command (pid {pid}: {cmd})")
        else:
            print(
                f"stop: waiting for the running Bazel command to end (pid {pid}:"
                f" {cmd}); Ctrl-C stops waiting, `python3 -m tools.stop"
                " --interrupt` ends that command first",
                flush=True,
            )
    return proc.wait(), "\n".join(lines)


def run(cmd: list[str], cwd: Path) -> tuple[int, str]:
    proc = subprocess.run(
        cmd, cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False
    )
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m tools.stop",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--keep-bazel",
        action="store_true",
        help="leave this workspace's Bazel server (and its persistent workers) running",
    )
    parser.add_argument(
        "--shared",
        action="store_true",
        help="also stop the servers another workspace's Bazel server may be using right now"
        " (by default they are named and left running)",
    )
    parser.add_argument(
        "--interrupt",
        action="store_true",
        help="end a Bazel command that holds the server (a running build) instead of waiting",
    )
    args = parser.parse_args(argv)
    from tools.envvars import SettingError

    try:  # before anything stops: a state dir setting none of the tools can read
        roots = state_roots()
    except SettingError as e:
        print(f"stop: error: {e}", file=sys.stderr)
        return 2
    rc = 0
    servers = [] if args.shared else bazel_servers()  # before this workspace's one stops
    if not args.keep_bazel and shutil.which("bazel"):
        code, out = shutdown_bazel(args.interrupt)
        if code:
            print(
                f"stop: bazel shutdown in {REPO} failed: {out.splitlines()[-1:]}", file=sys.stderr
            )
            rc = 1
        else:
            print(f"stop: the Bazel server of {REPO} and its workers stopped")
    kept = []
    for tool, root in zip(TOOLS, roots, strict=True):
        users = other_users(tool, servers, dict(os.environ))
        if users:
            names = ", ".join(f"{w} (pid {pid})" for pid, w in users)
            print(
                f"stop: left running: {SERVERS[tool][0]} ({root}): the Bazel server of {names}"
                " uses the same one; `python3 -m tools.stop --shared` stops it anyway"
            )
            kept.append(root)
            continue
        code, out = run([sys.executable, "-m", tool, "stop"], REPO)
        if code:
            print(f"stop: python3 -m {tool} stop failed: {out}", file=sys.stderr)
            rc = 1
        for line in out.splitlines() if not code else []:
            print(f"stop: {line}")
    left = leftovers([r for r in roots if r not in kept])
    if left:
        print(f"stop: {len(left)} processes still run from the state dirs:", file=sys.stderr)
        for pid, cmd in left:
            print(f"  {pid} {cmd[:200]}", file=sys.stderr)
        return 1
    print(
        "stop: nothing else of this project's runs from its state dirs"
        if kept
        else "stop: nothing of this project's runs from its state dirs"
    )
    return rc


if __name__ == "__main__":
    sys.exit(main())
