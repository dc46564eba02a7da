"""The rehearsal's stand-in sources: small real projects served on loopback like GitHub.

The recipes of docker/ fetch their sources with ``fetch-source.sh URL REF``
from GitHub, which the rehearsal's hosts cannot reach. The rehearsal swaps
the sources, never the recipe: ``rehearsal/sources.toml`` lists, per
project, the URL docker/ fetches and the tag the catalogue names, and
``rehearsal/sources/<name>/`` holds a small project that builds
through the same script and entry point as the real one.

``build`` makes a bare git repository per source under ``<root>/github.com/
<owner>/<repo>.git``: one commit of the files (fixed author, committer and
dates, so the same files give the same commit on any host), the submodules
as gitlinks to their own sources' commits with a ``.gitmodules`` naming
their real URLs, and the tag. ``git daemon`` serves the root on a loopback
port (``start``); the mirror settings' ``[git.rewrite]`` then maps
``https://github.com/`` to it (``rewrite``), the way an air-gapped farm maps
GitHub to its git mirror. Shallow fetches of a tag or of a commit work as
they do from GitHub (``uploadpack.allowAnySHA1InWant``).

``start`` also serves the stand-in Rust release channel and crates registry
(tools/rehearsal/rust.py: ``rehearsal/rust.toml``, ``crates/``) with
a static HTTP server on loopback, for the mirror settings' ``[rust]``.

A pin by commit in docker/ (an optional build arg holding a sha of the real
project, such as TRITON_KERNELS_REF) cannot be served: no stand-in has that
sha. The ``[args]`` table of the configuration names, per such arg, the
source whose commit takes its place; ``bazelrc`` writes
``rehearsal/pins.bazelrc``, whose ``build:rehearsal --define
NAME=<commit>`` lines pass them (the recipe is unchanged: only its input).
The commits depend on the stand-ins' files alone, so that file is checked in
and a diff test keeps it current.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

from tools import places
from tools.envvars import SettingError
from tools.process import daemon
from tools.rehearsal import rust

REPO = places.workspace()
CONFIG = REPO / "rehearsal" / "sources.toml"
CATALOG = REPO / "images" / "catalog.toml"
BAZELRC = REPO / "rehearsal" / "pins.bazelrc"
DIR_ENV = "ROCM_PYTORCH_SOURCES_DIR"
HOST = "https://github.com/"
# The identity and time of every stand-in commit: the same tree gives the same sha.
_IDENTITY = {
    "GIT_AUTHOR_NAME": "rocm-pytorch rehearsal",
    "GIT_AUTHOR_EMAIL": "rehearsal@localhost",
    "GIT_COMMITTER_NAME": "rocm-pytorch rehearsal",
    "GIT_COMMITTER_EMAIL": "rehearsal@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
    "GIT_CONFIG_GLOBAL": os.devnull,  # no user setting (an encoding, a hook) shapes the commit
}
_URL = re.compile(r"https://github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(\.git)?")
_VAR = re.compile(r"\$\{([A-Z0-9_]+)\}")


class SourcesError(Exception):
    """A configuration, repository or server that cannot be used; the message says why."""


@dataclass(frozen=True)
class Source:
    name: str
    url: str
    ref: str  # the tag, the catalogue's values filled in; "" for none
    submodules: tuple[tuple[str, str], ...] = ()  # (path, source name)
    pins: tuple[tuple[str, str], ...] = ()  # (file, source name): @name@ -> its commit
    home: Path = CONFIG.parent  # the directory of the configuration

    @property
    def path(self) -> str:
        """Where it is served under the root: github.com/<owner>/<repo>.git."""
        m = _URL.fullmatch(self.url)
        assert m, self.url
        return f"github.com/{m.group(1)}/{m.group(2)}.git"

    @property
    def files(self) -> Path:
        return self.home / "sources" / self.name


def load(config: Path = CONFIG, defaults: dict[str, str] | None = None) -> list[Source]:
    """The sources of ``config``, their refs filled in from the catalogue's defaults."""
    if defaults is None:
        from tools.tagconf import catalog

        defaults = dict(catalog.load(CATALOG).defaults)
    try:
        data = tomllib.loads(config.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise SourcesError(f"{config}: {e}") from None
    sources: list[Source] = []
    for i, entry in enumerate(data.get("source", [])):
        where = f"{config.name}: source {i + 1}"
        unknown = set(entry) - {"name", "url", "ref", "submodules", "pins"}
        if unknown:
            raise SourcesError(f"{where}: unknown keys {sorted(unknown)}")
        name, url = entry.get("name", ""), entry.get("url", "")
        if not re.fullmatch(r"[a-z0-9][a-z0-9_-]*", name):
            raise SourcesError(f"{where}: name {name!r} is not a lowercase word")
        if not _URL.fullmatch(url):
            raise SourcesError(
                f"{where} ({name}): url {url!r} is not https://github.com/OWNER/REPO"
            )

        def fill(m: re.Match[str], name: str = name, where: str = where) -> str:
            if m.group(1) not in defaults:
                raise SourcesError(
                    f"{where} ({name}): ref names ${{{m.group(1)}}}, which the catalogue's"
                    " [defaults] do not have"
                )
            return defaults[m.group(1)]

        ref = _VAR.sub(fill, entry.get("ref", ""))
        subs = tuple(sorted(entry.get("submodules", {}).items()))
        pins = tuple(sorted(entry.get("pins", {}).items()))
        sources.append(Source(name, url, ref, subs, pins, config.parent))
    names = [s.name for s in sources]
    for s in sources:
        if names.count(s.name) > 1:
            raise SourcesError(f"{config.name}: source {s.name!r} is listed twice")
        for path, sub in s.submodules:
            if sub not in names:
                raise SourcesError(
                    f"{config.name}: {s.name}'s submodule {path} names {sub!r}, which is no source"
                )
        for path, pinned in s.pins:
            if pinned not in names:
                raise SourcesError(
                    f"{config.name}: {s.name}'s pin in {path} names {pinned!r}, which is no source"
                )
            if f"@{pinned}@" not in _read(s.files / path):
                raise SourcesError(
                    f"{config.name}: {s.name}'s pin file {path} has no @{pinned}@ to fill in"
                )
        if not s.files.is_dir():
            raise SourcesError(f"{config.name}: {s.name} has no files: {s.files} is missing")
    return sources


def arg_pins(config: Path = CONFIG) -> dict[str, str]:
    """The ``[args]`` table: optional build arg -> the source whose commit it takes."""
    try:
        data = tomllib.loads(config.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise SourcesError(f"{config}: {e}") from None
    table = data.get("args", {})
    names = {entry.get("name") for entry in data.get("source", [])}
    if not isinstance(table, dict):
        raise SourcesError(f'{config.name}: [args] must be a table of NAME = "source"')
    for arg, source in table.items():
        if not re.fullmatch(r"[A-Z][A-Z0-9_]*", arg):
            raise SourcesError(f"{config.name}: [args] {arg!r} is not a build arg name")
        if source not in names:
            raise SourcesError(f"{config.name}: [args] {arg} names {source!r}, which is no source")
    return dict(sorted(table.items()))


def bazelrc(sources: list[Source], pins: dict[str, str]) -> str:
    """rehearsal/pins.bazelrc: each pinned arg set to its stand-in's commit."""
    with tempfile.TemporaryDirectory() as tmp:
        commits = build(sources, Path(tmp))
    lines = [
        "# Generated by `bazel run //rehearsal:update_pins` from",
        "# rehearsal/sources.toml ([args]) and the stand-ins' files: do not edit.",
        "# The optional build args docker/ pins to a commit of the real project get",
        "# the commit of the stand-in served in its place (docs/rehearsal.md).",
    ]
    lines += [f"build:rehearsal --define {arg}={commits[name]}" for arg, name in pins.items()]
    return "\n".join(lines) + "\n"


def _git(*args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **_IDENTITY, "GIT_CONFIG_NOSYSTEM": "1", **(env or {})},
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SourcesError(f"git {' '.join(args)} in {cwd}: {proc.stderr.strip()}")
    return proc.stdout.strip()


def fingerprint(sources: list[Source]) -> str:
    """A digest of everything ``build`` reads: the configuration and every file."""
    h = hashlib.sha256()
    for s in sources:
        h.update(repr((s.name, s.url, s.ref, s.submodules, s.pins)).encode())
        for f in sorted(p for p in s.files.rglob("*") if p.is_file()):
            h.update(str(f.relative_to(s.files)).encode() + b"\0")
            h.update(f"{f.stat().st_mode & 0o111:o}\0".encode() + f.read_bytes())
    return h.hexdigest()


def build(sources: list[Source], root: Path) -> dict[str, str]:
    """One bare repository per source under ``root``; each source's commit sha."""
    commits: dict[str, str] = {}
    by_name = {s.name: s for s in sources}
    pending = list(sources)
    while pending:  # submodules and pins first: a gitlink or a pin needs the commit
        ready = [s for s in pending if all(n in commits for _, n in (*s.submodules, *s.pins))]
        if not ready:
            raise SourcesError(f"submodules or pins form a cycle among {[s.name for s in pending]}")
        for s in ready:
            commits[s.name] = _build_one(s, root, commits, by_name)
            pending.remove(s)
    return commits


def _build_one(s: Source, root: Path, commits: dict[str, str], by_name: dict[str, Source]) -> str:
    bare = root / s.path
    if bare.exists():
        shutil.rmtree(bare)
    bare.mkdir(parents=True)
    _git("init", "--quiet", "--bare", "--initial-branch=main", str(bare), cwd=root)
    _git("config", "uploadpack.allowAnySHA1InWant", "true", cwd=bare)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        shutil.copytree(s.files, work, symlinks=True)
        for path, pinned in s.pins:
            pin = work / path
            pin.write_text(pin.read_text().replace(f"@{pinned}@", commits[pinned]))
        _git("init", "--quiet", "--initial-branch=main", cwd=work)
        if s.submodules:
            (work / ".gitmodules").write_text(
                "".join(
                    f'[submodule "{path}"]\n\tpath = {path}\n\turl = {by_name[sub].url}\n'
                    for path, sub in s.submodules
                )
            )
        _git("add", "--all", cwd=work)
        for path, sub in s.submodules:
            _git("update-index", "--add", "--cacheinfo", f"160000,{commits[sub]},{path}", cwd=work)
        _git("commit", "--quiet", "--no-gpg-sign", "-m", f"{s.name}: rehearsal stand-in", cwd=work)
        if s.ref:
            _git("tag", s.ref, cwd=work)
        _git(
            "push",
            "--quiet",
            str(bare),
            "main",
            *(["refs/tags/" + s.ref] if s.ref else []),
            cwd=work,
        )
        return _git("rev-parse", "HEAD", cwd=work)


# -- the server ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Paths:
    dir: Path

    @property
    def root(self) -> Path:
        return self.dir / "repos"

    @property
    def pid(self) -> Path:
        return self.dir / "git-daemon.pid"

    @property
    def port(self) -> Path:
        return self.dir / "port"

    @property
    def log(self) -> Path:
        return self.dir / "git-daemon.log"

    @property
    def lock(self) -> Path:
        return self.dir / "lock"

    @property
    def built(self) -> Path:
        return self.dir / "built"  # the fingerprint the repositories were built from


def paths() -> Paths:
    return Paths(places.state_dir(DIR_ENV, "sources"))


def rust_paths() -> rust.Paths:
    """Where the stand-in Rust servers' trees, downloads and server live."""
    return rust.Paths(paths().dir / "rust")


def start_rust(port: int = 0) -> int:
    """Build (when changed) and serve the stand-in Rust release channel and registry."""
    with daemon.locked(paths().lock, "sources: waiting for another start or stop"):
        try:
            return rust.start(rust.load(), rust_paths(), port)
        except rust.RustError as e:
            raise SourcesError(f"rust: {e}") from None


def mirror_settings(git_port: int, rust_port: int | None) -> str:
    """The mirror settings that send GitHub, and rustup and crates-io, to the servers."""
    original, mirror = rewrite(git_port)
    text = f'[git.rewrite]\n"{original}" = "{mirror}"\n'
    if rust_port is not None:
        dist, registry = rust.settings(rust_port)
        text += f'\n[rust]\ndist_server = "{dist}"\ncrates_registry = "{registry}"\n'
    return text


def rewrite(port: int) -> tuple[str, str]:
    """The mirror settings' [git.rewrite] entry that sends GitHub to the server."""
    return HOST, f"git://127.0.0.1:{port}/github.com/"


def _answering(p: Paths) -> int | None:
    return daemon.answering((p.pid, p.port), p.root, _serves)


def _serves(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError:
        return False


def start(sources: list[Source], port: int = 0) -> int:
    """Build the repositories and serve them; the port. A server that runs keeps its
    port, and rebuilds the repositories when a stand-in changed since."""
    p = paths()
    want = fingerprint(sources)
    with daemon.locked(p.lock, "sources: waiting for another start or stop"):
        found = _answering(p)
        if found is not None and port and port != found:
            raise SourcesError(f"already serving on 127.0.0.1:{found}; stop it to move to {port}")
        if found is None or _read(p.built) != want:
            _build_all(p, sources, want)
        return found if found is not None else _serve(p, port)


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _build_all(p: Paths, sources: list[Source], want: str) -> None:
    if p.root.exists():
        shutil.rmtree(p.root)
    p.root.mkdir(parents=True)
    commits = build(sources, p.root)
    places.write_atomic(p.built, want + "\n")
    places.write_atomic(
        p.dir / "commits", "".join(f"{n} {c}\n" for n, c in sorted(commits.items()))
    )


def _serve(p: Paths, port: int) -> int:
    port = port or daemon.free_port()
    if not daemon.port_free(port):
        raise SourcesError(f"port {port} is in use; pick another with --port")
    argv = [
        "git",
        "daemon",
        "--listen=127.0.0.1",
        f"--port={port}",
        f"--base-path={p.root}",
        "--export-all",
        "--reuseaddr",
        "--informative-errors",
        str(p.root),
    ]
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}
    died = daemon.serve(argv, p.log, (p.pid, p.port), port, lambda: _serves(port), env=env)
    if died:
        raise SourcesError(f"git daemon on 127.0.0.1:{port} {died}: {daemon.tail(p.log, 5)}")
    return port


def _stop(p: Paths) -> int | None:
    pid = daemon.read_int(p.pid)
    if pid and daemon.ours(pid, p.root):
        daemon.terminate(pid, 5, error=SourcesError, what="git daemon")
        return pid
    return None


def commits() -> dict[str, str]:
    """Each served source's commit, from the last build."""
    text = _read(paths().dir / "commits")
    return dict(line.split() for line in text.splitlines() if line.strip())


# -- the command line -----------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m tools.rehearsal.sources",
        description="Serve the rehearsal's stand-in sources (rehearsal/sources.toml) on"
        " loopback with git daemon, under the URLs docker/ fetches from GitHub.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_start = sub.add_parser(
        "start",
        help="build the repositories and the Rust servers and serve them (again after a"
        " stand-in changed); prints the [git.rewrite] and [rust] mirror settings",
    )
    p_start.add_argument("--port", type=int, default=0, help="loopback port (default: a free one)")
    p_start.add_argument(
        "--rust-port", type=int, default=0, help="the Rust servers' port (default: a free one)"
    )
    p_start.add_argument(
        "--no-rust",
        action="store_true",
        help="leave out the stand-in Rust release channel and crates registry",
    )
    p_start.add_argument(
        "--mirrors",
        type=Path,
        help="also write a mirror settings file with that rewrite and [rust] to this path"
        " (use it with ROCM_PYTORCH_MIRRORS=PATH)",
    )
    p_rc = sub.add_parser(
        "bazelrc",
        help="write rehearsal/pins.bazelrc: the [args] pins as --config=rehearsal defines",
    )
    p_rc.add_argument("--output", type=Path, help="write here instead of stdout")
    p_rc.add_argument(
        "--update",
        action="store_true",
        help="write the checkout's rehearsal/pins.bazelrc (under `bazel run`: the workspace's)",
    )
    sub.add_parser("stop", help="stop the servers")
    sub.add_parser(
        "status", help="the ports, each source's URL, tag and commit, the toolchain and crates"
    )
    args = parser.parse_args(argv)
    try:
        p = paths()
        if args.command == "start":
            port = start(load(), args.port)
            print(f"sources: serving {p.root} on 127.0.0.1:{port}", file=sys.stderr)
            rust_port = None if args.no_rust else start_rust(args.rust_port)
            if rust_port is not None:
                print(
                    f"sources: serving {rust_paths().www} on 127.0.0.1:{rust_port}", file=sys.stderr
                )
            text = mirror_settings(port, rust_port)
            if args.mirrors:
                places.write_atomic(
                    args.mirrors,
                    "# the rehearsal's stand-in sources (python3 -m tools.rehearsal.sources)\n"
                    + text,
                )
                print(f"sources: wrote {args.mirrors}", file=sys.stderr)
            print(text, end="")
        elif args.command == "bazelrc":
            text = bazelrc(load(), arg_pins())
            out = args.output and places.user_path(str(args.output))
            if args.update:
                out = BAZELRC
            if out:
                places.write_atomic(out, text)
                print(f"sources: wrote {out}", file=sys.stderr)
            else:
                sys.stdout.write(text)
        elif args.command == "stop":
            with daemon.locked(p.lock):
                pid = _stop(p)
                rust_pid = rust.stop(rust_paths())
            print(f"sources: stopped git daemon {pid}" if pid else "sources: not running")
            if rust_pid:
                print(f"sources: stopped the Rust servers' http server {rust_pid}")
        else:
            with daemon.locked(p.lock):
                port = _answering(p)
                rust_port = rust.answering(rust_paths())
            if port is None:
                print("sources: not running (python3 -m tools.rehearsal.sources start)")
                return 1
            served = commits()
            print(f"sources: 127.0.0.1:{port}, {p.root}")
            for s in load():
                print(f"  {s.url} {s.ref or '(main)'} {served.get(s.name, '?')[:12]}")
            if rust_port is None:
                print("rust: not running")
            else:
                toolchain, crates = rust.served(rust_paths())
                dist, registry = rust.settings(rust_port)
                channels = ", ".join(rust.load().channels)
                print(f"rust: 127.0.0.1:{rust_port}, {rust_paths().www}")
                print(f"  dist server {dist}: {channels} ({toolchain})")
                print(f"  crates registry {registry}")
                for crate, cksum in sorted(crates.items()):
                    print(f"    {crate} {cksum}")
    except (SourcesError, rust.RustError, SettingError) as e:
        print(f"sources: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
