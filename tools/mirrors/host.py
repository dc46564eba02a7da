"""What this host is configured with: its Debian mirror, its pip index, its CA bundle.

The mirror settings' ``host`` value stands for these (tools/mirrors/settings.py).
They are read where the build runs: an image build action reads the
configuration of the Bazel host (inside the bootstrap's namespace, /etc is the
sid tree's, whose apt source is this host's Debian mirror with suite sid, and
whose pip and CA files are the host's own).
"""

from __future__ import annotations

import configparser
import os
import re
from dataclasses import dataclass
from pathlib import Path

from tools import places
from tools.mirrors.settings import MirrorError

CA_BUNDLES = (
    "/etc/ssl/certs/ca-certificates.crt",  # Debian, Ubuntu
    "/etc/pki/tls/certs/ca-bundle.crt",  # Fedora, RHEL
    "/etc/ssl/cert.pem",  # Alpine, macOS
)


@dataclass(frozen=True)
class AptSource:
    uri: str
    suites: tuple[str, ...]
    file: str


def apt_sources(etc_apt: Path = Path("/etc/apt")) -> list[AptSource]:
    """The `deb` sources of this host's apt configuration (one-line and deb822 files)."""
    files = [etc_apt / "sources.list"]
    parts = etc_apt / "sources.list.d"
    if parts.is_dir():
        files += sorted(p for p in parts.iterdir() if p.suffix in (".list", ".sources"))
    found: list[AptSource] = []
    for file in files:
        try:
            text = file.read_text()
        except OSError:
            continue
        if file.suffix == ".sources":
            found += _deb822(text, str(file))
        else:
            found += _one_line(text, str(file))
    return found


def _one_line(text: str, file: str) -> list[AptSource]:
    out = []
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if not words or words[0] != "deb":
            continue
        words = words[1:]
        if words and words[0].startswith("["):  # [options]
            while words and not words[0].endswith("]"):
                words = words[1:]
            words = words[1:]
        if len(words) >= 2:
            out.append(AptSource(words[0].rstrip("/"), (words[1],), file))
    return out


def _deb822(text: str, file: str) -> list[AptSource]:
    out = []
    for stanza in re.split(r"\n[ \t]*\n", text):
        fields: dict[str, str] = {}
        key = ""
        for line in stanza.splitlines():
            if line.startswith("#"):
                continue
            if line[:1] in (" ", "\t") and key:
                fields[key] += " " + line.strip()
            elif ":" in line:
                key, _, value = line.partition(":")
                key = key.strip().lower()
                fields[key] = value.strip()
        if "deb" not in fields.get("types", "").split():
            continue
        if fields.get("enabled", "yes").lower() == "no":
            continue
        suites = tuple(fields.get("suites", "").split())
        for uri in fields.get("uris", "").split():
            out.append(AptSource(uri.rstrip("/"), suites, file))
    return out


def debian_mirror(etc_apt: Path = Path("/etc/apt")) -> str:
    """The URI of this host's Debian mirror: the first `deb` source whose path ends in
    /debian (not the security archive). Raises MirrorError when there is none."""
    sources = apt_sources(etc_apt)
    for source in sources:
        if source.uri.rsplit("/", 1)[-1] == "debian":
            return source.uri
    seen = ", ".join(sorted({s.uri for s in sources})) or "none"
    raise MirrorError(
        f"this host has no Debian apt source (a `deb` URI ending in /debian in"
        f" {etc_apt}/sources.list*; found: {seen}), so `host` cannot be resolved:"
        " give the mirror's URI in [apt.rewrite]"
    )


@dataclass(frozen=True)
class PipIndex:
    index_url: str = ""
    extra_index_urls: tuple[str, ...] = ()
    trusted_hosts: tuple[str, ...] = ()


def pip_config_files() -> list[Path]:
    """pip's configuration files in the order pip reads them (later ones win): none when
    ``$PIP_CONFIG_FILE`` is /dev/null, and not the user's own when it names a file that
    exists, as pip does."""
    env = os.environ.get("PIP_CONFIG_FILE")
    if env == os.devnull:
        return []
    home = Path(places.home())
    xdg = os.environ.get("XDG_CONFIG_DIRS", "/etc/xdg").split(":")
    files = [Path(d) / "pip" / "pip.conf" for d in reversed(xdg)]
    files.append(Path("/etc/pip.conf"))
    if not (env and os.path.exists(env)):
        files += [home / ".pip/pip.conf", home / ".config/pip/pip.conf"]
    if env:
        files.append(Path(env))
    return files


def pip_index(files: list[Path] | None = None) -> PipIndex:
    """The index settings of this host's pip configuration (index-url, extra-index-url,
    trusted-host of [global] and [install]), leaving out what names this host's files
    (file: indexes, constraints, find-links, cert): a build step cannot see them.

    A file that is missing or cannot be opened is skipped, as pip skips it; one pip
    cannot parse either (pip stops on it) is a ``MirrorError`` naming it: never the
    host's index quietly left out."""
    values: dict[str, str] = {}
    for file in pip_config_files() if files is None else files:
        parser = configparser.RawConfigParser()
        try:
            parser.read(file, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError) as e:
            reason = " ".join(str(e).split())
            raise MirrorError(
                f"{file} is not a pip configuration pip can read ({reason}); fix it (pip"
                " stops on it too), or name the index in the mirror settings ([pip] index_url,"
                " docs/mirrors.md): the builds take this host's pip index from its files"
            ) from None
        for section in ("global", "install"):
            if parser.has_section(section):
                for key in ("index-url", "extra-index-url", "trusted-host"):
                    if parser.has_option(section, key):
                        values[key] = parser.get(section, key)
    index = values.get("index-url", "").strip()
    return PipIndex(
        index_url="" if _local(index) else index,
        extra_index_urls=tuple(
            u for u in values.get("extra-index-url", "").split() if not _local(u)
        ),
        trusted_hosts=tuple(values.get("trusted-host", "").split()),
    )


def _local(url: str) -> bool:
    """A file: index names a directory of this host, which no build step can see."""
    return url.startswith("file:") or url.startswith("/")


def ca_bundle() -> str:
    """This host's CA bundle: ``$SSL_CERT_FILE`` when the user sets it (what Python,
    curl and the push trust then; `tools.client_env` refuses one that is no readable
    file), else the system trust store (local CAs included); "" if none."""
    given = os.environ.get("SSL_CERT_FILE", "").strip()
    if given:
        return given
    for candidate in CA_BUNDLES:
        if Path(candidate).is_file():
            return candidate
    return ""
