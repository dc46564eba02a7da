"""Implementation of stand_in_image: a local image that stands in for the upstream one."""

load(":arch_transition.bzl", "noarch_transition")
load(":client_settings.bzl", "CLIENT_SETTINGS_ATTRS")
load(":define_check.bzl", "DEFINE_CHECK_ATTRS")
load(":image.bzl", "build_action")
load(":image_info.bzl", "ImageInfo")
load(":settings.bzl", "SETTINGS_ATTRS")

_DOC = """Builds a Dockerfile with no catalogue entry into the staging registry.

Nothing can be pulled on hermetic hosts, so tests build the upstream image
(`UPSTREAM_IMAGE:ROCM_VERSION`) themselves, e.g. FROM scratch with a static
busybox, and give it to `image_family(upstream = ...)`. It uses the same
ImageBuild action as the catalogue images; it just has no tags. Built in the
noarch configuration, so the arch variants that use it share one build.
"""

def _stand_in_impl(ctx):
    spec = ctx.actions.declare_file(ctx.label.name + ".spec.json")
    ctx.actions.write(spec, json.encode({
        "arch": None,
        "build_args": {},
        "cache_ref": None,
        "labels": {},
        "parents": [],
        "repository": ctx.label.name,
        "stage": ctx.attr.stage,
        "target": ctx.label.name,
    }))
    descriptor = build_action(ctx, spec, "stand-in", parents = [], upstream = None)
    return stand_in_providers(ctx, descriptor, spec)

def stand_in_providers(ctx, descriptor, spec):
    """The providers of an image with no catalogue entry, named after its target.

    Args:
      ctx: rule context.
      descriptor: File, the image's descriptor.
      spec: File, its spec JSON.

    Returns:
      list: DefaultInfo and ImageInfo (no arch, repository = the target's name).
    """
    return [
        DefaultInfo(files = depset([descriptor])),
        ImageInfo(
            descriptor = descriptor,
            spec = spec,
            target = ctx.label.name,
            arch = None,
            repository = ctx.label.name,
        ),
    ]

stand_in_image = rule(
    implementation = _stand_in_impl,
    doc = _DOC,
    attrs = {
        "context_files": attr.string_dict(
            doc = "Build-context files from the host: {context path: absolute host path}.",
        ),
        "dockerfile": attr.label(doc = "The Dockerfile.", allow_single_file = True, mandatory = True),
        "network": attr.string(doc = "`--network` for RUN steps.", default = "none", values = ["host", "none"]),
        "srcs": attr.label_list(doc = "Files the Dockerfile COPYs.", allow_files = True),
        "stage": attr.string(doc = "Stage to build; empty: the last one."),
        "_builder": attr.label(
            default = Label("//tools/imagebuild:imagebuild_launch"),
            executable = True,
            cfg = "exec",
        ),
    } | CLIENT_SETTINGS_ATTRS | DEFINE_CHECK_ATTRS | SETTINGS_ATTRS,
    cfg = noarch_transition,
    provides = [ImageInfo],
)
