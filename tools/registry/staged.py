"""Reading images from the staging registry a descriptor names."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from tools.registry.client import RegistryClient
from tools.registry.errors import RegistryError, lost

if TYPE_CHECKING:
    from tools.staging.descriptor import Descriptor

T = TypeVar("T")
R = TypeVar("R")


class Clients:
    """One RegistryClient per host (staging and targets alike), closed together."""

    def __init__(
        self,
        *,
        insecure: bool = False,
        ca_file: Path | None = None,
        retries: int = 5,
        backoff: float = 0.5,
        log: Callable[[str], None] = lambda _msg: None,
    ) -> None:
        self.options = dict(
            insecure=insecure, ca_file=ca_file, retries=retries, backoff=backoff, log=log
        )
        self.by_host: dict[str, RegistryClient] = {}
        self._embedded: str | None = None
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
        """The client of ``d``'s staging registry.

        The project's own (embedded) staging registry may have been stopped
        since the build: tools.staging starts it again, once per run.
        """
        if not d.embedded:
            return self(d.staging_host)
        with self._lock:
            if self._embedded is None:
                self._embedded = _start_embedded() or d.staging_host
        return self(self._embedded)

    def check_staged(self, d: Descriptor) -> RegistryClient:
        """The staging client, once it is known to still hold ``d``'s manifest."""
        s = self.staging(d)
        if s.manifest_digest(d.staging_name, d.digest) != d.digest:
            raise lost(d)
        return s


def _start_embedded() -> str | None:
    """Host of the running embedded staging registry; None without tools.staging."""
    try:
        import tools.staging as staging

        resolve = staging.resolve
    except (ImportError, AttributeError):
        return None
    try:
        return resolve(None).host
    except getattr(staging, "StagingError", ()) as e:
        raise RegistryError(f"embedded staging registry: {e}") from None


def parallel(jobs: int, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """``fn`` over ``items`` on up to ``jobs`` threads; the first error stops the rest."""
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(fn, item) for item in items]
        try:
            return [f.result() for f in futures]
        except BaseException:
            for f in futures:
                f.cancel()
            raise
