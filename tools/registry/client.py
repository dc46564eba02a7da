"""A small OCI distribution-spec client on httpx, with retries and counters.

Only what pushing, materializing, listing and pruning need: blob
HEAD/mount/upload/streamed GET, manifest HEAD/GET/PUT/DELETE, tags/list and
_catalog with pagination. Transient failures (5xx, 429, dropped connections,
timeouts) are retried with exponential backoff (tenacity), honouring
Retry-After. One client may serve several threads (the counters are locked).
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin

import httpx
from tenacity import (
    RetryCallState,
    retry,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
)

from tools.registry.auth import RegistryAuth, credentials_for
from tools.registry.errors import BadStatus, NotFound, RegistryError, RetryableStatus, Unreachable

MANIFEST_TYPES = ", ".join(
    [
        "application/vnd.oci.image.manifest.v1+json",
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.docker.distribution.manifest.v2+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
    ]
)
CHUNK = 1 << 20


def is_loopback(host: str) -> bool:
    name = host.rsplit(":", 1)[0].strip("[]") if host.count(":") <= 1 else host.strip("[]")
    if host.startswith("["):
        name = host[1:].split("]", 1)[0]
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def split_registry(registry: str) -> tuple[str, str]:
    """'[https://]host:port/ns/sub' -> ('[https://]host:port', 'ns/sub').

    An explicit `https://` or `http://` prefix stays on the host and forces
    that scheme (`https://127.0.0.1:5000` for a loopback registry with TLS).
    """
    scheme, sep, rest = registry.strip("/").rpartition("://")
    if sep and scheme not in ("http", "https"):
        raise RegistryError(f"registry {registry!r}: scheme must be http:// or https://")
    host, _, namespace = rest.partition("/")
    if not host:
        raise RegistryError(f"registry {registry!r}: want [https://]HOST[:PORT][/NAMESPACE]")
    return (f"{scheme}://{host}" if sep else host), namespace


@dataclass
class Stats:
    requests: int = 0
    uploaded_blobs: int = 0
    uploaded_bytes: int = 0
    mounted_blobs: int = 0
    retries: int = 0
    by_method: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, method: str = "", **counts: int) -> None:
        with self.lock:
            if method:
                self.requests += 1
                self.by_method[method] = self.by_method.get(method, 0) + 1
            for name, n in counts.items():
                setattr(self, name, getattr(self, name) + n)


class RegistryClient:
    """One registry host. ``insecure`` allows plain HTTP beyond loopback."""

    def __init__(
        self,
        host: str,
        *,
        insecure: bool = False,
        ca_file: Path | None = None,
        retries: int = 5,
        backoff: float = 0.5,
        timeout: float = 60.0,
        log: Callable[[str], None] = lambda _msg: None,
    ) -> None:
        scheme, sep, bare = host.rpartition("://")
        self.host = bare
        if not sep:
            scheme = "http" if insecure or is_loopback(bare) else "https"
        self.base = f"{scheme}://{bare}"
        verify: bool | str = str(ca_file) if ca_file else True
        self.http = httpx.Client(
            auth=RegistryAuth(bare, self._credentials(bare)),
            verify=verify,
            timeout=httpx.Timeout(timeout, connect=10.0),
            follow_redirects=True,
        )
        self.stats = Stats()
        self.log = log
        self._retry = retry(
            reraise=True,
            retry=retry_if_exception_type((RetryableStatus, httpx.TransportError)),
            stop=stop_after_attempt(retries + 1),
            wait=self._wait(backoff),
            before_sleep=self._before_sleep,
        )

    def _credentials(self, host: str) -> tuple[str, str] | None:
        # A credential helper we cannot call matters only if the registry
        # asks for credentials: keep its message for a 401.
        self.credentials_note = ""
        try:
            return credentials_for(host)
        except RegistryError as e:
            self.credentials_note = f" ({e})"
            return None

    def close(self) -> None:
        self.http.close()

    # -- plumbing -------------------------------------------------------------

    @staticmethod
    def _wait(backoff: float):
        exponential = wait_exponential(multiplier=backoff, max=30)

        def wait(state: RetryCallState) -> float:
            error = state.outcome.exception() if state.outcome else None
            if isinstance(error, RetryableStatus) and error.retry_after is not None:
                return min(error.retry_after, 60.0)
            return exponential(state)

        return wait

    def _before_sleep(self, state: RetryCallState) -> None:
        self.stats.add(retries=1)
        error = state.outcome.exception() if state.outcome else None
        self.log(f"  retry {state.attempt_number}: {error}")

    def _send(self, method: str, url: str, **kwargs) -> httpx.Response:
        self.stats.add(method)
        try:
            response = self.http.request(method, url, **kwargs)
        except httpx.ConnectError as e:
            if "CERTIFICATE_VERIFY_FAILED" in str(e):  # retrying cannot help
                raise RegistryError(
                    f"{method} {url}: TLS certificate not trusted ({e}); pass --ca-file"
                    " with the registry's CA, or SSL_CERT_FILE"
                ) from None
            raise httpx.ConnectError(f"{method} {url}: {e or type(e).__name__}") from e
        except httpx.TransportError as e:
            raise type(e)(f"{method} {url}: {e or type(e).__name__}") from e
        except Exception as e:  # TLS failures etc. surface as ConnectError above
            raise RegistryError(f"{method} {url}: {e}") from None
        if response.status_code == 429 or response.status_code >= 500:
            retry_after = response.headers.get("Retry-After")
            raise RetryableStatus(
                f"{method} {url}: HTTP {response.status_code}",
                float(retry_after) if retry_after and retry_after.isdigit() else None,
            )
        return response

    def request(self, method: str, path: str, **kwargs) -> httpx.Response:
        url = path if path.startswith("http") else f"{self.base}{path}"
        try:
            return self._retry(self._send)(method, url, **kwargs)
        except httpx.TransportError as e:
            raise Unreachable(f"{e} (gave up after retries)", self.host, str(e)) from None

    def check(self, response: httpx.Response, what: str, ok: tuple[int, ...]) -> None:
        if response.status_code in ok:
            return
        status = response.status_code
        if status == 401:
            raise BadStatus(
                f"{what}: HTTP 401 unauthorized at {self.host}; run `docker login {self.host}`"
                f" (credentials are read from $DOCKER_CONFIG/config.json){self.credentials_note}",
                status,
            )
        if status == 403:
            raise BadStatus(
                f"{what}: HTTP 403 denied at {self.host}; check your permissions", status
            )
        detail = response.text[:300].strip()
        raise BadStatus(f"{what}: HTTP {status} {detail}", status)

    # -- blobs ----------------------------------------------------------------

    def blob_exists(self, name: str, digest: str) -> bool:
        r = self.request("HEAD", f"/v2/{name}/blobs/{digest}")
        self.check(r, f"HEAD blob {name}@{digest}", (200, 404))
        return r.status_code == 200

    def mount_blob(self, name: str, digest: str, source: str) -> str | None:
        """Cross-repository mount: None once mounted, else the upload session URL.

        A registry that cannot mount (the source lacks the blob, or mounting is
        off) answers 202 with an upload session; ``upload`` can use it.
        """
        r = self.request(
            "POST", f"/v2/{name}/blobs/uploads/", params={"mount": digest, "from": source}
        )
        self.check(r, f"mount {digest} from {source} into {name}", (201, 202))
        if r.status_code == 201:
            self.stats.add(mounted_blobs=1)
            return None
        return urljoin(self.base + "/", r.headers["Location"])

    def upload(
        self,
        name: str,
        digest: str,
        size: int,
        open_body: Callable[[], AbstractContextManager[Iterable[bytes]]],
        session: str | None = None,
    ) -> None:
        """Upload a blob whose bytes ``open_body()`` streams, in one PUT.

        The first attempt uses ``session`` (a mount's 202) if given, later ones
        a fresh POST; the whole upload is retried as a unit. The registry checks
        the bytes against ``digest``.
        """
        sessions = [session] if session else []

        def attempt() -> None:
            with open_body() as body:  # first: a missing source opens no session
                if sessions:
                    location = sessions.pop()
                else:
                    r = self._send("POST", f"{self.base}/v2/{name}/blobs/uploads/")
                    self.check(r, f"start upload to {name}", (202,))
                    location = urljoin(self.base + "/", r.headers["Location"])
                sep = "&" if "?" in location else "?"
                try:
                    r = self._send(
                        "PUT",
                        f"{location}{sep}digest={digest}",
                        content=body,
                        headers={
                            "Content-Type": "application/octet-stream",
                            "Content-Length": str(size),
                        },
                    )
                except httpx.StreamConsumed as e:
                    # the auth flow had to re-send the body: start a fresh session
                    raise RetryableStatus(f"upload {digest} to {name}: re-authenticating") from e
            self.check(r, f"upload {digest} to {name}", (201,))

        try:
            self._retry(attempt)()
        except httpx.TransportError as e:
            raise RegistryError(f"upload {digest} to {name}: {e} (gave up after retries)") from None
        self.stats.add(uploaded_blobs=1, uploaded_bytes=size)

    def upload_blob(self, name: str, digest: str, path: Path, size: int) -> None:
        """Upload the blob in file ``path``."""

        def chunks(f) -> Iterator[bytes]:  # a generator: httpx can tell it was consumed
            while chunk := f.read(CHUNK):
                yield chunk

        @contextmanager
        def body() -> Iterator[Iterator[bytes]]:
            with path.open("rb") as f:
                yield chunks(f)

        self.upload(name, digest, size, body)

    @contextmanager
    def blob_stream(self, name: str, digest: str) -> Iterator[Iterator[bytes]]:
        """The bytes of a blob as they arrive (one GET, not retried: callers retry).

        Raises NotFound on a 404 and RetryableStatus on a 5xx or 429.
        """
        url = f"{self.base}/v2/{name}/blobs/{digest}"
        self.stats.add("GET")
        with self.http.stream("GET", url) as r:
            if r.status_code == 429 or r.status_code >= 500:
                raise RetryableStatus(f"GET {url}: HTTP {r.status_code}")
            if r.status_code == 404:
                raise NotFound(f"GET blob {self.host}/{name}@{digest}: HTTP 404")
            if r.status_code != 200:
                r.read()
                self.check(r, f"GET blob {self.host}/{name}@{digest}", (200,))
            yield r.iter_bytes(CHUNK)

    def get_blob(self, name: str, digest: str) -> bytes:
        """A small blob (a config), checked against its digest."""
        r = self.request("GET", f"/v2/{name}/blobs/{digest}")
        self.check(r, f"GET blob {name}@{digest}", (200,))
        if "sha256:" + hashlib.sha256(r.content).hexdigest() != digest:
            raise RegistryError(f"GET blob {name}@{digest}: content does not match its digest")
        return r.content

    def download_blob(self, name: str, digest: str, dest: Path) -> None:
        """Stream a blob to ``dest``, checked against its digest; retried as a unit."""

        def attempt() -> None:
            h = hashlib.sha256()
            with self.blob_stream(name, digest) as chunks, dest.open("wb") as f:
                for chunk in chunks:
                    h.update(chunk)
                    f.write(chunk)
            if "sha256:" + h.hexdigest() != digest:
                raise RetryableStatus(
                    f"GET blob {self.host}/{name}@{digest}: content does not match its digest"
                )

        try:
            self._retry(attempt)()
        except (httpx.TransportError, RetryableStatus) as e:
            raise RegistryError(f"GET blob {name}@{digest}: {e} (gave up after retries)") from None

    # -- manifests ------------------------------------------------------------

    def manifest_digest(self, name: str, reference: str) -> str | None:
        r = self.request(
            "HEAD", f"/v2/{name}/manifests/{reference}", headers={"Accept": MANIFEST_TYPES}
        )
        self.check(r, f"HEAD {name}:{reference}", (200, 404))
        return r.headers.get("Docker-Content-Digest") if r.status_code == 200 else None

    def get_manifest(self, name: str, reference: str) -> tuple[bytes, str, str]:
        r = self.request(
            "GET", f"/v2/{name}/manifests/{reference}", headers={"Accept": MANIFEST_TYPES}
        )
        self.check(r, f"GET {name}:{reference}", (200,))
        return (
            r.content,
            r.headers.get("Content-Type", ""),
            r.headers.get("Docker-Content-Digest", ""),
        )

    def put_manifest(self, name: str, reference: str, body: bytes, media_type: str) -> str:
        r = self.request(
            "PUT",
            f"/v2/{name}/manifests/{reference}",
            content=body,
            headers={"Content-Type": media_type},
        )
        self.check(r, f"PUT {name}:{reference}", (201, 200))
        return r.headers.get("Docker-Content-Digest", "")

    def delete_manifest(self, name: str, digest: str) -> bool:
        """Delete a manifest (and every tag on it); False when it was already gone."""
        r = self.request("DELETE", f"/v2/{name}/manifests/{digest}")
        # 404: already gone (a retried DELETE, or another tag of the same digest)
        self.check(r, f"DELETE {name}@{digest}", (202, 200, 404))
        return r.status_code != 404

    # -- listings -------------------------------------------------------------

    def _paginate(self, path: str, key: str, page: int = 100) -> list[str]:
        items: list[str] = []
        url: str | None = f"{path}?n={page}"
        while url:
            r = self.request("GET", url)
            if r.status_code == 404 and key == "tags":
                return []
            self.check(r, f"GET {path}", (200,))
            items += r.json().get(key) or []
            link = r.headers.get("Link", "")
            m = re.search(r"<([^>]+)>;\s*rel=\"?next\"?", link)
            url = m.group(1) if m else None
        return items

    def list_tags(self, name: str) -> list[str]:
        return self._paginate(f"/v2/{name}/tags/list", "tags")

    def list_repositories(self) -> list[str]:
        return self._paginate("/v2/_catalog", "repositories")
