"""Push planned images: missing blobs, manifest by digest, then tags.

Order of operations, and what it guarantees:

1. Before anything is written, every immutable tag of the whole push is
   looked up; if one exists with another digest the push stops and nothing
   moves (same digest: fine, idempotent).
2. Images go parents first. For each: if the registry already has the
   manifest (HEAD by digest) its blobs are there too; else each blob is
   mounted from a sibling repository that has it, or HEADed and uploaded.
3. The manifest is PUT by digest, bytes unchanged, and only then the tags,
   so no tag ever points at a missing manifest. A tag already on the right
   digest is left alone, which makes a no-op push 1 + number-of-tags
   requests per image.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tools.registry.client import RegistryClient
from tools.registry.errors import RegistryError
from tools.registry.layout import Layout, read_layout
from tools.registry.plan import PlannedImage, check_collisions


def human(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1000
    return f"{n:.1f} GB"


@dataclass
class PushOptions:
    insecure: bool = False
    ca_file: Path | None = None
    retries: int = 5
    backoff: float = 0.5
    dry_run: bool = False


@dataclass
class PushResult:
    pushed: list[PlannedImage] = field(default_factory=list)
    failed: PlannedImage | None = None
    error: str = ""
    requests: dict[str, int] = field(default_factory=dict)  # per image label


class Pusher:
    def __init__(self, options: PushOptions, log: Callable[[str], None] | None = None) -> None:
        self.options = options
        self.log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
        self.clients: dict[str, RegistryClient] = {}
        # blob digest -> repositories (per host) known to hold it in this run
        self.known: dict[tuple[str, str], list[str]] = {}

    def client(self, host: str) -> RegistryClient:
        if host not in self.clients:
            self.clients[host] = RegistryClient(
                host,
                insecure=self.options.insecure,
                ca_file=self.options.ca_file,
                retries=self.options.retries,
                backoff=self.options.backoff,
                log=self.log,
            )
        return self.clients[host]

    def close(self) -> None:
        for c in self.clients.values():
            c.close()

    def total_requests(self) -> int:
        return sum(c.stats.requests for c in self.clients.values())

    # -- the three phases -----------------------------------------------------

    def check_immutable(
        self, images: list[PlannedImage], layouts: dict
    ) -> dict[tuple[str, str | None], str | None]:
        """Phase 1: digest each immutable tag has now; refuse conflicting ones."""
        current: dict[tuple[str, str | None], str | None] = {}
        conflicts = []
        for image in images:
            if not image.immutable:
                continue
            have = self.client(image.host).manifest_digest(image.name, image.immutable)
            current[image.key] = have
            want = layouts[image.key].digest
            if have and have != want:
                conflicts.append(
                    f"{image.registry}/{image.repository}:{image.immutable} is {have},"
                    f" this build is {want}"
                )
        if conflicts:
            raise RegistryError(
                "immutable tags never move; nothing was pushed: "
                + "; ".join(conflicts)
                + ". Rebuild from the commit that made them, or push a new commit (new VCS_REF)"
            )
        return current

    def push_image(self, image: PlannedImage, layout: Layout, immutable_now: str | None) -> None:
        """Phases 2 and 3 for one image."""
        c = self.client(image.host)
        exists = c.manifest_digest(image.name, layout.digest) == layout.digest
        if not exists:
            for blob in layout.blobs:
                self.push_blob(c, image, blob)
            c.put_manifest(image.name, layout.digest, layout.manifest, layout.media_type)
        for blob in layout.blobs:
            self._remember(image.host, blob.digest, image.name)
        for tag in image.tags:
            if tag == image.immutable and immutable_now == layout.digest:
                continue
            if (
                exists
                and tag != image.immutable
                and c.manifest_digest(image.name, tag) == layout.digest
            ):
                continue
            c.put_manifest(image.name, tag, layout.manifest, layout.media_type)

    def push_blob(self, c: RegistryClient, image: PlannedImage, blob) -> None:
        for source in self.known.get((image.host, blob.digest), []):
            if source != image.name and c.mount_blob(image.name, blob.digest, source):
                self.log(f"  mounted {blob.digest[:19]} from {source}")
                return
        if c.blob_exists(image.name, blob.digest):
            return
        self.log(f"  uploading {blob.digest[:19]} ({human(blob.size)})")
        c.upload_blob(image.name, blob.digest, blob.path, blob.size)

    def _remember(self, host: str, digest: str, name: str) -> None:
        repos = self.known.setdefault((host, digest), [])
        if name not in repos:
            repos.append(name)

    # -- driver ---------------------------------------------------------------

    def dry_run(self, images: list[PlannedImage]) -> list[str]:
        lines = []
        for image in images:
            layout = read_layout(image.layout)
            c = self.client(image.host)
            if c.manifest_digest(image.name, layout.digest) == layout.digest:
                state = "manifest present"
            else:
                present = sum(c.blob_exists(image.name, b.digest) for b in layout.blobs)
                state = f"{present}/{len(layout.blobs)} blobs present"
            for ref in image.refs:
                lines.append(f"{ref}@{layout.digest} ({state})")
        return lines

    def push(self, images: list[PlannedImage]) -> PushResult:
        check_collisions(images)
        result = PushResult()
        layouts = {image.key: read_layout(image.layout) for image in images}
        immutable_now = self.check_immutable(images, layouts)
        total = len(images)
        for n, image in enumerate(images, 1):
            layout = layouts[image.key]
            before = self.total_requests()
            self.log(
                f"[{n}/{total}] {image.registry}/{image.repository}:{image.tags[0]}"
                f" {image.label()}: {len(layout.blobs)} blobs, {human(layout.size)}"
            )
            try:
                self.push_image(image, layout, immutable_now.get(image.key))
            except RegistryError as e:
                result.failed = image
                result.error = str(e)
                return result
            result.requests[image.label()] = self.total_requests() - before
            result.pushed.append(image)
        return result
