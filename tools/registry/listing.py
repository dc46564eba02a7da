"""tags: published tags of one repository with digest, target and arch.

Bounded for repositories with very many tags (one with 200,000 took 10+
minutes without a word: a HEAD per tag, one at a time, after 2,000 pages of
100): the listing asks ``PAGE`` tags per request (`?n=`, following the
registry's `Link` with `last=`); the digests of only the first ``limit`` tags
in tag order are looked up, ``jobs`` HEADs at once, and the rest are listed
without a digest; ``say`` gets progress at most every ``PROGRESS_EVERY``
seconds and the note of what was not looked up.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from tools.oci.client import RegistryClient
from tools.tagconf.model import Catalog
from tools.tagconf.tags import parse_tag

PAGE = 1000  # tags per listing request (what registries commonly allow at most)
PROGRESS_EVERY = 1.0  # seconds between progress lines (none for a listing quicker than that)
NOT_LOOKED_UP = "-"


@dataclass
class Listing:
    """The rows (tag, digest, target, arch, kind), sorted by tag; a tag whose digest was
    not looked up has digest ``NOT_LOOKED_UP``, one that vanished meanwhile ``?``."""

    rows: list[tuple[str, ...]]
    looked_up: int

    @property
    def not_looked_up(self) -> int:
        return len(self.rows) - self.looked_up


class Progress:
    """Lines for ``say``, at most one per ``PROGRESS_EVERY`` seconds, the first after it."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self.say = say
        self.last = time.monotonic()

    def __call__(self, text: str) -> None:
        now = time.monotonic()
        if now - self.last >= PROGRESS_EVERY:
            self.last = now
            self.say(text)


def tag_rows(
    client: RegistryClient,
    name: str,
    catalog: Catalog,
    *,
    limit: int,
    jobs: int,
    say: Callable[[str], None] = lambda _line: None,
) -> Listing:
    """Every tag of ``name``, the digests of the first ``limit`` (0: all) looked up.

    NotFound if the registry does not know the repository.
    """
    where = f"{client.host}/{name}"
    progress = Progress(say)
    listed = client.list_tags(
        name,
        missing_ok=False,
        page=PAGE,
        on_page=lambda n: progress(f"tags: listed {n} tags of {where} so far"),
    )
    tags = sorted(listed)
    wanted = tags if limit == 0 else tags[:limit]
    digests = lookup(client, name, wanted, jobs, progress)
    repository = name.rsplit("/", 1)[-1]
    rows = []
    for tag in tags:
        digest = digests.get(tag, NOT_LOOKED_UP)
        parsed = parse_tag(catalog, repository, tag)
        if parsed:
            rows.append((tag, digest, parsed.target, parsed.arch or "noarch", parsed.kind))
        else:
            rows.append((tag, digest, "-", "-", "unknown"))
    listing = Listing(rows, len(wanted))
    if listing.not_looked_up:
        say(
            f"tags: note: {where} has {len(tags)} tags; looked up the digests of the first"
            f" {len(wanted)} in tag order (up to {wanted[-1] if wanted else '-'}); the other"
            f" {listing.not_looked_up} are listed with digest {NOT_LOOKED_UP} (not looked"
            " up); --limit 0 looks up every one (a HEAD each, --jobs at once)"
        )
    return listing


def lookup(
    client: RegistryClient,
    name: str,
    tags: list[str],
    jobs: int,
    progress: Callable[[str], None],
) -> dict[str, str]:
    """tag -> digest (`?` for a tag gone meanwhile), ``jobs`` HEADs at once.

    Submitted in batches of a few per thread: memory stays bounded for any number
    of tags, and a failure stops after the batch in flight.
    """
    out: dict[str, str] = {}
    batch = max(1, jobs) * 16
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for start in range(0, len(tags), batch):
            chunk = tags[start : start + batch]
            for tag, digest in zip(
                chunk, pool.map(lambda t: client.manifest_digest(name, t), chunk), strict=True
            ):
                out[tag] = digest or "?"
            progress(f"tags: looked up {len(out)}/{len(tags)} digests")
    return out
