"""The build's typed settings (images/settings): the rules that declare them and how rules read them.

Each knob of a build that is not the arch or a catalogue value is a build
setting of images/settings, with a short name in .bazelrc (`--flag_alias`):
`--sign`, `--attest`, `--reproducible`, `--image_registry`, `--cache_registry`,
`--staging`, `--builders`, `--upstream`. Bazel itself refuses an unknown flag
and a switch that is not a boolean; the rules here refuse a closed value
outside its list, a registry string outside the grammar and a bad builders
map, in one line naming the flag and the fix. Every rule that reads them
takes SETTINGS_ATTRS and calls settings_of(ctx).
"""

load("@bazel_skylib//rules:common_settings.bzl", "BuildSettingInfo")
load(":errors.bzl", "analysis_error", "nearest_names")
load(":reference.bzl", "registry_error")

def _answer(ctx, error, value):
    """The setting's value, or its one-line analysis error naming the flag."""
    if error:
        return analysis_error(ctx, error, attribute = "--%s setting" % ctx.attr.flag)
    return [BuildSettingInfo(value = value)]

def _string_flag(implementation, doc, attrs):
    """A string build setting with a short name (`flag`: its --flag_alias, for messages)."""
    return rule(
        implementation = implementation,
        build_setting = config.string(flag = True),
        doc = doc,
        attrs = attrs | {
            "flag": attr.string(doc = "The setting's short name (its --flag_alias), for messages.", mandatory = True),
        },
    )

def _choice_impl(ctx):
    value = ctx.build_setting_value
    error = None
    if value not in ctx.attr.values:
        close = nearest_names(value, ctx.attr.values)
        error = "--%s=%s: unknown value; %sknown: %s" % (
            ctx.attr.flag,
            value,
            "did you mean %s? " % close[0] if close else "",
            ", ".join([v or '"" (%s)' % ctx.attr.empty for v in ctx.attr.values]),
        )
    return _answer(ctx, error, value)

choice_flag = _string_flag(
    _choice_impl,
    "A string setting with a closed list of values; another fails analysis in one line.",
    {
        "empty": attr.string(doc = "What the empty value means, when `values` has it."),
        "values": attr.string_list(doc = "The values it takes.", mandatory = True),
    },
)

def _registry_impl(ctx):
    value = ctx.build_setting_value
    error = None
    if value not in ctx.attr.special:
        error = registry_error("--" + ctx.attr.flag, value, need_namespace = ctx.attr.need_namespace)
    return _answer(ctx, error, value)

registry_flag = _string_flag(
    _registry_impl,
    "A registry string setting, `HOST[:PORT][/NAMESPACE]` (tools/oci/reference.py's grammar).",
    {
        "need_namespace": attr.bool(doc = "A namespace is required (staging)."),
        "special": attr.string_list(doc = "Values that are no registry string (`\"\"`: unset; `embedded`)."),
    },
)

# `--builders` keys that are not archs: the default for archs not named, and
# the arch-free targets.
ANY_ARCH = "*"
NOARCH_KEY = "noarch"

# Characters of a buildx builder or docker context name (docker's context
# name rule, `^[a-zA-Z0-9][a-zA-Z0-9_.+-]+$`, one character shorter at least).
_NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-"

def parse_builders(value, known_archs):
    """Parse `--builders=ARCH=BUILDER[,ARCH=BUILDER...]`.

    ARCH is a catalogue arch or family, `*` (every arch not named, and the
    arch-free targets unless `noarch` is named) or `noarch` (the arch-free
    targets); BUILDER is a buildx builder or docker context name, resolved on
    the Bazel host by tools/imagebuild (an unknown one fails the image build
    listing the known ones: names are machine-local, analysis cannot see them).

    Args:
      value: str, the setting's value; "" is the local engine for every arch.
      known_archs: list[str], the catalogue's archs and families.

    Returns:
      struct(builders = dict[str, str] {ARCH: BUILDER}, error = str or None).
    """
    example = "e.g. gfx1201=host-b,*=host-a"
    where = "--builders=%s" % value
    builders = {}
    if not value:
        return struct(builders = {}, error = None)
    for item in value.split(","):
        arch, sep, name = item.strip().partition("=")
        arch = arch.strip()
        name = name.strip()
        if not sep or not arch or not name:
            return struct(builders = {}, error = "%s: %r is not ARCH=BUILDER; %s" % (where, item, example))
        if arch not in [ANY_ARCH, NOARCH_KEY] and arch not in known_archs:
            close = nearest_names(arch, known_archs + [NOARCH_KEY])
            return struct(builders = {}, error = "%s: unknown arch %r; %sknown: %s, %s (every other arch), %s (arch-free targets)" % (
                where,
                arch,
                "did you mean %s? " % close[0] if close else "",
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

def _builders_impl(ctx):
    parsed = parse_builders(ctx.build_setting_value, ctx.attr.archs)
    return _answer(ctx, parsed.error, parsed.builders)

builders_flag = _string_flag(
    _builders_impl,
    "Which buildx builder builds which arch: `ARCH=BUILDER[,...]`; its value is the parsed dict.",
    {"archs": attr.string_list(doc = "The catalogue's archs and families.", mandatory = True)},
)

def builder_for(builders, arch):
    """The builder of `arch` in a `--builders` map; "" for the local engine.

    Args:
      builders: dict[str, str], the parsed map (settings_of(ctx).builders).
      arch: str, or None for an arch-free target.

    Returns:
      str: a buildx builder or docker context name, or "" (the local engine).
    """
    return builders.get(arch or NOARCH_KEY, builders.get(ANY_ARCH, ""))

# The settings, by the field of settings_of(); images/settings/BUILD.bazel
# declares them, .bazelrc aliases them.
_SETTINGS = ["attest", "builders", "cache_registry", "registry", "reproducible", "sign", "staging", "upstream"]

SETTINGS_ATTRS = {
    "_setting_" + name: attr.label(default = Label("//images/settings:" + name))
    for name in _SETTINGS
}

def settings_of(ctx):
    """The build's settings, as a rule with SETTINGS_ATTRS reads them.

    Args:
      ctx: rule context.

    Returns:
      struct: sign, attest, reproducible (bool); registry, cache_registry
      (str, "" when unset); staging (str, `embedded` or a registry);
      builders (dict[str, str]); upstream (str, "" or a stand-in).
    """
    return struct(**{
        name: getattr(ctx.attr, "_setting_" + name)[BuildSettingInfo].value
        for name in _SETTINGS
    })
