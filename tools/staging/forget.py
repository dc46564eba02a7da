"""Forget descriptors whose image staging no longer holds, so the next build rebuilds it.

A descriptor in bazel-out is Bazel's record that an image exists in staging.
When staging loses it (gc, a wiped state dir, a shared registry's retention
policy) builds that need the image fail with "staging has lost ...". Deleting
those descriptor files makes Bazel re-run their actions on the next build
(Bazel checks its output files), which pushes the images again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from contextlib import ExitStack
from typing import TYPE_CHECKING

from tools.staging import embedded, remote, scan
from tools.staging.errors import UnreachableError

if TYPE_CHECKING:
    from tools.oci.client import RegistryClient


def lost(
    found: Iterable[scan.Found],
    *,
    insecure: bool = False,
    unreachable: dict[str, list[scan.Found]] | None = None,
) -> list[scan.Found]:
    """The descriptors whose image their staging registry no longer holds whole: the
    manifest, or any blob it names (a deleted layer leaves the manifest behind).

    A shared staging registry that does not answer raises UnreachableError, unless
    ``unreachable`` is given: its descriptors then go there, by host, neither lost nor
    kept (a test's temporary staging, long gone, must not keep `forget` from the rest)."""
    p = embedded.paths()
    clients: dict[str, RegistryClient] = {}
    out = []
    with ExitStack() as stack:
        for f in found:
            staging, digest = f.data["staging"], f.data["digest"]
            name = staging.get("name", "")
            blobs = blob_digests(f.data)
            if staging.get("embedded"):
                present = embedded_has(p, name, digest) and all(
                    embedded_has(p, name, b, kind="_layers") for b in blobs
                )
            else:
                host = str(staging.get("registry", "")).split("/", 1)[0]
                if unreachable is not None and host in unreachable:
                    unreachable[host].append(f)
                    continue
                if host not in clients:
                    clients[host] = stack.enter_context(remote.connect(host, insecure=insecure))
                c = clients[host]
                try:
                    with remote.translated():
                        present = c.manifest_digest(name, digest) is not None and all(
                            c.blob_exists(name, b) for b in blobs
                        )
                except UnreachableError:
                    if unreachable is None:
                        raise
                    unreachable[host] = [f]
                    continue
            if not present:
                out.append(f)
    return out


def blob_digests(data: dict) -> list[str]:
    """The config and layer digests of a descriptor's manifest ([] if it names none)."""
    try:
        manifest = json.loads(data.get("manifest") or "{}")
    except ValueError:
        return []
    config = manifest.get("config") or {}
    layers = manifest.get("layers") or []
    return [b["digest"] for b in [config, *layers] if isinstance(b, dict) and b.get("digest")]


def embedded_has(
    p: embedded.Paths, name: str, digest: str, kind: str = "_manifests/revisions"
) -> bool:
    """Whether the embedded storage holds ``digest`` in repository ``name``: its link there
    (``kind``: a manifest revision, or `_layers` for a blob) and its data."""
    algo, _, hexpart = digest.partition(":")
    link = p.repositories / name / kind / algo / hexpart / "link"
    blob = p.data / "docker/registry/v2/blobs" / algo / hexpart[:2] / hexpart / "data"
    return bool(name) and link.is_file() and blob.is_file()


def forget(found: Iterable[scan.Found]) -> int:
    """Delete these descriptor files; how many were deleted."""
    count = 0
    for f in found:
        try:
            f.path.unlink()
            count += 1
        except FileNotFoundError:
            continue
    return count
