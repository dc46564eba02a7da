"""Implementation of rehearsal_upstream: the rehearsal's stand-in upstream image."""

load(":arch_transition.bzl", "noarch_transition")
load(":client_settings.bzl", "CLIENT_SETTINGS_ATTRS", "client_settings_argument")
load(":define_check.bzl", "DEFINE_CHECK_ATTRS")
load(":image.bzl", "docker_execution_requirements", "image_log")
load(":image_info.bzl", "ImageInfo")
load(":settings.bzl", "SETTINGS_ATTRS", "settings_of")
load(":stand_in.bzl", "stand_in_providers")

_DOC = """Builds the stand-in for the upstream ROCm image into the staging registry.

Debian with Debian's ROCm packages, exactly the versions of `lock`, laid out
as AMD's image (/opt/rocm-<release>, lib/<library>/library kernel
directories, share/miopen, bin/hipcc, .info/version, the loader
configuration) by tools/rehearsal. One `UpstreamBuild` action runs
mmdebstrap (root, network to Debian's mirror from the mirror settings) and
pushes the result as a one-layer OCI image; it leaves a descriptor, like an
image build, so `image_family(upstream = ...)` takes it as the upstream's
named context. The release comes from ROCM_VERSION (`rocm_version`, or
`--define ROCM_VERSION=`). Reproducible: the same lock gives the same digest.
Built in the noarch configuration: one build serves every arch.

Example:

```starlark
rehearsal_upstream(
    name = "upstream",
    config = "upstream.toml",
    lock = "upstream.lock",
    rocm_version = DEFAULTS["ROCM_VERSION"],
)
```
"""

# What _upstream_build reads of both rules: the release, the tool, the client settings.
_UPSTREAM_BUILD_ATTRS = {
    "rocm_version": attr.string(
        doc = "The catalogue's ROCM_VERSION: ROCm lives in /opt/rocm-<its release>. `--define ROCM_VERSION=` wins.",
        mandatory = True,
    ),
    "_tool": attr.label(
        default = Label("//tools/rehearsal:upstream"),
        executable = True,
        cfg = "exec",
    ),
} | CLIENT_SETTINGS_ATTRS | DEFINE_CHECK_ATTRS | SETTINGS_ATTRS

def _upstream_build(ctx, mode_args, inputs, progress):
    """The UpstreamBuild action of a stand-in upstream and its providers.

    Args:
      ctx: rule context (attrs `rocm_version`, `_tool`, the client settings).
      mode_args: list of str, the tool's arguments of this kind of stand-in.
      inputs: list of File, what the tool reads.
      progress: str, what the action does (its progress message adds the log).

    Returns:
      list: the providers of the stand-in (stand_in_providers).
    """
    descriptor = ctx.actions.declare_file(ctx.label.name + ".json")
    spec = ctx.actions.declare_file(ctx.label.name + ".spec.json")
    staging = settings_of(ctx).staging
    log = image_log(ctx.label)
    rocm_version = ctx.var.get("ROCM_VERSION", ctx.attr.rocm_version)
    ctx.actions.write(spec, json.encode({
        "arch": None,
        "repository": ctx.label.name,
        "rocm_version": rocm_version,
        "target": ctx.label.name,
    }))
    args = ctx.actions.args()
    args.add_all(mode_args)
    args.add("--rocm-version", rocm_version)
    args.add("--staging", staging)
    args.add("--output", descriptor)
    args.add("--log", log)
    client_settings_argument(ctx, args)
    ctx.actions.run(
        executable = ctx.executable._tool,
        arguments = [args],
        inputs = inputs,
        outputs = [descriptor],
        mnemonic = "UpstreamBuild",
        progress_message = "%s; watch: tail -f %s" % (progress, log),
        execution_requirements = docker_execution_requirements(staging),
        use_default_shell_env = True,
    )
    return stand_in_providers(ctx, descriptor, spec)

def _rehearsal_upstream_impl(ctx):
    files = [ctx.file.config, ctx.file.lock, ctx.file._layout]
    return _upstream_build(
        ctx,
        ["--config", files[0].path, "--lock", files[1].path, "--layout", files[2].path],
        files,
        "Building the stand-in upstream %{label} (mmdebstrap: minutes)",
    )

rehearsal_upstream = rule(
    implementation = _rehearsal_upstream_impl,
    doc = _DOC,
    attrs = {
        "config": attr.label(
            doc = "The stand-in's suites and packages (TOML; tools/rehearsal/standin.py).",
            allow_single_file = [".toml"],
            mandatory = True,
        ),
        "lock": attr.label(
            doc = "Every package and version of the root file system (`bazel run //rehearsal:lock` writes it).",
            allow_single_file = [".lock"],
            mandatory = True,
        ),
        "_layout": attr.label(
            default = Label("//tools/rehearsal:layout.py"),
            allow_single_file = True,
        ),
    } | _UPSTREAM_BUILD_ATTRS,
    cfg = noarch_transition,
    provides = [ImageInfo],
)

_REBUILD_DOC = """AMD's rebuild `build` of the stand-in upstream `base`: a new upstream digest, the same compilers.

The base stand-in's layer and one layer more, holding
`/opt/rocm-<release>/.info/version` as `<release>-<build>` (the base has
build 0): what a weekly upstream update looks like to the family (every
image built on it builds again) without another mmdebstrap run. One
`UpstreamBuild` action, seconds; its image goes into the same staging
repository as the base's. bench/compile_cache.py's "base change":
`--upstream=rehearsal-rebuild` after `--config=rehearsal`.

Example:

```starlark
rehearsal_rebuild(
    name = "upstream-rebuild",
    base = ":upstream",
    build = "1",
    rocm_version = DEFAULTS["ROCM_VERSION"],
)
```
"""

def _rehearsal_rebuild_impl(ctx):
    if not ctx.attr.build.isdigit() or ctx.attr.build.startswith("0"):
        fail("%s: build = %r: AMD's build numbers are 1, 2, ... (the base is 0)" % (ctx.label, ctx.attr.build))
    base = ctx.attr.base[ImageInfo].descriptor
    return _upstream_build(
        ctx,
        ["--base", base.path, "--build", ctx.attr.build],
        [base],
        "Building %%{label}, rebuild %s of the stand-in upstream" % ctx.attr.build,
    )

rehearsal_rebuild = rule(
    implementation = _rehearsal_rebuild_impl,
    doc = _REBUILD_DOC,
    attrs = {
        "base": attr.label(
            doc = "The stand-in upstream (a rehearsal_upstream) this is a rebuild of.",
            mandatory = True,
            providers = [ImageInfo],
        ),
        "build": attr.string(
            doc = "AMD's build number of the release: 1, 2, ... (the base is 0).",
            mandatory = True,
        ),
    } | _UPSTREAM_BUILD_ATTRS,
    cfg = noarch_transition,
    provides = [ImageInfo],
)
