"""Synthetic images in a staging registry, with the descriptors, specs and plans Bazel would write.

Two images of the tests' own catalogue (tests/fixtures/catalog.toml, the real
one's shapes with values of its own) for one arch: rocm-runtime (random layers)
and its child pytorch-base (the parent's layers plus one of its own). Layers
are real gzipped tars and the config lists their diff_ids, so a Docker engine
can pull them too.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import socket
import subprocess
import tarfile
import threading
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.registry.fixtures import FaultProxy
from tools.oci.digest import digest_of
from tools.staging.descriptor import Descriptor
from tools.tagconf import catalog as catalog_mod
from tools.tagconf.spec import image_spec
from tools.tagconf.tags import resolve_values

CATALOG = catalog_mod.load("tests/fixtures/catalog.toml")
NAMESPACE = "rocm-pytorch"
ARCH = "gfx950"
PREFIX = "staging"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"


def layer(size: int, name: str) -> tuple[bytes, str]:
    """A gzipped tar holding ``size`` random bytes, and its diff_id."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size = size
        tar.addfile(info, io.BytesIO(os.urandom(size)))
    raw = buf.getvalue()
    return gzip.compress(raw, compresslevel=1, mtime=0), digest_of(raw)


@dataclass
class StagedImage:
    target: str
    arch: str | None
    descriptor: Descriptor
    path: Path  # the descriptor JSON
    spec: Path
    blobs: dict[str, bytes]  # digest -> bytes: config and layers

    @property
    def layer_bytes(self) -> int:
        return sum(len(b) for b in self.blobs.values())


def push_blob(http: httpx.Client, base: str, name: str, data: bytes) -> str:
    digest = digest_of(data)
    r = http.post(f"{base}/v2/{name}/blobs/uploads/")
    assert r.status_code == 202, r.text
    location = httpx.URL(base).join(r.headers["Location"])
    r = http.put(location.copy_merge_params({"digest": digest}), content=data)
    assert r.status_code == 201, r.text
    return digest


def stage(
    host: str,
    tmp: Path,
    target: str,
    layers: list[tuple[bytes, str]],
    *,
    staging: str | None = None,
    arch: str | None = ARCH,
    parents: dict[str, str] | None = None,
    vcs_ref: str | None = None,
    embedded: bool = False,
    instance: str = "",
) -> StagedImage:
    """Push an image of ``layers`` into the registry at ``host`` the way a build would.

    ``staging`` is the `HOST/PREFIX` the descriptor records (default
    ``host``/staging: a proxy in front of it may stand in).
    """
    staging = staging or f"{host}/{PREFIX}"
    spec = image_spec(
        CATALOG, CATALOG.target(target), arch, resolve_values(CATALOG, vcs_ref=vcs_ref), NAMESPACE
    )
    repository = spec["repository"]
    name = f"{PREFIX}/{repository}"
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {"Labels": {"test.target": target}},
        "rootfs": {"type": "layers", "diff_ids": [diff_id for _, diff_id in layers]},
    }
    config_bytes = json.dumps(config, sort_keys=True).encode()
    base = f"http://{host}"
    blobs = {digest_of(config_bytes): config_bytes}
    with httpx.Client(timeout=60) as http:
        for data, _ in layers:
            blobs[push_blob(http, base, name, data)] = data
        push_blob(http, base, name, config_bytes)
        manifest = json.dumps(
            {
                "schemaVersion": 2,
                "mediaType": OCI_MANIFEST,
                "config": {
                    "mediaType": OCI_CONFIG,
                    "digest": digest_of(config_bytes),
                    "size": len(config_bytes),
                },
                "layers": [
                    {"mediaType": OCI_LAYER, "digest": digest_of(data), "size": len(data)}
                    for data, _ in layers
                ],
            },
            indent=3,  # not the canonical form: pushed bytes must stay exactly these
        ).encode()
        digest = digest_of(manifest)
        tag = "c-" + hashlib.sha256(f"{target}{arch}{digest}".encode()).hexdigest()[:32]
        r = http.put(
            f"{base}/v2/{name}/manifests/{tag}",
            content=manifest,
            headers={"Content-Type": OCI_MANIFEST},
        )
        assert r.status_code == 201, r.text
    d = Descriptor(
        target=target,
        arch=arch,
        repository=repository,
        digest=digest,
        media_type=OCI_MANIFEST,
        manifest=manifest,
        config=config,
        staging_registry=staging,
        staging_name=name,
        staging_tag=tag,
        embedded=embedded,
        staging_instance=instance,
        parents=parents or {},
    )
    stem = f"{target}.{arch}" if arch else target
    path = tmp / f"{stem}.descriptor.json"
    d.write(path)
    spec_path = tmp / f"{stem}.spec.json"
    spec_path.write_text(json.dumps(spec))
    return StagedImage(target, arch, d, path, spec_path, blobs)


def family(host: str, tmp: Path, *, big: int = 0, **kwargs) -> list[StagedImage]:
    """rocm-runtime (3 layers, ~3 MB; plus one of ``big`` bytes) and its child pytorch-base."""
    tmp.mkdir(parents=True, exist_ok=True)
    sizes = [1_500_000, 1_000_000, 500_000] + ([big] if big else [])
    parent_layers = [layer(n, f"runtime{i}.bin") for i, n in enumerate(sizes)]
    parent = stage(host, tmp, "rocm-runtime", parent_layers, **kwargs)
    child = stage(
        host,
        tmp,
        "pytorch-base",
        [*parent_layers, layer(700_000, "base.bin")],
        parents={"rocm-runtime": parent.descriptor.digest},
        **kwargs,
    )
    return [parent, child]


def write_plan(tmp: Path, images: list[StagedImage], *, descriptors: bool = True) -> Path:
    """The plan JSON a push target writes (children listed first: the tool orders them)."""
    entries = [
        {
            "target": i.target,
            "arch": i.arch,
            "parents": list(i.descriptor.parents),
            "spec": str(i.spec),
            **({"descriptor": str(i.path)} if descriptors else {}),
        }
        for i in reversed(images)
    ]
    plan = tmp / f"plan{len(list(tmp.glob('plan*.json')))}.json"
    plan.write_text(json.dumps({"images": entries}, indent=2))
    return plan


def refs(images: list[StagedImage], registry: str) -> dict[str, str]:
    """repository:tag -> digest, as `Registry.all_refs()` reports them, for ``images``."""
    out = {}
    for i in images:
        spec = json.loads(i.spec.read_text())
        for tag in filter(None, spec["tags"].values()):
            out[f"{registry}/{spec['repository']}:{tag}"] = i.descriptor.digest
    return out


@dataclass
class Run:
    code: int
    out: str
    err: str


def registry_tool(*args: str, env: dict | None = None, timeout: float | None = None) -> Run:
    """Run the registry tool; past ``timeout`` seconds, subprocess.TimeoutExpired."""
    proc = subprocess.run(
        [os.environ["REGISTRY_BIN_TOOL"], *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


class PutMeter:
    """Counts blob PUTs through a FaultProxy: bytes sent and the most in flight at once."""

    def __init__(self, proxy: FaultProxy) -> None:
        self.bytes = 0
        self.puts = 0
        self.in_flight = 0
        self.peak = 0
        lock = threading.Lock()
        handler = proxy.server.RequestHandlerClass
        forward = handler.do_PUT
        meter = self

        def do_put(h) -> None:
            if "/blobs/uploads/" not in h.path:
                return forward(h)
            with lock:
                meter.puts += 1
                meter.bytes += int(h.headers.get("Content-Length") or 0)
                meter.in_flight += 1
                meter.peak = max(meter.peak, meter.in_flight)
            try:
                forward(h)
            finally:
                with lock:
                    meter.in_flight -= 1

        handler.do_PUT = do_put


def refuse_mounts(proxy: FaultProxy) -> list[str]:
    """Make the registry behind ``proxy`` answer mounts with an upload session (202).

    Like a registry without cross-repository mounts: the `mount` and `from`
    parameters are dropped before forwarding. Returns the mount paths seen.
    """
    seen: list[str] = []
    handler = proxy.server.RequestHandlerClass
    forward = handler.do_POST

    def do_post(h) -> None:
        if "mount=" in h.path:
            seen.append(h.path)
            h.path = h.path.split("?", 1)[0]
        forward(h)

    handler.do_POST = do_post
    return seen


class ResetAt:
    """Counts the blob upload bytes a FaultProxy reads; drops the connection once past ``at``.

    The upload request that would carry the total past ``at`` is read up to
    ``at`` and never forwarded (like a load balancer that buffers request
    bodies): the registry keeps the offset of the last request it answered.
    """

    def __init__(self, proxy: FaultProxy, at: int, methods=("PATCH", "PUT")) -> None:
        self.at = at
        self.received = 0
        self.fired = False
        handler = proxy.server.RequestHandlerClass
        for method in methods:
            setattr(handler, f"do_{method}", self._wrap(getattr(handler, f"do_{method}")))

    def _wrap(self, forward):
        def handle(h) -> None:
            if "/blobs/uploads/" not in h.path:
                return forward(h)
            length = int(h.headers.get("Content-Length") or 0)
            if not self.fired and self.received + length > self.at:
                while self.received < self.at:
                    data = h.rfile.read(min(self.at - self.received, 1 << 20))
                    if not data:  # the client gave up first: the next request gets the reset
                        break
                    self.received += len(data)
                self.fired = self.received == self.at
                h.connection.shutdown(socket.SHUT_RDWR)
                h.close_connection = True
                return
            self.received += length
            forward(h)

        return handle
