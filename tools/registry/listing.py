"""tags: published tags of one repository with digest, target and arch."""

from __future__ import annotations

from tools.oci.client import RegistryClient
from tools.tagconf.model import Catalog
from tools.tagconf.tags import parse_tag


def tag_rows(client: RegistryClient, name: str, catalog: Catalog) -> list[tuple[str, ...]]:
    """(tag, digest, target, arch, kind) for every tag of ``name``, sorted by tag.

    NotFound if the registry does not know the repository.
    """
    repository = name.rsplit("/", 1)[-1]
    rows = []
    for tag in sorted(client.list_tags(name, missing_ok=False)):
        digest = client.manifest_digest(name, tag) or "?"
        parsed = parse_tag(catalog, repository, tag)
        if parsed:
            rows.append((tag, digest, parsed.target, parsed.arch or "noarch", parsed.kind))
        else:
            rows.append((tag, digest, "-", "-", "unknown"))
    return rows
