"""Push planned images from the staging registry: blobs, manifest by digest, tags.

Order of operations, and what it guarantees:

0. Before any request, an immutable tag of an image whose descriptor is not
   reproducible (built without `--reproducible`, --config=release)
   refuses the whole push: a clean rebuild of that commit would give another
   digest, which the tag could then never take (``unreproducible``).
1. Before anything is written, every immutable tag of the whole push is
   looked up; if one exists with another digest the push stops and nothing
   moves (same digest: fine, idempotent). Each manifest is looked up too
   (HEAD by digest): an image the registry has is complete, and for every
   other one staging must still hold the manifest, else nothing is written.
   A dry run makes the same checks (and looks up each blob it would copy
   in staging) and reports every refusal.
2. Images go parents first. Each blob of an image the registry lacks
   (config, layers; several at once) is copied from staging: a
   cross-repository mount when staging is on the same host
   (no blob bytes move), else a mount from a sibling repository of this push
   that has it, else (unless the registry has it already) streamed from
   staging's GET straight into the registry's PUT, never through the disk.
3. The manifest is PUT by digest, the descriptor's bytes unchanged, and only
   then the tags, so no tag ever points at a missing manifest. A tag already
   on the right digest is left alone, which makes a no-op push 1 +
   number-of-tags requests per image (one more for an immutable tag: its
   confirmation, 4.). The immutable tag goes first, and the distribution API
   has no compare-and-swap: it is looked up again right before its PUT, and
   confirmed (4.) before the image's other tags are written or reported.
4. Two pushes of one immutable tag never both succeed (Fischer's timed mutual
   exclusion, with ``IMMUTABLE_WINDOW`` W as the bound on how long after its
   look-up a write may land). A push whose PUT of an immutable tag was answered
   more than W after the look-up before it, less the time on the wire (the
   fastest manifest round trip it measured to that registry), fails: it cannot
   know what it overwrote. Every immutable tag is confirmed, written or found on
   its digest alike: read again at least W after its PUT was answered, or after
   the look-up that found it so. A competitor that looked before that digest
   landed, and kept to W, has landed by then, so the read sees it; only then is
   the tag reported (`pushed`, `up to date`) and the image's other tags written,
   so a push that fails on its immutable tag has moved none of them.

A manifest PUT answered DIGEST_INVALID or MANIFEST_BLOB_UNKNOWN (another
push was uploading or mounting one of its blobs at that moment) is retried
a few times, after a HEAD of every blob and a copy of those missing.

Each ref is reported as it lands (or is found on its digest already; an immutable
tag once confirmed), and a SIGINT or SIGTERM (``Interrupted``) or the push's
deadline (``OutOfTime``; both tools/registry/deadline.py) stops the push between
two requests: no tag is written
after it. The tag whose PUT was in flight then is ``tag_in_flight``: it may have
landed; an immutable tag written but not yet confirmed is ``unconfirmed``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tools.oci.client import Limits, RegistryClient
from tools.oci.errors import BadStatus, NotFound, RegistryError
from tools.registry.deadline import Deadline
from tools.registry.parallel import parallel
from tools.registry.plan import PlannedImage, check_collisions
from tools.staging.clients import Clients, Lost, lost

if TYPE_CHECKING:
    from tools.staging.descriptor import BlobRef, Descriptor


def stderr_line(message: str) -> None:
    """One line on stderr in one write, so lines of several threads never mix."""
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def human(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1000
    return f"{n:.1f} GB"


# A manifest PUT may meet another push's upload or mount of one of its blobs.
BLOB_RACE = ("DIGEST_INVALID", "MANIFEST_BLOB_UNKNOWN", "BLOB_UNKNOWN")
MANIFEST_ATTEMPTS = 4


# The longest a write of an immutable tag may land after the look-up before it (checked
# as the PUT's answer less the look-up's sending, less the time on the wire), and the
# least a push waits after its PUT was answered, or after a look-up found the tag on its
# digest, before it reads the tag again to confirm it. Every push keeps to it, so two
# pushes of one tag never both succeed (module docstring).
IMMUTABLE_WINDOW = 5.0


# Called for each ref as it settles: (image, ref, action), action "uploaded" (blob
# bytes copied for the image), "mounted" (written without copying bytes) or "up to date".
OnRef = Callable[[PlannedImage, str, str], None]


@dataclass(kw_only=True)
class PushOptions:
    """How a push talks to the registries and how long it may take: ``limits`` of each
    request (``Limits.timeout``: math.inf when ``deadline`` bounds the whole push),
    ``deadline``: the whole push's, from when it started (None: none)."""

    insecure: bool = False
    ca_file: Path | None = None
    retries: int = 5
    backoff: float = 0.5
    dry_run: bool = False
    jobs: int = 4
    immutable_window: float = IMMUTABLE_WINDOW
    limits: Limits = field(default_factory=Limits)
    deadline: Deadline | None = None


@dataclass
class PushResult:
    pushed: list[PlannedImage] = field(default_factory=list)
    failed: PlannedImage | None = None
    error: str = ""
    requests: dict[str, int] = field(default_factory=dict)  # per image label


def unreproducible(images: list[PlannedImage], descriptors: dict) -> str:
    """The refusal of a push that would give an immutable tag to an image built without
    the reproducible output (its descriptor's ``reproducible``), or ''. One line.

    Its floating and versioned tags alone are fine: they move anyway.
    """
    bad = [
        f"{image.label()} ({image.ref(image.immutable)})"
        for image in images
        if image.immutable and not descriptors[image.key].reproducible
    ]
    if not bad:
        return ""
    return (
        "immutable tags need reproducible images (a clean rebuild must give the same digest);"
        f" nothing was pushed: {', '.join(bad)} built without --reproducible."
        " Build with --config=release (or --reproducible)"
    )


class Pusher:
    def __init__(
        self,
        options: PushOptions,
        log: Callable[[str], None] | None = None,
        on_ref: OnRef | None = None,
    ) -> None:
        self.options = options
        self.log = log or stderr_line
        self.on_ref = on_ref or (lambda _image, _ref, _action: None)
        self.client = Clients(
            insecure=options.insecure,
            ca_file=options.ca_file,
            retries=options.retries,
            backoff=options.backoff,
            limits=options.limits,
            log=self.log,
        )
        # blob digest -> repositories (per host) known to hold it in this run
        self.known: dict[tuple[str, str], list[str]] = {}
        # called once the image's manifest is in the registry, before its tags
        # (tools/registry/attest.py: SBOM, provenance, signatures)
        self.before_tags: Callable[[PlannedImage, Descriptor], None] | None = None
        # (image, ref, tag, action) of the tag PUT waiting for its answer, if one is
        self.tag_in_flight: tuple[PlannedImage, str, str, str] | None = None
        # (image, ref) of the immutable tag this push wrote and has not confirmed yet
        self.unconfirmed: tuple[PlannedImage, str] | None = None
        # ref -> digest it pointed at when last read (None: unknown) of each immutable tag
        # this push wrote and could not confirm (a failed push's message names them)
        self.not_confirmed: dict[str, str | None] = {}
        # the fastest manifest request to each registry host, in seconds: time on the wire
        self.fastest: dict[str, float] = {}

    @property
    def clients(self) -> dict[str, RegistryClient]:
        return self.client.by_host

    def close(self) -> None:
        self.client.close()

    def new_client(self, host: str) -> RegistryClient:
        """A client of ``host`` with the push's options, apart from the push's own: the
        caller closes it (the dry run's registry check, tools/registry/preflight.py)."""
        return RegistryClient(host, **self.client.options)

    def total_requests(self) -> int:
        return sum(c.stats.requests for c in self.clients.values())

    # -- the three phases -----------------------------------------------------

    def look(self, image: PlannedImage, reference: str) -> tuple[str | None, float, float]:
        """The digest ``reference`` points at (None: absent), when the look-up was sent and
        when it was answered; its round trip counts toward the host's fastest."""
        c = self.client(image.host)
        sent = time.monotonic()
        have = c.manifest_digest(image.name, reference)
        answered = time.monotonic()
        self._round_trip(image.host, answered - sent)
        return have, sent, answered

    def _round_trip(self, host: str, seconds: float) -> None:
        self.fastest[host] = min(self.fastest.get(host, seconds), seconds)

    def immutable_now(
        self, images: list[PlannedImage], descriptors: dict
    ) -> tuple[dict[tuple[str, str | None], tuple[str | None, float]], str]:
        """Phase 1: the digest each immutable tag has now and when the look-up was answered,
        and the refusal if one differs."""
        current: dict[tuple[str, str | None], tuple[str | None, float]] = {}
        conflicts = []
        for image in images:
            if not image.immutable:
                continue
            have, _, answered = self.look(image, image.immutable)
            current[image.key] = have, answered
            want = descriptors[image.key].digest
            if have and have != want:
                conflicts.append(f"{image.ref(image.immutable)} is {have}, this build is {want}")
        refusal = ""
        if conflicts:
            refusal = (
                "immutable tags never move; nothing was pushed: "
                + "; ".join(conflicts)
                + ". Rebuild from the commit that made them, or push a new commit (new VCS_REF)"
            )
        return current, refusal

    def push_image(
        self,
        image: PlannedImage,
        d: Descriptor,
        exists: bool,
        immutable_seen: tuple[str | None, float] | None,
    ) -> None:
        """Phases 2 and 3 for one image: its immutable tag confirmed before its other tags."""
        action = "mounted"
        if not exists:
            if "uploaded" in self.copy_blobs(image, d, d.blobs):
                action = "uploaded"
            self.put_manifest(image, d, d.digest)
        for blob in d.blobs:
            self._remember(self.client(image.host).host, blob.digest, image.name)
        if self.before_tags:
            self.before_tags(image, d)
        if image.immutable:
            self.immutable_tag(image, d, action, immutable_seen)
        for tag in image.tags:
            if tag == image.immutable:
                continue
            ref = str(image.ref(tag))
            if exists and self.look(image, tag)[0] == d.digest:
                self.on_ref(image, ref, "up to date")
                continue
            self.tag_in_flight = (image, ref, tag, action)
            self.put_manifest(image, d, tag)
            self.tag_in_flight = None
            self.on_ref(image, ref, action)

    def immutable_tag(
        self,
        image: PlannedImage,
        d: Descriptor,
        action: str,
        seen: tuple[str | None, float] | None,
    ) -> None:
        """Write the immutable tag unless another digest holds it (or find it on this one),
        then confirm it (``confirm``), and only then report it.

        ``seen``: phase 1's look-up of it, (digest, when answered). Without
        compare-and-swap, another push that looked before our digest landed may
        land its own after it: a push keeps each PUT within the window of the look-up
        before it (``in_time``), so waiting out the window and reading the tag again
        sees any such write.
        """
        ref = str(image.ref(image.immutable))
        if seen and seen[0] == d.digest:
            action, since = "up to date", seen[1]
        else:
            have, sent, since = self.look(image, image.immutable)
            if have == d.digest:
                action = "up to date"
            elif have:
                raise RegistryError(
                    f"{ref} is {have}, this build is {d.digest}: another push wrote it meanwhile;"
                    f" immutable tags never move, so {self.wrote(image, {})}. Rebuild from the"
                    " commit that made it, or push a new commit (new VCS_REF)"
                )
            else:
                self.tag_in_flight = (image, ref, image.immutable, action)
                self.put_manifest(image, d, image.immutable)
                since = time.monotonic()
                self.tag_in_flight = None
                self.unconfirmed = image, ref
                self.in_time(image, d, ref, sent, since)
        self.confirm(image, d, ref, since, action)
        self.unconfirmed = None
        self.on_ref(image, ref, action)

    def in_time(
        self, image: PlannedImage, d: Descriptor, ref: str, sent: float, answered: float
    ) -> None:
        """Fail the push if its PUT of an immutable tag may have landed more than the window
        after the look-up before it: another push may have written the tag in between,
        confirmed and reported it, before this PUT moved it.

        The interval from sending the look-up to the PUT's answer holds both requests'
        time on the wire; the fastest manifest round trip to that registry is taken
        to be that part (a far registry is as far for every request), the rest is how
        late the write may have landed.
        """
        window = self.options.immutable_window
        took = answered - sent
        wire = self.fastest.get(image.host, 0.0)
        if took - wire <= window:
            return
        now = self.read_now(image)
        self.unconfirmed = None
        self.not_confirmed[ref] = now
        raise RegistryError(
            f"{ref}: its PUT was answered {took:.1f} s after its look-up ({took - wire:.1f} s"
            f" beyond the fastest round trip to {image.host}, {wire:.1f} s), more than the"
            f" {window:g} s two pushes of one immutable tag are checked over: another push may"
            f" have written it in between and succeeded, and this one moved it to {d.digest}"
            f" (this build); {self.wrote(image, {ref: now})}. Check which digest the other push"
            " reported, and put the tag back on it if it is not this one"
        )

    def confirm(
        self, image: PlannedImage, d: Descriptor, ref: str, since: float, action: str
    ) -> None:
        """Read the immutable tag again at least the window after ``since`` (its PUT's
        answer, or the look-up that found it on this digest); fail if it moved."""
        window = self.options.immutable_window
        wait = since + window - time.monotonic()
        if wait > 0:
            self.log(
                f"  confirming {ref} in {wait:.1f} s (an immutable tag is read again"
                f" {window:g} s after it was written or found)"
            )
            time.sleep(wait)
        have = self.look(image, image.immutable)[0]
        if have == d.digest:
            return
        if action == "up to date":
            raise RegistryError(
                f"{ref} was up to date (this build, {d.digest}) and is now {have or 'gone'}:"
                " another push, whose look-up came before this digest landed there, wrote it"
                " after; immutable tags never move: the tag is theirs, and this push failed;"
                f" {self.wrote(image, {})}"
            )
        self.unconfirmed = None
        self.not_confirmed[ref] = have = have or "gone"
        raise RegistryError(
            f"{ref} is {have}, this build is {d.digest}: another push, whose look-up came"
            " before this push's PUT landed, wrote it after; immutable tags never move: the tag"
            f" is theirs, and this push failed; {self.wrote(image, {ref: have})}"
        )

    def read_now(self, image: PlannedImage) -> str | None:
        """Where the immutable tag points now, for a message (None: unknown)."""
        try:
            return self.look(image, image.immutable)[0] or "gone"
        except RegistryError:
            return None

    def wrote(self, image: PlannedImage, written: dict[str, str | None]) -> str:
        """What a push that fails on ``image``'s immutable tag wrote of the image's tags."""
        if not written:
            return f"this push wrote no tag of {image.label()}"
        listed = ", ".join(f"{ref} (now {now or 'unknown'})" for ref, now in written.items())
        return f"this push wrote {listed} and none of {image.label()}'s other tags"

    def put_manifest(self, image: PlannedImage, d: Descriptor, reference: str) -> None:
        """PUT the manifest under ``reference`` (its digest or a tag).

        DIGEST_INVALID or MANIFEST_BLOB_UNKNOWN: another push was writing one of
        its blobs just then. Look every blob up, copy the missing ones, try again.
        """
        c = self.client(image.host)
        for attempt in range(MANIFEST_ATTEMPTS):
            try:
                sent = time.monotonic()
                c.put_manifest(image.name, reference, d.manifest, d.media_type)
                self._round_trip(image.host, time.monotonic() - sent)
                return
            except BadStatus as e:
                code = next((k for k in e.codes if e.status == 400 and k in BLOB_RACE), None)
                if not code or attempt == MANIFEST_ATTEMPTS - 1:
                    raise
                self.log(f"  PUT {image.name}:{reference[:19]}: {code}; checking the blobs")
            time.sleep(self.options.backoff * 2**attempt)
            missing = [b for b in d.blobs if not c.blob_exists(image.name, b.digest)]
            if missing:
                self.copy_blobs(image, d, missing)

    def copy_blobs(self, image: PlannedImage, d: Descriptor, blobs: list[BlobRef]) -> list[str]:
        """Copy ``blobs`` into ``image``'s repository, several at once; how each went."""
        c, s = self.client(image.host), self.client.staging(d)
        return parallel(self.options.jobs, lambda b: self.copy_blob(c, s, image, d, b), blobs)

    def copy_blob(
        self,
        c: RegistryClient,
        s: RegistryClient,
        image: PlannedImage,
        d: Descriptor,
        blob: BlobRef,
    ) -> str:
        """One blob from staging ``s`` into ``image``'s repository on ``c``.

        Returns how: "mounted", "present" (the registry had it) or "uploaded".
        """
        session = None
        if s.host == c.host:
            session = c.mount_blob(image.name, blob.digest, d.staging_name)
            if session is None:
                self.log(f"  mounted {blob.digest[:19]} from {d.staging_name}")
                return "mounted"
        else:
            for source in self.known.get((c.host, blob.digest), []):
                if source != image.name:
                    session = c.mount_blob(image.name, blob.digest, source)
                    if session is None:
                        self.log(f"  mounted {blob.digest[:19]} from {source}")
                        return "mounted"
            if c.blob_exists(image.name, blob.digest):
                return "present"
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
        return "uploaded"

    def _remember(self, host: str, digest: str, name: str) -> None:
        repos = self.known.setdefault((host, digest), [])
        if name not in repos:
            repos.append(name)

    # -- driver ---------------------------------------------------------------

    def dry_run(self, images: list[PlannedImage]) -> tuple[list[str], list[str]]:
        """What a push would do, per ref, and every refusal it would make; never writes."""
        check_collisions(images)
        descriptors = {image.key: image.load_descriptor() for image in images}
        refusals = [r for r in [unreproducible(images, descriptors)] if r]
        refusals += [r for r in [self.immutable_now(images, descriptors)[1]] if r]
        lines = []
        brought: set[tuple[str, str]] = set()  # (host, blob) an earlier image brings
        for image in images:
            d = descriptors[image.key]
            c = self.client(image.host)
            try:
                state = self._would(image, d, brought)
            except Lost as e:
                refusals.append(str(e))
                state = "lost from staging"
            brought |= {(c.host, b.digest) for b in d.blobs}
            for tag in image.tags:
                lines.append(f"{image.ref(tag).with_digest(d.digest)} ({state})")
        return lines, refusals

    def _would(self, image: PlannedImage, d: Descriptor, brought: set[tuple[str, str]]) -> str:
        """What pushing ``image`` would take; Lost if staging lacks what it would copy."""
        c = self.client(image.host)
        if c.manifest_digest(image.name, d.digest) == d.digest:
            return "manifest present"
        s = self.client.check_staged(d)
        missing = [b for b in d.blobs if not c.blob_exists(image.name, b.digest)]
        # a sibling repository mount serves only a push from another host
        needed = [b for b in missing if s.host == c.host or (c.host, b.digest) not in brought]
        if any(not s.blob_exists(d.staging_name, b.digest) for b in needed):
            raise lost(d)
        present = f"{len(d.blobs) - len(missing)}/{len(d.blobs)} blobs present"
        if not missing:
            return present
        if s.host == c.host:
            return f"{present}, would mount {len(missing)} from staging {d.staging_name}"
        size = human(sum(b.size for b in missing))
        return f"{present}, would copy {len(missing)} ({size}) from staging {s.host}"

    def push(self, images: list[PlannedImage]) -> PushResult:
        check_collisions(images)
        result = PushResult()
        descriptors = {image.key: image.load_descriptor() for image in images}
        refusal = unreproducible(images, descriptors)  # before any request
        if refusal:
            raise RegistryError(refusal)
        immutable_now, refusal = self.immutable_now(images, descriptors)
        if refusal:
            raise RegistryError(refusal)
        exists = {}
        for image in images:
            d = descriptors[image.key]
            exists[image.key] = self.look(image, d.digest)[0]
            if exists[image.key] != d.digest:
                self.client.check_staged(d)
        total = len(images)
        for n, image in enumerate(images, 1):
            d = descriptors[image.key]
            before = self.total_requests()
            self.log(
                f"[{n}/{total}] {image.ref(image.tags[0])}"
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
                if self.unconfirmed:  # its confirmation did not finish
                    ref = self.unconfirmed[1]
                    self.not_confirmed[ref] = None
                    self.unconfirmed = None
                    result.error += (
                        f"; this push wrote {ref} and could not confirm it: re-run the same"
                        " command to confirm it"
                    )
                return result
            result.requests[image.label()] = self.total_requests() - before
            result.pushed.append(image)
        return result
