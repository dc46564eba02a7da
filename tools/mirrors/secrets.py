"""The mirror settings as BuildKit secrets: what an image build hands `docker buildx build`.

A secret reaches only the RUN steps that mount it, for the length of the step:
BuildKit keeps it out of the layer (no stub of the mount point either), the
image config, the cache key and the build's provenance. So the Dockerfiles
mount these at the places apt, pip and git read (``SECRETS``), a build with
another mirror reuses every cached step, and a password in the netrc file
never reaches an image, a label, a log or a descriptor.

``resolve`` turns the settings' ``host`` values into this host's (tools/
mirrors/host.py); ``render`` writes one file per secret (mode 0600) into a
directory the caller deletes after the build; ``buildx_args`` names them.

The compiler cache ([compiler_cache]) goes the same way: a setting of the host,
in no image and no cache key, so choosing or moving the cache server rebuilds
nothing. ``compiler-cache`` is an env file docker/scripts/build-env.sh reads
(``compiler_cache_env``), ``compiler-cache-credentials`` the credentials file
as the user gave it; both only when the backend is not the default, local.
"""

from __future__ import annotations

import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from tools.mirrors import host as host_mod
from tools.mirrors.settings import DEFAULTS, HOST, CompilerCache, MirrorError, Settings

# secret id -> where a RUN step mounts it (docker/: every RUN that reaches the
# network mounts all five; tests/dockerfiles checks it).
SECRETS = {
    "apt-mirror": "/run/secrets/apt-mirror",  # read by docker/scripts/apt-install.sh
    "pip.conf": "/etc/pip.conf",
    "gitconfig": "/etc/gitconfig",
    "mirror-netrc": "/root/.netrc",  # apt (Dir::Etc::netrc), pip and git read it
    "mirror-ca": "/run/secrets/mirror-ca",
}
# Secrets only some RUN steps mount (not required: absent when not configured).
OPTIONAL_SECRETS = {
    "rust-mirror": "/run/secrets/rust-mirror",  # read by docker/scripts/install-rust.sh
    # read by docker/scripts/build-env.sh; every RUN that compiles mounts both
    "compiler-cache": "/run/secrets/compiler-cache",
    "compiler-cache-credentials": "/run/secrets/compiler-cache-credentials",
}
COMPILER_CACHE_SECRETS = ("compiler-cache", "compiler-cache-credentials")
# Where sccache's GCS backend goes (it has no endpoint setting): what build-env.sh probes.
GCS_ENDPOINT = "https://storage.googleapis.com"
MOUNTS = {**SECRETS, **OPTIONAL_SECRETS}
CA_TARGET = SECRETS["mirror-ca"]


@dataclass(frozen=True)
class Resolved:
    """Mirror settings with every ``host`` value replaced by this host's."""

    apt_rewrite: tuple[tuple[str, str], ...] = ()
    apt_options: tuple[tuple[str, str], ...] = ()
    pip: host_mod.PipIndex = field(default_factory=host_mod.PipIndex)
    git_rewrite: tuple[tuple[str, str], ...] = ()
    netrc: str = ""
    ca_bundle: str = ""
    rust_dist_server: str = ""
    rust_crates_registry: str = ""
    compiler_cache: CompilerCache = field(default_factory=CompilerCache)
    notes: tuple[str, ...] = ()  # defaults that could not be resolved here

    def describe(self) -> list[str]:
        """One line per setting in use (no credentials: URLs hold none, netrc is a path)."""
        lines = [f"apt: {a} -> {b}" for a, b in self.apt_rewrite]
        lines += [f"apt option: {k}={v}" for k, v in self.apt_options]
        if self.pip.index_url:
            lines.append(f"pip index: {self.pip.index_url}")
        lines += [f"pip extra index: {u}" for u in self.pip.extra_index_urls]
        lines += [f"pip trusted host: {h}" for h in self.pip.trusted_hosts]
        lines += [f"git: {a} -> {b}" for a, b in self.git_rewrite]
        if self.netrc:
            lines.append(f"credentials: {self.netrc} (netrc)")
        if self.ca_bundle:
            lines.append(f"CA bundle: {self.ca_bundle}")
        if self.rust_dist_server:
            lines.append(f"rust toolchains: {self.rust_dist_server}")
        if self.rust_crates_registry:
            lines.append(f"crates: {self.rust_crates_registry}")
        cc = self.compiler_cache
        if cc.backend == "none":
            lines.append("compiler cache: none")
        elif cc.remote:
            extra = [f"region {cc.region}"] if cc.region else []
            extra += [f"key prefix {cc.key_prefix}"] if cc.key_prefix else []
            suffix = f" ({', '.join(extra)})" if extra else ""
            lines.append(f"compiler cache: {cc.backend} at {cc.where()}{suffix}")
        if cc.credentials:
            lines.append(f"compiler cache credentials: {cc.credentials} (file)")
        return lines + [f"note: {n}" for n in self.notes]


def resolve(
    settings: Settings,
    *,
    etc_apt: Path = Path("/etc/apt"),
    pip_files: list[Path] | None = None,
    ca_bundle: str | None = None,
) -> Resolved:
    """``settings`` with this host's values for ``host``; raises MirrorError when a value
    the user set to ``host`` cannot be found (a default that cannot is left out, noted)."""
    notes: list[str] = []
    rewrite = []
    for original, mirror in sorted(settings.apt_rewrite.items(), key=lambda kv: -len(kv[0])):
        if mirror == HOST:
            try:
                mirror = host_mod.debian_mirror(etc_apt)
            except MirrorError as e:
                if DEFAULTS.apt_rewrite.get(original) == HOST and settings.source == "defaults":
                    notes.append(f"{original} is not mapped: {e}")
                    continue
                raise MirrorError(f"{settings.source}: [apt.rewrite] {original!r}: {e}") from None
        rewrite.append((original, mirror))
    if settings.pip_index_url == HOST:
        found = host_mod.pip_index(pip_files)
    else:
        found = host_mod.PipIndex(index_url=settings.pip_index_url)
    pip = host_mod.PipIndex(
        index_url=found.index_url,
        extra_index_urls=(
            settings.pip_extra_index_urls
            if settings.pip_extra_index_urls is not None
            else found.extra_index_urls
        ),
        trusted_hosts=(
            settings.pip_trusted_hosts
            if settings.pip_trusted_hosts is not None
            else found.trusted_hosts
        ),
    )
    ca = settings.ca_bundle
    if ca == HOST:
        ca = host_mod.ca_bundle() if ca_bundle is None else ca_bundle
    return Resolved(
        apt_rewrite=tuple(rewrite),
        apt_options=tuple(sorted(settings.apt_options.items())),
        pip=pip,
        git_rewrite=tuple(sorted(settings.git_rewrite.items())),
        netrc=settings.netrc,
        ca_bundle=ca,
        rust_dist_server=settings.rust_dist_server,
        rust_crates_registry=settings.rust_crates_registry,
        compiler_cache=settings.compiler_cache,
        notes=tuple(notes),
    )


def render(resolved: Resolved, directory: Path) -> dict[str, Path]:
    """Write the secrets ``resolved`` needs into ``directory`` (mode 0600); {id: file}."""
    texts: dict[str, str] = {}
    apt = [f"rewrite {a} {b}" for a, b in resolved.apt_rewrite]
    apt += [f"option {k}={v}" for k, v in resolved.apt_options]
    if apt:
        texts["apt-mirror"] = (
            "# mirror settings of docker/scripts/apt-install.sh (tools/mirrors)\n"
            + "\n".join(apt)
            + "\n"
        )
    pip = []
    if resolved.pip.index_url:
        pip.append(f"index-url = {resolved.pip.index_url}")
    if resolved.pip.extra_index_urls:
        pip.append("extra-index-url = " + "\n    ".join(resolved.pip.extra_index_urls))
    if resolved.pip.trusted_hosts:
        pip.append("trusted-host = " + "\n    ".join(resolved.pip.trusted_hosts))
    if resolved.ca_bundle:
        pip.append(f"cert = {CA_TARGET}")
    if pip:
        texts["pip.conf"] = "[global]\n" + "\n".join(pip) + "\n"
    git = [f'[url "{b}"]\n\tinsteadOf = {a}' for a, b in resolved.git_rewrite]
    if resolved.ca_bundle:
        git.append(f"[http]\n\tsslCAInfo = {CA_TARGET}")
    if git:
        texts["gitconfig"] = "\n".join(git) + "\n"
    rust = [f"dist-server {resolved.rust_dist_server}"] if resolved.rust_dist_server else []
    if resolved.rust_crates_registry:
        rust.append(f"crates-registry {resolved.rust_crates_registry}")
    if rust:
        texts["rust-mirror"] = (
            "# mirror settings of docker/scripts/install-rust.sh (tools/mirrors)\n"
            + "\n".join(rust)
            + "\n"
        )
    cc = resolved.compiler_cache
    if cc.backend != DEFAULTS.compiler_cache.backend:
        texts["compiler-cache"] = compiler_cache_env(cc)
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o700)
    out: dict[str, Path] = {}
    for secret, text in texts.items():
        out[secret] = _write(directory / secret, text.encode())
    files = [("mirror-netrc", resolved.netrc), ("mirror-ca", resolved.ca_bundle)]
    files.append(("compiler-cache-credentials", cc.credentials))
    for secret, source in files:
        if source:
            try:
                out[secret] = _write(directory / secret, Path(source).read_bytes())
            except OSError as e:
                raise MirrorError(f"cannot read {source} for the build's {secret}: {e}") from None
    return out


def compiler_cache_endpoint(cc: CompilerCache) -> str:
    """The URL a build probes for ``cc`` (ccache-http: without its |attributes)."""
    return GCS_ENDPOINT if cc.backend == "sccache-gcs" else cc.endpoint.split("|", 1)[0]


def compiler_cache_env(cc: CompilerCache) -> str:
    """The env file of secret compiler-cache: ``NAME=VALUE`` lines, each value quoted for
    the shell (build-env.sh reads them without running the file). ROCM_PYTORCH_CC_BACKEND
    and ROCM_PYTORCH_CC_ENDPOINT (what build-env.sh probes and names) come first, then the
    backend's own variables; the credentials are a file of their own, never in here."""
    env = {"ROCM_PYTORCH_CC_BACKEND": cc.backend}
    if cc.remote:
        env["ROCM_PYTORCH_CC_ENDPOINT"] = compiler_cache_endpoint(cc)
    if cc.backend == "sccache-webdav":
        env["SCCACHE_WEBDAV_ENDPOINT"] = cc.endpoint
        env["SCCACHE_WEBDAV_KEY_PREFIX"] = cc.key_prefix
    elif cc.backend == "sccache-s3":
        env["SCCACHE_BUCKET"] = cc.bucket
        env["SCCACHE_ENDPOINT"] = cc.endpoint
        # sccache takes the scheme from this, not from the endpoint (default: https)
        env["SCCACHE_S3_USE_SSL"] = "true" if cc.endpoint.startswith("https://") else "false"
        env["SCCACHE_REGION"] = cc.region
        env["SCCACHE_S3_KEY_PREFIX"] = cc.key_prefix
    elif cc.backend == "sccache-gcs":
        env["SCCACHE_GCS_BUCKET"] = cc.bucket
        env["SCCACHE_GCS_KEY_PREFIX"] = cc.key_prefix
        env["SCCACHE_GCS_RW_MODE"] = "READ_WRITE"  # sccache's default is READ_ONLY
    elif cc.backend == "sccache-redis":
        env["SCCACHE_REDIS_ENDPOINT"] = cc.endpoint
        env["SCCACHE_REDIS_KEY_PREFIX"] = cc.key_prefix
    elif cc.backend == "ccache-http":
        env["CCACHE_REMOTE_STORAGE"] = cc.endpoint
    lines = [f"{name}={shlex.quote(value)}" for name, value in env.items() if value]
    return (
        "# compiler cache of docker/scripts/build-env.sh (tools/mirrors)\n"
        + "\n".join(lines)
        + "\n"
    )


def _write(file: Path, data: bytes) -> Path:
    file.unlink(missing_ok=True)
    file.touch(mode=0o600)
    file.write_bytes(data)
    return file


def buildx_args(secrets: dict[str, Path]) -> list[str]:
    """`docker buildx build` arguments that pass ``secrets`` (only paths, never content)."""
    out = []
    for secret, file in sorted(secrets.items()):
        out += ["--secret", f"id={secret},src={file}"]
    return out


def remove(directory: Path) -> None:
    shutil.rmtree(directory, ignore_errors=True)
