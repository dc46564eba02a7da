"""Implementation of image_set: the arch variants of one target that --define arch asks for."""

load(":arch_transition.bzl", "requested_archs")
load(":image_info.bzl", "ImageInfo", "ImageSetInfo")

_DOC = """Selects the arch variants of one arch target that `--define arch=A[,B...]` requests.

`//images:pytorch --define arch=gfx950,gfx1201` builds `pytorch.gfx950` and
`pytorch.gfx1201` side by side; the other variants are analysed but never
built. An unknown arch fails analysis with the list of known ones.
"""

def select_images(ctx, images, archs, default_arch):
    """The ImageInfos of `images` (parallel to `archs`) that --define arch requests.

    Args:
      ctx: rule context.
      images: list[Target] providing ImageInfo, one per arch.
      archs: list[str], the arch of each image.
      default_arch: str, used without --define arch.

    Returns:
      list[ImageInfo] in the requested order.
    """
    by_arch = {arch: image[ImageInfo] for arch, image in zip(archs, images)}
    return [by_arch[arch] for arch in requested_archs(ctx, archs, default_arch)]

def _image_set_impl(ctx):
    if len(ctx.attr.images) != len(ctx.attr.archs):
        fail("%s: images and archs must be parallel lists" % ctx.label)
    chosen = select_images(ctx, ctx.attr.images, ctx.attr.archs, ctx.attr.default_arch)
    return [
        DefaultInfo(files = depset([i.descriptor for i in chosen])),
        OutputGroupInfo(spec = depset([i.spec for i in chosen])),
        ImageSetInfo(images = chosen),
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
    },
    provides = [ImageSetInfo],
)
