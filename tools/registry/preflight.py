"""`registry check`: the registry a push will write to answers and takes a write.

A wrong registry (a typo, a registry that is down, TLS or credentials that do
not work) was found only when the push started, after the build: 46 s on the
fixture family, hours on the real one. The push target's build runs this
check as an action of its own beside the image builds
(images/private/push.bzl, `RegistryCheck`), so such a registry stops the
build in seconds, in one line.

Per registry host: `GET /v2/` (it answers, it speaks what we speak: the
client's one-line errors for refused connections, DNS, TLS); then per
repository a write, as the push's first upload starts it: `POST
/v2/<name>/blobs/uploads/` must open an upload session (202), which is then
cancelled (`DELETE` of its Location): nothing is written. Credentials come
from the same docker config and credential helpers the push uses.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable

from tools.oci.client import RegistryClient
from tools.oci.errors import RegistryError
from tools.registry.plan import PlannedImage


def repositories(images: Iterable[PlannedImage]) -> dict[str, list[str]]:
    """host -> the repository names (namespace/repository) the images go to, in order."""
    out: dict[str, list[str]] = {}
    for image in images:
        names = out.setdefault(image.host, [])
        if image.name not in names:
            names.append(image.name)
    return out


def check(
    images: Iterable[PlannedImage],
    client_for: Callable[[str], RegistryClient],
) -> str:
    """Check every host and repository of ``images``; one line saying what was checked,
    or ``RegistryError`` (one line, the fix) for the first that fails."""
    start = time.monotonic()
    hosts = repositories(images)
    lines = []
    for host, names in hosts.items():
        client = client_for(host)
        try:
            _answers(client)
            for name in names:
                _takes_a_write(client, name)
        finally:
            client.close()
        scheme = client.base.split("://", 1)[0]
        lines.append(f"{host} ({scheme}): {len(names)} repositories take a write")
    return f"registry check: {'; '.join(lines)} ({time.monotonic() - start:.1f}s)"


def _answers(client: RegistryClient) -> None:
    r = client.request("GET", "/v2/")
    if r.status_code not in (200, 401):  # 401: it wants credentials, which the write shows
        raise RegistryError(
            f"GET {client.base}/v2/: HTTP {r.status_code}; {client.host} does not answer as an"
            " OCI registry: check the host, port and path of --image_registry="
        )


def _takes_a_write(client: RegistryClient, name: str) -> None:
    where = f"{client.host}/{name}"
    r = client.request("POST", f"/v2/{name}/blobs/uploads/")
    if r.status_code == 202:
        location = r.headers.get("Location")
        if location:  # cancel the session: nothing stays (a registry expires it anyway)
            with contextlib.suppress(RegistryError):
                client.request("DELETE", location)
        return
    if r.status_code == 401:
        raise RegistryError(
            f"{where}: the registry wants credentials for a write (HTTP 401) and has none that"
            f" work; `docker login {client.host}` (the push reads the docker config and its"
            " credential helpers), then build again"
        )
    if r.status_code == 403:
        raise RegistryError(
            f"{where}: the credentials for {client.host} may not write there (HTTP 403);"
            " log in as a user who may push to it, or give another --image_registry="
        )
    raise RegistryError(
        f"POST {client.base}/v2/{name}/blobs/uploads/: HTTP {r.status_code}; {client.host}"
        " does not take a write there"
    )
