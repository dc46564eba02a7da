"""Implementation of image_set: the arch variants of one target that --define arch asks for."""

load(":arch_transition.bzl", "requested_archs")
load(":define_check.bzl", "DEFINE_CHECK_ATTRS")
load(":errors.bzl", "analysis_error")
load(":image_info.bzl", "ImageInfo", "ImageSetInfo")

_DOC = """Selects the arch variants of one arch target that `--define arch=A[,B...]` requests.

`//images:pytorch --define arch=gfx950,gfx1201` builds `pytorch.gfx950` and
`pytorch.gfx1201` side by side; the other variants are analysed but never
built. An arch family is one more variant (`--define arch=gfx110X-all`
builds `pytorch.gfx110X-all`, one image for all its members). An unknown arch fails analysis with the list of known ones. A target
the catalogue builds for some archs only (`archs`, e.g. aiter-wheel) leaves
the other requested archs out (`ImageSetInfo.left_out` says why; pushes
print it), and fails analysis, naming the archs it is built for, when it is
built for none of them; with `leave_out` (the sets that pushes and groups
take) it never fails: an empty push is refused when it runs.
"""

def select_images(ctx, images, archs, default_arch, known_archs = None, not_built = None, families = {}):
    """The ImageInfos of `images` (parallel to `archs`) that --define arch requests.

    Args:
      ctx: rule context.
      images: list[Target] providing ImageInfo, one per arch.
      archs: list[str], the arch (or family) of each image.
      default_arch: str, used without --define arch.
      known_archs: list[str] or None: every arch of the catalogue, when the
        target is built for some (`archs`) only.
      not_built: str or None: with known_archs, the sentence (with a `%s`
        for the archs) that analysis fails with when the target is built for
        none of the requested archs; the archs it is not built for are left
        out otherwise (and always with None).
      families: dict[str, list[str]], the catalogue's arch families (a
        family name is requested like an arch).

    Returns:
      struct(images = list[ImageInfo] in the requested order,
             left_out = list[str], the archs requested but not built,
             error = str or None: a bad `--define arch=`, or `not_built`;
             the caller reports it with analysis_error).
    """
    by_arch = {arch: image[ImageInfo] for arch, image in zip(archs, images)}
    singles = known_archs or [a for a in archs if a not in families]
    request = requested_archs(ctx, singles, default_arch, families)
    if request.error:
        return struct(images = [], left_out = [], error = request.error)
    requested = request.archs
    left_out = [a for a in requested if a not in by_arch]
    if left_out and not_built and len(left_out) == len(requested):
        return struct(images = [], left_out = [], error = not_built % ", ".join(left_out))
    return struct(
        images = [by_arch[a] for a in requested if a in by_arch],
        left_out = left_out,
        error = None,
    )

def not_built_message(label, catalog, target, archs):
    """The error for asking `label` for archs its target is not built for (a `%s` for them).

    Args:
      label: str, the image_set's label.
      catalog: str, the catalogue's path.
      target: str, the catalogue target.
      archs: list[str], the archs it is built for.

    Returns:
      str, with one `%s`.
    """
    return "%s is not built for %%s: %s builds %s for %s only (targets.%s.archs); ask for --define arch=%s" % (
        label,
        catalog,
        target,
        ", ".join(archs),
        target,
        ",".join(archs),
    )

# Why a family is left out where its members are not all built for.
_FAMILY_RULE = "; a family gets it only when every member is one of these"

def _image_set_impl(ctx):
    if len(ctx.attr.images) != len(ctx.attr.archs):
        fail("%s: images and archs must be parallel lists" % ctx.label)
    known = ctx.attr.known_archs or None
    not_built = None
    if known and not ctx.attr.leave_out:
        singles = [a for a in ctx.attr.archs if a not in ctx.attr.families]
        not_built = not_built_message("//%s:%s" % (ctx.label.package, ctx.label.name), ctx.attr.catalog, ctx.attr.target, singles)
    chosen = select_images(ctx, ctx.attr.images, ctx.attr.archs, ctx.attr.default_arch, known, not_built, ctx.attr.families)
    if chosen.error:
        return analysis_error(ctx, chosen.error, subject = "arch=" + ctx.var.get("arch", ctx.attr.default_arch))
    left_out = []
    if chosen.left_out:
        left_out = ["%s is not built for %s: %s builds it for %s only (targets.%s.archs)%s" % (
            ctx.attr.target,
            ", ".join(chosen.left_out),
            ctx.attr.catalog,
            ", ".join([a for a in ctx.attr.archs if a not in ctx.attr.families]),
            ctx.attr.target,
            _FAMILY_RULE if [a for a in chosen.left_out if a in ctx.attr.families] else "",
        )]
    return [
        DefaultInfo(files = depset([i.descriptor for i in chosen.images])),
        OutputGroupInfo(spec = depset([i.spec for i in chosen.images])),
        ImageSetInfo(images = chosen.images, left_out = left_out),
    ]

image_set = rule(
    implementation = _image_set_impl,
    doc = _DOC,
    attrs = {
        "archs": attr.string_list(doc = "The arch of each entry of `images`.", mandatory = True),
        "default_arch": attr.string(doc = "The arch built without --define arch.", mandatory = True),
        "images": attr.label_list(
            doc = "One pinned image target per arch.",
            providers = [ImageInfo],
            mandatory = True,
        ),
        "catalog": attr.string(
            doc = "The catalogue's path, named in the messages about archs the target is not built for.",
            default = "images/catalog.toml",
        ),
        "families": attr.string_list_dict(
            doc = "The catalogue's arch families (name: member archs): `--define arch=` takes them like archs; `archs` lists those this target is built for.",
        ),
        "known_archs": attr.string_list(
            doc = "Every arch of the catalogue, when `archs` is a subset (a target built for some archs only).",
        ),
        "leave_out": attr.bool(
            doc = "Leave a requested arch the target is not built for out (group pushes) instead of failing analysis.",
        ),
        "target": attr.string(doc = "The catalogue target, named in those messages."),
    } | DEFINE_CHECK_ATTRS,
    provides = [ImageSetInfo],
)
