"""Implementation of rocm_image_rule: one catalogue target, one arch, one OCI layout."""

load(":arch_transition.bzl", "ARCH_SETTING", "arch_transition", "current_arch")
load(":image_info.bzl", "ImageInfo")

_DOC = """Builds one catalogue target for one GPU architecture with `docker buildx build`.

Two actions:

* `ImageSpec` runs `tagconf spec` for the target and arch with the
  `--define` overrides (any catalogue default, `VCS_REF`, `registry`,
  `cache_registry`) and writes `<name>.spec.json`: tags, refs, build args,
  labels. It needs no Docker; plans and push targets read it.
* `ImageBuild` assembles the build context from the declared inputs (real
  files at their repository-relative paths: BuildKit does not follow
  symlinks), passes every parent as `--build-context <parent>=oci-layout://…`
  so no registry is involved, and writes an OCI image layout directory plus
  `<name>.json` with its digest. With `SOURCE_DATE_EPOCH=0` and timestamp
  rewriting, the same inputs give the same digest. The action runs locally,
  unsandboxed (it talks to the Docker daemon) and is never remote-cached.

The arch comes from the `arch` attr, else from the arch setting (set by
`image_set`/group rules); `arch_free = True` moves the target to the shared
`noarch` configuration so every arch variant reuses one build.

Example:

```starlark
rocm_image_rule(
    name = "pytorch.gfx950",
    target = "pytorch",
    arch = "gfx950",
    catalog = "catalog.toml",
    dockerfile = "//docker:Dockerfile.pytorch",
    parents = [":pytorch-base.gfx950", ":pytorch-src", ":triton-wheel"],
)
```
"""

_ATTRS = {
    "arch": attr.string(
        doc = "Pin this GPU architecture (e.g. 'gfx950'); empty: follow the arch setting.",
    ),
    "arch_free": attr.bool(
        doc = "The target has no arch (pytorch-src, triton-wheel): build it once, in the noarch configuration.",
    ),
    "catalog": attr.label(
        doc = "The catalogue TOML file tagconf reads.",
        allow_single_file = [".toml"],
        mandatory = True,
    ),
    "context_files": attr.string_dict(
        doc = "Extra build-context files from the host: {context path: absolute host path}. For stand-in bases only (e.g. a static busybox).",
    ),
    "dockerfile": attr.label(
        doc = "The Dockerfile; its repository-relative path must be the catalogue's `dockerfile`.",
        allow_single_file = True,
        mandatory = True,
    ),
    "network": attr.string(
        doc = "`docker buildx build --network` for RUN steps: 'host' (real builds fetch packages) or 'none'.",
        default = "host",
        values = ["host", "none"],
    ),
    "parents": attr.label_list(
        doc = "Parent images (catalogue `parents`), passed as named build contexts.",
        providers = [ImageInfo],
    ),
    "stamp": attr.bool(
        doc = "Read STABLE_VCS_REF from the workspace status (set from --stamp by image_family).",
    ),
    "srcs": attr.label_list(
        doc = "Other files the Dockerfile COPYs (scripts), placed at their repository-relative paths.",
        allow_files = True,
    ),
    "repository": attr.string(
        doc = "The catalogue `repository` of the target (from targets.bzl), e.g. 'base'.",
        mandatory = True,
    ),
    "target": attr.string(
        doc = "The catalogue target name, e.g. 'pytorch-wheel'.",
        mandatory = True,
    ),
    "upstream": attr.label(
        doc = "A local stand-in for the upstream image (UPSTREAM_IMAGE:ROCM_VERSION); empty: BuildKit pulls it.",
        providers = [ImageInfo],
    ),
    "value_keys": attr.string_list(
        doc = "The catalogue's [defaults] keys; `--define KEY=VALUE` overrides them.",
        mandatory = True,
    ),
    "_allowlist_function_transition": attr.label(
        default = "@bazel_tools//tools/allowlists/function_transition_allowlist",
    ),
    "_arch": attr.label(default = ARCH_SETTING),
    "_builder": attr.label(
        default = Label("//tools/imagebuild"),
        executable = True,
        cfg = "exec",
    ),
    "_tagconf": attr.label(
        default = Label("//tools/tagconf"),
        executable = True,
        cfg = "exec",
    ),
}

# Docker actions: talk to the local daemon, unsandboxed; multi-GB outputs
# never go to a remote or disk cache.
DOCKER_EXECUTION_REQUIREMENTS = {
    "local": "1",
    "no-remote": "1",
    "no-remote-cache": "1",
    "requires-network": "1",
}

def spec_arguments(var, catalog_path, target, arch, value_keys, out_path, status_path = None):
    """The `tagconf spec` command line for one image, with the `--define` overrides.

    Args:
      var: dict, the make variables (`ctx.var`): `--define KEY=VALUE` lands here.
      catalog_path: str, path of the catalogue.
      target: str, catalogue target name.
      arch: str or None.
      value_keys: list[str], catalogue [defaults] keys.
      out_path: str, where the spec JSON goes.
      status_path: str or None; with --stamp, the stable status file whose
        STABLE_VCS_REF tagconf uses when --define VCS_REF is not given.

    Returns:
      list[str].
    """
    argv = ["--catalog", catalog_path, "spec", "--target", target]
    if arch:
        argv += ["--arch", arch]
    for key in value_keys:
        if key in var and key != "VCS_REF":
            argv += ["--set", "%s=%s" % (key, var[key])]
    if var.get("VCS_REF"):
        argv += ["--vcs-ref", var["VCS_REF"]]
    elif status_path:
        argv += ["--status-file", status_path]
    if "registry" in var:
        argv += ["--registry", var["registry"]]
    if var.get("cache_registry"):
        argv += ["--cache-registry", var["cache_registry"]]
    return argv + ["--output", out_path]

def spec_action(ctx, tagconf, catalog, target, arch, value_keys, out):
    """Register the ImageSpec action: `tagconf spec` with the `--define` overrides.

    Args:
      ctx: rule context.
      tagconf: FilesToRunProvider of //tools/tagconf.
      catalog: File, the catalogue.
      target: str, catalogue target name.
      arch: str or None.
      value_keys: list[str], catalogue [defaults] keys.
      out: File, the spec JSON to write.
    """
    inputs = [catalog]
    status = None
    if ctx.attr.stamp:
        inputs.append(ctx.info_file)
        status = ctx.info_file.path
    ctx.actions.run(
        executable = tagconf,
        arguments = spec_arguments(ctx.var, catalog.path, target, arch, value_keys, out.path, status),
        inputs = inputs,
        outputs = [out],
        mnemonic = "ImageSpec",
        progress_message = "Rendering tags and build args of %{label}",
    )

def build_action(ctx, spec, description, parents, upstream):
    """Register the ImageBuild action of `ctx`'s Dockerfile into an OCI layout.

    Reads `ctx.file.dockerfile`, `ctx.files.srcs`, `ctx.attr.context_files`,
    `ctx.attr.network` and `ctx.executable._builder`.

    Args:
      ctx: rule context.
      spec: File, the image's spec JSON (build args, labels, stage, cache ref).
      description: str, shown in the progress message.
      parents: list[ImageInfo], passed as named build contexts.
      upstream: ImageInfo or None, a local stand-in for the upstream image.

    Returns:
      (layout, metadata): the OCI layout tree artifact and the metadata JSON.
    """
    layout = ctx.actions.declare_directory(ctx.label.name + ".layout")
    metadata = ctx.actions.declare_file(ctx.label.name + ".json")
    args = ctx.actions.args()
    args.add("--spec", spec)
    args.add("--dockerfile", ctx.file.dockerfile)
    args.add("--network", ctx.attr.network)
    args.add("--output", layout.path)
    args.add("--metadata", metadata)
    srcs = ctx.files.srcs
    args.add_all(srcs, before_each = "--src")
    for dest, path in sorted(ctx.attr.context_files.items()):
        args.add("--host-file", "%s=%s" % (dest, path))
    inputs = [spec, ctx.file.dockerfile] + srcs
    for info in parents:
        args.add("--parent", "%s=%s=%s" % (info.target, info.layout.path, info.metadata.path))
        inputs += [info.layout, info.metadata]
    if upstream:
        args.add("--upstream", "%s=%s" % (upstream.layout.path, upstream.metadata.path))
        inputs += [upstream.layout, upstream.metadata]
    ctx.actions.run(
        executable = ctx.executable._builder,
        arguments = [args],
        inputs = inputs,
        outputs = [layout, metadata],
        mnemonic = "ImageBuild",
        progress_message = "Building image %%{label} (%s)" % description,
        execution_requirements = DOCKER_EXECUTION_REQUIREMENTS,
        use_default_shell_env = True,
    )
    return layout, metadata

def _image_impl(ctx):
    arch = current_arch(ctx)
    if ctx.attr.arch_free:
        arch = None
    elif arch == None:
        fail("%s: arch target %r has no arch; set `arch` or build it through an image_set" % (ctx.label, ctx.attr.target))

    spec = ctx.actions.declare_file(ctx.label.name + ".spec.json")
    spec_action(
        ctx,
        ctx.attr._tagconf[DefaultInfo].files_to_run,
        ctx.file.catalog,
        ctx.attr.target,
        arch,
        ctx.attr.value_keys,
        spec,
    )

    parents = [p[ImageInfo] for p in ctx.attr.parents]
    layout, metadata = build_action(
        ctx,
        spec = spec,
        description = "%s, %s" % (ctx.attr.target, arch or "noarch"),
        parents = parents,
        upstream = ctx.attr.upstream[ImageInfo] if ctx.attr.upstream else None,
    )

    info = ImageInfo(
        layout = layout,
        metadata = metadata,
        spec = spec,
        target = ctx.attr.target,
        arch = arch,
        repository = ctx.attr.repository,
        parents = parents,
    )
    return [
        DefaultInfo(files = depset([layout, metadata])),
        OutputGroupInfo(spec = depset([spec])),
        info,
    ]

rocm_image_rule = rule(
    implementation = _image_impl,
    doc = _DOC,
    attrs = _ATTRS,
    cfg = arch_transition,
    provides = [ImageInfo],
)
