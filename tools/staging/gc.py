"""Garbage-collect a staging registry: keep what is in use, recent or young.

A staged tag is kept when any of these holds:

- its manifest is referenced by a descriptor under the scanned directories
  (an image's own digest or a parent's), in any repository;
- a running build on this host holds a lease on it (tools/staging/lease.py:
  the parents it reads, the tag it pushes);
- it is one of the newest ``keep`` tags of its repository;
- it is younger than ``max_age`` (the default, 14 days, matches the age at
  which CI's disk cache forgets action results; the command refuses less
  than ``MIN_AGE``, the grace in which a build elsewhere may have pushed a
  tag whose descriptor this checkout cannot see).

Everything else is deleted by manifest digest through the registry API; a
digest that a kept tag still points at is never deleted.

Ages. The embedded registry's age of a tag is the mtime of its
``_manifests/tags/<tag>/current/link`` file, which every push rewrites. A
shared registry does not tell when a tag was pushed, so there every age is
unknown: ``max_age`` protects nothing, "newest" means the first ``keep``
tags in the registry's (lexical) listing order, and only tags no descriptor
*here* references are candidates. Teammates' descriptors are not visible
from this machine, so for a shared registry the registry's own retention
policy is the real tool; run this one with ``dry_run`` first.

After deleting, the embedded registry's disk is reclaimed: stop it, run
`docker-registry garbage-collect --delete-untagged`, start it (same port),
unless a build holds a lease: then the registry stays up, and a later gc
frees the disk.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tools.staging import Staging, embedded, lease, remote, scan

if TYPE_CHECKING:
    from tools.oci.client import RegistryClient

DEFAULT_KEEP = 3
DEFAULT_MAX_AGE = 14 * 86400.0
MIN_AGE = 3600.0
INDEX_TYPES = ("index", "manifest.list")


@dataclass(frozen=True)
class Tag:
    name: str  # repository path on the host, e.g. staging/pytorch
    tag: str
    digest: str
    age: float | None  # seconds since it was pushed; None when unknown


@dataclass(frozen=True)
class Verdict:
    tag: Tag
    keep: bool
    why: str


@dataclass(frozen=True)
class Options:
    keep: int = DEFAULT_KEEP
    max_age: float = DEFAULT_MAX_AGE
    dry_run: bool = False
    insecure: bool = False


@dataclass
class Report:
    staging: Staging
    descriptors: int
    verdicts: list[Verdict]
    deletions: list[tuple[str, str]]  # (name, digest)
    deleted: int = 0
    bytes_before: int | None = None
    bytes_after: int | None = None
    notes: list[str] = field(default_factory=list)
    builds: list[lease.Held] = field(default_factory=list)  # running builds' leases


# -- pure decisions ----------------------------------------------------------------


def decide(
    tags: Iterable[Tag],
    referenced: set[str],
    *,
    keep: int,
    max_age: float,
    leases: Iterable[lease.Held] = (),
) -> list[Verdict]:
    """Keep or drop each tag (see the module docstring); the input order is kept."""
    tags = list(tags)
    leases = list(leases)
    leased_digests = {d for h in leases for d in h.digests}
    leased_tags = {t for h in leases for t in h.tags}
    newest: set[Tag] = set()
    for name in dict.fromkeys(t.name for t in tags):
        group = [t for t in tags if t.name == name]
        # Unknown ages sort after known ones, in listing order (sorted is stable).
        ranked = sorted(group, key=lambda t: (t.age is None, t.age or 0.0))
        newest.update(ranked[:keep])
    out = []
    for t in tags:
        if t.digest in referenced:
            out.append(Verdict(t, True, "referenced by a descriptor"))
        elif t.digest in leased_digests or f"{t.name}:{t.tag}" in leased_tags:
            out.append(Verdict(t, True, "in use by a running build"))
        elif t in newest:
            out.append(Verdict(t, True, f"among the newest {keep}"))
        elif t.age is not None and t.age < max_age:
            out.append(Verdict(t, True, f"younger than {format_age(max_age)}"))
        elif t.age is None:
            out.append(Verdict(t, False, f"unreferenced, beyond the newest {keep}"))
        else:
            out.append(Verdict(t, False, f"unreferenced, {format_age(t.age)} old"))
    return out


def deletions(verdicts: Iterable[Verdict]) -> list[tuple[str, str]]:
    """(name, digest) of the manifests to delete: dropped, and no kept tag points at them."""
    verdicts = list(verdicts)
    kept = {(v.tag.name, v.tag.digest) for v in verdicts if v.keep}
    return sorted({(v.tag.name, v.tag.digest) for v in verdicts if not v.keep} - kept)


# -- listing -------------------------------------------------------------------------


def embedded_tags(p: embedded.Paths, prefix: str, now: float) -> list[Tag]:
    """Tags under ``prefix/`` in the embedded storage tree, aged by their link's mtime."""
    return [
        Tag(name, tag, digest, max(0.0, now - mtime))
        for name in embedded.list_repositories(p)
        if name.startswith(prefix + "/")
        for tag, (digest, mtime) in embedded.list_tags(p, name).items()
    ]


def shared_tags(client: RegistryClient, prefix: str) -> list[Tag]:
    """Tags under ``prefix/`` of a shared registry (through its API; ages unknown)."""
    remote.ping(client)
    out = []
    for name in sorted(remote.repositories(client, prefix)):
        for tag in sorted(client.list_tags(name)):
            digest = client.manifest_digest(name, tag)
            if digest:
                out.append(Tag(name, tag, digest, None))
    return out


def has_index(p: embedded.Paths, digests: Iterable[str]) -> bool:
    """Whether any of these manifests is an index (garbage-collect's --delete-untagged
    would then delete its untagged children: distribution 2.8 does not follow them)."""
    for digest in digests:
        algo, _, hexpart = digest.partition(":")
        blob = p.data / "docker/registry/v2/blobs" / algo / hexpart[:2] / hexpart / "data"
        try:
            media_type = json.loads(blob.read_bytes()).get("mediaType", "")
        except (OSError, ValueError, AttributeError):
            continue
        if any(kind in media_type for kind in INDEX_TYPES):
            return True
    return False


# -- the run -------------------------------------------------------------------------


def run(
    staging: Staging,
    descriptor_dirs: Iterable[Path],
    options: Options,
    say: Callable[[str], None] = lambda _line: None,
) -> Report:
    """Garbage-collect ``staging``; ``say`` gets one line per deleted manifest.

    Everything after the listing happens under the embedded state dir's lock:
    no build takes a lease (or starts the registry) until gc is done, and a
    build that holds one keeps what it names and keeps the registry up.
    """
    found = list(scan.find(descriptor_dirs))
    referenced = scan.referenced_digests(found)
    p = embedded.paths()
    port = None
    if staging.embedded and not options.dry_run:
        port = embedded.ensure_running()  # deletes go through its API
    with embedded.locked(p, "gc: waiting for a staging start, stop or lease to finish"):
        held = lease.live(p)
        if staging.embedded:
            before = embedded.storage_bytes(p)
            tags = embedded_tags(p, staging.prefix, time.time())
        else:
            before = None
            with remote.connect(staging.host, insecure=options.insecure) as c:
                tags = shared_tags(c, staging.prefix)
        verdicts = decide(tags, referenced, keep=options.keep, max_age=options.max_age, leases=held)
        doomed = deletions(verdicts)
        report = Report(staging, len(found), verdicts, doomed, bytes_before=before, builds=held)
        verb = "would delete" if options.dry_run else "delete"
        for name, digest in doomed:
            dropped = [v for v in verdicts if (v.tag.name, v.tag.digest) == (name, digest)]
            tags_text = ", ".join(v.tag.tag for v in dropped)
            say(f"{verb} {name}@{digest} (tag {tags_text}; {dropped[0].why})")
        if options.dry_run:
            report.bytes_after = before
            return report
        if doomed and staging.embedded:
            report.deleted = delete_embedded(f"127.0.0.1:{port}", doomed)
        elif doomed:
            with remote.connect(staging.host, insecure=options.insecure) as c:
                report.deleted = sum(remote.delete(c, name, digest) for name, digest in doomed)
        if not staging.embedded:
            return report
        if held:
            report.notes.append(
                f"{len(held)} running build(s) use staging ({describe_held(held)}): the"
                " registry was not restarted, so the disk of what was deleted is freed by the"
                " next gc while no build runs"
            )
            report.bytes_after = embedded.storage_bytes(p)
            return report
        kept = {v.tag.digest for v in verdicts if v.keep}
        untagged = not has_index(p, kept)
        if not untagged:
            report.notes.append("an index is staged: garbage-collect ran without --delete-untagged")
        embedded.collect_garbage(p, delete_untagged=untagged)
        report.bytes_after = embedded.storage_bytes(p)
    return report


def delete_embedded(host: str, doomed: Iterable[tuple[str, str]]) -> int:
    """Delete manifests from the embedded registry at ``host`` with the standard library's
    client (tools/staging/loopback.py): gc of the embedded registry needs no httpx, so
    `python3 -m tools.staging gc` runs beside a build that holds the Bazel server."""
    from tools.staging.loopback import LoopbackClient

    client = LoopbackClient(host, timeout=remote.TIMEOUT)
    try:
        with remote.translated():
            return sum(client.delete_manifest(name, digest) for name, digest in doomed)
    finally:
        client.close()


# -- units ---------------------------------------------------------------------------

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_age(text: str) -> float:
    """`14d`, `12h`, `30m`, `90s`, `2w`; a bare number is days. ValueError otherwise."""
    text = text.strip().lower()
    unit = text[-1:] if text[-1:] in _UNITS else "d"
    number = float(text[:-1] if text[-1:] in _UNITS else text)
    if number < 0:
        raise ValueError(text)
    return number * _UNITS[unit]


def describe_held(held: Iterable[lease.Held], now: float | None = None) -> str:
    """`pid 123 (pytorch (gfx950), 5m)`, … for messages."""
    now = time.time() if now is None else now
    return ", ".join(
        f"pid {h.pid} ({h.what}, {format_age(max(0.0, now - h.started))})" for h in held
    )


def format_age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit}"
    return f"{seconds:.0f}s"


def human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"
