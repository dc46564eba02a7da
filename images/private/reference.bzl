"""Registry strings and image references, checked at analysis time.

tools/oci/reference.py's grammars, for the rules: a registry setting
(`--image_registry`, `--cache_registry`, `--staging`; images/settings) and
`--define UPSTREAM_IMAGE=` are refused before any image builds. The tables in
tests/oci (registry_strings.bzl, references.bzl) hold both to the same answers.
"""

_DIGITS = "0123456789"
_LOWER = "abcdefghijklmnopqrstuvwxyz"
_HOST_CHARS = _LOWER + _LOWER.upper() + _DIGITS + "-"
_HEX = _DIGITS + "abcdefABCDEF"

def _split_host(host):
    # HOST[:PORT] -> (HOST, PORT or None); an IPv6 literal keeps its brackets
    if host.startswith("[") and "]" in host:
        name, _, rest = host.partition("]")
        if not rest:
            return name + "]", None
        if rest.startswith(":"):
            return name + "]", rest[1:]
        return host, None
    name, colon, port = host.partition(":")
    return name, (port if colon else None)

def _port_ok(port):
    if not port or len(port) > 5 or not all([c in _DIGITS for c in port.elems()]):
        return False
    number = int(port.lstrip("0") or "0")
    return 0 < number and number < 65536

def _name_ok(name):
    if name.startswith("[") and name.endswith("]") and len(name) > 2:
        return all([c in _HEX + ":." for c in name[1:-1].elems()])
    for label in name.split("."):
        if not label or label[0] == "-" or label[-1] == "-":
            return False
        if not all([c in _HOST_CHARS for c in label.elems()]):
            return False
    return True

def _host_error(host):
    # tools/oci/reference.py: host_problem
    name, port = _split_host(host)
    if port != None and not _port_ok(port):
        return "bad port %r" % port
    if not _name_ok(name):
        return "bad host %r" % host
    return None

def _component_error(component):
    # [a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*
    if not component:
        return "empty namespace component"
    for c in component.elems():
        if c not in _LOWER + _DIGITS + "._-":
            if c in _LOWER.upper():
                return "bad namespace component %r: repository paths are lowercase (write %r)" % (
                    component,
                    component.lower(),
                )
            return "bad namespace component %r" % component
    if component[0] in "._-" or component[-1] in "._-" or ".." in component or "___" in component:
        return "bad namespace component %r" % component
    for sep in ["._", "_.", ".-", "-.", "_-", "-_"]:
        if sep in component:
            return "bad namespace component %r" % component
    return None

def registry_error(flag, value, need_namespace = False):
    """Why `flag=value` is not `HOST[:PORT][/NAMESPACE]`, or None.

    Args:
      flag: str, how the user gave it (`--image_registry`), for the message.
      value: str.
      need_namespace: bool, a namespace is required (staging).

    Returns:
      str or None.
    """
    example = "registry.example.com:5000/rocm-pytorch"
    if value != value.strip():
        return "%s=%r: blanks around the registry; write %r (no blanks)" % (flag, value, value.strip())
    rest = value
    if "://" in rest:
        scheme, _, rest = rest.rpartition("://")
        if scheme.lower() not in ["http", "https"]:
            return "%s=%s: unknown scheme %r; use https:// or none" % (flag, value, scheme)
    rest = rest.rstrip("/")
    if not rest:
        return "%s=: empty; give HOST[:PORT]/NAMESPACE, e.g. %s" % (flag, example)
    if "@" in rest:
        return ("%s=...: credentials in a registry string end up in logs; remove them" +
                " and log in with `docker login HOST`") % flag
    host, _, path = rest.partition("/")
    problem = _host_error(host)
    if not problem and need_namespace and not path:
        problem = "no namespace"
    if not problem and path:
        for component in path.split("/"):
            problem = _component_error(component)
            if problem:
                break
    if problem:
        return "%s=%s: %s; give HOST[:PORT]/NAMESPACE, e.g. %s" % (flag, value, problem, example)
    if value.endswith("/"):
        # refused, not dropped: every ref is <registry>/<repository>:<tag>
        return "%s=%s: ends with '/'; write %s=%s" % (flag, value, flag, value.rstrip("/"))
    return None

# Docker Hub: the registry of a reference that names none, for `--define
# UPSTREAM_IMAGE=` only (tools/oci/reference.py: DOCKER_HUB).
DOCKER_HUB = "docker.io"

_WORD = _LOWER + _LOWER.upper() + _DIGITS + "_"
_HEX_LENGTH = {"sha256": 64, "sha512": 128}

def _tag_error(tag):
    # [\w][\w.-]{0,127}
    if not tag or len(tag) > 128 or tag[0] not in _WORD or not all([c in _WORD + ".-" for c in tag.elems()]):
        return "bad tag %r (word characters, . and -, at most 128)" % tag
    return None

def _digest_error(digest):
    # ALGORITHM:ENCODED; algorithm [a-z0-9]+([.+_-][a-z0-9]+)*, encoded [a-zA-Z0-9=_-]+
    algorithm, colon, encoded = digest.partition(":")
    bad = "bad digest %r (want ALGORITHM:HEX, e.g. sha256:<64 hex digits>)" % digest
    if not colon or not algorithm or not encoded:
        return bad
    if algorithm[0] in ".+_-" or algorithm[-1] in ".+_-" or not all([c in _LOWER + _DIGITS + ".+_-" for c in algorithm.elems()]):
        return bad
    for i in range(len(algorithm) - 1):
        if algorithm[i] in ".+_-" and algorithm[i + 1] in ".+_-":
            return bad
    if not all([c in _LOWER + _LOWER.upper() + _DIGITS + "=_-" for c in encoded.elems()]):
        return bad
    length = _HEX_LENGTH.get(algorithm)
    if length and (len(encoded) != length or not all([c in _DIGITS + "abcdef" for c in encoded.elems()])):
        return "bad digest %r (%s takes %d lower-case hex digits)" % (digest, algorithm, length)
    return None

def _looks_like_registry(component):
    return "." in component or ":" in component or component == "localhost" or component.startswith("[")

def parse_reference(text, default_registry = None):
    """An image reference, `[SCHEME://]REGISTRY/REPOSITORY[:TAG][@DIGEST]`, parsed.

    tools/oci/reference.py's `Reference.parse`, for analysis time; the table in
    tests/oci/references.bzl holds both to the same answers. Without
    `default_registry` the first component is the registry and a reference of
    one component is refused; with it, Docker's rule decides (`.`, `:`,
    `localhost` or `[` in the first component: a registry; else
    `default_registry`, and Docker Hub's `library/` for one component).

    Args:
      text: str.
      default_registry: str or None.

    Returns:
      struct(registry, repository, tag, digest, error): error is None or what is
      wrong; the other fields are None when it is not.
    """

    def refused(problem):
        return struct(registry = None, repository = None, tag = None, digest = None, error = "image reference %r: %s" % (text, problem))

    if not text:
        return refused("empty")
    for c in text.elems():
        if c in " \t\n\r\f\v":
            return refused("blanks in it")
    scheme, sep, rest = text.rpartition("://")
    if sep and scheme.lower() not in ["http", "https"]:
        return refused("unknown scheme %r" % scheme)
    if sep and not rest.partition("/")[0]:
        return refused("a scheme but no registry")
    name, at, digest = rest.partition("@")
    if at and "/" in digest:
        return struct(registry = None, repository = None, tag = None, digest = None, error = "image reference: credentials in a reference end up in logs")
    head, _, last = name.rpartition("/")
    path, colon, tag = last.partition(":")
    host, slash, first = head.partition("/")
    repository = "%s/%s" % (first, path) if slash else path
    if default_registry != None and not sep and not _looks_like_registry(host):
        host = ""
        repository = "%s/%s" % (head, path) if head else path
    if not host:
        if sep:
            return refused("no repository")
        if default_registry == None:
            return refused("no registry")
        host = default_registry
        if host == DOCKER_HUB and "/" not in repository:
            repository = "library/" + repository
    if host.startswith("[") and "]" in host:
        problem = _host_error(host)
    elif "/" in host or "@" in host:
        problem = "bad registry %r" % host
    else:
        problem = _host_error(host)
    if problem:
        return refused(problem)
    if not repository:
        return refused("no repository")
    for component in repository.split("/"):
        problem = _component_error(component)
        if problem:
            return refused(problem.replace("namespace", "repository"))
    if len(host) + 1 + len(repository) > 255:
        return refused("name longer than 255 characters")
    if colon:
        problem = _tag_error(tag)
        if problem:
            return refused(problem)
    if at:
        problem = _digest_error(digest)
        if problem:
            return refused(problem)
    return struct(
        registry = (scheme.lower() + "://" + host) if sep else host,
        repository = repository,
        tag = tag if colon else None,
        digest = digest if at else None,
        error = None,
    )
