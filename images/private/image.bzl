"""Implementation of rocm_image_rule: one catalogue target, one arch, one image in staging."""

load(":arch_transition.bzl", "ARCH_SETTING", "arch_transition", "current_arch")
load(":client_settings.bzl", "CLIENT_SETTINGS_ATTRS", "client_settings_argument")
load(":define_check.bzl", "DEFINE_CHECK_ATTRS")
load(":defines.bzl", "OPTIONAL_ARGS", "defines_error")
load(":errors.bzl", "analysis_error")
load(":image_info.bzl", "ImageInfo")
load(":settings.bzl", "SETTINGS_ATTRS", "builder_for", "settings_of")

_DOC = """Builds one catalogue target for one GPU architecture with `docker buildx build`.

Two actions:

* `ImageSpec` runs `tagconf spec` for the target and arch with the
  `--define` overrides (any catalogue default, `VCS_REF`) and the
  `--image_registry` and `--cache_registry` settings and writes `<name>.spec.json` (tags, refs: what plans
  and pushes read; needs no Docker) and `<name>.build.json`, the build spec:
  only what shapes the image's bytes (build args, labels, stage). A new
  registry or commit rewrites the first and leaves the second byte-identical,
  so no image rebuilds.
* `ImageBuild` assembles the build context from the declared inputs (real
  files at their repository-relative paths: BuildKit does not follow
  symlinks), passes every parent as `--build-context
  <parent>=docker-image://<staging>/<repo>@sha256:…`, pushes the image to the
  staging registry (`--staging=HOST/PREFIX`, default the embedded
  loopback one) and writes `<name>.json`, a descriptor of a few kB (digest,
  manifest, config, staging ref): no blob bytes in bazel-out. The action
  runs locally, unsandboxed (it talks to the Docker daemon); its descriptor
  reaches a remote cache only with a shared staging registry.

Two output modes. `--reproducible` (set by `--config=release`)
passes `--reproducible`: BuildKit rewrites every layer's timestamps to
`SOURCE_DATE_EPOCH=0`, so a clean rebuild of the same inputs gives the same
digest, which an immutable `-g<VCS_REF>` tag needs (the push refuses one for
an image built otherwise). Without it, BuildKit's plain output: no rewrite
(about 27 s per GB of new layer), and a child builds on its parent's own
snapshot instead of pulling the rewritten parent back from staging. The mode
is part of the content key and the descriptor (`reproducible`).

`--builders=ARCH=BUILDER[,...]` (`*`: every arch not named, `noarch`:
the arch-free targets) sends an arch's builds to a buildx builder or docker
context instead of the local engine: the action passes `--builder NAME`, so
re-mapping an arch rebuilds its images, and tools/imagebuild puts the
builder's identity and BuildKit/engine version into the content key and the
descriptor. An action that waits on such a builder declares no local CPU
(`resource_set`), so with `--jobs=N` N remote builds run at once on a small
Bazel host.

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
    "budgets": attr.label(
        doc = "Size budgets in place of the catalogue's (`[budget_mib]` target = MiB): the fixture family's.",
        allow_single_file = [".toml"],
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
    # one interpreter each, bytecode compiled at build time (tools/python/bytecode.bzl)
    "_builder": attr.label(
        default = Label("//tools/imagebuild:imagebuild_launch"),
        executable = True,
        cfg = "exec",
    ),
    "_tagconf": attr.label(
        default = Label("//tools/tagconf:tagconf_launch"),
        executable = True,
        cfg = "exec",
    ),
    # the digest the upstream tag is pinned to (tools/tagconf/upstream_lock.py)
    "_upstream_lock": attr.label(
        default = Label("//images:upstream.lock"),
        allow_single_file = True,
    ),
} | CLIENT_SETTINGS_ATTRS | DEFINE_CHECK_ATTRS | SETTINGS_ATTRS

# The `--staging` value of the project's own loopback registry (the default):
# tools/staging starts it on first use.
EMBEDDED_STAGING = "embedded"

def image_log(label):
    """Where the build of `label` writes BuildKit's log, shown while it runs and on failure.

    Under the execution root's `bazel-out/logs/` (relative: the image tools run
    there), one file per image, rewritten by each build: the output base's, so
    every clone (every output base) keeps its own, and the workspace's
    `bazel-out` link shows it: `tail -f` it during a long build. Not an output
    of the action (a failed build keeps its log); `bazel clean` removes it.

    Args:
      label: Label of the image target.

    Returns:
      str, e.g. "bazel-out/logs/images/pytorch.gfx950.log".
    """
    return "bazel-out/logs/%s%s.log" % (
        label.package + "/" if label.package else "",
        label.name,
    )

def docker_execution_requirements(staging):
    """Execution requirements of an action that builds into `staging`.

    Docker actions talk to the local daemon, unsandboxed, never remotely
    executed. Their outputs are small descriptors, but with the embedded
    (loopback) staging registry another machine could not read the blobs a
    cached descriptor names, so they stay out of every cache; with a shared
    staging registry they may be cached.

    Args:
      staging: str, the `--staging` setting (settings_of(ctx).staging).

    Returns:
      dict.
    """
    if staging == EMBEDDED_STAGING:
        return {
            "local": "1",
            "no-remote": "1",
            "no-remote-cache": "1",
            "requires-network": "1",
        }
    return {
        "no-remote-exec": "1",
        "no-sandbox": "1",
        "requires-network": "1",
    }

LOCAL_DOCKER_EXECUTION_REQUIREMENTS = docker_execution_requirements(EMBEDDED_STAGING)

# A tool that serves its actions as a persistent worker (tools/process/worker.py): one
# interpreter for every action of the mnemonic, no start-up per action.
WORKER = {
    "requires-worker-protocol": "json",
    "supports-workers": "1",
}

def worker_args(ctx):
    """An action's arguments in a param file: what the persistent worker gets per request.

    Args:
      ctx: rule context.

    Returns:
      Args.
    """
    args = ctx.actions.args()
    args.use_param_file("@%s", use_always = True)
    args.set_param_file_format("multiline")
    return args

def remote_builder_resources(_os, _inputs):
    """The local resources of an ImageBuild that waits on a remote builder: no CPU slot.

    The Docker CLI on the Bazel host only streams the build context and the
    log; the builder does the work. Bazel still caps running actions at
    `--jobs` (default: the host's cores), so raise that (e.g. `--jobs=32` in
    user.bazelrc) to keep N builders busy at once.

    Args:
      _os: str, the OS name Bazel passes.
      _inputs: int, the number of inputs.

    Returns:
      dict: Bazel resource set.
    """
    return {"cpu": 0, "memory": 64}

def spec_arguments(var, settings, catalog_path, target, arch, value_keys, out_path, status_path = None):
    """The `tagconf spec` command line for one image, with the `--define` overrides.

    Args:
      var: dict, the make variables (`ctx.var`): `--define KEY=VALUE` lands here
        (catalogue keys become `--set`, OPTIONAL_ARGS `--arg`).
      settings: struct, settings_of(ctx): `registry` and `cache_registry`.
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
    for key in OPTIONAL_ARGS:
        if key in var:
            argv += ["--arg", "%s=%s" % (key, var[key])]
    if var.get("VCS_REF"):
        argv += ["--vcs-ref", var["VCS_REF"]]
    elif status_path:
        argv += ["--status-file", status_path]
    if settings.registry:
        argv += ["--registry", settings.registry]
    if settings.cache_registry:
        argv += ["--cache-registry", settings.cache_registry]
    return argv + ["--output", out_path]

def spec_action(ctx, tagconf, catalog, target, arch, value_keys, out, build_out):
    """Register the ImageSpec action: `tagconf spec` with the `--define` overrides.

    Args:
      ctx: rule context.
      tagconf: FilesToRunProvider of //tools/tagconf.
      catalog: File, the catalogue.
      target: str, catalogue target name.
      arch: str or None.
      value_keys: list[str], catalogue [defaults] keys.
      out: File, the spec JSON to write (tags, refs, build spec).
      build_out: File, the build spec JSON to write (content only).
    """
    inputs = [catalog, ctx.file.dockerfile, ctx.file._upstream_lock]
    if ctx.file.budgets:
        inputs.append(ctx.file.budgets)
    status = None
    if ctx.attr.stamp:
        inputs.append(ctx.info_file)
        status = ctx.info_file.path
    args = worker_args(ctx)
    args.add_all(spec_arguments(ctx.var, settings_of(ctx), catalog.path, target, arch, value_keys, out.path, status))
    args.add_all(["--build-output", build_out, "--dockerfile", ctx.file.dockerfile])
    args.add("--upstream-lock", ctx.file._upstream_lock)
    if ctx.file.budgets:
        args.add("--budgets", ctx.file.budgets)
    ctx.actions.run(
        executable = tagconf,
        arguments = [args],
        inputs = inputs,
        outputs = [out, build_out],
        mnemonic = "ImageSpec",
        progress_message = "Rendering tags and build args of %{label}",
        execution_requirements = WORKER,
    )

def size_action(ctx, tagconf, spec, descriptor):
    """Register the ImageSize action: `tagconf size`, the image against its budget.

    It reads the descriptor (layer and config sizes) and the budget in the spec, writes
    `<name>.size.json`, and fails in one line when the image is over its budget. Its
    own action, not part of ImageBuild: a new budget re-runs this check, never BuildKit.

    Args:
      ctx: rule context.
      tagconf: FilesToRunProvider of //tools/tagconf.
      spec: File, the image's spec JSON (holds the budget).
      descriptor: File, the image's descriptor.

    Returns:
      File: the size record JSON.
    """
    out = ctx.actions.declare_file(ctx.label.name + ".size.json")
    args = worker_args(ctx)
    args.add_all(["size", "--spec", spec, "--descriptor", descriptor, "--output", out])
    args.add("--label", "//%s:%s" % (ctx.label.package, ctx.label.name))
    ctx.actions.run(
        executable = tagconf,
        arguments = [args],
        inputs = [spec, descriptor],
        outputs = [out],
        mnemonic = "ImageSize",
        progress_message = "Checking %{label} against its size budget",
        execution_requirements = WORKER,
    )
    return out

def mode_arguments(reproducible):
    """The ImageBuild arguments of the output mode `--reproducible` asks for.

    Args:
      reproducible: bool, the `--reproducible` setting (`--config=release`).

    Returns:
      list[str]: `["--reproducible"]` with it, else `[]` (BuildKit's plain output).
    """
    return ["--reproducible"] if reproducible else []

def build_action(ctx, build_spec, description, parents, upstream, arch = None, view = False):
    """Register the ImageBuild action of `ctx`'s Dockerfile into the staging registry.

    Reads `ctx.file.dockerfile`, `ctx.files.srcs`, `ctx.attr.context_files`,
    `ctx.attr.network`, the settings `--staging`, `--builders`, `--reproducible` and
    `ctx.executable._builder`.

    Args:
      ctx: rule context.
      build_spec: File, the image's build spec JSON (build args, labels, stage, cache ref).
      description: str, shown in the progress message.
      parents: list[ImageInfo], passed as named build contexts.
      upstream: ImageInfo or None, a local stand-in for the upstream image.
      arch: str or None (arch-free): picks the builder from `--builders`.
      view: bool, `build_spec` holds the Dockerfile the build needs (`dockerfile_text`,
        written by ImageSpec): the Dockerfile itself is then no input, so an edit the
        view drops (a comment, a stage this image does not read) re-runs no build.

    Returns:
      File: the image's descriptor JSON.
    """
    descriptor = ctx.actions.declare_file(ctx.label.name + ".json")
    settings = settings_of(ctx)
    staging = settings.staging
    builder = builder_for(settings.builders, arch)
    args = ctx.actions.args() if builder else worker_args(ctx)
    args.add("--spec", build_spec)
    args.add("--dockerfile", ctx.file.dockerfile.path)
    args.add("--network", ctx.attr.network)
    args.add("--staging", staging)
    mode = mode_arguments(settings.reproducible)
    args.add_all(mode)
    if mode:
        description += ", reproducible"
    if builder:
        args.add("--builder", builder)
        description += ", builder " + builder
    args.add("--output", descriptor)
    log = image_log(ctx.label)
    args.add("--log", log)
    srcs = ctx.files.srcs
    args.add_all(srcs, before_each = "--src")
    for dest, path in sorted(ctx.attr.context_files.items()):
        args.add("--host-file", "%s=%s" % (dest, path))
    client_settings_argument(ctx, args)
    inputs = [build_spec] + ([] if view else [ctx.file.dockerfile]) + srcs
    for info in parents:
        args.add("--parent", "%s=%s" % (info.target, info.descriptor.path))
        inputs.append(info.descriptor)
    if upstream:
        args.add("--upstream", upstream.descriptor)
        inputs.append(upstream.descriptor)
    ctx.actions.run(
        executable = ctx.executable._builder,
        arguments = [args],
        inputs = inputs,
        outputs = [descriptor],
        mnemonic = "ImageBuild",
        progress_message = "Building image %%{label} (%s); watch: tail -f %s" % (description, log),
        # a named builder's actions wait, a slot each: no worker (its instances are capped),
        # and the command line is the spawn's own
        execution_requirements = dict(docker_execution_requirements(staging), **({} if builder else WORKER)),
        resource_set = remote_builder_resources if builder else None,
        use_default_shell_env = True,
    )
    return descriptor

def _image_impl(ctx):
    # //images:defines (a dependency) has checked the build's --defines against
    # targets.bzl; this checks them against this target's own keys and archs.
    error = defines_error(ctx.var, ctx.attr.value_keys)
    if error:
        return analysis_error(ctx, error)
    arch = current_arch(ctx)
    if ctx.attr.arch_free:
        arch = None
    elif arch == None:
        fail("%s: arch target %r has no arch; set `arch` or build it through an image_set" % (ctx.label, ctx.attr.target))

    spec = ctx.actions.declare_file(ctx.label.name + ".spec.json")
    build_spec = ctx.actions.declare_file(ctx.label.name + ".build.json")
    spec_action(
        ctx,
        ctx.attr._tagconf[DefaultInfo].files_to_run,
        ctx.file.catalog,
        ctx.attr.target,
        arch,
        ctx.attr.value_keys,
        spec,
        build_spec,
    )

    parents = [p[ImageInfo] for p in ctx.attr.parents]
    descriptor = build_action(
        ctx,
        build_spec = build_spec,
        description = "%s, %s" % (ctx.attr.target, arch or "noarch"),
        parents = parents,
        upstream = ctx.attr.upstream[ImageInfo] if ctx.attr.upstream else None,
        arch = arch,
        view = True,
    )

    size = size_action(ctx, ctx.attr._tagconf[DefaultInfo].files_to_run, spec, descriptor)

    info = ImageInfo(
        descriptor = descriptor,
        spec = spec,
        target = ctx.attr.target,
        arch = arch,
        repository = ctx.attr.repository,
        parents = parents,
        size = size,
        log = image_log(ctx.label),
    )
    return [
        # the size record too: an image over its budget fails `bazel build`
        DefaultInfo(files = depset([descriptor, size])),
        OutputGroupInfo(spec = depset([spec, build_spec])),
        info,
    ]

rocm_image_rule = rule(
    implementation = _image_impl,
    doc = _DOC,
    attrs = _ATTRS,
    cfg = arch_transition,
    provides = [ImageInfo],
)
