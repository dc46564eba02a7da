"""Forget the descriptors an older or re-pointed builder made, so the next build redoes them.

`bazel run //tools/imagebuild:outdated -- [--dry-run] [--descriptors DIR]`

Bazel's action key holds a builder's *name* (`--builders=`), not its
version: Bazel cannot ask a builder anything without running an action, so
after `hostb` is upgraded (or its context re-pointed at another engine) the
image actions are still up to date for Bazel. Every descriptor records the
builder that made it (name, driver, endpoints, BuildKit and engine versions).
This command asks each builder those descriptors name (the local engine too)
what it is now and deletes the descriptors whose record differs; Bazel sees
its outputs gone and re-runs exactly those builds (and their children, whose
parent descriptors change), on the builder as it is now. A builder that does
not answer is reported and its descriptors are kept.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from tools import engine
from tools.envvars import SettingError
from tools.imagebuild import builders
from tools.staging import forget, scan
from tools.staging.errors import StagingError


def recorded(data: dict) -> dict:
    """The builder record of a descriptor (older descriptors hold a name only)."""
    b = data.get("builder")
    return dict(b) if isinstance(b, dict) else {"name": b or "default"}


def current(name: str, docker: str) -> dict:
    """What builder ``name`` ("local": the local engine) is now; BuilderError when it
    does not answer."""
    builder = builders.LOCAL if name == "local" else name
    try:
        env = builders.docker_env(builder)
    except (engine.EngineError, SettingError) as e:
        raise builders.BuilderError(f"local engine: {e}") from None
    return builders.resolve(builder, "any", docker, env).identity()


def outdated(found: list[scan.Found], docker: str, log=print) -> tuple[list[scan.Found], list[str]]:
    """(descriptors whose builder changed, builders that did not answer)."""
    by_name: dict[str, list[scan.Found]] = {}
    for f in found:
        by_name.setdefault(recorded(f.data).get("name") or "default", []).append(f)
    stale: list[scan.Found] = []
    down: list[str] = []
    for name, group in sorted(by_name.items()):
        if name == "default":  # made before builders were recorded: no version to compare
            log(f"default: {len(group)} descriptors from before builder versions were recorded")
            stale += group
            continue
        try:
            now = current(name, docker)
        except builders.BuilderError as e:
            log(f"{name}: {e}; its {len(group)} descriptors are kept")
            down.append(name)
            continue
        changed = [f for f in group if recorded(f.data) != now]
        versions = f"BuildKit {', '.join(now['buildkit'])}" + (
            f", engine {now['engine']}" if now["engine"] else ""
        )
        older = f"{len(changed)} of {len(group)} descriptors older"
        log(f"{name} ({now['driver']}, {versions}): {older}")
        stale += changed
    return stale, down


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="outdated", description=__doc__.split("\n\n")[0])
    p.add_argument("--dry-run", action="store_true", help="only say what would be forgotten")
    p.add_argument(
        "--descriptors",
        action="append",
        type=Path,
        help="directory to scan for image descriptors; repeatable (default: the workspace's"
        " bazel-out)",
    )
    p.add_argument("--docker", default=os.environ.get("DOCKER", "docker"), help="docker CLI")
    args = p.parse_args(argv)
    try:
        found = list(scan.find(args.descriptors or scan.default_dirs()))
    except (StagingError, SettingError) as e:
        print(f"outdated: error: {e}", file=sys.stderr)
        return 1
    stale, down = outdated(found, args.docker)
    for f in stale:
        print(f"{'would forget' if args.dry_run else 'forget'} {f.path}")
    count = len(stale) if args.dry_run else forget.forget(stale)
    verb = "would forget" if args.dry_run else "forgot"
    print(
        f"{len(found)} descriptors, {verb} {count} made by an older or re-pointed builder:"
        " the next build rebuilds those images"
        + (f"; not answering: {', '.join(down)}" if down else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
