"""The upstream image's digest: locked by a command, pinned by the builds, held by a release.

    bazel run //images:upstream_lock     # ask the registry, rewrite images/upstream.lock
    bazel run //images:upstream_lock -- --ref mirror.example.internal/rocm/dev:10.1.0-full

The catalogue's upstream (UPSTREAM_IMAGE:ROCM_VERSION) is a tag its publisher
moves. `lock` asks the tag's registry what it names now (`docker buildx
imagetools inspect`: the docker CLI's own resolver, credentials and
credential helpers, so Docker Hub's short names work as in a Dockerfile) and
writes the digest into images/upstream.lock (tools/tagconf/upstream_lock.py).
The spec of each image with a stage FROM the upstream then carries it
(`upstream_digest`), and the build pins it: a named build context
`REF=docker-image://REF@DIGEST`, so the Dockerfile's `FROM REF` takes exactly
that image. A new lock rebuilds the family; a tag moved behind the lock's back
rebuilds nothing.

A release (`--config=release`: `--reproducible`) builds such an image
only from a locked upstream whose tag has not moved since: `check_release`
asks the registry again and stops the build in one line naming both digests
and the command that takes the new one. A stand-in upstream (the rehearsal's,
the fixture family's) is exempt: it is an image of this build, by digest.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from tools import places
from tools.tagconf import upstream_lock
from tools.tagconf.catalog import load as load_catalog
from tools.tagconf.errors import TagconfError
from tools.tagconf.spec import upstream_ref

ASK_TIMEOUT = 120.0  # a registry behind a slow proxy, a credential helper that asks a cloud
LOCK = "images/upstream.lock"
COMMAND = "bazel run //images:upstream_lock"


class UpstreamError(Exception):
    """The upstream's digest cannot be had, or a release would not build from the lock."""


def current_digest(ref: str, env: Mapping[str, str] | None = None, docker: str = "docker") -> str:
    """The digest ``ref`` names now at its registry (its index, for a multi-platform tag)."""
    try:
        proc = subprocess.run(
            [docker, "buildx", "imagetools", "inspect", ref, "--format", "{{json .Manifest}}"],
            capture_output=True,
            text=True,
            env=dict(env) if env is not None else None,
            timeout=ASK_TIMEOUT,
            check=False,
        )
    except FileNotFoundError:
        raise UpstreamError(f"cannot ask for {ref}: no {docker} on PATH") from None
    except subprocess.TimeoutExpired:
        raise UpstreamError(f"cannot ask for {ref}: no answer in {ASK_TIMEOUT:.0f} s") from None
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise UpstreamError(f"cannot ask for {ref}: {last.removeprefix('ERROR: ')}")
    try:
        digest = json.loads(proc.stdout)["digest"]
    except (ValueError, KeyError, TypeError):
        raise UpstreamError(
            f"cannot ask for {ref}: not a manifest ({proc.stdout[:80]!r})"
        ) from None
    if not upstream_lock.DIGEST.fullmatch(str(digest)):
        raise UpstreamError(f"cannot ask for {ref}: {digest!r} is not a sha256 digest")
    return str(digest)


def starts_from_upstream(spec: Mapping) -> bool:
    """Whether a stage of the image's build starts FROM the upstream (rocm-runtime's,
    triton-wheel's, pytorch's source fetch): its build spec keeps only the build args
    its stages read, and UPSTREAM_IMAGE is read in that FROM alone."""
    return "UPSTREAM_IMAGE" in (spec.get("build_args") or {})


def pin(spec: Mapping) -> list[str]:
    """`--build-context REF=docker-image://REF@DIGEST` when the spec has a locked digest."""
    ref, digest = spec.get("upstream"), spec.get("upstream_digest")
    if not ref or not digest or not starts_from_upstream(spec):
        return []
    return ["--build-context", f"{ref}=docker-image://{ref}@{digest}"]


def check_release(
    spec: Mapping, reproducible: bool, stand_in: bool, ask: Callable[[str], str]
) -> None:
    """A release builds an image with a stage FROM the upstream only from a locked digest
    that its tag still names; UpstreamError (one line) otherwise."""
    if not reproducible or stand_in or not starts_from_upstream(spec):
        return
    ref, locked = spec.get("upstream") or "", spec.get("upstream_digest")
    target = spec.get("target", "this image")
    if not locked:
        raise UpstreamError(
            f"a release builds {target} FROM a locked upstream, and {LOCK} has no digest for"
            f" {ref}: run `{COMMAND}` (it asks the registry) and commit {LOCK}"
        )
    now = ask(ref)
    if now != locked:
        raise UpstreamError(
            f"the upstream tag {ref} moved: {LOCK} pins {locked}, its registry names {now}"
            f" now; a release builds from the lock: take the new one with `{COMMAND}` and"
            " commit it, or build without --config=release"
        )


def lock(
    catalog_path: Path, lock_path: Path, ask: Callable[[str], str], ref: str | None = None
) -> tuple[str, str, str]:
    """Ask for ``ref`` (default: the catalogue's upstream, UPSTREAM_IMAGE:ROCM_VERSION) and
    write its digest into the lock at ``lock_path``, keeping the lock's other refs (a
    mirror's, `--define UPSTREAM_IMAGE=`): (ref, digest before or "", digest now)."""
    if ref is None:
        ref = upstream_ref(load_catalog(catalog_path).defaults)
    held = upstream_lock.load(lock_path) if lock_path.exists() else {}
    before = held.get(ref, "")
    now = ask(ref)
    lock_path.write_text(upstream_lock.render({**held, ref: now}), encoding="utf-8")
    return ref, before, now


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="upstream",
        description="Lock the upstream image's digest (images/upstream.lock): ask its"
        " registry what the catalogue's UPSTREAM_IMAGE:ROCM_VERSION names now.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    lk = sub.add_parser("lock", help="ask the registry and rewrite the lock")
    lk.add_argument("--catalog", type=Path, default=Path("images/catalog.toml"))
    lk.add_argument("--lock", type=Path, default=Path(LOCK))
    lk.add_argument(
        "--ref",
        help="lock this ref instead of the catalogue's (the mirror a `--define"
        " UPSTREAM_IMAGE=` names, with its ROCM_VERSION tag)",
    )
    args = p.parse_args(argv)
    root = places.workspace()
    catalog = args.catalog if args.catalog.is_absolute() else root / args.catalog
    where = args.lock if args.lock.is_absolute() else root / args.lock
    try:
        ref, before, now = lock(catalog, where, current_digest, args.ref)
    except (UpstreamError, TagconfError) as e:
        print(f"upstream: error: {e}", file=sys.stderr)
        return 1
    change = "unchanged" if before == now else f"was {before}" if before else "new"
    print(f"upstream: {ref} = {now} ({change}) -> {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
