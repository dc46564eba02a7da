"""Image references and registry strings, held to the OCI reference grammar.

``Reference`` is one parsed image reference, `REGISTRY/REPOSITORY[:TAG][@DIGEST]`:
every ref the tools print, push, look up or verify is made and read by it,
never by f-strings or split on `:`/`@`. Registry strings,
`[https://]HOST[:PORT][/NAMESPACE]`, are checked by ``registry_string``.

Every push, plan, cache ref and staging prefix is `<registry>/<repository>`,
so a registry string that no client can pull from (upper case in the path,
empty components, credentials, a port out of range) is refused before
anything is built or pushed. The grammar is distribution/reference's
(regexp.go): domain components and an optional port; lowercase path
components separated by `.`, `_`, `__` or runs of `-`. It lives here once for
the tools; images/private/reference.bzl holds it in Starlark for analysis
time, and tests/oci/registry_strings.bzl is the one table both must agree on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from tools.oci.errors import RegistryError

# Compiled on first use (re caches them): commands that never check one start faster.
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*"
_DOMAIN_COMPONENT = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_IPV6 = r"\[[0-9A-Fa-f:.]+\]"
_PORT = r"[0-9]{1,5}"
_TAG = r"[\w][\w.-]{0,127}"
_ALGORITHM = r"[a-z0-9]+(?:[.+_-][a-z0-9]+)*"
_ENCODED = r"[a-zA-Z0-9=_-]+"
# Registered algorithms: their encoded part is lower-case hex of this length.
_HEX_LENGTH = {"sha256": 64, "sha512": 128}
_NAME_MAX = 255  # distribution's limit on REGISTRY/REPOSITORY
EXAMPLE = "registry.example.com:5000/rocm-pytorch"
REF_EXAMPLE = "registry.example.com:5000/rocm-pytorch/pytorch:TAG"
SCHEMES = ("http", "https")
DOCKER_HUB = "docker.io"


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
    """``value`` checked; else BadRegistry.

    ``namespace``: a namespace is required (staging prefixes). An `http://`
    or `https://` prefix forces the scheme and is kept, in lower case (a
    scheme is case-insensitive, RFC 3986 3.1). Blanks around the value and a
    trailing `/` are refused, not dropped: they come from quoting or pasting
    gone wrong, which the user should see.
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
    if value.endswith("/"):
        # refused, not dropped: every ref is <registry>/<repository>:<tag>
        raise BadRegistry(f"{value!r} ends with '/'", f"write {value.rstrip('/')!r}")
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


class BadReference(RegistryError):
    """An image reference the grammar refuses: the ``problem`` (naming the text), the ``fix``,
    and the ``fault`` alone (a field's, without the reference it names: ``parse`` names its
    text instead; the whole ``problem`` when none is given)."""

    def __init__(self, problem: str, fix: str, *, fault: str | None = None) -> None:
        super().__init__(f"{problem}; {fix}")
        self.problem = problem
        self.fix = fix
        self.fault = problem if fault is None else fault


def tag_ok(tag: str) -> bool:
    """A tag: a word character, then up to 127 word characters, `.` or `-`."""
    return bool(re.fullmatch(_TAG, tag, re.ASCII))


def digest_problem(digest: str) -> str | None:
    """What is wrong with `ALGORITHM:ENCODED` (sha256 and sha512: lower-case hex of their
    length), or None."""
    algorithm, colon, encoded = digest.partition(":")
    if not colon or not re.fullmatch(_ALGORITHM, algorithm) or not re.fullmatch(_ENCODED, encoded):
        return f"bad digest {digest!r} (want ALGORITHM:HEX, e.g. sha256:<64 hex digits>)"
    length = _HEX_LENGTH.get(algorithm)
    if length and not re.fullmatch(f"[0-9a-f]{{{length}}}", encoded):
        return f"bad digest {digest!r} ({algorithm} takes {length} lower-case hex digits)"
    return None


def _looks_like_registry(component: str) -> bool:
    """Docker's rule: a first path component with `.` or `:`, `localhost`, or an IPv6
    literal names a registry; anything else is the repository's first component."""
    return (
        "." in component
        or ":" in component
        or component == "localhost"
        or (component.startswith("["))
    )


@dataclass(frozen=True)
class Reference:
    """An image reference: `[SCHEME://]REGISTRY/REPOSITORY[:TAG][@DIGEST]`.

    ``registry`` is `HOST[:PORT]` (a domain or a bracketed IPv6 literal),
    optionally prefixed by `http://` or `https://`: the project's registry
    strings may force the scheme, so a ref made from one keeps it (``domain``
    is the registry without it). ``repository`` is the whole path on that
    host (namespace included); ``tag`` and ``digest`` are each optional, and
    both may be given (`:TAG@DIGEST`: the digest is what a registry is asked
    for). Constructed or parsed, every field is checked: an invalid reference
    cannot exist. ``parse(str(r)) == r`` for every reference.

    The registry is never guessed. The project always names its registries,
    so the first component of `A/B[...]` is the registry, as in a registry
    string (`registry_string`: `HOST[/NAMESPACE]`, where HOST may be one label
    such as `localhost`), and a reference of one component (`ubuntu:24.04`)
    is refused: "no registry". Only a caller that means Docker Hub's short
    names (the upstream image, `--define UPSTREAM_IMAGE`) says so,
    ``parse(text, default_registry=DOCKER_HUB)``: then Docker's rule applies
    (a first component with `.` or `:`, `localhost` or `[...]` is a registry,
    else the reference is Docker Hub's) and the result is fully qualified
    (`docker.io/library/ubuntu:24.04` for `ubuntu:24.04`).
    """

    registry: str
    repository: str
    tag: str | None = None
    digest: str | None = None

    def __post_init__(self) -> None:
        problem = _registry_problem(self.registry) or _repository_problem(self.repository)
        if not problem and len(f"{self.domain}/{self.repository}") > _NAME_MAX:
            problem = f"name longer than {_NAME_MAX} characters"
        if not problem and self.tag is not None and not tag_ok(self.tag):
            problem = f"bad tag {self.tag!r} (word characters, . and -, at most 128)"
        if not problem and self.digest is not None:
            problem = digest_problem(self.digest)
        if problem:
            raise BadReference(f"image reference {_shown(self)!r}: {problem}", _FIX, fault=problem)

    @classmethod
    def parse(cls, text: str, *, default_registry: str | None = None) -> Reference:
        """``text`` as a Reference; BadReference (one line naming it and the fault) if the
        grammar refuses it. ``default_registry``: the registry of a reference that names
        none (only DOCKER_HUB's short names; otherwise such a reference is refused)."""
        if not isinstance(text, str) or not text:
            raise BadReference("empty image reference", _FIX)
        if text != text.strip() or any(c.isspace() for c in text):
            raise BadReference(f"image reference {text!r}: blanks in it", _FIX)
        scheme, sep, rest = text.rpartition("://")
        if sep and scheme.lower() not in SCHEMES:
            raise BadReference(f"image reference {text!r}: unknown scheme {scheme!r}", _FIX)
        if sep and not rest.partition("/")[0]:
            raise BadReference(f"image reference {text!r}: a scheme but no registry", _FIX)
        name, at, digest = rest.partition("@")
        if at and "/" in digest:
            raise BadReference(
                f"image reference {_redact(text)!r}: credentials in a reference end up in logs",
                "remove them; log in with `docker login HOST`",
            )
        head, _, last = name.rpartition("/")
        path, colon, tag = last.partition(":")
        host, slash, first = head.partition("/")
        repository = f"{first}/{path}" if slash else path
        if default_registry is not None and not sep and not _looks_like_registry(host):
            host, repository = "", (f"{head}/{path}" if head else path)
        if not host:
            if sep:
                raise BadReference(f"image reference {text!r}: no repository", _FIX)
            if default_registry is None:
                raise BadReference(
                    f"image reference {text!r}: no registry",
                    f"write HOST[:PORT]/{text.lstrip('/')}",
                )
            host = default_registry
            if host == DOCKER_HUB and "/" not in repository:
                repository = f"library/{repository}"
        try:
            return cls(
                f"{scheme.lower()}://{host}" if sep else host,
                repository,
                tag if colon else None,
                digest if at else None,
            )
        except BadReference as e:
            raise BadReference(
                f"image reference {text!r}: {e.fault}", _FIX, fault=e.fault
            ) from None

    @classmethod
    def at(
        cls, registry: str, repository: str, tag: str | None = None, digest: str | None = None
    ) -> Reference:
        """``repository`` under a registry string `[https://]HOST[:PORT][/NAMESPACE]`."""
        host, namespace = split_registry(registry)
        return cls(host, f"{namespace}/{repository}" if namespace else repository, tag, digest)

    def __str__(self) -> str:
        return (
            self.context
            + (f":{self.tag}" if self.tag is not None else "")
            + (f"@{self.digest}" if self.digest is not None else "")
        )

    @property
    def context(self) -> str:
        """`REGISTRY/REPOSITORY`: the repository the reference is in, with no tag or digest."""
        return f"{self.registry}/{self.repository}"

    @property
    def domain(self) -> str:
        """The registry without a scheme: `HOST[:PORT]`."""
        return self.registry.rpartition("://")[2]

    @property
    def identifier(self) -> str:
        """What a registry is asked for: the digest, else the tag, else `latest`."""
        return self.digest or self.tag or "latest"

    def with_tag(self, tag: str | None) -> Reference:
        """The same repository with ``tag`` (and no digest)."""
        return replace(self, tag=tag, digest=None)

    def with_digest(self, digest: str | None) -> Reference:
        """The same repository and tag, pinned to ``digest``."""
        return replace(self, digest=digest)

    def without_scheme(self) -> Reference:
        """The reference as docker, crane and cosign write it (no `https://`)."""
        return replace(self, registry=self.domain)


_FIX = f"want [https://]HOST[:PORT]/REPOSITORY[:TAG][@ALGORITHM:HEX], e.g. {REF_EXAMPLE}"


def _shown(ref: Reference) -> str:
    try:
        return (
            f"{ref.registry}/{ref.repository}"
            + (f":{ref.tag}" if ref.tag is not None else "")
            + (f"@{ref.digest}" if ref.digest is not None else "")
        )
    except TypeError:
        return repr(ref)


def _registry_problem(registry: str) -> str | None:
    if not isinstance(registry, str) or not registry:
        return "no registry"
    scheme, sep, host = registry.rpartition("://")
    if sep and scheme not in SCHEMES:
        return f"unknown scheme {scheme!r}"
    if not host or "/" in host or "@" in host:
        return f"bad registry {registry!r} (want HOST[:PORT])"
    return host_problem(host)


def _repository_problem(repository: str) -> str | None:
    if not isinstance(repository, str) or not repository:
        return "no repository"
    for component in repository.split("/"):
        if not component_ok(component):
            if component.lower() != component and component_ok(component.lower()):
                return f"bad repository component {component!r} (write {component.lower()!r})"
            return (
                f"bad repository component {component!r} (lowercase letters, digits and"
                " . _ __ - between them)"
            )
    return None
