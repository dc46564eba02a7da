"""The mirror settings: where image builds fetch packages and sources, read from one file.

A build host in an air-gapped farm cannot reach the archives, package indexes
and git hosts the Dockerfiles name (the upstream image's apt sources, PyPI,
GitHub). Its mirrors are a property of the host, like its docker credentials,
not of the images: they reach a build as BuildKit secrets (tools/mirrors/
secrets.py), so they never enter an image, a cache key, a label, a log or a
descriptor, and changing them rebuilds nothing.

The file is TOML (every key optional)::

    [apt.rewrite]            # archive URI prefix in the image's sources = mirror
    "http://archive.ubuntu.com/ubuntu" = "http://apt.example.internal/ubuntu"
    [apt.options]            # apt options for every apt run of the builds
    "Acquire::Check-Valid-Until" = "false"

    [pip]
    index_url = "https://pypi.example.internal/simple"  # "host": this host's pip config
    extra_index_urls = []
    trusted_hosts = []

    [git.rewrite]            # url.<mirror>.insteadOf <prefix>
    "https://github.com/" = "https://git.example.internal/github/"

    [auth]
    netrc = "/path/to/mirrors.netrc"   # credentials of the mirrors (netrc format)

    [tls]
    ca_bundle = "host"       # PEM bundle the builds trust; "host": this host's; "": the image's

    [rust]                   # the vLLM build's Rust toolchain and crates (no default)
    dist_server = "https://rust.example.internal"          # rustup's RUSTUP_DIST_SERVER
    crates_registry = "sparse+https://crates.example.internal/index/"  # replaces crates-io

    [compiler_cache]         # the native builds' compiler cache (default: "local")
    backend = "sccache-s3"   # local, none, sccache-webdav, -s3, -gcs, -redis, ccache-http
    endpoint = "https://minio.example.internal:9000"
    bucket = "rocm-pytorch-cache"
    credentials = "/path/to/aws-credentials"   # a file of the host, passed unchanged

Where it is: ``$ROCM_PYTORCH_MIRRORS``, else
``$XDG_CONFIG_HOME/rocm-pytorch-images/mirrors.toml``, else
``~/.config/rocm-pytorch-images/mirrors.toml`` (tools/places.py: ``config_dir``;
a build action, which runs without HOME, reads the account's home). No file means the defaults
(``DEFAULTS``): the rehearsal's stand-in archive maps to this host's Debian
mirror, pip uses this host's index settings and the builds trust this host's
CA bundle. A file's tables add to the defaults; a key it sets wins.
"""

from __future__ import annotations

import difflib
import json
import netrc
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from tools import places

ENV = "ROCM_PYTORCH_MIRRORS"
FILE_NAME = "mirrors.toml"

# The value that means "what this host is configured with" (tools/mirrors/host.py).
HOST = "host"

# The archive the rehearsal's stand-in upstream names in its apt sources
# (rehearsal/): a reserved name (RFC 2606) that no network resolves, so
# every apt run on it goes through this mapping, like an air-gapped farm's.
STANDIN_ARCHIVE = "http://debian.invalid/debian"

_SCHEMES = {
    "apt": ("http", "https", "file"),
    "pip": ("http", "https", "file"),
    "git": ("http", "https", "git", "ssh", "file"),
    "rust": ("http", "https"),
    "cache": ("http", "https"),
    "redis": ("redis", "rediss"),
    "ccache": ("http",),
}
_OPTION_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_:.-]*")
_HOSTNAME = re.compile(r"[A-Za-z0-9.-]+(:[0-9]+)?|\[[0-9A-Fa-f:.]+\](:[0-9]+)?")


class MirrorError(Exception):
    """Mirror settings that cannot be used; the message names the key and the fix."""


# The compiler cache backends ([compiler_cache] backend). "local": ccache in
# the BuildKit cache mount of the build host (the default); "none": no cache;
# the others are a shared cache server every build host of a farm reaches.
LOCAL = "local"
BACKENDS = (
    LOCAL,
    "none",
    "sccache-webdav",
    "sccache-s3",
    "sccache-gcs",
    "sccache-redis",
    "ccache-http",
)
# The keys each backend takes besides `backend`, and those it requires.
_CC_TAKES = {
    LOCAL: set(),
    "none": set(),
    "sccache-webdav": {"endpoint", "key_prefix", "credentials"},
    "sccache-s3": {"endpoint", "bucket", "region", "key_prefix", "credentials"},
    "sccache-gcs": {"bucket", "key_prefix", "credentials"},
    "sccache-redis": {"endpoint", "key_prefix", "credentials"},
    "ccache-http": {"endpoint", "credentials"},
}
_CC_NEEDS = {
    "sccache-webdav": {"endpoint"},
    "sccache-s3": {"endpoint", "bucket"},
    "sccache-gcs": {"bucket"},
    "sccache-redis": {"endpoint"},
    "ccache-http": {"endpoint"},
}
# Why a backend does not take a key (the fix is in the message).
_CC_WHY_NOT = {
    ("sccache-gcs", "endpoint"): "sccache's GCS backend reaches storage.googleapis.com only"
    " (it has no endpoint setting)",
    ("ccache-http", "key_prefix"): "ccache keys the entries under the endpoint's path:"
    " put the prefix there",
}
# The attributes ccache's http backend takes after the URL (`URL|layout=bazel`);
# bearer-token is left out on purpose: credentials go in the credentials file.
_CCACHE_HTTP_ATTRIBUTES = {
    "connect-timeout",
    "keep-alive",
    "layout",
    "operation-timeout",
    "read-only",
    "shards",
}
_CCACHE_LAYOUTS = ("bazel", "flat", "subdirs")
_CC_EXAMPLES = {  # an endpoint of each backend that takes one, for messages
    "sccache-webdav": "http://cache.example.internal:8080/sccache",
    "sccache-s3": "https://minio.example.internal:9000",
    "sccache-redis": "redis://cache.example.internal:6379",
    "ccache-http": "http://cache.example.internal:8080/ccache|layout=bazel",
}
_BUCKET = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_REGION = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")
_KEY_PREFIX = re.compile(r"[A-Za-z0-9._/-]+")
_WORD = re.compile(r"[A-Za-z0-9._-]+")


@dataclass(frozen=True)
class CompilerCache:
    """The compiler cache of the native builds ([compiler_cache]); default: local ccache."""

    backend: str = LOCAL
    endpoint: str = ""
    bucket: str = ""
    region: str = ""
    key_prefix: str = ""
    credentials: str = ""  # a file of the host, passed to the builds unchanged

    @property
    def remote(self) -> bool:
        return self.backend not in (LOCAL, "none")

    def where(self) -> str:
        """Where the cache is, for messages (no credentials: the settings refuse them)."""
        if self.backend == "sccache-gcs":
            return f"gs://{self.bucket}"
        if self.backend == "sccache-s3":
            return f"{self.endpoint.rstrip('/')}/{self.bucket}"
        return self.endpoint


@dataclass(frozen=True)
class Settings:
    """The mirror settings of a build host (values may still be ``HOST``)."""

    apt_rewrite: dict[str, str] = field(default_factory=dict)
    apt_options: dict[str, str] = field(default_factory=dict)
    pip_index_url: str = HOST
    pip_extra_index_urls: tuple[str, ...] | None = None  # None: with index_url
    pip_trusted_hosts: tuple[str, ...] | None = None
    git_rewrite: dict[str, str] = field(default_factory=dict)
    netrc: str = ""
    ca_bundle: str = HOST
    rust_dist_server: str = ""  # "": rustup's default
    rust_crates_registry: str = ""  # "": crates-io itself
    compiler_cache: CompilerCache = field(default_factory=CompilerCache)
    source: str = "defaults"  # the file they came from, for messages


DEFAULTS = Settings(apt_rewrite={STANDIN_ARCHIVE: HOST})

_KEYS = {
    "apt": {"rewrite", "options"},
    "pip": {"index_url", "extra_index_urls", "trusted_hosts"},
    "git": {"rewrite"},
    "auth": {"netrc"},
    "tls": {"ca_bundle"},
    "rust": {"dist_server", "crates_registry"},
    "compiler_cache": {"backend", "endpoint", "bucket", "region", "key_prefix", "credentials"},
}


def path() -> Path:
    """The settings file: ``$ROCM_PYTORCH_MIRRORS``, else the account's config dir."""
    configured = os.environ.get(ENV)
    if configured:
        return Path(configured).absolute()
    return places.config_dir() / FILE_NAME


def load(file: Path | None = None) -> Settings:
    """The validated settings of ``file`` (default: ``path()``) over ``DEFAULTS``."""
    file = file or path()
    if not file.exists():
        if os.environ.get(ENV):
            raise MirrorError(f"${ENV}={file} does not exist; create it or unset {ENV}")
        return DEFAULTS
    try:
        data = tomllib.loads(file.read_text())
    except (OSError, UnicodeDecodeError) as e:
        raise MirrorError(f"{file}: cannot read it: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise MirrorError(f"{file}: not valid TOML: {e}; fix the file") from None
    return parse(data, str(file))


def _unknown(where: str, key: str, known: set[str]) -> MirrorError:
    close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.5)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return MirrorError(f"{where}: unknown key {key!r}; {hint}(known: {', '.join(sorted(known))})")


def _table(data: dict, section: str, key: str, source: str) -> dict[str, str]:
    value = data.get(section, {}).get(key, {})
    where = f"{source}: [{section}.{key}]"
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise MirrorError(f'{where} must be a table of strings, e.g. "FROM" = "TO"')
    return dict(value)


def _strings(data: dict, section: str, key: str, source: str) -> tuple[str, ...] | None:
    if key not in data.get(section, {}):
        return None
    value = data[section][key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise MirrorError(f"{source}: [{section}] {key} must be a list of strings")
    return tuple(value)


def _string(data: dict, section: str, key: str, source: str, default: str) -> str:
    value = data.get(section, {}).get(key, default)
    if not isinstance(value, str):
        raise MirrorError(f"{source}: [{section}] {key} must be a string")
    return value


def parse(data: dict, source: str = "settings") -> Settings:
    """Settings from the parsed TOML ``data`` over ``DEFAULTS``; raises MirrorError."""
    for section, value in data.items():
        if section not in _KEYS:
            raise _unknown(source, section, set(_KEYS))
        if not isinstance(value, dict):
            raise MirrorError(f"{source}: {section} must be a table ([{section}])")
        for key in value:
            if key not in _KEYS[section]:
                raise _unknown(f"{source}: [{section}]", key, _KEYS[section])
    settings = Settings(
        apt_rewrite={**DEFAULTS.apt_rewrite, **_table(data, "apt", "rewrite", source)},
        apt_options=_table(data, "apt", "options", source),
        pip_index_url=_string(data, "pip", "index_url", source, DEFAULTS.pip_index_url),
        pip_extra_index_urls=_strings(data, "pip", "extra_index_urls", source),
        pip_trusted_hosts=_strings(data, "pip", "trusted_hosts", source),
        git_rewrite=_table(data, "git", "rewrite", source),
        netrc=_string(data, "auth", "netrc", source, DEFAULTS.netrc),
        ca_bundle=_string(data, "tls", "ca_bundle", source, DEFAULTS.ca_bundle),
        rust_dist_server=_string(data, "rust", "dist_server", source, ""),
        rust_crates_registry=_string(data, "rust", "crates_registry", source, ""),
        compiler_cache=CompilerCache(
            **{
                key: _string(data, "compiler_cache", key, source, getattr(CompilerCache, key))
                for key in sorted(_KEYS["compiler_cache"])
            }
        ),
        source=source,
    )
    validate(settings)
    return settings


_NETRC_FIX = (
    "put them in the netrc file ([auth] netrc) instead: a URL reaches apt's, pip's and"
    " git's output, the netrc file reaches nothing but the build step that uses it"
)


def check_url(
    value: str,
    where: str,
    kind: str,
    credentials_fix: str = _NETRC_FIX,
    example: str = "http://mirror.example.internal/debian",
) -> None:
    """``value`` is a URL of ``kind`` (apt, pip, git, ...) with no credentials; else
    MirrorError (``credentials_fix``: where the message sends credentials instead)."""
    schemes = _SCHEMES[kind]
    if not value or any(c.isspace() for c in value):
        raise MirrorError(f"{where}: {value!r} is not a URL (empty or has spaces)")
    scheme, sep, rest = value.partition("://")
    if not sep or scheme not in schemes:
        raise MirrorError(
            f"{where}: {value!r} is not a {' / '.join(s + '://' for s in schemes)} URL;"
            f" write the whole URL, e.g. {example}"
        )
    netloc = rest.split("/", 1)[0]
    if "@" in netloc:
        raise MirrorError(f"{where}: the URL has credentials in it; {credentials_fix}")
    if scheme != "file" and not (netloc and _HOSTNAME.fullmatch(netloc)):
        raise MirrorError(f"{where}: {value!r} has no valid host; fix the URL")


def validate(settings: Settings) -> None:
    """Check every value of ``settings`` (not the ``HOST`` ones); raises MirrorError."""
    src = settings.source
    for original, mirror in settings.apt_rewrite.items():
        check_url(original, f"{src}: [apt.rewrite] key", "apt")
        if mirror != HOST:
            check_url(mirror, f"{src}: [apt.rewrite] {original!r}", "apt")
    for key, value in settings.apt_options.items():
        if not _OPTION_KEY.fullmatch(key):
            raise MirrorError(f"{src}: [apt.options] {key!r} is not an apt option name")
        if any(c in value for c in '"\n\r'):
            raise MirrorError(
                f"{src}: [apt.options] {key}: the value may not hold quotes or newlines"
            )
    if settings.pip_index_url not in (HOST, ""):
        check_url(settings.pip_index_url, f"{src}: [pip] index_url", "pip")
    for url in settings.pip_extra_index_urls or ():
        check_url(url, f"{src}: [pip] extra_index_urls", "pip")
    for host in settings.pip_trusted_hosts or ():
        if not _HOSTNAME.fullmatch(host):
            raise MirrorError(f"{src}: [pip] trusted_hosts: {host!r} is not a HOST[:PORT]")
    for original, mirror in settings.git_rewrite.items():
        if not original or any(c.isspace() or c in '"\\' for c in original):
            raise MirrorError(f"{src}: [git.rewrite] key {original!r} is not a URL prefix")
        check_url(mirror, f"{src}: [git.rewrite] {original!r}", "git")
    if settings.netrc:
        check_netrc(Path(settings.netrc), f"{src}: [auth] netrc")
    if settings.ca_bundle not in (HOST, ""):
        check_ca_bundle(Path(settings.ca_bundle), f"{src}: [tls] ca_bundle")
    if settings.rust_dist_server:
        check_url(settings.rust_dist_server, f"{src}: [rust] dist_server", "rust")
    if settings.rust_crates_registry:
        # cargo's sparse protocol is spelled sparse+https://
        registry = settings.rust_crates_registry.removeprefix("sparse+")
        check_url(registry, f"{src}: [rust] crates_registry", "rust")
    check_compiler_cache(settings.compiler_cache, f"{src}: [compiler_cache]")


_CC_CREDENTIALS_FIX = (
    "put them in the file [compiler_cache] credentials names instead: the endpoint reaches"
    " the build log, the credentials file only the build steps that compile"
)


def _backend_hint(value: str) -> str:
    close = [b for b in BACKENDS if b.endswith(f"-{value}") or b.startswith(f"{value}-")]
    close = close or difflib.get_close_matches(value, BACKENDS, n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}? " if close else ""


def check_compiler_cache(cc: CompilerCache, where: str) -> None:
    """Check the [compiler_cache] table (``where`` names it); raises MirrorError."""
    if cc.backend not in BACKENDS:
        raise MirrorError(
            f"{where} backend {cc.backend!r} is no backend; {_backend_hint(cc.backend)}"
            f"(one of: {', '.join(BACKENDS)})"
        )
    takes = _CC_TAKES[cc.backend]
    for key in sorted(_KEYS["compiler_cache"] - {"backend"}):
        if getattr(cc, key) and key not in takes:
            why = _CC_WHY_NOT.get((cc.backend, key))
            if why:
                fix = f"{why}; remove {key}"
            elif takes:
                fix = f"it takes {', '.join(sorted(takes))}; remove {key}"
            else:
                fix = f"remove {key}, or choose a backend that uses one"
            raise MirrorError(f"{where} {key}: backend {cc.backend!r} takes no {key}; {fix}")
    for key in sorted(_CC_NEEDS.get(cc.backend, set())):
        if not getattr(cc, key):
            example = _CC_EXAMPLES[cc.backend] if key == "endpoint" else "rocm-pytorch-cache"
            raise MirrorError(
                f'{where}: backend {cc.backend!r} needs {key}, e.g. {key} = "{example}"'
            )
    if cc.endpoint:
        _check_cache_endpoint(cc, f"{where} endpoint")
    if cc.bucket and not _BUCKET.fullmatch(cc.bucket):
        raise MirrorError(f"{where} bucket: {cc.bucket!r} is not a bucket name; give the name only")
    if cc.region and not _REGION.fullmatch(cc.region):
        raise MirrorError(f"{where} region: {cc.region!r} is not a region, e.g. us-east-1 or auto")
    if cc.key_prefix and not _KEY_PREFIX.fullmatch(cc.key_prefix):
        raise MirrorError(
            f"{where} key_prefix: {cc.key_prefix!r} may hold letters, digits and . _ / - only"
        )
    if cc.credentials:
        check_cache_credentials(cc, f"{where} credentials")


def _check_cache_endpoint(cc: CompilerCache, where: str) -> None:
    if cc.backend == "ccache-http":
        url, *attributes = cc.endpoint.split("|")
        if url.startswith("https://"):
            raise MirrorError(
                f"{where}: {url!r}: ccache's http backend speaks no HTTPS; give the http:// URL"
                " of the server (or of a TLS proxy in front of it on the farm's network)"
            )
        check_url(url, where, "ccache", _CC_CREDENTIALS_FIX, _CC_EXAMPLES[cc.backend])
        for attribute in attributes:
            name, sep, value = attribute.partition("=")
            if name == "bearer-token":
                raise MirrorError(
                    f"{where}: the endpoint has a bearer-token; {_CC_CREDENTIALS_FIX}"
                )
            if name not in _CCACHE_HTTP_ATTRIBUTES or not sep or not _WORD.fullmatch(value):
                close = difflib.get_close_matches(name, sorted(_CCACHE_HTTP_ATTRIBUTES), n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                raise MirrorError(
                    f"{where}: {attribute!r} is not an attribute of ccache's http backend; {hint}"
                    f"write URL|NAME=VALUE with NAME one of"
                    f" {', '.join(sorted(_CCACHE_HTTP_ATTRIBUTES))}"
                )
            if name == "layout" and value not in _CCACHE_LAYOUTS:
                raise MirrorError(
                    f"{where}: layout={value} is no layout of ccache's http backend"
                    f" (one of: {', '.join(_CCACHE_LAYOUTS)})"
                )
        return
    if cc.backend == "sccache-redis":
        check_url(cc.endpoint, where, "redis", _CC_CREDENTIALS_FIX, _CC_EXAMPLES[cc.backend])
        if cc.endpoint.partition("://")[2].partition("/")[2]:
            raise MirrorError(
                f"{where}: {cc.endpoint!r}: give redis://HOST[:PORT] only (sccache takes"
                " no database or path in it)"
            )
        return
    check_url(cc.endpoint, where, "cache", _CC_CREDENTIALS_FIX, _CC_EXAMPLES[cc.backend])


def check_cache_credentials(cc: CompilerCache, where: str) -> None:
    """The credentials file exists, is readable and has the backend's form (its content is
    never part of a message)."""
    file = Path(cc.credentials)
    if not file.is_absolute():
        raise MirrorError(f"{where}: {cc.credentials!r} is not an absolute path; give one")
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        raise MirrorError(f"{where}: {file} does not exist") from None
    except OSError as e:
        raise MirrorError(f"{where}: cannot read {file}: {e.strerror}") from None
    text = data.decode("utf-8", errors="replace")
    if cc.backend == "sccache-s3":
        if "aws_access_key_id" not in text:
            raise MirrorError(
                f"{where}: {file} is not an AWS shared-credentials file (no aws_access_key_id);"
                " write [default], aws_access_key_id = ... and aws_secret_access_key = ... lines"
            )
        return
    if cc.backend == "sccache-gcs":
        try:
            key = json.loads(text)
        except ValueError:
            key = None
        if not isinstance(key, dict):
            raise MirrorError(
                f"{where}: {file} is not a GCS key file (JSON); give the service account's JSON key"
            )
        return
    lines = text.splitlines()
    if len(lines) != 1 or ":" not in lines[0] or not lines[0].strip():
        raise MirrorError(f"{where}: {file} must hold one line, user:password")
    if cc.backend == "ccache-http" and any(c in lines[0] for c in "@/|?# \t"):
        raise MirrorError(
            f"{where}: {file}: ccache reads the user and password from the URL, so they may"
            " not hold @ / | ? # or blanks"
        )


def check_netrc(file: Path, where: str) -> None:
    try:
        netrc.netrc(str(file))
    except FileNotFoundError:
        raise MirrorError(f"{where}: {file} does not exist") from None
    except (OSError, netrc.NetrcParseError) as e:
        raise MirrorError(
            f"{where}: {file} is not a netrc file ({e}); write lines of"
            " `machine HOST login USER password SECRET`"
        ) from None


def check_ca_bundle(file: Path, where: str) -> None:
    try:
        text = file.read_text(errors="replace")
    except OSError as e:
        raise MirrorError(f"{where}: cannot read {file}: {e}") from None
    if "-----BEGIN CERTIFICATE-----" not in text:
        raise MirrorError(f"{where}: {file} holds no PEM certificate; give a PEM bundle")
