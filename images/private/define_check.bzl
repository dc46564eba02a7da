"""define_check: the one analysis-time check of a build's `--define`s, //images:defines.

Every image, image set and stand-in upstream depends on //images:defines
(DEFINE_CHECK_ATTRS), so a misspelled key, a key that is a build setting now
(`--sign`: write `--sign`), a bad UPSTREAM_IMAGE or an unknown
`--define arch=` fails analysis there, once,
before any image target is analysed, in one line.

Why a target of its own: the image targets are made by the image_family
macro, and Bazel ends an attribute error of a macro-made target with
"Since this rule was created by the macro 'image_family', the error might
have been caused by the macro implementation", which reads like a bug in
the build for what is a typo on the command line; `fail()` would print a
Starlark traceback instead. //images:defines is declared in
images/BUILD.bazel itself, by no macro, so its error is the one line
errors.bzl's analysis_error writes, naming the input at fault and the fix.
The dependency transitions to the noarch configuration: one configured
check for the whole build, one error line however many archs are asked for.
"""

load(":arch_transition.bzl", "noarch_transition", "parse_arch_request")
load(":defines.bzl", "defines_error")
load(":errors.bzl", "analysis_error")

# The build's check: its archs, families and keys are images/targets.bzl's,
# which tests/e2e's fixture family shares (the real catalogue).
DEFINE_CHECK = Label("//images:defines")

DEFINE_CHECK_ATTRS = {
    "defines": attr.label(
        default = DEFINE_CHECK,
        cfg = noarch_transition,
        doc = "The build's `--define` check (a `define_check` target): //images:defines," +
              " whose keys are the catalogue's; a family of another catalogue (bench/heavy)" +
              " names its own.",
    ),
}

def define_check_error(var, archs, families, default_arch, value_keys, catalog_names = None):
    """The first problem of a build's `--define`s, or None.

    Args:
      var: dict, the make variables (`ctx.var`).
      archs: list[str], targets.bzl's ARCHS.
      families: dict[str, list[str]], its FAMILIES.
      default_arch: str, the arch without `--define arch=`.
      value_keys: list[str], the catalogue's [defaults] keys.
      catalog_names: list[str] or None, the archs and families the catalogue
        file names now; None: not known.

    Returns:
      struct(message = str, subject = str or None) or None: what
      analysis_error takes.
    """
    error = defines_error(var, value_keys)
    if error:
        return struct(message = error, subject = None)
    spec = var.get("arch", default_arch)
    request = parse_arch_request(spec, archs, families, catalog_names)
    if request.error:
        return struct(message = request.error, subject = "arch=" + spec)
    return None

def _define_check_impl(ctx):
    error = define_check_error(
        ctx.var,
        ctx.attr.archs,
        ctx.attr.families,
        ctx.attr.default_arch,
        ctx.attr.value_keys,
        ctx.attr.catalog_names or None,
    )
    if error:
        return analysis_error(ctx, error.message, subject = error.subject)
    return []

define_check = rule(
    implementation = _define_check_impl,
    doc = """Fails analysis, in one line, when a `--define` of the build is wrong.

The checks of defines.bzl's defines_error (unknown keys, keys that are build
settings now, UPSTREAM_IMAGE), then
`--define arch=`: an unknown name fails naming the closest archs or
families and listing them all, or, when `catalog_names` has it, saying that
images/targets.bzl is older than the catalogue and how to regenerate it.
""",
    attrs = {
        "archs": attr.string_list(doc = "The catalogue's archs (targets.bzl's ARCHS).", mandatory = True),
        "catalog_names": attr.string_list(
            doc = "The archs and families the catalogue file names now (`@rocm_pytorch_client//:catalog_names.bzl`); empty: not known.",
        ),
        "default_arch": attr.string(doc = "The arch without `--define arch=`.", mandatory = True),
        "families": attr.string_list_dict(doc = "The catalogue's arch families (targets.bzl's FAMILIES)."),
        "value_keys": attr.string_list(doc = "The catalogue's [defaults] keys (targets.bzl's DEFAULTS).", mandatory = True),
    },
)
