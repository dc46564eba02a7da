"""Client settings: where this build's engine, staging and mirrors are, outside action keys.

The Docker actions (ImageBuild, ImageLayout, UpstreamBuild) must use the
engine, staging and mirror settings of the shell that ran `bazel`, yet those
paths differ per machine and must stay out of every action key (a second
machine sharing the cache must still get hits). So:

- the `client_settings` module extension makes the repository
  `@rocm_pytorch_client`, whose `settings.json` holds the set ones of
  `CLIENT_NAMES` in the client's environment. Bazel evaluates it while
  loading, before any action runs, and again whenever one of those
  variables changes (`environ`): there is no window in which an action can
  read another invocation's settings or none;
- the actions get the file's path as `--client-settings`, a string that is
  the same on every machine, and do not declare the file as an input, so
  its bytes are in no key;
- tools/client_env.py reads it and stops in one line when it cannot.
"""

# The client's variables the Docker actions read (docs/engine.md); the same list
# as NAMES in tools/client_env.py (//tests/daemon:client_env_test compares them).
CLIENT_NAMES = [
    "DOCKER_HOST",
    "DOCKER_CONFIG",
    "BUILDX_NO_DEFAULT_ATTESTATIONS",
    "ROCM_PYTORCH_ENGINE_DIR",
    "ROCM_PYTORCH_ENGINE_AUTOSTART",
    "ROCM_PYTORCH_STAGING_DIR",
    "ROCM_PYTORCH_STAGING_PORT",
    "ROCM_PYTORCH_MIRRORS",
    # how long an action waits for a builder, and how it starts the private engine
    # when none runs (tools/imagebuild/builders.py, tools/engine/lifecycle.py)
    "ROCM_PYTORCH_BUILDER_TIMEOUT",
    "ROCM_PYTORCH_ENGINE_START_TIMEOUT",
    "ROCM_PYTORCH_DOCKERD_ARGS",
    # where the user's state, caches and settings are (tools/places.py)
    "HOME",
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
]

def _client_repo_impl(rctx):
    settings = {}
    for name in CLIENT_NAMES:
        value = rctx.getenv(name)
        if value:
            settings[name] = value
    rctx.file("settings.json", json.encode(settings) + "\n")
    rctx.file("BUILD.bazel", 'exports_files(["settings.json"])\n')

client_settings_repository = repository_rule(
    implementation = _client_repo_impl,
    doc = "`settings.json`: the set ones of CLIENT_NAMES in the client's environment.",
    environ = CLIENT_NAMES,
)

def _client_settings_impl(_mctx):
    client_settings_repository(name = "rocm_pytorch_client")

client_settings = module_extension(
    implementation = _client_settings_impl,
    doc = "Makes `@rocm_pytorch_client//:settings.json` (see the file's docstring).",
)

CLIENT_SETTINGS_ATTRS = {
    "_client_settings": attr.label(
        default = Label("@rocm_pytorch_client//:settings.json"),
        allow_single_file = True,
    ),
}

def client_settings_argument(ctx, args):
    """Hand a Docker action this build's client settings, outside its key.

    Adds `--client-settings` with the path of `@rocm_pytorch_client//:settings.json`
    (the same string on every machine); the file is deliberately no input of
    the action, so its bytes are in no action key. The rule needs
    `CLIENT_SETTINGS_ATTRS`.

    Args:
      ctx: rule context.
      args: Args or list[str], the action's arguments to extend.
    """
    path = ctx.file._client_settings.path
    if type(args) == "list":
        args.extend(["--client-settings", path])
    else:
        args.add("--client-settings", path)
