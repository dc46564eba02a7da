"""Where this user's engine, staging and mirrors are: the client's settings, outside cache keys.

The actions that talk to Docker (ImageBuild, UpstreamBuild, ImageLayout)
need to know where *this* user's engine socket, docker config, staging
state and mirror settings are. Those paths differ from machine to machine
and say nothing about an image's bytes, so they must not be in an action's
key: with `--action_env=DOCKER_HOST` a second machine sharing the remote
cache and the staging registry re-ran every image build, because its socket
path differed.

So they travel beside the key (images/private/client_settings.bzl):

- a repository rule writes `@rocm_pytorch_client//:settings.json`, the set
  ones of ``NAMES`` in the client's environment as a JSON object. Bazel
  evaluates it while loading, before any action of the build runs, and
  again whenever one of those variables changes: an action can never see
  another invocation's settings, nor none;
- the Docker actions get that file's path as ``--client-settings FILE``
  (the same string on every machine) and do not declare it as an input,
  so its bytes are in no action key;
- ``apply()`` reads it and makes the action's environment hold exactly
  those settings. When the file cannot be read or is not such an object,
  it raises ``ClientSettingsError``, a one-line message with the fix: a
  build never falls back to the default engine, staging or mirrors.

(The settings once travelled in Bazel's volatile status file, which no action
declared: Bazel deletes it at the start of every build and rewrites it ~0.2 s
later, and an edit-only rebuild read it in that window and took the defaults.)

Outside Bazel (no ``--client-settings``) the tools read their own
environment, as a shell would.

    python3 -m tools.client_env show FILE      # what an action would take from FILE
    python3 -m tools.client_env start-staging  # what tools/workspace_status.sh runs

``start-staging`` first checks every setting of the project in the environment
(``check_settings``: switches, ports, seconds, absolute paths, and the docker
CLI's DOCKER_CONTEXT and BUILDX_BUILDER, which image builds do not read), then
starts the embedded staging registry unless it runs (quietly;
ROCM_PYTORCH_STAGING_AUTOSTART=0 turns that off; a registry that cannot start is
left to the image builds, which start one and say why not). A value it cannot
use, a ROCM_PYTORCH_STAGING_PORT other than the port the running registry
answers on, or any other error of the start (a state dir it cannot write) is
one line on stderr and exit status 2, which stops the Bazel command before
anything runs (tools/workspace_status.sh).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Mapping, MutableMapping
from pathlib import Path

from tools import envvars, places

# Where the Docker actions find the file, relative to the execution root: the
# repository rule of images/private/client_settings.bzl writes it (the path is the
# same on every machine, so it is in no key's way).
BAZEL_FILE = "external/_main~client_settings~rocm_pytorch_client/settings.json"

# The command line flag the Docker actions get the settings file's path with.
FLAG = "--client-settings"

# The proxy variables, in both spellings (apt reads only the lower-case ones, Go's
# and Python's HTTP clients either): BuildKit's predefined build arguments.
PROXY_NAMES = tuple(
    case(name) for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
    for case in (str.upper, str.lower)
)  # fmt: skip

# The client's variables the Docker actions read (docs/engine.md); the same list as
# CLIENT_NAMES in images/private/client_settings.bzl (a test compares them).
NAMES = (
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
    # the client's PATH directories that hold docker credential helpers
    # (tools/oci/credhelpers.py helper_path)
    "ROCM_PYTORCH_HELPER_PATH",
    # the client's HTTP proxies, which the RUNs of image builds get as BuildKit's
    # predefined proxy build arguments (tools/imagebuild/proxies.py), and the CA
    # bundle builds trust in place of the host's (tools/mirrors/host.py ca_bundle)
    *PROXY_NAMES,
    "SSL_CERT_FILE",
)


FIX = (
    "the repository rule of images/private/client_settings.bzl writes it; write it again"
    " with `bazel fetch --force --repo=@rocm_pytorch_client`, then build"
)


class ClientSettingsError(Exception):
    """The build's client settings cannot be read: one line, with the fix."""


def settings(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The set (non-empty) ones of ``NAMES`` in ``environ`` (default: this process's)."""
    environ = os.environ if environ is None else environ
    return {name: environ[name] for name in NAMES if environ.get(name)}


def read(path: Path | str) -> dict[str, str]:
    """The client's settings in ``path`` (a JSON object of ``NAMES``); ``ClientSettingsError``
    when the file is missing or not such an object: never ``{}`` in its place."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ClientSettingsError(
            f"cannot read this build's client settings from {path}"
            f" ({e.strerror or e}): its engine, staging and mirrors are unknown; {FIX}"
        ) from None
    try:
        found = json.loads(text)
    except ValueError:
        found = None
    if not isinstance(found, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in found.items()
    ):
        raise ClientSettingsError(
            f"{path} is not a JSON object of strings ({text.strip()[:80]!r}): this build's"
            f" engine, staging and mirrors are unknown; {FIX}"
        )
    unknown = sorted(set(found) - set(NAMES))
    if unknown:
        raise ClientSettingsError(
            f"{path} names {', '.join(unknown)}, which this tool does not know"
            f" (known: {', '.join(NAMES)}): images/private/client_settings.bzl and"
            " tools/client_env.py disagree; make CLIENT_NAMES and NAMES the same list"
        )
    return found


def apply(
    path: Path | str | None, environ: MutableMapping[str, str] | None = None
) -> dict[str, str]:
    """Make ``environ`` (default: this process's) hold exactly the client's settings of
    the settings file ``path``: each of ``NAMES`` is the file's value, or unset where the
    client had it unset. Returns the settings. ``path`` None (a tool run by hand, not
    by a Bazel action) changes nothing and returns {}."""
    if path is None:
        return {}
    environ = os.environ if environ is None else environ
    found = read(path)
    for name in NAMES:
        if name in found:
            environ[name] = found[name]
        else:
            environ.pop(name, None)
    return found


_USERINFO = re.compile(r"(?:(?<=://)|^)([^/@:\s]*):[^/@\s]*@")


def shown(value: str) -> str:
    """``value`` with the password of a ``[scheme://]user:password@`` in it masked (a
    proxy's credentials never reach a log)."""
    return _USERINFO.sub(r"\1:***@", value)


def describe(path: Path | str | None, environ: Mapping[str, str] | None = None) -> str:
    """One line for a build's log: where its settings came from and what they are."""
    where = f"client settings ({path})" if path else "client settings (this process's environment)"
    found = settings(environ)
    return f"{where}: " + (", ".join(f"{k}={shown(v)}" for k, v in found.items()) or "none set")


def add_argument(parser: argparse.ArgumentParser) -> None:
    """``--client-settings FILE``: what the Bazel rules pass to the Docker actions."""
    parser.add_argument(
        FLAG,
        dest="client_settings",
        metavar="FILE",
        help="this build's client settings (@rocm_pytorch_client//:settings.json: where its"
        " engine, staging and mirrors are; tools/client_env.py); without it the tool reads"
        " its own environment",
    )


AUTOSTART_ENV = "ROCM_PYTORCH_STAGING_AUTOSTART"

# What each of the project's settings must be, checked when a Bazel command starts
# (check_settings): a value no reader could use stops the command in one line, also
# when this build happens to run nothing that reads it (all images up to date).
SWITCHES = ("ROCM_PYTORCH_ENGINE_AUTOSTART", AUTOSTART_ENV)
PORTS = ("ROCM_PYTORCH_STAGING_PORT",)
SECONDS = ("ROCM_PYTORCH_ENGINE_START_TIMEOUT", "ROCM_PYTORCH_BUILDER_TIMEOUT")
# read by actions that run in a directory of their own: relative, each would find
# another file
ABSOLUTE = (
    "ROCM_PYTORCH_ENGINE_DIR",
    "ROCM_PYTORCH_STAGING_DIR",
    "ROCM_PYTORCH_SOURCES_DIR",
    "ROCM_PYTORCH_TEAMCACHE_DIR",
    "ROCM_PYTORCH_MIRRORS",
)
# scheme://[user:password@]host[:port][/]: what apt, pip, git and curl all take
_PROXY_URL = re.compile(r"^(https?|socks5h?|socks4a?)://[^/\s]+/?$")

# The docker CLI's own selectors, which image builds do not read: they use DOCKER_HOST
# (one engine) and --builders= (an engine per arch). Refused rather than
# quietly built somewhere else than the user chose.
NOT_READ = {
    "DOCKER_CONTEXT": (
        "image builds take their engine from DOCKER_HOST, not from a docker context;"
        ' export DOCKER_HOST="$(docker context inspect {value} --format'
        " '{{{{.Endpoints.docker.Host}}}}')\" and unset DOCKER_CONTEXT, or map archs to"
        " contexts with --builders=<arch>=<context>"
    ),
    "BUILDX_BUILDER": (
        "image builds use the engine's own BuildKit (DOCKER_HOST), not a buildx builder;"
        " unset BUILDX_BUILDER, or map archs to contexts with --builders=<arch>=<context>"
    ),
}


def check_settings(environ: Mapping[str, str] | None = None) -> None:
    """``SettingError`` (one line, the fix) for the first of the project's settings in
    ``environ`` (default: this process's) that its reader could not use."""
    environ = os.environ if environ is None else environ
    for name in SWITCHES:
        envvars.switch(name, True, environ)
    for name in PORTS:
        envvars.port(name, environ)
    for name in SECONDS:
        envvars.seconds(name, 1.0, environ)
    for name in ABSOLUTE:
        places.check_absolute(name, environ.get(name, "").strip())
    for name in PROXY_NAMES:
        given = environ.get(name, "").strip()
        if given and not name.lower().startswith("no_") and not _PROXY_URL.match(given):
            raise envvars.SettingError(
                f"{name}={shown(given)!r} is not a proxy URL: image builds hand it to apt,"
                " pip and git, and apt takes none without its scheme; set it like"
                " http://proxy.example:3128"
            )
    cert = environ.get("SSL_CERT_FILE", "").strip()
    if cert:
        places.check_absolute("SSL_CERT_FILE", cert)
        if not os.access(cert, os.R_OK) or not Path(cert).is_file():
            raise envvars.SettingError(
                f"SSL_CERT_FILE={cert!r} is not a readable file: image builds trust that CA"
                " bundle in place of this host's; point it at a PEM file, or unset it"
            )
    for name, fix in NOT_READ.items():
        given = environ.get(name, "").strip()
        # the docker CLI's own default context is DOCKER_HOST's engine: what builds use
        if given and not (name == "DOCKER_CONTEXT" and given == "default"):
            raise envvars.SettingError(f"{name}={given!r}: {fix.format(value=given)}")


class AutostartError(Exception):
    """The staging registry's autostart failed otherwise than a registry that cannot start:
    one line naming the error, the state dir and the fix."""


def start_staging() -> None:
    """Start the embedded staging registry unless it runs or ``$ROCM_PYTORCH_STAGING_AUTOSTART``
    is off, printing nothing. A registry that cannot start (``StagingError``: no
    docker-registry, its port taken, no answer in time) is left to the build: an image
    build starts one and says why it cannot. An autostart setting it cannot read, or a
    ``$ROCM_PYTORCH_STAGING_PORT`` other than the port the running registry answers on,
    is a ``SettingError``; any other error (a state dir it cannot write, a bug) an
    ``AutostartError``: the build stops on that line, it does not guess.

    tools.staging is imported here, not declared as a dependency: this runs as a plain
    module from the workspace (tools/workspace_status.sh), and staging's own
    dependencies lead back to this module."""
    if not envvars.switch(AUTOSTART_ENV, True):
        return
    from tools.staging import embedded
    from tools.staging.errors import StagingError

    try:
        embedded.check_port()
    except StagingError as e:
        raise envvars.SettingError(str(e)) from None
    state = embedded.state_dir()
    sys.stdout.flush()
    sys.stderr.flush()
    kept = os.dup(1), os.dup(2)
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)  # the registry's own words are not workspace status
    os.dup2(quiet, 2)
    try:
        embedded.ensure_running()
    except StagingError:
        pass  # expected: the build starts one itself, and says why it cannot
    except Exception as e:
        detail = " ".join(str(e).split())
        raise AutostartError(
            f"the staging registry's autostart failed: {type(e).__name__}: {detail}"
            f" (state dir {state}); fix that, or set {AUTOSTART_ENV}=0 and run"
            " `bazel run //tools/staging -- start`, which shows the whole error"
        ) from None
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, saved in zip((1, 2), kept, strict=True):
            os.dup2(saved, fd)
            os.close(saved)
        os.close(quiet)


USAGE = "usage: python3 -m tools.client_env show FILE | start-staging"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv in (["--help"], ["-h"]):
        print(__doc__.strip())
        print()
        print(USAGE)
        return 0
    if len(argv) == 2 and argv[0] == "show":
        try:
            found = read(argv[1])
        except ClientSettingsError as e:
            print(f"client_env: error: {e}", file=sys.stderr)
            return 1
        for name in NAMES:
            print(f"{name}={found[name]}" if name in found else f"{name} (unset)")
        return 0
    if argv == ["start-staging"]:
        try:
            check_settings()
            start_staging()
        except (envvars.SettingError, AutostartError) as e:
            print(f"client_env: error: {e}", file=sys.stderr)
            return 2
        return 0
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
