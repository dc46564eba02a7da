"""Staging: where image builds put their images, and Bazel keeps only descriptors.

`--staging=` names the staging registry. Unset, empty or `embedded`
means the project's own loopback registry (tools/staging/embedded.py), which
is started on first use; `HOST[:PORT]/PREFIX` names a shared one (a team's
registry that every builder can reach). ``resolve`` turns that value into a
``Staging``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tools.oci.reference import component_ok, name_ok, port_ok, split_host
from tools.staging.errors import StagingError, UnreachableError

if TYPE_CHECKING:
    from tools.oci.client import RegistryClient
    from tools.staging.loopback import LoopbackClient

__all__ = [
    "EMBEDDED",
    "EMBEDDED_PREFIX",
    "Staging",
    "StagingError",
    "UnreachableError",
    "parse",
    "resolve",
]

EMBEDDED = "embedded"
EMBEDDED_PREFIX = "staging"

_EXAMPLE = "e.g. registry.example.com/rocm-pytorch-staging"


@dataclass(frozen=True)
class Staging:
    """A staging registry: ``registry`` is `HOST[:PORT]/PREFIX`."""

    registry: str
    embedded: bool

    @property
    def host(self) -> str:
        return self.registry.split("/", 1)[0]

    @property
    def prefix(self) -> str:
        return self.registry.split("/", 1)[1]

    def name(self, repository: str) -> str:
        """The repository path on the host that stages ``repository``."""
        return f"{self.prefix}/{repository}"

    def placement(self, name: str, tag: str) -> dict[str, object]:
        """The descriptor fields saying where staging holds an image pushed as ``name:tag``."""
        return {
            "staging_registry": self.registry,
            "staging_name": name,
            "staging_tag": tag,
            "embedded": self.embedded,
            "staging_instance": self.instance,
        }

    def client(self) -> RegistryClient | LoopbackClient:
        """A client for this registry, the caller's to close: the embedded registry's own
        small one (no httpx to import: tools/staging/loopback.py), else the OCI client
        (TLS, auth from the docker config, retries)."""
        if self.embedded:
            from tools.staging.loopback import LoopbackClient

            return LoopbackClient(self.host)
        from tools.oci.client import RegistryClient

        return RegistryClient(self.host, retries=3, backoff=0.5)

    @property
    def instance(self) -> str:
        """The embedded registry's state dir identity (``embedded.instance_id``); '' if shared."""
        if not self.embedded:
            return ""
        from tools.staging import embedded

        return embedded.instance_id()


def resolve(value: str | None, *, start: bool = True) -> Staging:
    """The staging registry a `--staging=` value names.

    None, "" and "embedded" mean the embedded registry: started (or checked
    to be running) when ``start``, else only its address is computed.
    Anything else must be `HOST[:PORT]/PREFIX` (see ``parse``).
    """
    if value is None or value.strip() in ("", EMBEDDED):
        from tools.staging import embedded

        port = embedded.ensure_running() if start else embedded.current_port()
        return Staging(f"127.0.0.1:{port}/{EMBEDDED_PREFIX}", True)
    return Staging(parse(value), False)


def parse(value: str) -> str:
    """Validate a shared staging registry `HOST[:PORT]/PREFIX`; return it without a trailing /.

    The prefix is required and follows the OCI reference grammar
    (tools/oci/reference.py: lowercase path components); no scheme (loopback
    hosts get HTTP, the others HTTPS), no credentials (they come from the
    docker config), no tag or digest.
    """
    where = f"staging registry {value!r}"
    text = value.strip().rstrip("/")
    if "://" in text:
        raise StagingError(
            f"{where} has a scheme; drop it and write HOST[:PORT]/PREFIX ({_EXAMPLE})"
        )
    host, sep, prefix = text.partition("/")
    if "@" in host:
        raise StagingError(
            f"{where} has credentials; drop them (docker login / the docker config provides"
            f" them) and write HOST[:PORT]/PREFIX ({_EXAMPLE})"
        )
    if not sep or not prefix:
        raise StagingError(
            f"{where} has no prefix; write HOST[:PORT]/PREFIX ({_EXAMPLE}),"
            f" or `{EMBEDDED}` for the project's own loopback registry"
        )
    _check_host(host, where)
    if "@" in prefix or ":" in prefix:
        raise StagingError(
            f"{where} has a tag or digest; name only the repository prefix ({_EXAMPLE})"
        )
    for component in prefix.split("/"):
        if not component_ok(component):
            raise StagingError(
                f"{where}: prefix component {component!r} is not a valid repository path"
                " (lowercase letters, digits, and . _ __ - between them); fix the prefix"
                f" ({_EXAMPLE})"
            )
    return text


def _check_host(host: str, where: str) -> None:
    name, port = split_host(host)
    if port is not None and not port_ok(port):
        raise StagingError(f"{where}: port {port!r} is not a number 1-65535; fix the port")
    if not name_ok(name):
        raise StagingError(
            f"{where}: {name!r} is not a host name; write HOST[:PORT]/PREFIX ({_EXAMPLE})"
        )
    docker_hub = "." not in name and not name.startswith("[") and name != "localhost"
    if docker_hub and port is None:
        raise StagingError(
            f"{where}: {name!r} is not a registry host (docker would read it as a Docker Hub"
            f" namespace); give a host with a dot or a port ({_EXAMPLE})"
        )
