"""Registry strings, `[https://]HOST[:PORT][/NAMESPACE]`, held to the OCI reference grammar.

Every push, plan, cache ref and staging prefix is `<registry>/<repository>`,
so a registry string that no client can pull from (upper case in the path,
empty components, credentials, a port out of range) is refused before
anything is built or pushed. The grammar is distribution/reference's
(regexp.go): domain components and an optional port; lowercase path
components separated by `.`, `_`, `__` or runs of `-`. It lives here once for
the tools; images/private/defines.bzl holds it in Starlark for analysis
time, and tests/oci/registry_strings.bzl is the one table both must agree on.
"""

from __future__ import annotations

import re

from tools.oci.errors import RegistryError

# Compiled on first use (re caches them): commands that never check one start faster.
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*"
_DOMAIN_COMPONENT = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_IPV6 = r"\[[0-9A-Fa-f:.]+\]"
_PORT = r"[0-9]{1,5}"
EXAMPLE = "registry.example.com:5000/rocm-pytorch"
SCHEMES = ("http", "https")


class BadRegistry(ValueError):
    """A registry string the grammar refuses: the ``problem`` (naming the value) and the ``fix``."""

    def __init__(self, problem: str, fix: str) -> None:
        super().__init__(f"{problem}; {fix}")
        self.problem = problem
        self.fix = fix


def split_host(host: str) -> tuple[str, str | None]:
    """`HOST[:PORT]` -> (HOST, PORT), PORT None without a colon; an IPv6 literal keeps its
    brackets (`[::1]:5000` -> ('[::1]', '5000'))."""
    if host.startswith("[") and "]" in host:
        name, _, rest = host.partition("]")
        if not rest:
            return name + "]", None
        if rest.startswith(":"):
            return name + "]", rest[1:]
        return host, None  # `[::1]x`: no host name
    name, colon, port = host.partition(":")
    return name, (port if colon else None)


def port_ok(port: str) -> bool:
    """A TCP port: digits, 1-65535."""
    return bool(re.fullmatch(_PORT, port)) and 0 < int(port) < 65536


def name_ok(name: str) -> bool:
    """A host name (dot-separated domain components) or a bracketed IPv6 literal."""
    if re.fullmatch(_IPV6, name):
        return True
    return all(re.fullmatch(_DOMAIN_COMPONENT, c) for c in name.split("."))


def component_ok(component: str) -> bool:
    """A repository path component: lowercase letters and digits, `.`, `_`, `__` or runs of
    `-` between them."""
    return bool(re.fullmatch(_PATH_COMPONENT, component))


def host_problem(host: str) -> str | None:
    """What is wrong with `HOST[:PORT]` (`bad port '...'`, `bad host '...'`), or None."""
    name, port = split_host(host)
    if port is not None and not port_ok(port):
        return f"bad port {port!r}"
    if not name_ok(name):
        return f"bad host {host!r}"
    return None


def registry_string(value: str, *, namespace: bool = False) -> str:
    """``value`` checked, without a trailing `/`; else BadRegistry.

    ``namespace``: a namespace is required (staging prefixes). An `http://`
    or `https://` prefix forces the scheme and is kept, in lower case (a
    scheme is case-insensitive, RFC 3986 3.1). Blanks around the value are
    refused, not dropped: they come from quoting gone wrong, which the user
    should see.
    """
    if value != value.strip():
        raise BadRegistry(
            f"{value!r}: blanks around the registry", f"write {value.strip()!r} (no blanks)"
        )
    scheme, sep, rest = value.rpartition("://")
    scheme = scheme.lower()
    if sep and scheme not in SCHEMES:
        raise BadRegistry(f"{value!r}: unknown scheme {scheme!r}", "use https:// or none")
    rest = rest.rstrip("/")
    want = f"give HOST[:PORT]/NAMESPACE, e.g. {EXAMPLE}"
    if not rest:
        raise BadRegistry("empty registry", want)
    if "@" in rest:
        raise BadRegistry(
            f"{_redact(value)}: credentials in a registry string end up in logs",
            "remove them; log in with `docker login HOST` (read from $DOCKER_CONFIG/config.json)",
        )
    host, _, path = rest.partition("/")
    problem = host_problem(host)
    if problem:
        raise BadRegistry(f"{value!r}: {problem}", want)
    if namespace and not path:
        raise BadRegistry(f"{value!r}: no namespace", want)
    for component in path.split("/") if path else []:
        if not component_ok(component):
            fix = "repository paths are lowercase letters, digits and . _ __ - between them"
            if component.lower() != component and component_ok(component.lower()):
                fix = f"write {component.lower()!r} (repository paths are lowercase)"
            raise BadRegistry(f"{value!r}: bad namespace component {component!r}", fix)
    return (f"{scheme}://" if sep else "") + rest


def _redact(value: str) -> str:
    return re.sub(r"^([^/@]*://)?[^/@]*@", lambda m: (m.group(1) or "") + "***@", value)


def split_registry(registry: str) -> tuple[str, str]:
    """'[https://]host:port/ns/sub' -> ('[https://]host:port', 'ns/sub').

    An explicit `https://` or `http://` prefix (any case) stays on the host, in
    lower case, and forces that scheme (`https://127.0.0.1:5000` for a
    loopback registry with TLS). Credentials (`user:password@host`) are
    refused: they belong in the docker config. The rest of the grammar is
    ``registry_string``'s.
    """
    scheme, sep, rest = registry.strip("/").rpartition("://")
    scheme = scheme.lower()
    if sep and scheme not in SCHEMES:
        raise RegistryError(f"registry {registry!r}: scheme must be http:// or https://")
    host, _, namespace = rest.partition("/")
    if "@" in host:
        userinfo, _, bare = host.rpartition("@")
        user, colon, _ = userinfo.partition(":")
        shown = f"{scheme}{sep}{f'{user}:***' if colon else '***'}@{bare}"
        raise RegistryError(
            f"registry '{shown}{'/' if namespace else ''}{namespace}': credentials do not"
            f" belong in the registry; run `docker login {bare}` (they go in"
            " $DOCKER_CONFIG/config.json)"
        )
    if not host:
        raise RegistryError(f"registry {registry!r}: want [https://]HOST[:PORT][/NAMESPACE]")
    return (f"{scheme}://{host}" if sep else host), namespace
