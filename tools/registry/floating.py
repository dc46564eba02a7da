"""`registry floating`: every floating tag names the digest of its image's newest versioned tag.

A floating tag (`latest-gfx950`, `latest`) is what most users pull. When a
publish moves the versioned tag and not the floating one, or a half-done run
leaves the floating tag on last month's digest, users pull a stale image and
nothing says so (AMD's `rocm/pytorch:latest` stayed weeks behind its newest
versioned tag). `bazel run //images:push_default.floating --define arch=gfx950`
asks the registry, building nothing (the plan's specs only):

- for each image of the plan, the digest of its versioned tag (the catalogue's
  version: the newest main publishes) and of its floating tag;
- the floating tag names another digest: **stale**, naming both tags and
  digests and the push that fixes it;
- the floating tag is missing while the versioned tag is there: **missing**;
- the versioned tag is not there: that version is not published yet (a
  catalogue bump before its first publish); said in a line, not a failure.

One `FAIL:` line per stale or missing floating tag, one summary line; exit 1
when any. Weekly runs it after each publish (.github/workflows/weekly.yml).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

from tools.oci.errors import RegistryError


@dataclass(frozen=True)
class Finding:
    ref: str  # the floating tag's ref
    state: str  # "current", "stale", "missing", "unpublished"
    detail: str


def _short(digest: str | None) -> str:
    return digest[:19] + "…" if digest else "nothing"


def check(images, client_of: Callable, push_hint: str) -> list[Finding]:
    """A finding per image of the plan: its floating tag against its versioned tag."""
    findings = []
    for image in images:
        versioned, floating = image.tags[0], image.tags[1]
        client = client_of(image.host)
        want = client.manifest_digest(image.name, versioned)
        got = client.manifest_digest(image.name, floating)
        ref = str(image.ref(floating))
        if want is None:
            findings.append(
                Finding(ref, "unpublished", f"{image.repository}:{versioned} is not published yet")
            )
        elif got is None:
            findings.append(
                Finding(
                    ref,
                    "missing",
                    f"{ref} is missing, its versioned tag {image.repository}:{versioned} names"
                    f" {_short(want)}; publish again ({push_hint})",
                )
            )
        elif got != want:
            findings.append(
                Finding(
                    ref,
                    "stale",
                    f"{ref} names {_short(got)}, but the newest versioned tag"
                    f" {image.repository}:{versioned} names {_short(want)}: stale;"
                    f" publish again ({push_hint})",
                )
            )
        else:
            findings.append(Finding(ref, "current", f"{_short(got)} = {versioned}"))
    return findings


def add_parser(sub, plan_args: Callable, connection_args: Callable) -> None:
    p = sub.add_parser(
        "floating",
        help="check that every floating tag names its newest versioned tag's digest",
        description=__doc__.split("\n\n")[1].replace("\n", " "),
    )
    plan_args(p)
    p.add_argument(
        "--push-hint",
        default="bazel run the group's push target",
        help=argparse.SUPPRESS,  # the launcher names its push target
    )
    connection_args(p, uploads=False)


def cmd_floating(args, clients_of: Callable, log: Callable[[str], None]) -> int:
    from tools.registry.plan import load_plans

    images = load_plans(args.plan, args.registry)
    if not images:
        raise RegistryError("floating: the plan has no image")
    clients = clients_of(args)
    try:
        findings = check(images, clients, args.push_hint)
    finally:
        clients.close()
    bad = [f for f in findings if f.state in ("stale", "missing")]
    for f in findings:
        if f.state in ("stale", "missing"):
            print(f"FAIL: {f.detail}")
        elif f.state == "unpublished":
            log(f"floating: {f.ref}: {f.detail}")
    counts = {s: sum(f.state == s for f in findings) for s in ("current", "stale", "missing")}
    unpublished = sum(f.state == "unpublished" for f in findings)
    print(
        f"floating: {len(findings)} floating tags: {counts['current']} current,"
        f" {counts['stale']} stale, {counts['missing']} missing"
        + (f", {unpublished} not published yet" if unpublished else "")
    )
    return 1 if bad else 0
