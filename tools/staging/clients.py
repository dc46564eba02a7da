"""Reading images from the staging registry a descriptor names: one client per host, the
check that staging still holds an image whole, and the one wording for what it lost."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import tools.staging as staging
from tools.oci.client import Limits, RegistryClient
from tools.oci.errors import RegistryError

if TYPE_CHECKING:
    from tools.staging.descriptor import Descriptor
    from tools.staging.loopback import LoopbackClient

# The fix for content staging has lost.
FORGET = "run `bazel run //tools/staging -- forget` and build again (it rebuilds what is missing)"


class Lost(RegistryError):
    """The staging registry no longer holds an image (or a blob of it) a descriptor names;
    ``blob``: the digest of the blob it lost ('' for the manifest)."""

    def __init__(self, message: str, blob: str = "") -> None:
        super().__init__(message)
        self.blob = blob


def lost(d: Descriptor, blob: str = "") -> Lost:
    """The one wording for content staging has lost, with the fix."""
    return Lost(f"staging has lost {d.label()} {d.digest} ({d.staging_ref}); {FORGET}", blob)


def check_staged(d: Descriptor, client: RegistryClient | LoopbackClient | None = None) -> None:
    """Raise ``lost(d)`` unless d's staging registry still holds d's manifest and every blob
    it names (a registry keeps a manifest whose layer was deleted: found here, before
    anything is built on it or pushed from it, not midway).

    ``client``: one of that registry; else the one ``Staging.client`` hands out for it,
    closed after.
    """
    c = client or d.staging.client()
    try:
        if c.manifest_digest(d.staging_name, d.digest) != d.digest:
            raise lost(d)
        for b in d.blobs:
            if not c.blob_exists(d.staging_name, b.digest):
                raise lost(d, b.digest)
    finally:
        if client is None:
            c.close()


def start_embedded() -> str:
    """Host of the embedded staging registry, started if it is not running."""
    try:
        return staging.resolve(None).host
    except staging.StagingError as e:
        raise RegistryError(f"embedded staging registry: {e}") from None


class Clients:
    """One RegistryClient per host (staging and targets alike), closed together.

    ``start_embedded`` gives the host of the project's own (embedded) staging
    registry, starting it if needed; its errors are the caller's to choose.
    """

    def __init__(
        self,
        *,
        insecure: bool = False,
        ca_file: Path | None = None,
        retries: int = 5,
        backoff: float = 0.5,
        limits: Limits | None = None,
        log: Callable[[str], None] = lambda _msg: None,
        start_embedded: Callable[[], str] = start_embedded,
        instance: Callable[[], str] = lambda: _embedded_instance(),
    ) -> None:
        self.options = dict(
            insecure=insecure,
            ca_file=ca_file,
            retries=retries,
            backoff=backoff,
            limits=limits,
            log=log,
        )
        self.by_host: dict[str, RegistryClient] = {}
        self._start_embedded = start_embedded
        self._embedded: str | None = None
        self._answering: set[str] = set()
        self._instance = instance
        self._lock = threading.Lock()

    def __call__(self, host: str) -> RegistryClient:
        with self._lock:
            if host not in self.by_host:
                self.by_host[host] = RegistryClient(host, **self.options)
            return self.by_host[host]

    def close(self) -> None:
        for c in self.by_host.values():
            c.close()

    def staging(self, d: Descriptor) -> RegistryClient:
        """The client of ``d``'s staging registry: the host:port the descriptor names.

        An embedded (loopback) one that does not answer may be this
        environment's, stopped since the build: it is started again, once
        per run, and used if it comes up where the descriptor says.
        Otherwise the image is in another checkout's or state dir's staging,
        and reading this environment's instead would copy something else.
        """
        host = d.staging_host
        if not d.embedded:
            return self(host)
        with self._lock:
            answers = host in self._answering or _answers(host)
            if answers:
                self._answering.add(host)
            elif self._embedded is None:
                self._embedded = self._start_embedded()
        if answers:
            return self(host)
        mine = self._instance()
        if self._embedded != host and d.staging_instance and d.staging_instance != mine:
            raise RegistryError(
                f"{d.label()} was built into another embedded staging registry ({host}, state"
                f" {d.staging_instance}), which does not answer; this environment's is"
                f" {self._embedded} (state {mine}): start the one it was built into (`bazel run"
                " //tools/staging -- start` in that checkout, or with its"
                " ROCM_PYTORCH_STAGING_DIR), or build again here"
            )
        return self(self._embedded)  # this state dir's registry, perhaps on another port

    def check_staged(self, d: Descriptor) -> RegistryClient:
        """The staging client, once it is known to still hold ``d`` whole (``check_staged``)."""
        s = self.staging(d)
        check_staged(d, s)
        return s


def _embedded_instance() -> str:
    """This environment's embedded staging state dir identity."""
    from tools.staging import embedded

    return embedded.instance_id()


def _answers(host: str) -> bool:
    """Whether a registry answers on loopback ``host`` (127.0.0.1:PORT)."""
    from tools.process import registryd

    port = host.rpartition(":")[2]
    return port.isdigit() and registryd.answers(int(port))
