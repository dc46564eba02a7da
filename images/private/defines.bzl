"""Analysis-time checks of `--define`: the arch and the catalogue's values.

`--define` is free-form: Bazel accepts any key and the rules read only the
ones they know, so `--define PYTORCH_VERION=2.16.0` would silently build and
push the 2.15.0 images. What is left on `--define` is an open map: `arch`
and the catalogue's upper-case keys (build args). These checks fail analysis
on any other key, before any image is built, with the key at fault and the
fix. Every other knob is a typed build setting (images/settings,
images/private/settings.bzl), which Bazel checks; its old `--define`
spelling is refused naming the flag that replaced it.
"""

load(":errors.bzl", "nearest_names")
load(":reference.bzl", "DOCKER_HUB", "parse_reference")

# Make variables Bazel itself puts in ctx.var.
_BAZEL_VARS = ["BINDIR", "COMPILATION_MODE", "GENDIR", "TARGET_CPU"]

# The one lower-case `--define` key the project reads.
LOWERCASE_KEYS = ["arch"]

# The `--define` keys that became build settings: key -> the flag's short name
# (.bazelrc's --flag_alias). The switches among them take --NAME / --noNAME.
MOVED = {
    "attest": "attest",
    "builders": "builders",
    "cache_registry": "cache_registry",
    "heavy_dockerfile": "heavy_dockerfile",
    "registry": "image_registry",
    "reproducible": "reproducible",
    "sign": "sign",
    "staging": "staging",
    "upstream": "upstream",
}
_SWITCHES = ["attest", "reproducible", "sign"]

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

def _nearest(key, known):
    close = nearest_names(key, known)
    return close[0] if close else None

def moved_define_error(key, value):
    """The error for `--define KEY=VALUE` of a knob that is a build setting now.

    Args:
      key: str, one of MOVED.
      value: str.

    Returns:
      str: names the flag to write instead.
    """
    flag = MOVED[key]
    if key in _SWITCHES:
        instead = "--%s" % flag if value == "1" else "--no%s" % flag if value == "0" else "--%s or --no%s" % (flag, flag)
    else:
        instead = "--%s=%s" % (flag, value)
    return "--define %s=%s: %s is a build setting now; write %s" % (key, value, key, instead)

def unknown_define_error(var, value_keys):
    """The error for a `--define` key nobody reads, or None.

    An upper-case key must be a catalogue `[defaults]` key (they are upper
    case) or one of OPTIONAL_ARGS; a lower-case key must be `arch` (a close
    one, `acrh`, is named as the likely typo); a MOVED key names its flag.

    Args:
      var: dict, the make variables (`ctx.var`).
      value_keys: list[str], the catalogue's [defaults] keys.

    Returns:
      str or None.
    """
    for key in sorted(var.keys()):
        if key in _BAZEL_VARS or key in value_keys or key in LOWERCASE_KEYS or key in OPTIONAL_ARGS:
            continue
        if key in MOVED:
            return moved_define_error(key, var[key])
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
        hint = _nearest(key, LOWERCASE_KEYS + MOVED.keys())
        if hint in MOVED:
            hint = "--%s" % MOVED[hint]
        return "--define %s=%s: unknown key %s; %sknown keys: %s, the catalogue's upper-case keys (%s) and optional build args; the other settings are flags (%s)%s" % (
            key,
            var[key],
            key,
            "did you mean %s? " % hint if hint else "",
            ", ".join(LOWERCASE_KEYS),
            ", ".join(value_keys),
            ", ".join(["--" + MOVED[k] for k in sorted(MOVED)]),
            _GROUP_HINT if key in ["group", "groups"] else "",
        )
    return None

# `--define group=` is a guess at how to pick a group: groups are targets.
_GROUP_HINT = "; a group is pushed by its own target, e.g. bazel run //images:push_default (no --define)"

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

def defines_error(var, value_keys):
    """The first problem of the `--define`s: an unknown or moved key, a bad UPSTREAM_IMAGE.

    `--define arch=` is checked by define_check (parse_arch_request).

    Args:
      var: dict, the make variables (`ctx.var`).
      value_keys: list[str], the catalogue's [defaults] keys.

    Returns:
      str (one line naming the input at fault and the fix) or None.
    """
    error = unknown_define_error(var, value_keys)
    if error:
        return error
    if "UPSTREAM_IMAGE" in var:
        return upstream_image_error(var["UPSTREAM_IMAGE"])
    return None
