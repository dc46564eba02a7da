"""OCI digests: `sha256:<hex>` of bytes, whole or fed in pieces."""

from __future__ import annotations

import hashlib


def digest_of(data: bytes) -> str:
    """The OCI digest (`sha256:<hex>`) of ``data``."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


class Digester:
    """The OCI digest of bytes fed in pieces (``update``); ``digest`` is `sha256:<hex>`."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()

    def update(self, data: bytes) -> None:
        self._hash.update(data)

    @property
    def digest(self) -> str:
        return "sha256:" + self._hash.hexdigest()
