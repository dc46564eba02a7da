"""Forget descriptors whose image staging no longer holds, so the next build rebuilds it.

A descriptor in bazel-out is Bazel's record that an image exists in staging.
When staging loses it (gc, a wiped state dir, a shared registry's retention
policy) builds that need the image fail with "staging has lost ...". Deleting
those descriptor files makes Bazel re-run their actions on the next build
(Bazel checks its output files), which pushes the images again.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import ExitStack
from typing import TYPE_CHECKING

from tools.staging import embedded, remote, scan

if TYPE_CHECKING:
    from tools.registry.client import RegistryClient


def lost(found: Iterable[scan.Found], *, insecure: bool = False) -> list[scan.Found]:
    """The descriptors whose manifest is not in their staging registry."""
    p = embedded.paths()
    clients: dict[str, RegistryClient] = {}
    out = []
    with ExitStack() as stack:
        for f in found:
            staging, digest = f.data["staging"], f.data["digest"]
            name = staging.get("name", "")
            if staging.get("embedded"):
                present = embedded_has(p, name, digest)
            else:
                host = str(staging.get("registry", "")).split("/", 1)[0]
                if host not in clients:
                    clients[host] = stack.enter_context(remote.connect(host, insecure=insecure))
                present = clients[host].manifest_digest(name, digest) is not None
            if not present:
                out.append(f)
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
