"""prune-cache: delete old BuildKit cache manifests from every `*-cache` repository.

Cache tags are `<stage>_<arch>_<versioned>` (tagconf's cache_ref), one per
image version. Within each `<stage>_<arch>` group the newest N (by the
`buildkit/createdat` annotations BuildKit writes on cache layers) stay; the
others are deleted by digest, registry-side. A digest still referenced by a
kept tag is never deleted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from tools.oci.client import RegistryClient


@dataclass(frozen=True)
class CacheTag:
    repository: str
    tag: str
    digest: str
    created: str  # ISO timestamp; "" if unknown (sorts oldest)

    @property
    def group(self) -> str:
        parts = self.tag.split("_", 2)
        return "_".join(parts[:2]) if len(parts) == 3 else self.tag


def newest_created(manifest: bytes) -> str:
    data = json.loads(manifest)
    stamps = [
        layer.get("annotations", {}).get("buildkit/createdat", "")
        for layer in data.get("layers", [])
    ]
    return max(stamps, default="")


def cache_tags(client: RegistryClient, namespace: str) -> list[CacheTag]:
    prefix = f"{namespace}/" if namespace else ""
    out = []
    for repo in client.list_repositories():
        if not (repo.startswith(prefix) and repo.endswith("-cache")):
            continue
        for tag in client.list_tags(repo):
            body, _, digest = client.get_manifest(repo, tag)
            out.append(CacheTag(repo, tag, digest, newest_created(body)))
    return out


def select_deletions(tags: list[CacheTag], keep: int) -> list[CacheTag]:
    """Tags beyond the newest ``keep`` of each (repository, group); pure."""
    groups: dict[tuple[str, str], list[CacheTag]] = {}
    for t in tags:
        groups.setdefault((t.repository, t.group), []).append(t)
    doomed, kept_digests = [], set()
    for members in groups.values():
        members.sort(key=lambda t: (t.created, t.tag), reverse=True)
        kept_digests |= {(t.repository, t.digest) for t in members[:keep]}
        doomed += members[keep:]
    return [t for t in doomed if (t.repository, t.digest) not in kept_digests]
