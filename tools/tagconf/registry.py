"""Registry strings: `HOST[:PORT]/NAMESPACE`, checked against the OCI reference grammar.

Every push, plan and cache ref is `<registry>/<repository>:<tag>`, so a
registry string that no client can pull from (upper case in the path, empty
components, credentials) must be refused before anything is built or pushed.
images/private/defines.bzl applies the same rules at Bazel analysis time.
"""

from __future__ import annotations

import re

from tools.tagconf.errors import UsageError

# distribution/reference: domain components, optional port; lowercase path
# components separated by `.`, `_`, `__` or runs of `-`.
_DOMAIN = re.compile(
    r"(?:[A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9])"
    r"(?:\.(?:[A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9]))*"
    r"(?::[0-9]+)?"
)
_IPV6 = re.compile(r"\[[0-9A-Fa-f:.]+\](?::[0-9]+)?")
PATH_COMPONENT = re.compile(r"[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*")
EXAMPLE = "registry.example.com:5000/rocm-pytorch"


def check_registry(value: str, where: str = "--registry", *, namespace: bool = False) -> str:
    """Return ``value`` without a trailing `/` if it is `HOST[:PORT][/NAMESPACE]`, else raise.

    ``namespace``: a namespace is required (staging prefixes).
    An `http://` or `https://` prefix forces the scheme and is kept.
    """
    text = value.strip()
    scheme, sep, rest = text.rpartition("://")
    if sep and scheme not in ("http", "https"):
        raise UsageError(where, f"{value!r}: unknown scheme {scheme!r}", "use https:// or none")
    rest = rest.rstrip("/")
    if not rest:
        raise UsageError(where, "empty registry", f"give HOST[:PORT]/NAMESPACE, e.g. {EXAMPLE}")
    if "@" in rest:
        raise UsageError(
            where,
            f"{_redact(value)}: credentials in a registry string end up in logs",
            "remove them; log in with `docker login HOST` (read from $DOCKER_CONFIG/config.json)",
        )
    host, _, path = rest.partition("/")
    if not (_DOMAIN.fullmatch(host) or _IPV6.fullmatch(host)):
        raise UsageError(
            where, f"{value!r}: bad host {host!r}", f"give HOST[:PORT]/NAMESPACE, e.g. {EXAMPLE}"
        )
    if namespace and not path:
        raise UsageError(
            where, f"{value!r}: no namespace", f"give HOST[:PORT]/NAMESPACE, e.g. {EXAMPLE}"
        )
    for component in path.split("/") if path else []:
        if not PATH_COMPONENT.fullmatch(component):
            fix = "repository paths are lowercase letters, digits and . _ __ - between them"
            if component.lower() != component and PATH_COMPONENT.fullmatch(component.lower()):
                fix = f"write {component.lower()!r} (repository paths are lowercase)"
            raise UsageError(where, f"{value!r}: bad namespace component {component!r}", fix)
    return (f"{scheme}://" if sep else "") + rest


def _redact(value: str) -> str:
    return re.sub(r"^([^/@]*://)?[^/@]*@", lambda m: (m.group(1) or "") + "***@", value)
