"""Forget descriptors whose image staging no longer holds, so the next build rebuilds it.

A descriptor in bazel-out is Bazel's record that an image exists in staging.
When staging loses it (gc, a wiped state dir, a shared registry's retention
policy) builds that need the image fail with "staging has lost ...". Deleting
those descriptor files makes Bazel re-run their actions on the next build
(Bazel checks its output files), which pushes the images again.
"""

from __future__ import annotations

from collections.abc import Iterable

from tools.staging import embedded, scan
from tools.staging.client import Client


def lost(found: Iterable[scan.Found], *, insecure: bool = False) -> list[scan.Found]:
    """The descriptors whose manifest is not in their staging registry."""
    p = embedded.paths()
    clients: dict[str, Client] = {}
    out = []
    try:
        for f in found:
            staging, digest = f.data["staging"], f.data["digest"]
            name = staging.get("name", "")
            if staging.get("embedded"):
                present = embedded_has(p, name, digest)
            else:
                host = str(staging.get("registry", "")).split("/", 1)[0]
                c = clients.setdefault(host, Client(host, insecure=insecure))
                present = c.digest(name, digest) is not None
            if not present:
                out.append(f)
    finally:
        for c in clients.values():
            c.http.close()
    return out


def embedded_has(p: embedded.Paths, name: str, digest: str) -> bool:
    """Whether the embedded storage holds manifest ``digest`` in repository ``name``."""
    algo, _, hexpart = digest.partition(":")
    link = p.repositories / name / "_manifests/revisions" / algo / hexpart / "link"
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
