"""The few distribution-API calls staging needs: list, resolve a tag, delete a manifest.

Plain HTTP on loopback (and with ``insecure``), HTTPS elsewhere. No
authentication: the embedded registry has none, and a shared staging
registry's own retention policy is the tool for cleaning it.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urljoin

from tools.staging.errors import StagingError, UnreachableError

try:
    import httpx
except ImportError:  # `python3 -m tools.staging start` needs no HTTP client library
    httpx = None  # type: ignore[assignment]

MANIFEST_TYPES = ", ".join(
    [
        "application/vnd.oci.image.manifest.v1+json",
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.docker.distribution.manifest.v2+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
    ]
)


def is_loopback(host: str) -> bool:
    name = host[1:].split("]", 1)[0] if host.startswith("[") else host.rsplit(":", 1)[0]
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class Client:
    """One registry host (`HOST[:PORT]`)."""

    def __init__(self, host: str, *, insecure: bool = False, timeout: float = 30.0) -> None:
        if httpx is None:
            raise StagingError(
                "the Python package httpx is missing; run through Bazel"
                " (`bazel run //tools/staging -- ...`) or `pip install httpx`"
            )
        scheme = "http" if insecure or is_loopback(host) else "https"
        self.host = host
        self.base = f"{scheme}://{host}"
        self.http = httpx.Client(timeout=httpx.Timeout(timeout, connect=5.0))

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.http.close()

    def _request(self, method: str, path: str, **kwargs) -> httpx.Response:
        url = path if path.startswith("http") else self.base + path
        try:
            return self.http.request(method, url, **kwargs)
        except httpx.TransportError as e:
            raise UnreachableError(
                f"staging registry {self.host} cannot be reached ({method} {url}:"
                f" {e or type(e).__name__}); start it or check the address"
            ) from None

    def _check(self, r: httpx.Response, what: str, ok: tuple[int, ...] = (200,)) -> None:
        if r.status_code in ok:
            return
        if r.status_code in (401, 403):
            raise StagingError(
                f"{what}: HTTP {r.status_code} from {self.host}; staging tools do not"
                " authenticate: clean a protected registry with its own retention policy"
            )
        raise StagingError(f"{what}: HTTP {r.status_code} {r.text[:200].strip()}")

    def ping(self) -> None:
        r = self._request("GET", "/v2/")
        if r.status_code not in (200, 401):
            raise UnreachableError(
                f"{self.base}/v2/ answered HTTP {r.status_code}: not a registry; check the address"
            )

    def _paged(self, path: str, key: str, what: str, *, missing_ok: bool = False) -> list[str]:
        out: list[str] = []
        url: str | None = path
        while url:
            r = self._request("GET", url)
            if missing_ok and r.status_code == 404:
                return out
            self._check(r, what)
            out += r.json().get(key) or []
            link = r.links.get("next", {}).get("url")
            url = urljoin(self.base + "/", link) if link else None
        return out

    def catalog(self) -> list[str]:
        return self._paged(
            "/v2/_catalog?n=1000", "repositories", f"list repositories of {self.host}"
        )

    def tags(self, name: str) -> list[str]:
        path = f"/v2/{name}/tags/list?n=1000"
        return self._paged(path, "tags", f"list tags of {name}", missing_ok=True)

    def digest(self, name: str, reference: str) -> str | None:
        """The manifest digest of a tag (or a digest), None when it is gone."""
        r = self._request(
            "HEAD", f"/v2/{name}/manifests/{reference}", headers={"Accept": MANIFEST_TYPES}
        )
        if r.status_code == 404:
            return None
        self._check(r, f"HEAD {name}:{reference}")
        return r.headers.get("Docker-Content-Digest")

    def delete(self, name: str, digest: str) -> bool:
        """Delete a manifest (and every tag on it); False when it was already gone."""
        r = self._request("DELETE", f"/v2/{name}/manifests/{digest}")
        if r.status_code == 405:
            raise StagingError(
                f"{self.host} refuses deletes (HTTP 405); enable storage.delete in its"
                " config, or clean it with its own retention policy"
            )
        self._check(r, f"DELETE {name}@{digest}", (200, 202, 404))
        return r.status_code != 404
