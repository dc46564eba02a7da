"""mirrors: show and check the mirror settings the image builds use.

`bazel run //tools/mirrors -- COMMAND` or `python3 -m tools.mirrors COMMAND`.
The settings file and its keys are described in tools/mirrors/settings.py and
docs/mirrors.md; builds read it when they run, so editing it rebuilds nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import socket
import sys
import urllib.error
import urllib.parse

from tools.envvars import SettingError
from tools.mirrors import fetch
from tools.mirrors import secrets as secrets_mod
from tools.mirrors import settings as settings_mod
from tools.mirrors.settings import MirrorError
from tools.places import user_path


class Parser(argparse.ArgumentParser):
    """argparse with the tool's one-line error format (exit 2)."""

    def error(self, message: str):  # type: ignore[override]
        print(f"mirrors: error: {message}; see `{self.prog} --help`", file=sys.stderr)
        sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="mirrors",
        description="Show and check the mirror settings of the image builds (apt, pip, git"
        " sources, credentials, CA bundle, compiler cache). The file: $ROCM_PYTORCH_MIRRORS, else"
        " ~/.config/rocm-pytorch-images/mirrors.toml; no file means the defaults.",
    )
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)
    show = sub.add_parser(
        "show",
        help="the settings builds on this host use, with `host` values resolved",
        description="Print where the settings come from and every setting in use, with the"
        " `host` values resolved from this host's configuration. Credentials are never"
        " printed (URLs hold none; the netrc file is named, not read out).",
    )
    show.add_argument("--json", action="store_true", help="machine-readable output")
    check = sub.add_parser(
        "check",
        help="validate the settings (and with --probe, ask each mirror)",
        description="Load, validate and resolve the settings; exit 1 naming the bad key and"
        " the fix. --probe also sends one request to each mirror URL (with the netrc"
        " credentials and the CA bundle the builds get), and to the compiler cache's"
        " endpoint, and reports whether each answers.",
    )
    check.add_argument("--probe", action="store_true", help="ask each mirror URL")
    check.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS")
    render = sub.add_parser(
        "render",
        help="write the secrets a build gets into a directory (to inspect them)",
        description="Write the BuildKit secrets an image build would get (apt-mirror,"
        " pip.conf, gitconfig, mirror-netrc, mirror-ca; rust-mirror, compiler-cache and"
        " compiler-cache-credentials when configured) into DIR, mode 0600. They may hold"
        " credentials: delete DIR afterwards.",
    )
    render.add_argument("dir", type=user_path, metavar="DIR")
    return p


def _resolved() -> secrets_mod.Resolved:
    return secrets_mod.resolve(settings_mod.load())


def cmd_show(args: argparse.Namespace) -> int:
    resolved = _resolved()
    file = settings_mod.path()
    if args.json:
        print(
            json.dumps(
                {
                    "file": str(file),
                    "exists": file.exists(),
                    "apt_rewrite": dict(resolved.apt_rewrite),
                    "apt_options": dict(resolved.apt_options),
                    "pip_index_url": resolved.pip.index_url,
                    "pip_extra_index_urls": list(resolved.pip.extra_index_urls),
                    "pip_trusted_hosts": list(resolved.pip.trusted_hosts),
                    "git_rewrite": dict(resolved.git_rewrite),
                    "netrc": resolved.netrc,
                    "ca_bundle": resolved.ca_bundle,
                    "compiler_cache": {
                        k: v for k, v in dataclasses.asdict(resolved.compiler_cache).items() if v
                    },
                    "notes": list(resolved.notes),
                },
                indent=2,
            )
        )
        return 0
    print(f"settings: {file}" + ("" if file.exists() else " (no file: the defaults)"))
    for line in resolved.describe() or ["(no mirror: the images' own sources)"]:
        print(f"  {line}")
    return 0


def _probe(url: str, resolved: secrets_mod.Resolved, timeout: float) -> str:
    try:
        with fetch.opener(resolved, url).open(url, timeout=timeout) as r:
            return f"answers (HTTP {r.status})"
    except urllib.error.HTTPError as e:
        return f"answers (HTTP {e.code})" if e.code < 500 else f"fails (HTTP {e.code})"
    except (urllib.error.URLError, OSError, ValueError) as e:
        reason = getattr(e, "reason", e)
        return f"does not answer ({reason})"


def _probe_redis(url: str, timeout: float) -> str:
    parts = urllib.parse.urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "", parts.port or 6379), timeout):
            return "answers (TCP)"
    except OSError as e:
        return f"does not answer ({e.strerror or e})"


def cmd_check(args: argparse.Namespace) -> int:
    resolved = _resolved()
    print(f"mirrors: the settings in {settings_mod.path()} are valid")
    for note in resolved.notes:
        print(f"  note: {note}")
    if not args.probe:
        return 0
    urls = [b for _, b in resolved.apt_rewrite] + [b for _, b in resolved.git_rewrite]
    urls += [u for u in (resolved.pip.index_url, *resolved.pip.extra_index_urls) if u]
    failed = 0
    for url in urls:
        if not url.startswith(("http://", "https://")):
            print(f"  {url}: not probed (not HTTP)")
            continue
        result = _probe(url, resolved, args.timeout)
        failed += not result.startswith("answers")
        print(f"  {url}: {result}")
    cc = resolved.compiler_cache
    if cc.remote:
        # without its credentials: an answer is what a build needs to use it
        url = secrets_mod.compiler_cache_endpoint(cc)
        if cc.backend == "sccache-redis":
            result = _probe_redis(url, args.timeout)
        else:
            result = _probe(url, secrets_mod.Resolved(ca_bundle=resolved.ca_bundle), args.timeout)
        failed += not result.startswith("answers")
        print(f"  compiler cache {cc.backend} at {url}: {result}")
    return 1 if failed else 0


def cmd_render(args: argparse.Namespace) -> int:
    resolved = _resolved()
    written = secrets_mod.render(resolved, args.dir)
    for secret, file in sorted(written.items()):
        print(f"{secret}: {file} (mounted at {secrets_mod.MOUNTS[secret]})")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return {"show": cmd_show, "check": cmd_check, "render": cmd_render}[args.command](args)
    except (MirrorError, SettingError) as e:
        print(f"mirrors: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
