"""The arch setting, the transitions that set it, and the one reader of --define arch."""

load("@bazel_skylib//rules:common_settings.bzl", "BuildSettingInfo")

ARCH_SETTING = str(Label("//images:arch"))

# Value of the arch setting for arch-free targets (pytorch-src, triton-wheel):
# every arch variant that depends on them lands in this one configuration,
# so they are built once and shared.
NOARCH = "noarch"

def _arch_transition_impl(settings, attr):
    if attr.arch_free:
        return {ARCH_SETTING: NOARCH}
    if attr.arch:
        return {ARCH_SETTING: attr.arch}
    return {ARCH_SETTING: settings[ARCH_SETTING]}

arch_transition = transition(
    implementation = _arch_transition_impl,
    inputs = [ARCH_SETTING],
    outputs = [ARCH_SETTING],
)

def current_arch(ctx):
    """The arch of this configuration (from the `_arch` setting attr), or None if arch-free.

    Args:
      ctx: rule context with an `_arch` attr pointing at ARCH_SETTING.

    Returns:
      str or None.
    """
    arch = ctx.attr._arch[BuildSettingInfo].value
    return None if arch == NOARCH else arch

def _family_hint(name, families):
    # `gfx110X` names the families `gfx110X-...`; `gfx110x-all` the one it miscases
    close = [f for f in families if f.lower() == name.lower() or f.lower().startswith(name.lower() + "-")]
    if not close:
        return ""
    return "did you mean %s? " % " or ".join(["%r" % f for f in close])

def parse_arch_request(spec, known, families = {}):
    """Parse an `--define arch=` value (`A[,B...]` or `all`) against the known archs and families.

    A family name stands anywhere an arch does (`gfx110X-all`,
    `gfx950,gfx120X-all`): it is one more variant, built as one image for all
    its members. `all` is every single arch, no family.

    Args:
      spec: str, e.g. "gfx950,gfx1201".
      known: list[str], the catalogue's archs.
      families: dict[str, list[str]], the catalogue's families and their members.

    Returns:
      struct(archs = list[str] in the requested order without duplicates
             (archs and family names), error = str or None).
    """
    if spec.strip() == "all":
        return struct(archs = list(known), error = None)
    archs = []
    for arch in spec.split(","):
        arch = arch.strip()
        if arch not in known and arch not in families:
            if not families:
                error = "--define arch=%s: unknown arch %r; known: %s (or all)" % (spec, arch, ", ".join(known))
            else:
                error = "--define arch=%s: unknown arch or family %r; %sknown archs: %s (or all); families: %s" % (
                    spec,
                    arch,
                    _family_hint(arch, families),
                    ", ".join(known),
                    ", ".join(["%s (%s)" % (f, "+".join(m)) for f, m in families.items()]),
                )
            return struct(archs = [], error = error)
        if arch not in archs:
            archs.append(arch)
    return struct(archs = archs, error = None)

def requested_archs(ctx, known, default, families = {}):
    """The archs `--define arch=A[,B...]` asks for, validated; `default` without it.

    This is the only reader of `--define arch`: transitions cannot read
    `--define` in Bazel 7, so group, set and push rules call this at analysis.

    Args:
      ctx: any rule context.
      known: list[str], the catalogue's archs.
      default: str, the catalogue's default arch.
      families: dict[str, list[str]], the catalogue's arch families.

    Returns:
      struct(archs, error) as parse_arch_request: the caller reports an
      error with defines.bzl's analysis_error (one line, no traceback).
    """
    return parse_arch_request(ctx.var.get("arch", default), known, families)

def _noarch_transition_impl(_settings, _attr):
    return {ARCH_SETTING: NOARCH}

# Incoming transition of images no arch shapes (stand-in upstreams): every
# arch variant that depends on one shares the noarch configuration, so it is
# built once, whatever the archs of the build.
noarch_transition = transition(
    implementation = _noarch_transition_impl,
    inputs = [],
    outputs = [ARCH_SETTING],
)
