"""upstream: build the rehearsal's stand-in upstream into staging (the UpstreamBuild action).

Called by the rehearsal_upstream rule (images/private/rehearsal.bzl), never by
hand: `bazel build //rehearsal:upstream`. mmdebstrap makes the root
file system with exactly the lock's packages from Debian's mirror (the one the
mirror settings give the stand-in's archive), tools/rehearsal/layout.py gives
it AMD's layout, and its tar stream becomes one zstd layer of an OCI image
pushed to staging, as it is made: no uncompressed copy on disk. The action
leaves a descriptor (tools/staging/descriptor.py), like ImageBuild, which the
family's images take as the upstream named context.

Reproducible: mmdebstrap with SOURCE_DATE_EPOCH gives the same tar for the
same packages, the compression is deterministic, the config and manifest are
fixed, so the same lock gives the same digest on any host.

`--base DESCRIPTOR --build N` (the rehearsal_rebuild rule) is AMD's rebuild N
of the same release instead: the base stand-in's layer and one layer more
that holds `/opt/rocm-<release>/.info/version` as `<release>-N` (layout.py
writes build 0). The same packages and compilers, a new upstream digest: the
"base change" of bench/compile_cache.py, in seconds instead of an mmdebstrap
run.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from compression import zstd

from tools import client_env, envvars, mirrors, places
from tools.mirrors import fetch
from tools.oci.client import RegistryClient
from tools.oci.digest import Digester, digest_of
from tools.oci.errors import RegistryError
from tools.rehearsal import amdsmi, standin
from tools.rehearsal import lock as lock_mod
from tools.rehearsal.standin import StandInError
from tools.staging import Staging, StagingError, embedded, lease, reads, resolve
from tools.staging import descriptor as desc

REPOSITORY = "rehearsal-upstream"
LAYER = "application/vnd.oci.image.layer.v1.tar+zstd"
CONFIG = "application/vnd.oci.image.config.v1+json"
MANIFEST = "application/vnd.oci.image.manifest.v1+json"
ZSTD_LEVEL = 3
CHUNK = 4 << 20
LOG_TAIL = 30


class UpstreamError(Exception):
    """A user-facing failure of the stand-in's build."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="upstream", description=__doc__.splitlines()[0])
    p.add_argument("--config", type=Path, help="rehearsal/upstream.toml")
    p.add_argument("--lock", type=Path, help="rehearsal/upstream.lock")
    p.add_argument("--layout", type=Path, help="tools/rehearsal/layout.py")
    p.add_argument(
        "--base",
        type=Path,
        help="rebuild mode: the descriptor of the stand-in this is a rebuild of (with --build)",
    )
    p.add_argument("--build", help="rebuild mode: AMD's build number of the release (1, 2, ...)")
    p.add_argument("--rocm-version", required=True, help="the catalogue's ROCM_VERSION")
    p.add_argument("--staging", default="embedded", metavar="HOST[:PORT]/PREFIX")
    p.add_argument("--output", type=Path, required=True, help="descriptor JSON to write")
    p.add_argument("--log", default="", metavar="PATH", help="mmdebstrap's log (`~`: the home)")
    client_env.add_argument(p)
    return p


def mmdebstrap_version() -> str:
    try:
        out = subprocess.run(
            ["mmdebstrap", "--version"], capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError) as e:
        raise UpstreamError(
            f"mmdebstrap does not run here ({e}); tools/bootstrap.sh installs it in the sid tree"
        ) from None
    return out.stdout.strip()


def content_key(*parts: bytes) -> str:
    h = Digester()
    for part in parts:
        h.update(len(part).to_bytes(8, "big") + part)
    return h.digest


def pack(stream, out: Path) -> tuple[str, str, int, int]:
    """zstd-compress the tar ``stream`` into ``out``; (diff_id, digest, tar bytes, blob bytes)."""
    raw, blob = Digester(), Digester()
    compressor = zstd.ZstdCompressor(
        options={
            zstd.CompressionParameter.compression_level: ZSTD_LEVEL,
            zstd.CompressionParameter.nb_workers: 2,
        }
    )
    raw_size = blob_size = 0
    with out.open("wb") as f:
        while chunk := stream.read(CHUNK):
            raw.update(chunk)
            raw_size += len(chunk)
            data = compressor.compress(chunk)
            blob.update(data)
            blob_size += len(data)
            f.write(data)
        data = compressor.flush()
        blob.update(data)
        blob_size += len(data)
        f.write(data)
    return raw.digest, blob.digest, raw_size, blob_size


def image_config(diff_id: str, lock: standin.Lock, rocm_version: str, tool: str) -> bytes:
    hip = lock.packages.get("libamdhip64-dev", "?")
    config = {
        "architecture": "amd64",
        "os": "linux",
        "created": "1970-01-01T00:00:00Z",
        "config": {
            "Env": [
                "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/opt/rocm/bin"
            ],
            "Cmd": ["/bin/bash"],
            "Labels": {
                "org.opencontainers.image.description": (
                    f"Rehearsal stand-in for the ROCm {rocm_version} upstream image: Debian"
                    f" {'/'.join(sorted(lock.suites))} with Debian's ROCm (HIP {hip})"
                    " in AMD's layout"
                ),
            },
        },
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created": "1970-01-01T00:00:00Z", "created_by": f"{tool} (tools/rehearsal)"}],
    }
    return json.dumps(config, sort_keys=True, separators=(",", ":")).encode()


def manifest(config: bytes, layers: list[dict]) -> bytes:
    body = {
        "schemaVersion": 2,
        "mediaType": MANIFEST,
        "config": {"mediaType": CONFIG, "digest": digest_of(config), "size": len(config)},
        "layers": layers,
    }
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()


def hints(tail: str) -> str:
    if (
        "was not found" in tail
        or "has no installation candidate" in tail
        or "not the lock's" in tail
    ):
        return (
            "\nthe mirror no longer serves the lock's versions: write the lock again"
            " (bazel run //rehearsal:lock) and build again"
        )
    if "Failed to fetch" in tail or "Could not resolve" in tail or "Unable to connect" in tail:
        return (
            "\nDebian's mirror does not answer: check it (python3 -m tools.mirrors check --probe)"
        )
    return ""


def amd_smi_args(pin: amdsmi.Pin, resolved, tmp: Path) -> str:
    """layout.py's AMD SMI options: AMD's sdist from PyPI through the mirror settings' pip
    index (pip's default without one), sha256-checked, and the stand-in library's C."""
    indexes = [resolved.pip.index_url or amdsmi.default_index(), *resolved.pip.extra_index_urls]
    sdist = amdsmi.fetch(pin, indexes, lambda url: fetch.read(resolved, url), tmp)
    c_source = tmp / amdsmi.C_SOURCE
    c_source.write_text(amdsmi.generate(sdist, pin.version))
    return f" --amd-smi-sdist {sdist} --amd-smi-c {c_source}"


def check_mode(args: argparse.Namespace) -> None:
    """Either the stand-in (--config, --lock, --layout) or a rebuild of one (--base, --build)."""
    if args.base or args.build is not None:
        if not (args.base and args.build):
            raise UpstreamError("a rebuild takes both --base DESCRIPTOR and --build N")
        if not args.build.isdigit() or args.build == "0" or args.build.startswith("0"):
            raise UpstreamError(
                f"--build {args.build!r}: AMD's build numbers are 1, 2, ... (layout.py writes 0)"
            )
        return
    missing = [f"--{n}" for n in ("config", "lock", "layout") if getattr(args, n) is None]
    if missing:
        raise UpstreamError(
            f"{', '.join(missing)} missing: the stand-in takes --config, --lock and --layout"
            " (or --base and --build for a rebuild of one)"
        )


def staging_of(args: argparse.Namespace) -> Staging:
    try:
        return resolve(None if args.staging == "embedded" else args.staging)
    except StagingError as e:
        raise UpstreamError(f"staging: {e}") from None


def staged(
    args: argparse.Namespace, staging: Staging, key: str, builder: dict, what: str, make
) -> str:
    """The image of content key ``key`` in staging, made by ``make(name, tag, why)`` on a miss.

    ``make`` pushes the image as name:tag and returns (manifest, config bytes,
    summary). The lease is held until the descriptor is written: `gc` keeps
    the tag and leaves staging up.
    """
    name, tag = staging.name(REPOSITORY), "c-" + key.removeprefix("sha256:")

    def write_descriptor(digest: str, media_type: str, body: bytes, config_json: dict) -> None:
        desc.Descriptor(
            target=REPOSITORY,
            arch=None,
            repository=REPOSITORY,
            digest=digest,
            media_type=media_type,
            manifest=body,
            config=config_json,
            content_key=key,
            builder=builder,
            **staging.placement(name, tag),
        ).write(args.output)

    with lease.hold(f"{REPOSITORY} ({what})", tags=[f"{name}:{tag}"]):
        digest, why = reads.hit(staging, name, tag)
        if digest:  # staging holds it, whole: a clean output base or a new runner
            try:
                body, media_type, staged_config = reads.fetch(staging, name, digest)
            except RegistryError as e:
                raise UpstreamError(str(e)) from None
            write_descriptor(digest, media_type, body, staged_config)
            note = reads.hit_note(staging, name, tag, digest, builder["name"])
            print(f"upstream: {note}", file=sys.stderr, flush=True)
            if args.log:
                places.log_file(args.log).write_text(f"# {note}\n")
            return note
        body, config_bytes, summary = make(name, tag, why)
        write_descriptor(digest_of(body), MANIFEST, body, json.loads(config_bytes))
    return summary


def upload(staging: Staging, name: str, tag: str, blob: Path, config: bytes, body: bytes) -> None:
    """Push a new layer ``blob``, ``config`` and the manifest ``body`` as name:tag."""
    layer = json.loads(body)["layers"][-1]
    client = RegistryClient(staging.host, retries=3, backoff=0.5)
    registry_log = embedded.log_offset() if staging.embedded else 0
    try:
        client.upload_blob(name, layer["digest"], blob, layer["size"])
        client.upload(
            name,
            digest_of(config),
            len(config),
            lambda: contextlib.nullcontext(io.BytesIO(config)),
        )
        client.put_manifest(name, tag, body, MANIFEST)
    except RegistryError as e:
        full = embedded.out_of_space(registry_log) if staging.embedded else None
        raise UpstreamError(full or f"staging {staging.host}: {e}") from None
    finally:
        client.close()


def run(args: argparse.Namespace) -> str:
    check_mode(args)
    if args.base:
        return rebuild(args)
    start = time.monotonic()
    config = standin.load_config(args.config)
    lock = standin.load_lock(args.lock)
    standin.check_current(config, lock)
    release = standin.rocm_release(args.rocm_version)
    resolved = mirrors.resolve(mirrors.load())
    mirror = lock_mod.mirror_uri(resolved)
    tool = mmdebstrap_version()
    staging = staging_of(args)
    key = content_key(
        args.config.read_bytes(),
        args.lock.read_bytes(),
        args.layout.read_bytes(),
        release.encode(),
        tool.encode(),
        Path(__file__).read_bytes(),
        Path(amdsmi.__file__).read_bytes(),  # the stand-in libamd_smi.so's generator
    )
    builder = {"name": "mmdebstrap", "driver": "mmdebstrap", "version": tool}

    def make(name: str, tag: str, why: str) -> tuple[bytes, bytes, str]:
        with tempfile.TemporaryDirectory(prefix="rehearsal-upstream-") as tmp_text:
            tmp = Path(tmp_text)
            prefs = tmp / "preferences.d"
            prefs.mkdir()
            (prefs / "rocm.pref").write_text(standin.preferences(config, lock.rocm))
            (tmp / "sources.list").write_text(standin.sources(config, mirrors.STANDIN_ARCHIVE))
            hook = (
                f'{sys.executable} {args.layout.resolve()} "$1" --rocm-release {release}'
                f" --lock {args.lock.resolve()} --sources {tmp / 'sources.list'}"
                f" --preferences {prefs / 'rocm.pref'}"
            )
            if config.amd_smi:
                hook += amd_smi_args(config.amd_smi, resolved, tmp)
            cmd = standin.argv(
                config,
                includes=lock.includes(),
                preferences_dir=prefs,
                aptopts=fetch.apt_options(resolved),
                hooks=[hook],
            )
            log = places.log_file(args.log) or tmp / "mmdebstrap.log"
            blob = tmp / "layer.tar.zst"
            with log.open("w") as log_file:
                log_file.write(f"# rehearsal stand-in upstream, ROCm {release}, from {mirror}\n")
                log_file.write(f"# staging: {name}:{tag} {why}: building\n")
                log_file.write(f"# {' '.join(cmd[:-3])} ... {' '.join(cmd[-3:])}\n")
                log_file.flush()
                proc = subprocess.Popen(
                    cmd,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=log_file,
                    env=standin.environment(tmp),
                )
                proc.stdin.write(standin.sources(config, mirror).encode())
                proc.stdin.close()
                diff_id, digest, raw_size, size = pack(proc.stdout, blob)
                returncode = proc.wait()
            built = time.monotonic()
            if returncode != 0:
                tail = "\n".join(log.read_text(errors="replace").splitlines()[-LOG_TAIL:])
                raise UpstreamError(
                    f"mmdebstrap failed (exit {returncode}); last lines of its log ({log}):\n{tail}"
                    + hints(tail)
                )
            config_bytes = image_config(diff_id, lock, args.rocm_version, tool)
            body = manifest(config_bytes, [{"mediaType": LAYER, "digest": digest, "size": size}])
            upload(staging, name, tag, blob, config_bytes, body)
            pushed = time.monotonic()
            with log.open("a") as log_file:
                log_file.write(
                    f"# upstream: root file system {raw_size / 2**30:.2f} GiB,"
                    f" layer {size / 2**30:.2f} GiB"
                    f" (zstd {ZSTD_LEVEL}); mmdebstrap + layout + pack {built - start:.1f}s,"
                    f" push {pushed - built:.1f}s\n"
                )
        summary = f"{raw_size / 2**30:.2f} GiB root file system, {size / 2**30:.2f} GiB layer"
        return body, config_bytes, summary

    return staged(args, staging, key, builder, "stand-in upstream", make)


def version_layer(release: str, build: str, out: Path) -> tuple[str, str, int, int]:
    """A layer of one file, /opt/rocm-<release>/.info/version = "<release>-<build>"."""
    data = f"{release}-{build}\n".encode()
    info = tarfile.TarInfo(f"opt/rocm-{release}/.info/version")
    info.size, info.mode, info.mtime = len(data), 0o644, 0
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.addfile(info, io.BytesIO(data))
    raw.seek(0)
    return pack(raw, out)


def rebuild(args: argparse.Namespace) -> str:
    """AMD's rebuild ``args.build`` of the base stand-in: its layers and a version layer."""
    try:
        base = desc.load(args.base)
    except desc.DescriptorError as e:
        raise UpstreamError(f"--base: {e}") from None
    release = standin.rocm_release(args.rocm_version)
    staging = staging_of(args)
    key = content_key(
        base.digest.encode(), release.encode(), args.build.encode(), Path(__file__).read_bytes()
    )
    builder = {"name": "rebuild", "driver": "tools/rehearsal", "version": args.build}

    def make(name: str, tag: str, why: str) -> tuple[bytes, bytes, str]:
        # the manifest names the base's layers: they must be in the repository it goes to
        if (base.staging_host, base.staging_name) != (staging.host, name):
            raise UpstreamError(
                f"--base is staged at {base.staging_host}/{base.staging_name}, this build's"
                f" staging is {staging.host}/{name}: build both with the same staging"
            )
        with tempfile.TemporaryDirectory(prefix="rehearsal-rebuild-") as tmp_text:
            blob = Path(tmp_text) / "layer.tar.zst"
            diff_id, digest, _, size = version_layer(release, args.build, blob)
            config = dict(base.config)
            config["rootfs"] = {
                "type": "layers",
                "diff_ids": [*base.config["rootfs"]["diff_ids"], diff_id],
            }
            config["history"] = [
                *base.config.get("history", []),
                {
                    "created": "1970-01-01T00:00:00Z",
                    "created_by": f"rebuild {args.build} of ROCm {release} (tools/rehearsal)",
                },
            ]
            config_bytes = json.dumps(config, sort_keys=True, separators=(",", ":")).encode()
            layers = [*json.loads(base.manifest)["layers"]]
            layers.append({"mediaType": LAYER, "digest": digest, "size": size})
            body = manifest(config_bytes, layers)
            upload(staging, name, tag, blob, config_bytes, body)
        if args.log:
            places.log_file(args.log).write_text(
                f"# upstream: rebuild {args.build} of {base.digest}: {why}: one layer more"
                f" ({release}-{args.build} in /opt/rocm-{release}/.info/version)\n"
            )
        return body, config_bytes, f"rebuild {args.build} of {base.digest[:19]}"

    return staged(args, staging, key, builder, f"stand-in upstream, rebuild {args.build}", make)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        client_env.apply(args.client_settings)  # this build's staging and mirrors: not in the key
        run(args)
    except (
        client_env.ClientSettingsError,
        envvars.SettingError,
        UpstreamError,
        StandInError,
        mirrors.MirrorError,
        amdsmi.AmdSmiError,
    ) as e:
        print(f"upstream: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
