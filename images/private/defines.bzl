"""Analysis-time checks of `--define` values: misspelled keys, registry strings, builders.

`--define` is free-form: Bazel accepts any key and the rules read only the
ones they know, so `--define PYTORCH_VERION=2.16.0` would silently build and
push the 2.15.0 images. These checks fail analysis instead, before any image
is built, with the key or value at fault and the fix. The registry grammar
is tools/oci/reference.py's, which the tools check again; the table in
tests/oci/registry_strings.bzl holds both to the same answers.
"""

# Make variables Bazel itself puts in ctx.var.
_BAZEL_VARS = ["BINDIR", "COMPILATION_MODE", "GENDIR", "TARGET_CPU"]

# The lower-case `--define` keys the project reads: the image rules', and
# bench/heavy's `heavy_dockerfile` (a config_setting there). Any other
# lower-case key fails analysis: Bazel would otherwise ignore it silently.
LOWERCASE_KEYS = ["arch", "attest", "builders", "cache_registry", "heavy_dockerfile", "registry", "reproducible", "sign", "staging", "upstream"]

# The keys among them whose values are a closed list (the switches are FLAG_KEYS).
KEY_VALUES = {"heavy_dockerfile": ["family", "overlap"]}

# The lower-case keys that are switches: `--define KEY=1` or `KEY=0` (absent: 0).
FLAG_KEYS = ["attest", "reproducible", "sign"]

# The build args a Dockerfile of docker/ declares beyond the catalogue's keys
# and PYTORCH_ROCM_ARCH: //images passes them only when `--define NAME=VALUE`
# gives one (e.g. `--define UCX_REF=v1.20.0`), to the images whose stage reads
# it; otherwise the Dockerfile's default holds. They shape the image but not
# its tags. tests/dockerfiles/family.py (OPTIONAL_ARGS) holds their defaults,
# and outline_test the Dockerfiles to exactly this list.
OPTIONAL_ARGS = [
    "AITER_REF",
    "FLASH_ATTN_REF",
    "SCCACHE_VERSION",
    "TRITON_KERNELS_REF",
    "UCX_REF",
]

# `--define upstream=` values: the stand-in upstreams a build may use instead of
# pulling UPSTREAM_IMAGE (--config=rehearsal sets `rehearsal`).
UPSTREAMS = {
    "rehearsal": "//images/rehearsal:upstream",
    "rehearsal-rebuild": "//images/rehearsal:upstream-rebuild",
}

_DIGITS = "0123456789"
_LOWER = "abcdefghijklmnopqrstuvwxyz"
_HOST_CHARS = _LOWER + _LOWER.upper() + _DIGITS + "-"

def edit_distance(a, b):
    """Levenshtein distance of two strings.

    Args:
      a: str.
      b: str.

    Returns:
      int.
    """
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
        previous = current
    return previous[len(b)]

def nearest_names(name, known):
    """The names of `known` closest to `name`: the likely typos it is.

    A name that differs only in case comes first and alone (`GFX950` is
    `gfx950`); else the names at the least edit distance (case ignored), if
    that is at most 2 or a quarter of the name, all of them when several are
    as close (`gfx1202`: gfx1102, gfx1200 and gfx1201), in `known`'s order.

    Args:
      name: str, the unknown name.
      known: list[str].

    Returns:
      list[str], empty when none is close.
    """
    same = [k for k in known if k.lower() == name.lower()]
    if same:
        return same[:1]
    best = None
    close = []
    for candidate in known:
        d = edit_distance(name.lower(), candidate.lower())
        if d > max(2, len(candidate) // 4):
            continue
        if best == None or d < best:
            best = d
            close = [candidate]
        elif d == best:
            close.append(candidate)
    return close

def _nearest(key, known):
    close = nearest_names(key, known)
    return close[0] if close else None

def unknown_define_error(var, value_keys):
    """The error for a `--define` key nobody reads, or None.

    An upper-case key must be a catalogue `[defaults]` key (they are upper
    case) or one of OPTIONAL_ARGS; a lower-case key must be one of
    LOWERCASE_KEYS (a close one, `regsitry`, is named as the likely typo).

    Args:
      var: dict, the make variables (`ctx.var`).
      value_keys: list[str], the catalogue's [defaults] keys.

    Returns:
      str or None.
    """
    for key in sorted(var.keys()):
        if key in _BAZEL_VARS or key in value_keys or key in LOWERCASE_KEYS or key in OPTIONAL_ARGS:
            continue
        if key.upper() == key and key.lower() != key:
            hint = _nearest(key, value_keys + OPTIONAL_ARGS)
            return "--define %s=%s: %s is neither a catalogue key nor an optional build arg; %s(keys: %s; optional build args: %s)" % (
                key,
                var[key],
                key,
                "did you mean %s? " % hint if hint else "",
                ", ".join(value_keys),
                ", ".join(OPTIONAL_ARGS),
            )
        hint = _nearest(key, LOWERCASE_KEYS)
        return "--define %s=%s: unknown key %s; %sknown keys: %s, the catalogue's upper-case keys (%s) and optional build args%s" % (
            key,
            var[key],
            key,
            "did you mean %s? " % hint if hint else "",
            ", ".join(LOWERCASE_KEYS),
            ", ".join(value_keys),
            _GROUP_HINT if key in ["group", "groups"] else "",
        )
    return None

# `--define group=` is a guess at how to pick a group: groups are targets.
_GROUP_HINT = "; a group is pushed by its own target, e.g. bazel run //images:push_default (no --define)"

def value_error(var):
    """The error for a KEY_VALUES key given a value outside its list, or None.

    Args:
      var: dict, the make variables (`ctx.var`).

    Returns:
      str or None.
    """
    for key, values in sorted(KEY_VALUES.items()):
        if key in var and var[key] not in values:
            return "--define %s=%s: unknown value; known: %s (or leave %s out)" % (key, var[key], ", ".join(values), key)
    return None

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

def registry_error(key, value, need_namespace = False):
    """Why `--define key=value` is not `HOST[:PORT][/NAMESPACE]`, or None.

    Args:
      key: str, the --define key (for the message).
      value: str.
      need_namespace: bool, a namespace is required (staging).

    Returns:
      str or None.
    """
    example = "registry.example.com:5000/rocm-pytorch"
    if value != value.strip():
        return "--define %s=%r: blanks around the registry; write %r (no blanks)" % (key, value, value.strip())
    rest = value
    if "://" in rest:
        scheme, _, rest = rest.rpartition("://")
        if scheme.lower() not in ["http", "https"]:
            return "--define %s=%s: unknown scheme %r; use https:// or none" % (key, value, scheme)
    rest = rest.rstrip("/")
    if not rest:
        return "--define %s=: empty; give HOST[:PORT]/NAMESPACE, e.g. %s" % (key, example)
    if "@" in rest:
        return ("--define %s=...: credentials in a registry string end up in logs; remove them" +
                " and log in with `docker login HOST`") % key
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
        return "--define %s=%s: %s; give HOST[:PORT]/NAMESPACE, e.g. %s" % (key, value, problem, example)
    if value.endswith("/"):
        # refused, not dropped: every ref is <registry>/<repository>:<tag>
        return "--define %s=%s: ends with '/'; write %s=%s" % (key, value, key, value.rstrip("/"))
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

def upstream_image_error(value):
    """Why `--define UPSTREAM_IMAGE=value` is not an image repository, or None.

    Docker Hub's short names are taken (`rocm/dev-ubuntu-26.04`); a tag or
    digest is refused: the tag is ROCM_VERSION.

    Args:
      value: str.

    Returns:
      str or None.
    """
    parsed = parse_reference(value, DOCKER_HUB)
    if parsed.error:
        problem = parsed.error
    elif parsed.tag != None or parsed.digest != None:
        problem = "image reference %r: a tag or digest (its tag is ROCM_VERSION)" % value
    else:
        return None
    return "--define UPSTREAM_IMAGE=%s: %s; give [REGISTRY/]REPOSITORY, e.g. mirror.example.internal/rocm/dev-ubuntu-26.04" % (value, problem)

# `--define builders=` keys that are not archs: the default for archs not
# named, and the arch-free targets.
ANY_ARCH = "*"
NOARCH_KEY = "noarch"

# Characters of a buildx builder or docker context name (docker's context
# name rule, `^[a-zA-Z0-9][a-zA-Z0-9_.+-]+$`, one character shorter at least).
_NAME_CHARS = _LOWER + _LOWER.upper() + _DIGITS + "_.+-"

def parse_builders(value, known_archs = None):
    """Parse `--define builders=ARCH=BUILDER[,ARCH=BUILDER...]`.

    ARCH is a catalogue arch, `*` (every arch not named, and the arch-free
    targets unless `noarch` is named) or `noarch` (the arch-free targets);
    BUILDER is a buildx builder or docker context name, resolved on the
    Bazel host by tools/imagebuild (an unknown one fails the image build
    listing the known ones: names are machine-local, analysis cannot see
    them).

    Args:
      value: str, the `--define builders=` value.
      known_archs: list[str] or None, the catalogue's archs; None: any arch
        name is accepted (callers that do not know the catalogue).

    Returns:
      struct(builders = dict[str, str] {ARCH: BUILDER}, error = str or None).
    """
    example = "e.g. gfx1201=host-b,*=host-a"
    where = "--define builders=%s" % value
    builders = {}
    if not value.strip():
        return struct(builders = {}, error = "%s: empty; give ARCH=BUILDER[,ARCH=BUILDER...], %s" % (where, example))
    for item in value.split(","):
        arch, sep, name = item.strip().partition("=")
        arch = arch.strip()
        name = name.strip()
        if not sep or not arch or not name:
            return struct(builders = {}, error = "%s: %r is not ARCH=BUILDER; %s" % (where, item, example))
        if arch not in [ANY_ARCH, NOARCH_KEY] and known_archs != None and arch not in known_archs:
            hint = _nearest(arch, known_archs + [NOARCH_KEY])
            return struct(builders = {}, error = "%s: unknown arch %r; %sknown: %s, %s (every other arch), %s (arch-free targets)" % (
                where,
                arch,
                "did you mean %s? " % hint if hint else "",
                ", ".join(known_archs),
                ANY_ARCH,
                NOARCH_KEY,
            ))
        if arch in builders:
            return struct(builders = {}, error = "%s: %s is given twice (%s and %s)" % (where, arch, builders[arch], name))
        if name[0] in "_.+-" or not all([c in _NAME_CHARS for c in name.elems()]):
            return struct(builders = {}, error = "%s: %r is not a builder or docker context name (letters, digits, _.+-)" % (where, name))
        builders[arch] = name
    return struct(builders = builders, error = None)

def builder_for(var, arch):
    """The builder `--define builders=` names for `arch`; "" for the local engine.

    Args:
      var: dict, the make variables (`ctx.var`).
      arch: str, or None for an arch-free target.

    Returns:
      str: a buildx builder or docker context name, or "" (the local engine).
    """
    if "builders" not in var:
        return ""
    parsed = parse_builders(var["builders"])
    if parsed.error:
        fail(parsed.error)
    key = arch or NOARCH_KEY
    return parsed.builders.get(key, parsed.builders.get(ANY_ARCH, ""))

def flag_error(var, key):
    """The error for a `--define KEY=` switch that is neither 1 nor 0, or None.

    Args:
      var: dict, the make variables (`ctx.var`).
      key: str, one of FLAG_KEYS.

    Returns:
      str or None.
    """
    value = var.get(key, "0")
    if value in ["0", "1"]:
        return None
    return "--define %s=%s: want %s=1 or %s=0" % (key, value, key, key)

def flag_define(var, key):
    """Whether the switch `--define KEY=1` is on; any value but 1 or 0 fails analysis.

    Args:
      var: dict, the make variables (`ctx.var`).
      key: str, one of FLAG_KEYS.

    Returns:
      bool.
    """
    error = flag_error(var, key)
    if error:
        fail(error)
    return var.get(key, "0") == "1"

def upstream_error(value):
    """The error for a `--define upstream=` value no stand-in has, or None.

    Args:
      value: str.

    Returns:
      str or None.
    """
    if value in UPSTREAMS:
        return None
    return "--define upstream=%s: unknown stand-in upstream; known: %s (--config=rehearsal sets the first), or leave it out to pull UPSTREAM_IMAGE:ROCM_VERSION" % (
        value,
        ", ".join(["%s (%s)" % (k, v) for k, v in sorted(UPSTREAMS.items())]),
    )

def defines_error(var, value_keys, archs = None):
    """The first problem of the `--define`s: an unknown key, a bad value, registry string or builders map.

    Args:
      var: dict, the make variables (`ctx.var`).
      value_keys: list[str], the catalogue's [defaults] keys.
      archs: list[str] or None, the catalogue's archs (checks `--define builders=`).

    Returns:
      str (one line naming the input at fault and the fix) or None.
    """
    error = unknown_define_error(var, value_keys) or value_error(var)
    if error:
        return error
    if "builders" in var:
        error = parse_builders(var["builders"], archs).error
        if error:
            return error
    if "registry" in var:
        error = registry_error("registry", var["registry"])
        if error:
            return error
    if var.get("cache_registry"):  # empty: no cache
        error = registry_error("cache_registry", var["cache_registry"])
        if error:
            return error
    if var.get("staging", "embedded") != "embedded":
        error = registry_error("staging", var["staging"], need_namespace = True)
        if error:
            return error
    if "UPSTREAM_IMAGE" in var:
        error = upstream_image_error(var["UPSTREAM_IMAGE"])
        if error:
            return error
    if "upstream" in var:
        error = upstream_error(var["upstream"])
        if error:
            return error
    for key in FLAG_KEYS:
        error = flag_error(var, key)
        if error:
            return error
    return None

def analysis_error(ctx, message, subject = None, attribute = "--define"):
    """Fails analysis of `ctx`'s target with `message` on one line, without a Starlark traceback.

    `fail()` in a rule implementation prints `Traceback (most recent call
    last):` and two lines per Starlark frame before the message (7 lines for
    a check two calls deep). An attribute error prints one line, and
    `ctx.expand_make_variables` reports an undefined variable as an error of
    the attribute it is given by name, so Bazel 7.7.1 prints

        ERROR: <BUILD file>:<line>:<col>: in <message> -- from the --define attribute of <rule> rule <label>: $(<subject>) not defined

    The target fails analysis as with `fail()` (its dependents are not
    analysed; `analysistest` sees the message in AnalysisFailureInfo). The
    caller returns at once with the value returned here, which Bazel
    discards. .ci/e2e_checks.py (`_bad_defines`) holds the output to this
    shape.

    Args:
      ctx: rule context.
      message: str, one line: the input at fault and the fix.
      subject: str or None, what is not defined (`group=nosuch`); None: the
        `KEY=VALUE` of a message that starts `--define KEY=VALUE: `.
      attribute: str, what the message is about, for the line's tail.

    Returns:
      list: no providers.
    """
    if subject == None:
        subject = message.partition(": ")[0]
        if subject.startswith("--define "):
            subject = subject[len("--define "):]

    # A space or `)` would end the variable's name, a `$` start another.
    name = "".join(["_" if c in " ()$" else c for c in subject.elems()])
    ctx.expand_make_variables("%s -- from the %s" % (message, attribute), "$(%s)" % name, {})
    return []
