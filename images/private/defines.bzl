"""Analysis-time checks of `--define` values: misspelled keys and registry strings.

`--define` is free-form: Bazel accepts any key and the rules read only the
ones they know, so `--define PYTORCH_VERION=2.16.0` would silently build and
push the 2.15.0 images. These checks fail analysis instead, before any image
is built, with the key or value at fault and the fix. tools/tagconf checks
the same registry grammar again when it renders the specs.
"""

# Make variables Bazel itself puts in ctx.var.
_BAZEL_VARS = ["BINDIR", "COMPILATION_MODE", "GENDIR", "TARGET_CPU"]

# The lower-case `--define` keys the image rules read.
LOWERCASE_KEYS = ["arch", "attest", "cache_registry", "registry", "sign", "staging"]

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

def _nearest(key, known):
    best = None
    for candidate in known:
        d = edit_distance(key.lower(), candidate.lower())
        if d <= max(2, len(candidate) // 4) and (best == None or d < best[0]):
            best = (d, candidate)
    return best[1] if best else None

def unknown_define_error(var, value_keys):
    """The error for a `--define` key nobody reads, or None.

    An upper-case key must be a catalogue `[defaults]` key (they are upper
    case); a lower-case key close to one the rules read (`regsitry`) is a
    typo. Other lower-case keys may belong to other rules and pass.

    Args:
      var: dict, the make variables (`ctx.var`).
      value_keys: list[str], the catalogue's [defaults] keys.

    Returns:
      str or None.
    """
    for key in sorted(var.keys()):
        if key in _BAZEL_VARS or key in value_keys or key in LOWERCASE_KEYS:
            continue
        if key.upper() == key and key.lower() != key:
            hint = _nearest(key, value_keys)
            return "--define %s=%s: %s is not a catalogue key; %s(keys: %s)" % (
                key,
                var[key],
                key,
                "did you mean %s? " % hint if hint else "",
                ", ".join(value_keys),
            )
        hint = _nearest(key, LOWERCASE_KEYS)
        if hint:
            return "--define %s=%s: unknown key %s; did you mean %s?" % (key, var[key], key, hint)
    return None

def _host_error(host):
    if host.startswith("[") and "]" in host:
        return None  # IPv6 literal: left to tagconf
    name, _, port = host.partition(":")
    if port and not all([c in _DIGITS for c in port.elems()]):
        return "bad port %r" % port
    for label in name.split("."):
        if not label or label[0] == "-" or label[-1] == "-":
            return "bad host %r" % host
        if not all([c in _HOST_CHARS for c in label.elems()]):
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
    rest = value
    if "://" in rest:
        scheme, _, rest = rest.partition("://")
        if scheme not in ["http", "https"]:
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
    return None

def check_defines(var, value_keys):
    """Fail analysis on a misspelled `--define` key or a bad registry string.

    Args:
      var: dict, the make variables (`ctx.var`).
      value_keys: list[str], the catalogue's [defaults] keys.
    """
    error = unknown_define_error(var, value_keys)
    if error:
        fail(error)
    if "registry" in var:
        error = registry_error("registry", var["registry"])
        if error:
            fail(error)
    if var.get("cache_registry"):  # empty: no cache
        error = registry_error("cache_registry", var["cache_registry"])
        if error:
            fail(error)
    if var.get("staging", "embedded") != "embedded":
        error = registry_error("staging", var["staging"], need_namespace = True)
        if error:
            fail(error)
