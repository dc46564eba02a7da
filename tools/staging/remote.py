"""Staging's calls to a registry: tools/oci's RegistryClient, with staging's errors.

Plain HTTP on loopback (and with ``insecure``), HTTPS elsewhere; credentials
from the docker config, as for the push tool. No retries: a staging registry
that does not answer is said at once. httpx is imported on first use, not
with tools.staging: every command on the embedded registry (start, stop,
status, gc, forget) needs no HTTP client library; without httpx, a shared
registry's call fails in one line naming the commands that have it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from tools.oci.errors import BadStatus, RegistryError, Unreachable
from tools.staging.errors import StagingError, UnreachableError

if TYPE_CHECKING:
    from tools.oci.client import RegistryClient

TIMEOUT = 30.0


@contextmanager
def translated() -> Iterator[None]:
    """RegistryErrors raised inside as staging's one-line errors (`<what>; <fix>`)."""
    try:
        yield
    except Unreachable as e:
        raise UnreachableError(
            f"staging registry {e.host} cannot be reached ({e.detail});"
            " start it or check the address"
        ) from None
    except RegistryError as e:
        raise StagingError(str(e)) from None


@contextmanager
def connect(host: str, *, insecure: bool = False) -> Iterator[RegistryClient]:
    """A client for one staging registry host (`HOST[:PORT]`), closed on leaving.

    RegistryErrors that leave the block are translated (see ``translated``).
    """
    try:
        import httpx  # noqa: F401  (the client imports it when made: fail here, in one line)

        from tools.oci.client import Limits, RegistryClient
    except ImportError as e:
        raise StagingError(missing_module(e.name or "httpx")) from None
    with translated():
        limits = Limits(read_timeout=TIMEOUT)
        client = RegistryClient(host, insecure=insecure, retries=0, limits=limits)
        try:
            yield client
        finally:
            client.close()


def missing_module(name: str) -> str:
    """The one line for a shared staging registry's call without its HTTP client library."""
    command = " ".join(sys.argv[1:]) or "COMMAND"
    return (
        f"a shared staging registry needs the Python module {name}, which {sys.executable}"
        f" cannot import; run `bazel run //tools/staging -- {command}`, or"
        f" `bazel-bin/tools/staging/staging {command}` (no Bazel server needed, after one"
        " `bazel build //tools/staging`); the embedded registry needs no module beside the"
        " standard library"
    )


def ping(client: RegistryClient) -> None:
    """Raise UnreachableError unless a distribution registry answers at the client's host."""
    with translated():
        r = client.request("GET", "/v2/")
    if r.status_code not in (200, 401):
        raise UnreachableError(
            f"{client.base}/v2/ answered HTTP {r.status_code}: not a registry; check the address"
        )


def repositories(client: RegistryClient, prefix: str) -> list[str]:
    """The repositories under ``prefix/``, in the registry's listing order."""
    with translated():
        return [n for n in client.list_repositories() if n.startswith(prefix + "/")]


def delete(client: RegistryClient, name: str, digest: str) -> bool:
    """Delete a manifest (and every tag on it); False when it was already gone."""
    with translated():
        try:
            return client.delete_manifest(name, digest)
        except BadStatus as e:
            if e.status != 405:
                raise
            raise StagingError(
                f"{client.host} refuses deletes (HTTP 405); enable storage.delete in its"
                " config, or clean it with its own retention policy"
            ) from None
