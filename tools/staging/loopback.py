"""Reads from the embedded staging registry without httpx: what one image build needs.

The embedded registry (tools/staging/embedded.py) is ours: plain HTTP on
127.0.0.1, no credentials, no redirects. An image build asks it three
things: is each parent's manifest still there (HEAD), is an image of this
content key already staged, whole (HEAD: its tag, its blobs), and, after the
build, the new manifest and its config (GET); gc deletes manifests (DELETE),
so `python3 -m tools.staging gc` needs no package beside the standard
library. tools/oci's client does the same through httpx, whose import and TLS
setup cost 0.2-0.4 s per process, more than these requests themselves; every
ImageBuild action paid it. A shared
staging registry (TLS, tokens, retries) still goes through that client.

Same method names and answers as ``RegistryClient`` for these calls;
failures raise ``RegistryError`` naming the request.
"""

from __future__ import annotations

import http.client

from tools.oci.client import manifest_checked
from tools.oci.digest import digest_of
from tools.oci.errors import RegistryError
from tools.oci.media import MANIFEST_TYPES


class LoopbackClient:
    """One keep-alive connection to the embedded registry at ``host`` (127.0.0.1:PORT)."""

    def __init__(self, host: str, timeout: float = 60.0) -> None:
        name, _, port = host.rpartition(":")
        self.host = host
        self._address = (name, int(port))
        self._timeout = timeout
        self._conn: http.client.HTTPConnection | None = None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _request(self, method: str, path: str) -> tuple[int, http.client.HTTPMessage, bytes]:
        """(status, headers, body); one retry on a new connection when the kept one is gone."""
        for attempt in (1, 2):
            if self._conn is None:
                self._conn = http.client.HTTPConnection(*self._address, timeout=self._timeout)
            try:
                self._conn.request(method, path, headers={"Accept": MANIFEST_TYPES})
                r = self._conn.getresponse()
                return r.status, r.headers, r.read()
            except (OSError, http.client.HTTPException) as e:
                self.close()
                if attempt == 2:
                    raise RegistryError(f"{method} {self.host}{path}: {e}") from None
        raise AssertionError("unreachable")

    def _check(self, status: int, what: str, body: bytes, ok: tuple[int, ...]) -> None:
        if status not in ok:
            detail = body.decode(errors="replace").strip()[:200]
            raise RegistryError(f"{what} on {self.host}: HTTP {status} {detail}".rstrip())

    def manifest_digest(self, name: str, reference: str) -> str | None:
        """The digest ``reference`` points at, or None if it does not exist."""
        status, headers, body = self._request("HEAD", f"/v2/{name}/manifests/{reference}")
        self._check(status, f"HEAD {name}:{reference}", body, (200, 404))
        if status == 404:
            return None
        return headers.get("Docker-Content-Digest") or self.get_manifest(name, reference)[2]

    def get_manifest(self, name: str, reference: str) -> tuple[bytes, str, str]:
        """(bytes, media type, digest): the bytes' own digest, checked (``manifest_checked``)."""
        status, headers, body = self._request("GET", f"/v2/{name}/manifests/{reference}")
        self._check(status, f"GET {name}:{reference}", body, (200,))
        said = headers.get("Docker-Content-Digest")
        digest = manifest_checked(body, reference, said, f"{self.host}/{name}")
        return body, headers.get("Content-Type", ""), digest

    def blob_exists(self, name: str, digest: str) -> bool:
        status, _, body = self._request("HEAD", f"/v2/{name}/blobs/{digest}")
        self._check(status, f"HEAD blob {name}@{digest}", body, (200, 404))
        return status == 200

    def delete_manifest(self, name: str, digest: str) -> bool:
        """Delete a manifest (and every tag on it); False when it was already gone."""
        status, _, body = self._request("DELETE", f"/v2/{name}/manifests/{digest}")
        self._check(status, f"DELETE {name}@{digest}", body, (202, 200, 404))
        return status != 404

    def get_blob(self, name: str, digest: str) -> bytes:
        """A small blob (a config), checked against its digest."""
        status, _, body = self._request("GET", f"/v2/{name}/blobs/{digest}")
        self._check(status, f"GET blob {name}@{digest}", body, (200,))
        if digest_of(body) != digest:
            raise RegistryError(f"GET blob {name}@{digest} on {self.host}: the bytes do not match")
        return body
