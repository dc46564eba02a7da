"""staging: run the embedded staging registry and garbage-collect staging.

`bazel run //tools/staging -- COMMAND` or `python3 -m tools.staging COMMAND`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter

from tools import envvars
from tools.envvars import SettingError
from tools.places import user_path
from tools.staging import EMBEDDED, Staging, embedded, forget, gc, parse, remote, resolve, scan
from tools.staging.errors import StagingError, UnreachableError


class Parser(argparse.ArgumentParser):
    """argparse with the tool's one-line error format (exit 2)."""

    def error(self, message: str):  # type: ignore[override]
        print(f"staging: error: {message}; see `{self.prog} --help`", file=sys.stderr)
        sys.exit(2)


def staging_value(text: str) -> str:
    if text.strip() in ("", EMBEDDED):
        return EMBEDDED
    try:
        return parse(text)
    except StagingError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def age_value(text: str) -> float:
    try:
        age = gc.parse_age(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a duration; write one such as 14d, 36h, 90m or 2w"
        ) from None
    if age < gc.MIN_AGE:
        floor = gc.format_age(gc.MIN_AGE)
        raise argparse.ArgumentTypeError(
            f"{text} is under gc's grace period of {floor}: a build in another checkout may"
            f" have pushed a tag that young, and its descriptor is not visible here; use"
            f" {floor} or more"
        )
    return age


def keep_value(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a count; write a whole number >= 0")
    return int(text)


def _staging_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--staging",
        type=staging_value,
        default=EMBEDDED,
        metavar="HOST[:PORT]/PREFIX",
        help="a shared staging registry (default: the embedded one, `embedded`)",
    )
    p.add_argument(
        "--insecure", action="store_true", help="plain HTTP to a non-loopback staging registry"
    )


def _descriptor_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--descriptors",
        type=user_path,
        action="append",
        metavar="DIR",
        help="directory to scan for image descriptors; repeatable"
        " (default: the workspace's bazel-out)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="staging", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser(
        "start",
        help="start the embedded staging registry; print its address",
        description="Start the embedded staging registry unless it is running and print its"
        " address (127.0.0.1:PORT/staging). Builds start it on their own; the port is"
        f" recorded on first start (${embedded.PORT_ENV} or the first free of"
        f" {embedded.DEFAULT_PORT}-{embedded.LAST_PORT}) and kept.",
    )
    sub.add_parser(
        "stop",
        help="stop the embedded staging registry",
        description="Stop the embedded staging registry (its images stay on disk; the next"
        " build or `start` starts it again on the same port).",
    )
    status = sub.add_parser(
        "status",
        help="show whether staging runs and what it holds",
        description="The embedded registry: running?, pid, port, state dir, storage size,"
        " repositories and tags. A shared one (--staging): reachable?, its repositories"
        " under the prefix. Exits 1 when a shared registry cannot be reached.",
    )
    _staging_arg(status)
    status.add_argument("--json", action="store_true", help="print JSON")
    collect = sub.add_parser(
        "gc",
        help="delete staged images no descriptor uses (and that are old)",
        description="Keep every image a descriptor references, the newest --keep tags of"
        " each repository and anything younger than --max-age; delete the rest. The"
        " embedded registry is then restarted around `docker-registry garbage-collect`"
        " to free the disk. A build running on this host holds a lease: gc keeps what"
        " it reads and pushes, and leaves the registry up (a later gc frees the disk);"
        " builds that start meanwhile wait for gc. A shared registry's ages are unknown,"
        " and teammates' descriptors and builds are not visible here: prefer its own"
        " retention policy, and try --dry-run first.",
    )
    _staging_arg(collect)
    _descriptor_arg(collect)
    collect.add_argument(
        "--keep",
        type=keep_value,
        default=gc.DEFAULT_KEEP,
        metavar="N",
        help=f"newest tags kept per repository (default {gc.DEFAULT_KEEP})",
    )
    collect.add_argument(
        "--max-age",
        type=age_value,
        default=gc.DEFAULT_MAX_AGE,
        metavar="AGE",
        help="keep anything younger (default 14d, at least 1h; units s m h d w)",
    )
    collect.add_argument(
        "--dry-run", action="store_true", help="print what would go; delete nothing"
    )
    lost = sub.add_parser(
        "forget",
        help="delete descriptors whose image staging lost, so builds redo them",
        description="Find descriptors (in bazel-out) whose manifest is no longer in their"
        " staging registry and delete them: the next build re-runs those image builds.",
    )
    _descriptor_arg(lost)
    lost.add_argument("--dry-run", action="store_true", help="print them; delete nothing")
    lost.add_argument(
        "--insecure", action="store_true", help="plain HTTP to a non-loopback staging registry"
    )
    return parser


# -- commands ------------------------------------------------------------------------


def cmd_start(_args: argparse.Namespace) -> int:
    port = embedded.ensure_running()
    wanted = envvars.port(embedded.PORT_ENV, error=StagingError)
    if wanted and wanted != port:
        print(
            f"staging: note: running on {port}; {embedded.PORT_ENV}={wanted} takes effect"
            " after `stop`",
            file=sys.stderr,
        )
    print(resolve(EMBEDDED, start=False).registry)
    return 0


def cmd_stop(_args: argparse.Namespace) -> int:
    pid = embedded.stop()
    print(f"stopped the staging registry (pid {pid})" if pid else "staging registry not running")
    return 0


def shared_status(staging: Staging, insecure: bool) -> dict:
    out: dict = {"registry": staging.registry, "embedded": False, "reachable": False}
    with remote.connect(staging.host, insecure=insecure) as c:
        try:
            remote.ping(c)
        except UnreachableError as e:
            return {**out, "error": str(e)}
        out["reachable"] = True
        try:
            out["repositories"] = remote.repositories(c, staging.prefix)
        except StagingError as e:
            out["repositories"], out["error"] = None, str(e)
    return out


def cmd_status(args: argparse.Namespace) -> int:
    staging = resolve(args.staging, start=False)
    info = embedded.status() if staging.embedded else shared_status(staging, args.insecure)
    code = 1 if not staging.embedded and not info["reachable"] else 0
    if args.json:
        print(json.dumps(info, indent=2, sort_keys=True))
        return code
    if staging.embedded:
        state = f"running (pid {info['pid']})" if info["running"] else "stopped"
        print(f"embedded staging registry {info['registry']}: {state}")
        print(f"state dir: {info['state_dir']}")
        print(
            f"storage:   {gc.human(info['storage_bytes'])} in {info['repositories']}"
            f" repositories, {info['tags']} tags"
        )
        print(f"log:       {info['log']}")
        return code
    state = "reachable" if info["reachable"] else "unreachable"
    print(f"staging registry {staging.registry}: {state}")
    if info.get("repositories") is not None:
        print(f"repositories under {staging.prefix}/: {len(info['repositories'])}")
        for name in info["repositories"]:
            print(f"  {name}")
    if info.get("error"):
        print(f"staging: error: {info['error']}", file=sys.stderr)
    return code


def cmd_gc(args: argparse.Namespace) -> int:
    staging = resolve(args.staging, start=False)
    dirs = args.descriptors or scan.default_dirs()
    options = gc.Options(args.keep, args.max_age, args.dry_run, args.insecure)
    report = gc.run(staging, dirs, options, say=print)
    print(summary(report, options))
    for note in report.notes:
        print(f"note: {note}")
    return 0


def summary(report: gc.Report, options: gc.Options) -> str:
    kept = [v for v in report.verdicts if v.keep]
    reasons = Counter(v.why for v in kept)
    repos = len({v.tag.name for v in report.verdicts})
    why = ", ".join(f"{n} {reason}" for reason, n in sorted(reasons.items()))
    verb = "would delete" if options.dry_run else "deleted"
    count = len(report.deletions) if options.dry_run else report.deleted
    text = (
        f"{report.staging.registry}: {report.descriptors} descriptors scanned; kept"
        f" {len(kept)} of {len(report.verdicts)} tags in {repos} repositories"
        f"{f' ({why})' if why else ''}; {verb} {count} manifests"
    )
    if report.bytes_before is not None and not options.dry_run:
        text += f"; storage {gc.human(report.bytes_before)} -> {gc.human(report.bytes_after or 0)}"
    elif report.bytes_before is not None:
        text += f"; storage {gc.human(report.bytes_before)}"
    return text


def cmd_forget(args: argparse.Namespace) -> int:
    found = list(scan.find(args.descriptors or scan.default_dirs()))
    unreachable: dict[str, list[scan.Found]] = {}
    gone = forget.lost(found, insecure=args.insecure, unreachable=unreachable)
    for host, left in sorted(unreachable.items()):
        print(
            f"left alone: {len(left)} descriptor{'s' if len(left) > 1 else ''} of staging {host},"
            " which does not answer (a build for that staging rebuilds them; start it and run"
            " forget again to check them)"
        )
    for f in gone:
        print(f"{'would forget' if args.dry_run else 'forget'} {f.path} ({f.data['digest']})")
    count = len(gone) if args.dry_run else forget.forget(gone)
    verb = "would forget" if args.dry_run else "forgot"
    print(f"{len(found)} descriptors, {verb} {count}: the next build rebuilds those images")
    return 0


COMMANDS = {
    "start": cmd_start,
    "stop": cmd_stop,
    "status": cmd_status,
    "gc": cmd_gc,
    "forget": cmd_forget,
}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except UnreachableError as e:
        print(f"staging: error: {e}", file=sys.stderr)
        return 1
    except (StagingError, SettingError) as e:
        print(f"staging: error: {e}", file=sys.stderr)
        return 2
