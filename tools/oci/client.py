"""A small OCI distribution-spec client on httpx, with retries, a deadline and counters.

Only what pushing, materializing, listing and pruning need: blob
HEAD/mount/upload/streamed GET, manifest HEAD/GET/PUT/DELETE, tags/list and
_catalog with pagination. Transient failures (5xx, 429, connections dropped
or reset mid-transfer, timeouts) are retried with exponential backoff,
honouring Retry-After, until `retries` or the deadline of a request with
its retries (`Limits.timeout`; `registry push` bounds the whole push
instead, tools/registry/deadline.py) runs out. What retrying cannot fix fails at once, with
the fix: a name that does not resolve, a refused connection, TLS on one side
only, an untrusted certificate. Blobs bigger than `Limits.chunk_size` go up
in chunks; after a drop the upload goes on from the offset the registry
reports, and a streamed source GET from where it stopped (`Range`). One
client may serve several threads (the counters are locked).

httpx is imported when a client is made, not with this module: commands
that only parse registry strings (`plan`, `--help`; tools/oci/reference.py)
start fast.
"""

from __future__ import annotations

import ipaddress
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, TypeVar
from urllib.parse import urljoin, urlsplit

from tools.oci.digest import Digester, digest_of
from tools.oci.errors import (
    BadStatus,
    Dropped,
    ErrorEntry,
    NotFound,
    RegistryError,
    RetryableStatus,
    Transient,
    Unreachable,
    parse_errors,
)
from tools.oci.media import MANIFEST_TYPES
from tools.oci.reference import split_registry

if TYPE_CHECKING:
    import httpx

T = TypeVar("T")

MiB = 1 << 20
CHUNK = MiB  # bytes read and sent at a time: memory stays a few of these per blob
_TLS_ON_PLAIN = ("WRONG_VERSION_NUMBER", "record layer failure", "packet length too long")
_PLAIN_ON_TLS = ("HTTP request to an HTTPS server", "plain HTTP request was sent to HTTPS port")


@dataclass(frozen=True)
class Limits:
    """How long to wait, how big an upload request is: a value each client is given
    (``RegistryClient(limits=)``); the CLI makes one from its options."""

    timeout: float = 600.0  # a request with its retries (an upload: each chunk), seconds
    # (math.inf: none; `registry push` has one deadline for the whole push instead)
    read_timeout: float = 30.0  # no byte for this long fails the attempt
    chunk_size: int = 64 * MiB  # bigger blobs go up in PATCHes of this size


# Requests waiting for their answer, in every client of this process: token ->
# (request, host, monotonic start). What a deadline names when it passes.
_IN_FLIGHT: dict[object, tuple[str, str, float]] = {}
_IN_FLIGHT_LOCK = threading.Lock()


def oldest_in_flight() -> tuple[str, str, float] | None:
    """(request, host, seconds waited) of the request waiting longest for its answer, or None."""
    with _IN_FLIGHT_LOCK:
        if not _IN_FLIGHT:
            return None
        where, host, start = min(_IN_FLIGHT.values(), key=lambda v: v[2])
    return where, host, time.monotonic() - start


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


def _show(url: str) -> str:
    """A URL as messages show it: no query (upload state, tokens), no userinfo."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}"


def _with_digest(location: str, digest: str) -> str:
    return f"{location}{'&' if '?' in location else '?'}digest={digest}"


def _octets(length: int) -> dict[str, str]:
    return {"Content-Type": "application/octet-stream", "Content-Length": str(length)}


def _detail(response: httpx.Response, errors: tuple[ErrorEntry, ...] | None = None) -> str:
    """What an error answer says, on one line and trimmed ('' for nothing): its ``errors``
    (``parse_errors``) as `CODE: message (detail)`, else its text."""
    if errors is None:
        errors = _errors(response)
    if errors:
        text = "; ".join(e.line() for e in errors)
    else:
        try:
            text = response.text
        except Exception:  # a streamed answer not read: nothing to show
            return ""
    text = " ".join(text.split())
    return f" {text[:300]}{'...' if len(text) > 300 else ''}" if text else ""


def _errors(response: httpx.Response) -> tuple[ErrorEntry, ...]:
    """The registry's error entries of an answer; () for a streamed answer not read."""
    try:
        return parse_errors(response.content)
    except Exception:  # httpx.ResponseNotRead
        return ()


def _causes(error: BaseException) -> Iterator[BaseException]:
    while error is not None:
        yield error
        error = error.__cause__ or error.__context__


@dataclass
class Stats:
    requests: int = 0
    uploaded_blobs: int = 0
    uploaded_bytes: int = 0
    mounted_blobs: int = 0
    refused_mounts: int = 0  # answered with an error: the blob was uploaded instead
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


@dataclass
class _Session:
    """A chunked upload: where its session is, how many bytes the registry has."""

    location: str
    offset: int = 0
    synced: bool = True  # False after a failed PATCH: ask the registry before the next


def manifest_checked(body: bytes, reference: str, said: str | None, where: str) -> str:
    """The sha256 digest of manifest ``body`` fetched as ``reference``, after checking it.

    Fetched by digest, the bytes must hash to that digest; a registry's
    Docker-Content-Digest header must name the bytes it sent. Neither is
    trusted: a damaged copy or a wrong answer fails here, naming both.
    """
    digest = digest_of(body)
    for claim, what in ((reference, "asked for"), (said, "its Docker-Content-Digest says")):
        if claim and claim.startswith("sha256:") and claim != digest:
            raise RegistryError(
                f"GET {where}@{reference}: the manifest it sent hashes to {digest}, but {what}"
                f" {claim}; the registry's copy is damaged or the answer is not this manifest"
            )
    return digest


def env_proxies() -> bool:
    """Whether the environment names a proxy (http_proxy, HTTPS_PROXY, ALL_PROXY, ...)."""
    import urllib.request

    return any(k != "no" for k in urllib.request.getproxies_environment())


def env_proxy(url: str) -> tuple[str, str] | None:
    """(proxy URL, the variable that names it) that a request to ``url`` goes through, as
    httpx takes them from the environment (`<scheme>_proxy`, else `all_proxy`, unless
    `no_proxy` names the host), or None."""
    import urllib.request

    parts = urlsplit(url)
    proxies = urllib.request.getproxies_environment()
    if not parts.hostname or urllib.request.proxy_bypass_environment(parts.hostname, proxies):
        return None
    for key in (parts.scheme, "all"):
        if proxies.get(key):
            names = [n for n in os.environ if n.lower() == f"{key}_proxy"]
            return proxies[key], (names[0] if names else f"{key}_proxy")
    return None


class SchemeTransport:
    """httpx's transport, one per scheme, each made when a URL of that scheme is first sent.

    What httpx.Client makes by default, except that the TLS one, whose CA bundle
    takes about 30 ms to load, is only made for an https:// URL: a push to a
    plain-HTTP (loopback) registry never loads it. A redirect to https:// gets
    it, verified as ever. The plain-HTTP transport's TLS context trusts no
    certificate at all; http:// connections never use it.
    """

    def __init__(self, verify: bool | str) -> None:
        self.verify = verify
        self.by_scheme: dict[str, httpx.BaseTransport] = {}
        self.lock = threading.Lock()

    def _for(self, scheme: str) -> httpx.BaseTransport:
        import ssl

        import httpx

        with self.lock:
            if scheme not in self.by_scheme:
                if scheme == "http":
                    verify = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # loads no CA: trusts none
                else:
                    verify = self.verify
                self.by_scheme[scheme] = httpx.HTTPTransport(verify=verify)
            return self.by_scheme[scheme]

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self._for(request.url.scheme).handle_request(request)

    def close(self) -> None:
        with self.lock:
            for transport in self.by_scheme.values():
                transport.close()
            self.by_scheme.clear()

    def __enter__(self) -> SchemeTransport:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


class RegistryClient:
    """One registry host. ``insecure`` allows plain HTTP beyond loopback.

    ``limits``: the read timeout of one attempt, the deadline of a request with its
    retries, the upload chunk size (default: ``Limits()``).
    """

    def __init__(
        self,
        host: str,
        *,
        insecure: bool = False,
        ca_file: Path | None = None,
        retries: int = 5,
        backoff: float = 0.5,
        limits: Limits | None = None,
        log: Callable[[str], None] = lambda _msg: None,
    ) -> None:
        import httpx

        from tools.oci.auth import RegistryAuth, credentials_lookup

        scheme, sep, bare = host.rpartition("://")
        scheme = scheme.lower()  # case-insensitive (RFC 3986 3.1): HTTPS:// is https://
        if "@" in bare:
            split_registry(host)  # refuses credentials in a registry string
        if "/" in bare:
            raise RegistryError(
                f"registry host {host!r} has a path; give the namespace in the repository name"
            )
        self.host = bare
        if not sep:
            scheme = "http" if insecure or is_loopback(bare) else "https"
        self.base = f"{scheme}://{bare}"
        self.retries = retries
        self.backoff = backoff
        limits = limits or Limits()
        self.deadline = limits.timeout
        self.read_timeout = min(limits.read_timeout, self.deadline)
        self.chunk_size = limits.chunk_size
        self.answered = False  # a refused connection is transient once the host has answered
        verify: bool | str = str(ca_file) if ca_file else True
        self.http = httpx.Client(
            auth=RegistryAuth(bare, credentials_lookup(bare)),
            verify=verify,
            # httpx takes proxies from the environment only with its own transport
            transport=None if env_proxies() else SchemeTransport(verify),
            timeout=httpx.Timeout(self.read_timeout, connect=min(10.0, self.read_timeout)),
            follow_redirects=True,
        )
        self.stats = Stats()
        self.log = log

    @property
    def credentials_note(self) -> str:
        """Why a credential helper gave no credentials, for the 401 message ('' if none)."""
        return getattr(self.http.auth, "note", "")

    def close(self) -> None:
        self.http.close()

    # -- plumbing -------------------------------------------------------------

    def _retrying(self, attempt: Callable[[], T]) -> T:
        """``attempt()`` until it returns; a Transient is retried after a backoff while
        retries and the deadline last."""
        start = time.monotonic()
        n = 0
        while True:
            try:
                return attempt()
            except Transient as e:
                elapsed = time.monotonic() - start
                if e.retry_after is not None:
                    wait = min(e.retry_after, 60.0)
                else:
                    wait = min(self.backoff * 2**n, 30.0)
                if n >= self.retries or elapsed + wait > self.deadline:
                    raise self._gave_up(e, n, elapsed + wait > self.deadline) from None
                n += 1
                self.stats.add(retries=1)
                self.log(f"  retry {n}: {e}")
                time.sleep(wait)

    def _gave_up(self, e: Transient, retries: int, late: bool) -> RegistryError:
        if late and isinstance(e, Dropped) and e.timeout:
            message = (
                f"{e.where}: no answer from {self.host} within --timeout {self.deadline:g} s"
                f" ({retries + 1} attempts); check the registry, or raise --timeout"
            )
        elif late:
            message = (
                f"{e}; gave up after --timeout {self.deadline:g} s ({retries + 1} attempts);"
                " check the registry, or raise --timeout"
            )
        elif isinstance(e, Dropped) and e.timeout:
            message = (
                f"{e.where}: no answer from {self.host} within {self.read_timeout:g} s,"
                f" {retries + 1} attempts (--retries {self.retries}); check the registry"
            )
        else:
            message = f"{e} (gave up after {retries} retries)" if retries else str(e)
        if isinstance(e, Dropped):
            return Unreachable(message, self.host, e.detail)
        return RegistryError(message)

    def _transport_error(self, where: str, e: Exception) -> RegistryError:
        """A transport failure as the error its cause calls for: fatal ones say the fix."""
        import socket
        import ssl

        import httpx

        text = str(e) or type(e).__name__
        causes = list(_causes(e))
        proxy = env_proxy(self.base)
        if isinstance(e, httpx.ConnectError | httpx.ProxyError) and proxy and not self.answered:
            # the connection that failed is the proxy's, not the registry's
            if any(isinstance(c, ConnectionRefusedError | socket.gaierror) for c in causes):
                name = urlsplit(self.base).hostname
                return Unreachable(
                    f"{where}: the proxy {proxy[0]} ({proxy[1]}) does not answer ({text});"
                    f" start it or fix {proxy[1]}, or add {name} to NO_PROXY",
                    self.host,
                    text,
                )
        if isinstance(e, httpx.ConnectError):
            host = self.host
            for c in causes:
                if isinstance(c, socket.gaierror):
                    name = urlsplit(self.base).hostname
                    return Unreachable(
                        f"{where}: cannot resolve {name} ({c.strerror or c});"
                        " check the registry host name",
                        host,
                        text,
                    )
                if isinstance(c, ssl.SSLCertVerificationError):
                    return RegistryError(
                        f"{where}: TLS certificate not trusted ({text}); pass --ca-file"
                        " with the registry's CA, or SSL_CERT_FILE"
                    )
                if isinstance(c, ssl.SSLError) and any(s in str(c) for s in _TLS_ON_PLAIN):
                    return Unreachable(
                        f"{where}: {host} does not speak TLS ({text});"
                        f" use http://{host} or --insecure",
                        host,
                        text,
                    )
                if isinstance(c, ConnectionRefusedError) and not self.answered:
                    return Unreachable(
                        f"{where}: connection refused by {host}; is the registry running?"
                        " check the host and port",
                        host,
                        text,
                    )
                if isinstance(c, ConnectionRefusedError):
                    # retried (a restart takes a moment), then this, not the errno
                    return Dropped(
                        where,
                        f"{host} answered earlier in this run and now refuses connections:"
                        " it stopped or restarted (for the staging registry:"
                        " `bazel run //tools/staging -- start`, then run the command again)",
                    )
        return Dropped(where, text, timeout=isinstance(e, httpx.TimeoutException))

    def _plain_on_tls(self) -> bool:
        """Whether a plain-HTTP GET /v2/ gets a TLS server's answer: a HEAD's 400 has no body
        to tell by (the push's first request is a HEAD)."""
        if not self.base.startswith("http://"):
            return False
        try:
            r = self.http.get(f"{self.base}/v2/")
        except Exception:
            return False
        return r.status_code == 400 and any(s in r.text for s in _PLAIN_ON_TLS)

    def _send(self, method: str, url: str, *, stream: bool = False, **kwargs) -> httpx.Response:
        """One attempt. Raises Transient for what a retry may fix, else RegistryError."""
        import httpx

        self.stats.add(method)
        where = f"{method} {_show(url)}"
        token = object()
        with _IN_FLIGHT_LOCK:
            _IN_FLIGHT[token] = (where, self.host, time.monotonic())
        try:
            response = self.http.send(self.http.build_request(method, url, **kwargs), stream=stream)
            status = response.status_code
            if stream and (status == 429 or status >= 400):
                response.read()  # a short error body
                response.close()
        except httpx.StreamConsumed:
            # the auth flow must send the (streamed) body again with a new token: next attempt
            raise Dropped(where, "re-authenticating") from None
        except httpx.TransportError as e:
            raise self._transport_error(where, e) from None
        except (httpx.HTTPError, httpx.InvalidURL) as e:  # redirects, decoding, a bad URL
            raise RegistryError(f"{where}: {e}") from None
        finally:
            with _IN_FLIGHT_LOCK:
                _IN_FLIGHT.pop(token, None)
        self.answered = True
        if status == 429 or status >= 500:
            retry_after = response.headers.get("Retry-After", "")
            raise RetryableStatus(
                f"{where}: HTTP {status}{_detail(response)}",
                float(retry_after) if retry_after.isdigit() else None,
            )
        if status == 400 and method == "HEAD" and self._plain_on_tls():
            raise Unreachable(
                f"{where}: {self.host} speaks TLS, not plain HTTP; use https://{self.host}",
                self.host,
                "HTTP 400 to a HEAD; GET /v2/ says it is a TLS port",
            )
        if status == 400 and any(s in response.text for s in _PLAIN_ON_TLS):
            raise Unreachable(
                f"{where}: {self.host} speaks TLS, not plain HTTP; use https://{self.host}",
                self.host,
                response.text.strip(),
            )
        return response

    def request(self, method: str, path: str, **kwargs) -> httpx.Response:
        url = path if path.startswith("http") else f"{self.base}{path}"
        return self._retrying(lambda: self._send(method, url, **kwargs))

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
        errors = _errors(response)
        raise BadStatus(f"{what}: HTTP {status}{_detail(response, errors)}", status, errors)

    # -- blobs ----------------------------------------------------------------

    def blob_exists(self, name: str, digest: str) -> bool:
        r = self.request("HEAD", f"/v2/{name}/blobs/{digest}")
        self.check(r, f"HEAD blob {name}@{digest}", (200, 404))
        return r.status_code == 200

    def mount_blob(self, name: str, digest: str, source: str) -> str | None:
        """Cross-repository mount: None once mounted, else an upload session URL ('' for none).

        A registry that cannot mount (the source lacks the blob, or mounting is
        off) answers 202 with an upload session; ``upload`` can use it. One
        that refuses the mount with an error (403 for the source, 404, 405: no
        mounts at all, ...) gets the blob uploaded instead, as
        go-containerregistry does: '' (``upload`` starts its own session).
        """
        r = self.request(
            "POST", f"/v2/{name}/blobs/uploads/", params={"mount": digest, "from": source}
        )
        if r.status_code == 201:
            self.stats.add(mounted_blobs=1)
            return None
        if r.status_code == 202 and r.headers.get("Location"):
            return urljoin(self.base + "/", r.headers["Location"])
        self.stats.add(refused_mounts=1)
        self.log(
            f"  mount of {digest[:19]} from {source} refused (HTTP {r.status_code}); uploading"
        )
        return ""

    def _start_upload(self, name: str) -> str:
        r = self._send("POST", f"{self.base}/v2/{name}/blobs/uploads/")
        self.check(r, f"start upload to {name}", (202,))
        return urljoin(self.base + "/", r.headers["Location"])

    def upload(
        self,
        name: str,
        digest: str,
        size: int,
        open_body: Callable[[], AbstractContextManager[BinaryIO | BlobReader]],
        session: str | None = None,
    ) -> None:
        """Upload a blob whose bytes ``open_body()`` gives: a reader with read(n) and seek().

        Up to ``chunk_size`` bytes go in one PUT, retried whole on a fresh
        session; bigger blobs in PATCHes of ``chunk_size``, where a failure
        costs only the chunk in flight (see ``_upload_chunks``). ``session``:
        a mount's upload session (its 202) to use first. The registry checks
        the bytes against ``digest``.
        """
        what = f"upload {digest} to {name}"
        with open_body() as body:  # first: a missing source opens no session
            if size > self.chunk_size:
                self._upload_chunks(name, digest, size, body, session)
            else:
                sessions = [session] if session else []

                def attempt() -> None:
                    location = sessions.pop() if sessions else self._start_upload(name)
                    r = self._send(
                        "PUT",
                        _with_digest(location, digest),
                        content=_read(body, 0, size),
                        headers=_octets(size),
                    )
                    self.check(r, what, (201,))

                self._retrying(attempt)
        self.stats.add(uploaded_blobs=1, uploaded_bytes=size)

    def _upload_chunks(
        self, name: str, digest: str, size: int, body: BinaryIO | BlobReader, session: str | None
    ) -> None:
        """PATCH the blob in chunks, then PUT the digest.

        Each chunk has its own retries and deadline. After a failed PATCH the
        registry is asked where the session stands (GET → `Range: 0-N`) and
        the upload goes on from byte N+1; only a session the registry lost
        starts again from byte 0.
        """
        what = f"upload {digest} to {name}"
        s = _Session(session or self._retrying(lambda: self._start_upload(name)))

        def send_chunk() -> None:
            if not s.synced:
                s.location, s.offset = self._upload_offset(name, digest, s.location)
                s.synced = True
            end = min(s.offset + self.chunk_size, size)
            s.synced = False
            r = self._send(
                "PATCH",
                s.location,
                content=_read(body, s.offset, end),
                headers={**_octets(end - s.offset), "Content-Range": f"{s.offset}-{end - 1}"},
            )
            if r.status_code == 404:  # the registry dropped the session: ask, then start anew
                raise Transient(f"PATCH {_show(s.location)}: HTTP 404{_detail(r)}")
            self.check(r, what, (202,))
            s.location = urljoin(self.base + "/", r.headers["Location"])
            s.offset, s.synced = end, True

        while s.offset < size:
            self._retrying(send_chunk)
        r = self._retrying(
            lambda: self._send("PUT", _with_digest(s.location, digest), headers=_octets(0))
        )
        if r.status_code == 404 and self.blob_exists(name, digest):
            return  # an earlier PUT went through; its answer was lost
        self.check(r, what, (201,))

    def _upload_offset(self, name: str, digest: str, location: str) -> tuple[str, int]:
        """(session URL, bytes the registry has) of an upload; a new session if it was lost."""
        r = self._send("GET", location)
        m = re.fullmatch(r"(?:bytes=)?0-(\d+)", r.headers.get("Range", ""))
        if r.status_code == 204 and m:
            offset = int(m.group(1)) + 1 if int(m.group(1)) else 0
            self.log(f"  resuming {digest[:19]} at byte {offset}")
            return urljoin(self.base + "/", r.headers.get("Location", location)), offset
        if r.status_code not in (400, 404):
            self.check(r, f"upload status of {digest} in {name}", (204,))
        self.log(f"  {name} lost the upload session of {digest[:19]}; starting it again")
        return self._start_upload(name), 0

    def upload_blob(self, name: str, digest: str, path: Path, size: int) -> None:
        """Upload the blob in file ``path``."""
        self.upload(name, digest, size, lambda: path.open("rb"))

    @contextmanager
    def blob_stream(self, name: str, digest: str) -> Iterator[BlobReader]:
        """A blob's bytes as a reader (read, seek) over GETs; NotFound on a 404.

        The first GET is sent on entering, so a missing blob is known before
        anything else is done with it.
        """
        reader = BlobReader(self, f"{self.base}/v2/{name}/blobs/{digest}")
        try:
            reader.open()
            yield reader
        finally:
            reader.close()

    def get_blob(self, name: str, digest: str) -> bytes:
        """A small blob (a config), checked against its digest."""
        r = self.request("GET", f"/v2/{name}/blobs/{digest}")
        self.check(r, f"GET blob {name}@{digest}", (200,))
        if digest_of(r.content) != digest:
            raise RegistryError(f"GET blob {name}@{digest}: content does not match its digest")
        return r.content

    def download_blob(self, name: str, digest: str, dest: Path) -> None:
        """Stream a blob to ``dest``, checked against its digest."""
        h = Digester()
        with self.blob_stream(name, digest) as reader, dest.open("wb") as f:
            while data := reader.read(CHUNK):
                h.update(data)
                f.write(data)
        if h.digest != digest:
            raise RegistryError(
                f"GET blob {self.host}/{name}@{digest}: content does not match its digest;"
                " the registry's copy is damaged"
            )

    # -- manifests ------------------------------------------------------------

    def manifest_digest(self, name: str, reference: str) -> str | None:
        """The digest ``reference`` points at, or None if it does not exist.

        A registry that leaves Docker-Content-Digest out of its answer is
        asked for the manifest, whose bytes are hashed: never "absent" for a
        manifest that is there.
        """
        r = self.request(
            "HEAD", f"/v2/{name}/manifests/{reference}", headers={"Accept": MANIFEST_TYPES}
        )
        self.check(r, f"HEAD {name}:{reference}", (200, 404))
        if r.status_code == 404:
            return None
        return r.headers.get("Docker-Content-Digest") or self.get_manifest(name, reference)[2]

    def get_manifest(self, name: str, reference: str) -> tuple[bytes, str, str]:
        """(bytes, media type, digest): the bytes' own digest, checked (``manifest_checked``)."""
        r = self.request(
            "GET", f"/v2/{name}/manifests/{reference}", headers={"Accept": MANIFEST_TYPES}
        )
        self.check(r, f"GET {name}:{reference}", (200,))
        digest = manifest_checked(
            r.content, reference, r.headers.get("Docker-Content-Digest"), f"{self.host}/{name}"
        )
        return r.content, r.headers.get("Content-Type", ""), digest

    def put_manifest(self, name: str, reference: str, body: bytes, media_type: str) -> str:
        r = self.request(
            "PUT",
            f"/v2/{name}/manifests/{reference}",
            content=body,
            headers={"Content-Type": media_type},
        )
        self.check(r, f"PUT {name}:{reference}", (201, 200))
        return r.headers.get("Docker-Content-Digest") or digest_of(body)

    def delete_manifest(self, name: str, digest: str) -> bool:
        """Delete a manifest (and every tag on it); False when it was already gone."""
        r = self.request("DELETE", f"/v2/{name}/manifests/{digest}")
        # 404: already gone (a retried DELETE, or another tag of the same digest)
        self.check(r, f"DELETE {name}@{digest}", (202, 200, 404))
        return r.status_code != 404

    # -- listings -------------------------------------------------------------

    def _paginate(
        self,
        path: str,
        key: str,
        missing: str = "",
        page: int = 100,
        on_page: Callable[[int], None] | None = None,
    ) -> list[str]:
        """Every item of a paginated listing (``page`` asked per request; ``on_page``
        gets the count so far after each). A tag listing's 404 (an unknown
        repository) is no tags, or NotFound(``missing``) if given."""
        items: list[str] = []
        url: str | None = f"{path}?n={page}"
        while url:
            r = self.request("GET", url)
            if r.status_code == 404 and key == "tags":
                if missing:
                    raise NotFound(f"{missing} (HTTP 404{_detail(r)})")
                return []
            self.check(r, f"GET {path}", (200,))
            items += r.json().get(key) or []
            if on_page is not None:
                on_page(len(items))
            link = r.headers.get("Link", "")
            m = re.search(r"<([^>]+)>;\s*rel=\"?next\"?", link)
            url = m.group(1) if m else None
        return items

    def list_tags(
        self,
        name: str,
        missing_ok: bool = True,
        page: int = 100,
        on_page: Callable[[int], None] | None = None,
    ) -> list[str]:
        """The tags of ``name``: none for a repository the registry does not know,
        unless not ``missing_ok`` (NotFound)."""
        missing = "" if missing_ok else f"{self.host}/{name}: no such repository"
        return self._paginate(f"/v2/{name}/tags/list", "tags", missing, page, on_page)

    def list_repositories(self) -> list[str]:
        return self._paginate("/v2/_catalog", "repositories")


class BlobReader:
    """A blob's bytes over GETs: ``read(n)`` in order, ``seek(offset)`` anywhere.

    A connection dropped mid-blob, or a seek, opens a new GET with
    `Range: bytes=N-` (retried like any request), so a copy goes on from where
    it stopped on either side instead of starting over.
    """

    def __init__(self, client: RegistryClient, url: str) -> None:
        self.client = client
        self.url = url
        self.where = f"GET {_show(url)}"
        self.pos = 0
        self.response: httpx.Response | None = None
        self.pieces: Iterator[bytes] = iter(())
        self.buffer = b""
        self.drops = 0  # in a row, without a byte in between

    def open(self) -> None:
        headers = {"Range": f"bytes={self.pos}-"} if self.pos else {}

        def attempt() -> httpx.Response:
            r = self.client._send("GET", self.url, stream=True, headers=headers)
            if r.status_code == 404:
                raise NotFound(f"{self.where}: HTTP 404")
            self.client.check(r, self.where, (200, 206))
            return r

        self.response = self.client._retrying(attempt)
        self.pieces = self.response.iter_bytes(CHUNK)
        if self.pos and self.response.status_code == 200:  # the Range was ignored: skip
            skip = self.pos
            while skip > 0:
                skip -= len(self._next())

    def _next(self) -> bytes:
        import httpx

        while True:
            if self.response is None:
                self.open()
            try:
                data = next(self.pieces, b"")
                self.drops = 0
                return data
            except httpx.TransportError as e:  # dropped mid-blob: a new GET from here
                error = self.client._transport_error(self.where, e)
                self.close()
                self.drops += 1
                if not isinstance(error, Transient) or self.drops > self.client.retries:
                    raise error from None
                self.client.stats.add(retries=1)
                self.client.log(f"  retry {self.drops}: {error}; reading on from byte {self.pos}")

    def read(self, n: int) -> bytes:
        if not self.buffer:
            self.buffer = self._next()
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        self.pos += len(data)
        return data

    def seek(self, offset: int) -> None:
        if offset != self.pos:
            self.close()
            self.pos, self.buffer = offset, b""

    def close(self) -> None:
        if self.response is not None:
            self.response.close()
            self.response = None


def _read(body: BinaryIO | BlobReader, start: int, end: int) -> Iterator[bytes]:
    """Bytes ``start``..``end`` of a reader, CHUNK at a time (a generator: httpx can
    tell it was consumed, and never holds more than a piece)."""
    body.seek(start)
    while start < end:
        data = body.read(min(CHUNK, end - start))
        if not data:
            raise RegistryError(f"the blob ends at byte {start}, before its size {end}")
        start += len(data)
        yield data
