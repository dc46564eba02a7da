"""Push planned images from the staging registry: blobs, manifest by digest, tags.

Order of operations, and what it guarantees:

1. Before anything is written, every immutable tag of the whole push is
   looked up; if one exists with another digest the push stops and nothing
   moves (same digest: fine, idempotent). Each manifest is looked up too
   (HEAD by digest): an image the registry has is complete, and for every
   other one staging must still hold the manifest, else nothing is written.
2. Images go parents first. Each blob of an image the registry lacks
   (config, layers; several at once) is copied from staging: a
   cross-repository mount when staging is on the same host
   (no blob bytes move), else a mount from a sibling repository of this push
   that has it, else (unless the registry has it already) streamed from
   staging's GET straight into the registry's PUT, never through the disk.
3. The manifest is PUT by digest, the descriptor's bytes unchanged, and only
   then the tags, so no tag ever points at a missing manifest. A tag already
   on the right digest is left alone, which makes a no-op push 1 +
   number-of-tags requests per image.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tools.registry.client import RegistryClient
from tools.registry.errors import NotFound, RegistryError
from tools.registry.plan import PlannedImage, check_collisions
from tools.registry.staged import Clients, Lost, lost, parallel

if TYPE_CHECKING:
    from tools.staging.descriptor import BlobRef, Descriptor


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
    jobs: int = 4


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
        self.client = Clients(
            insecure=options.insecure,
            ca_file=options.ca_file,
            retries=options.retries,
            backoff=options.backoff,
            log=self.log,
        )
        # blob digest -> repositories (per host) known to hold it in this run
        self.known: dict[tuple[str, str], list[str]] = {}

    @property
    def clients(self) -> dict[str, RegistryClient]:
        return self.client.by_host

    def close(self) -> None:
        self.client.close()

    def total_requests(self) -> int:
        return sum(c.stats.requests for c in self.clients.values())

    # -- the three phases -----------------------------------------------------

    def check_immutable(
        self, images: list[PlannedImage], descriptors: dict
    ) -> dict[tuple[str, str | None], str | None]:
        """Phase 1: digest each immutable tag has now; refuse conflicting ones."""
        current: dict[tuple[str, str | None], str | None] = {}
        conflicts = []
        for image in images:
            if not image.immutable:
                continue
            have = self.client(image.host).manifest_digest(image.name, image.immutable)
            current[image.key] = have
            want = descriptors[image.key].digest
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

    def push_image(
        self, image: PlannedImage, d: Descriptor, exists: bool, immutable_now: str | None
    ) -> None:
        """Phases 2 and 3 for one image."""
        c = self.client(image.host)
        if not exists:
            s = self.client.staging(d)
            parallel(self.options.jobs, lambda b: self.copy_blob(c, s, image, d, b), d.blobs)
            c.put_manifest(image.name, d.digest, d.manifest, d.media_type)
        for blob in d.blobs:
            self._remember(c.host, blob.digest, image.name)
        for tag in image.tags:
            if tag == image.immutable and immutable_now == d.digest:
                continue
            if exists and tag != image.immutable and c.manifest_digest(image.name, tag) == d.digest:
                continue
            c.put_manifest(image.name, tag, d.manifest, d.media_type)

    def copy_blob(
        self,
        c: RegistryClient,
        s: RegistryClient,
        image: PlannedImage,
        d: Descriptor,
        blob: BlobRef,
    ) -> None:
        """One blob from staging ``s`` into ``image``'s repository on ``c``."""
        session = None
        if s.host == c.host:
            session = c.mount_blob(image.name, blob.digest, d.staging_name)
            if session is None:
                self.log(f"  mounted {blob.digest[:19]} from {d.staging_name}")
                return
        else:
            for source in self.known.get((c.host, blob.digest), []):
                if source != image.name:
                    session = c.mount_blob(image.name, blob.digest, source)
                    if session is None:
                        self.log(f"  mounted {blob.digest[:19]} from {source}")
                        return
            if c.blob_exists(image.name, blob.digest):
                return
        self.log(f"  copying {blob.digest[:19]} ({human(blob.size)}) from {s.host}")
        try:
            c.upload(
                image.name,
                blob.digest,
                blob.size,
                lambda: s.blob_stream(d.staging_name, blob.digest),
                session,
            )
        except NotFound:
            raise lost(d) from None

    def _remember(self, host: str, digest: str, name: str) -> None:
        repos = self.known.setdefault((host, digest), [])
        if name not in repos:
            repos.append(name)

    # -- driver ---------------------------------------------------------------

    def dry_run(self, images: list[PlannedImage]) -> list[str]:
        """What a push would do, per ref; reads, never writes."""
        lines = []
        for image in images:
            d = image.load_descriptor()
            c = self.client(image.host)
            if c.manifest_digest(image.name, d.digest) == d.digest:
                state = "manifest present"
            else:
                s = self.client.check_staged(d)
                missing = [b for b in d.blobs if not c.blob_exists(image.name, b.digest)]
                present = f"{len(d.blobs) - len(missing)}/{len(d.blobs)} blobs present"
                if not missing:
                    state = present
                elif s.host == c.host:
                    state = f"{present}, would mount {len(missing)} from staging {d.staging_name}"
                else:
                    size = human(sum(b.size for b in missing))
                    state = f"{present}, would copy {len(missing)} ({size}) from staging {s.host}"
            for ref in image.refs:
                lines.append(f"{ref}@{d.digest} ({state})")
        return lines

    def push(self, images: list[PlannedImage]) -> PushResult:
        check_collisions(images)
        result = PushResult()
        descriptors = {image.key: image.load_descriptor() for image in images}
        immutable_now = self.check_immutable(images, descriptors)
        exists = {}
        for image in images:
            d = descriptors[image.key]
            exists[image.key] = self.client(image.host).manifest_digest(image.name, d.digest)
            if exists[image.key] != d.digest:
                self.client.check_staged(d)
        total = len(images)
        for n, image in enumerate(images, 1):
            d = descriptors[image.key]
            before = self.total_requests()
            self.log(
                f"[{n}/{total}] {image.registry}/{image.repository}:{image.tags[0]}"
                f" {image.label()}: {len(d.blobs)} blobs, {human(d.image_size)}"
            )
            try:
                self.push_image(
                    image, d, exists[image.key] == d.digest, immutable_now.get(image.key)
                )
            except Lost:
                raise  # one line: nothing else to report but the rebuild
            except RegistryError as e:
                result.failed = image
                result.error = str(e)
                return result
            result.requests[image.label()] = self.total_requests() - before
            result.pushed.append(image)
        return result
