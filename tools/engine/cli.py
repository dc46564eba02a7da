"""engine: the Docker engine the builds and tests use, started when none answers.

`python3 -m tools.engine COMMAND` or `bazel run //tools/engine -- COMMAND`.

The engine is, in this order: the one $DOCKER_HOST names when it answers; the
host's at /var/run/docker.sock; else the project's private engine (containerd
+ dockerd on unix sockets, state in $ROCM_PYTORCH_ENGINE_DIR or
~/.cache/rocm-pytorch-images/engine), which `start` starts and which keeps
running until `stop`. The image builds and Docker tests call the same code:
when nothing answers, each starts an engine for itself only (Bazel ends every
process an action leaves behind), so `bazel test` needs no step before it, and
is faster after `start`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from tools import envvars
from tools.engine import client, engine, state
from tools.engine.errors import EngineError

EPILOG = """\
examples:
  eval "$(python3 -m tools.engine env)"    # docker, buildx and bazel in this shell use it
  python3 -m tools.engine status
  python3 -m tools.engine stop             # the private engine only, never another

environment:
  ROCM_PYTORCH_ENGINE_DIR            the private engine's state dir
  ROCM_PYTORCH_ENGINE_AUTOSTART=0    never start the private engine (fail instead)
  ROCM_PYTORCH_ENGINE_SCOPE          lasting or scoped: how the library starts one
                                     (default: lasting outside Bazel, scoped inside a
                                     Bazel action or test; the actions never see it)
  ROCM_PYTORCH_ENGINE_START_TIMEOUT  seconds to wait for it to answer (default 60)
  ROCM_PYTORCH_DOCKERD_ARGS          extra dockerd flags (e.g. --debug)
  ROCM_PYTORCH_ENGINE_REGISTRY_PORT  the loopback registry's port (default: a free one from 5100)
"""


class Parser(argparse.ArgumentParser):
    """argparse with the tool's one-line error format (exit 2)."""

    def error(self, message: str):  # type: ignore[override]
        print(f"engine: error: {message}; see `{self.prog} --help`", file=sys.stderr)
        sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="engine",
        description=__doc__.split("\n\n", 1)[0] + "\n\n" + __doc__.split("\n\n", 2)[2],
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--dir",
        help="the private engine's state dir (default: $ROCM_PYTORCH_ENGINE_DIR,"
        " else ~/.cache/rocm-pytorch-images/engine of this account)",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)

    def choice_args(q: argparse.ArgumentParser) -> None:
        q.add_argument(
            "--private",
            action="store_true",
            help="use the private engine even when $DOCKER_HOST or the host's engine answers",
        )
        q.add_argument(
            "--registry",
            action="store_true",
            help="also run a loopback docker-registry and export REGISTRY=127.0.0.1:PORT",
        )

    q = sub.add_parser(
        "start",
        help="make sure an engine answers (start the private one if needed)",
        description="Make sure an engine answers: $DOCKER_HOST, the host's, or the private"
        " one (started, detached, when it does not answer). Prints DOCKER_HOST on stdout.",
    )
    choice_args(q)
    q = sub.add_parser(
        "env",
        help="start if needed, then print `export` lines for eval",
        description='Like start, then print `export` lines: eval "$(python3 -m tools.engine'
        ' env)". On failure it prints `false`, so the eval fails too.',
    )
    choice_args(q)
    sub.add_parser(
        "stop",
        help="stop the private engine and its registry",
        description="Stop the private engine (dockerd, containerd, leftover shims) and its"
        " loopback registry. Never touches $DOCKER_HOST's or the host's engine.",
    )
    q = sub.add_parser(
        "status",
        help="which engine would be used, and the private engine's state",
        description="Which engine the builds would use now, and what the private one is doing;"
        " starts nothing. Exit 0 when an engine answers, 3 when none does.",
    )
    q.add_argument("--json", action="store_true", help="one JSON object")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.dir:
        os.environ[state.DIR_ENV] = os.path.abspath(args.dir)
    try:
        if args.command in ("start", "env"):
            env = engine.ensure(private=args.private, registry=args.registry, scope="lasting")
            if args.command == "start":
                print(env["DOCKER_HOST"])
            else:
                sys.stdout.write(client.env_lines(env, client.cli_wrappers()))
        elif args.command == "stop":
            stopped = engine.stop()
            print(f"engine: stopped {', '.join(stopped)}" if stopped else "engine: nothing to stop",
                  file=sys.stderr)  # fmt: skip
        else:
            st = engine.status()
            if args.json:
                print(json.dumps(st, indent=1))
            else:
                for k, v in st.items():
                    print(f"{k + ':':24} {'-' if v is None else v}")
            return 0 if st["uses"] else 3
    except (EngineError, envvars.SettingError) as e:
        print(f"engine: error: {e}", file=sys.stderr)
        if args.command == "env":
            print("false")
        return 1
    return 0
