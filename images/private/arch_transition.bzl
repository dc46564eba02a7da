"""The arch setting, the transitions that set it, and what --define arch= asks for."""

load("@bazel_skylib//rules:common_settings.bzl", "BuildSettingInfo")
load(":errors.bzl", "nearest_names")

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

# Where the archs come from, and the command that brings targets.bzl up to them.
CATALOG = "images/catalog.toml"
TARGETS_BZL = "images/targets.bzl"
UPDATE_TARGETS = "bazel run //images:update_targets"

def close_archs(name, known, families = {}):
    """The archs or families an unknown `--define arch=` name most likely means.

    The one that differs only in case (`GFX950`, `gfx110x-all`); else the
    families of a stem (`gfx110X`: `gfx110X-dgpu`, `gfx110X-all`); else the
    nearest by edit distance (errors.bzl's nearest_names: `gfx951` is
    `gfx950`), all of them when several are as near.

    Args:
      name: str, the unknown name.
      known: list[str], the catalogue's archs.
      families: dict[str, list[str]], its families.

    Returns:
      list[str], empty when none is close.
    """
    names = known + list(families.keys())
    same = [n for n in names if n.lower() == name.lower()]
    if same:
        return same[:1]
    stems = [f for f in families if f.lower().startswith(name.lower() + "-")]
    return stems or nearest_names(name, names)

def _stale_tail(names, catalog):
    """The end of an unknown-arch error: whether targets.bzl's `names` lag behind the catalogue's."""
    if catalog == None:
        # the catalogue's own names are unknown here: say what to run if it has it
        return "; if you added it to %s, regenerate %s: %s" % (CATALOG, TARGETS_BZL, UPDATE_TARGETS)
    added = [n for n in catalog if n not in names]
    dropped = [n for n in names if n not in catalog]
    if not added and not dropped:
        return ""
    return "; %s is older than %s (the catalogue %s): regenerate it with %s" % (
        TARGETS_BZL,
        CATALOG,
        " and ".join(
            (["adds " + ", ".join(added)] if added else []) +
            (["drops " + ", ".join(dropped)] if dropped else []),
        ),
        UPDATE_TARGETS,
    )

def unknown_arch_error(spec, name, known, families = {}, catalog = None):
    """The one-line error for `name`, an entry of `--define arch=spec` that is no arch or family.

    It names the closest archs or families (close_archs) and lists the known
    ones. targets.bzl, which holds them, is generated from the catalogue: when
    `catalog` (the names the catalogue file has now) has `name`, the error is
    that targets.bzl is older than the catalogue, and names the command that
    regenerates it; when the catalogue's names differ otherwise, it says so
    at the end; without `catalog` it ends with what to run if the name was
    just added.

    Args:
      spec: str, the whole `--define arch=` value.
      name: str, the entry that is unknown.
      known: list[str], the archs of targets.bzl.
      families: dict[str, list[str]], its families.
      catalog: list[str] or None: the archs and families the catalogue file
        names now; None: not known here.

    Returns:
      str.
    """
    if catalog != None and name in catalog:
        return "--define arch=%s: %r is in %s but not in %s, which is older than the catalogue; regenerate it: %s" % (
            spec,
            name,
            CATALOG,
            TARGETS_BZL,
            UPDATE_TARGETS,
        )
    stale = _stale_tail(known + list(families.keys()), catalog)
    close = close_archs(name, known, families)
    hint = "did you mean %s? " % " or ".join(["%r" % c for c in close]) if close else ""
    if not families:
        return "--define arch=%s: unknown arch %r; %sknown: %s (or all)%s" % (spec, name, hint, ", ".join(known), stale)
    return "--define arch=%s: unknown arch or family %r; %sknown archs: %s (or all); families: %s%s" % (
        spec,
        name,
        hint,
        ", ".join(known),
        ", ".join(["%s (%s)" % (f, "+".join(m)) for f, m in families.items()]),
        stale,
    )

def parse_arch_request(spec, known, families = {}, catalog = None):
    """Parse an `--define arch=` value (`A[,B...]` or `all`) against the known archs and families.

    A family name stands anywhere an arch does (`gfx110X-all`,
    `gfx950,gfx120X-all`): it is one more variant, built as one image for all
    its members. `all` is every single arch, no family.

    Args:
      spec: str, e.g. "gfx950,gfx1201".
      known: list[str], the catalogue's archs.
      families: dict[str, list[str]], the catalogue's families and their members.
      catalog: list[str] or None, the archs and families the catalogue file
        names now (unknown_arch_error).

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
            return struct(archs = [], error = unknown_arch_error(spec, arch, known, families, catalog))
        if arch not in archs:
            archs.append(arch)
    return struct(archs = archs, error = None)

def requested_archs(ctx, known, default, families = {}):
    """The archs `--define arch=A[,B...]` asks for, validated; `default` without it.

    Transitions cannot read `--define` in Bazel 7, so image sets call this at
    analysis; //images:defines (define_check.bzl), which every image depends
    on, has checked the value before (with what the catalogue file names).

    Args:
      ctx: any rule context.
      known: list[str], the catalogue's archs.
      default: str, the catalogue's default arch.
      families: dict[str, list[str]], the catalogue's arch families.

    Returns:
      struct(archs, error) as parse_arch_request: the caller reports an
      error with errors.bzl's analysis_error (one line, no traceback).
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
