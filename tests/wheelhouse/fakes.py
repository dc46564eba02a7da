"""Test helpers: tiny wheels, a fake staging registry with descriptors, and an isolated pip."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tools.oci.digest import digest_of
from tools.staging import descriptor as desc
from tools.tagconf import catalog as catalog_mod
from tools.tagconf.tags import render_tags, resolve_values

CATALOG = catalog_mod.load("images/catalog.toml")
WHEELS = CATALOG.group("wheels")
# The ROCm version of the made-up images (their tags render with it, not the
# catalogue's): no real catalogue's, so a version bump edits no test.
ROCM = "9.8.7-full"
# The distribution each wheel target ships (as the fixture family's Dockerfiles do).
DISTS = {
    "pytorch-wheel": "torch",
    "triton-wheel": "triton",
    "aiter-wheel": "aiter",
    "torchvision-wheel": "torchvision",
    "cupy-wheel": "cupy",
    "nixl-wheel": "nixl",
    "vllm-wheel": "vllm",
    "lmcache-wheel": "lmcache",
}


def make_wheel(dist: str, version: str, text: str = "BUILD_INFO = {}") -> tuple[str, bytes]:
    """A minimal pure-Python wheel: (file name, bytes)."""
    name = dist.replace("-", "_")
    info = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": text + "\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: fakes\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for path, content in files.items():
            z.writestr(path, content)
        z.writestr(f"{info}/RECORD", "".join(f"{p},,\n" for p in [*files, f"{info}/RECORD"]))
    return f"{name}-{version}-py3-none-any.whl", buf.getvalue()


def tar_layer(entries: dict[str, bytes | None], compress: bool = True) -> bytes:
    """A layer tar: path -> bytes (a file) or None (a directory)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path, data in entries.items():
            info = tarfile.TarInfo(path)
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    raw = buf.getvalue()
    return gzip.compress(raw, mtime=0) if compress else raw


class FakeStaging:
    """A staging registry on a free loopback port: GET/HEAD of manifests and blobs.

    Plain HTTP, no auth, served from memory. ``lose`` forgets a blob or a
    manifest (what a garbage-collected staging looks like); a blob in
    ``lose_on_get`` is lost when a GET asks for it (after the HEAD checks).
    ``requests`` records (method, path) of every request.
    """

    PREFIX = "staging"

    def __init__(self) -> None:
        self.blobs: dict[tuple[str, str], bytes] = {}
        self.manifests: dict[tuple[str, str], bytes] = {}
        self.lose_on_get: set[tuple[str, str]] = set()
        self.requests: list[tuple[str, str]] = []
        staging = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def _answer(self, body: bytes | None, content_type: str, digest: str) -> None:
                staging.requests.append((self.command, self.path))
                if body is None:
                    self.send_response(404)
                    body = b'{"errors":[{"code":"BLOB_UNKNOWN"}]}'
                    self.send_header("Content-Type", "application/json")
                else:
                    self.send_response(200)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Docker-Content-Digest", digest)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command == "GET":
                    self.wfile.write(body)

            def do_GET(self) -> None:
                m = re.fullmatch(r"/v2/(.+)/(manifests|blobs)/([^/?]+)", self.path)
                if not m:
                    self._answer(None, "", "")
                    return
                name, kind, digest = m.groups()
                if kind == "manifests":
                    body = staging.manifests.get((name, digest))
                    self._answer(body, MANIFEST_TYPE, digest)
                    return
                if self.command == "GET" and (name, digest) in staging.lose_on_get:
                    staging.lose(name, digest)
                body = staging.blobs.get((name, digest))
                self._answer(body, "application/octet-stream", digest)

            do_HEAD = do_GET

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        self.registry = f"{self.host}/{self.PREFIX}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def name(self, repository: str) -> str:
        return f"{self.PREFIX}/{repository}"

    def put(self, name: str, data: bytes) -> dict:
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        self.blobs[(name, digest)] = data
        return {"digest": digest, "size": len(data)}

    def lose(self, name: str, digest: str) -> None:
        self.blobs.pop((name, digest), None)
        self.manifests.pop((name, digest), None)

    def gets(self, kind: str = "blobs") -> list[str]:
        """Paths of the GETs of ``kind`` (blobs, manifests) served so far."""
        return [p for m, p in self.requests if m == "GET" and f"/{kind}/" in p]


MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json"


def make_descriptor(
    directory: Path,
    staging: FakeStaging,
    target: str,
    arch: str | None,
    *,
    rocm: str = ROCM,
    layers: list[bytes] | None = None,
    labels: bool = True,
    name: str | None = None,
) -> Path:
    """Stage an image like the ImageBuild action does and write its descriptor <name>.json.

    Default content: one gzip layer with /wheels/<dist>-<version>-py3-none-any.whl.
    """
    t = CATALOG.target(target)
    tags = render_tags(CATALOG, t, arch, resolve_values(CATALOG, {"ROCM_VERSION": rocm}))
    name = name or (f"{target}.{arch}" if arch else target)
    repo = staging.name(t.repository)
    if layers is None:
        local = f"rocm{rocm.replace('-', '.')}" + (f".{arch}" if arch else "")
        wheel, data = make_wheel(
            DISTS[target],
            f"1.0+{local}",
            f"BUILD_INFO = {{'target': {target!r}, 'arch': {arch!r}, 'rocm': {rocm!r}}}",
        )
        layers = [tar_layer({"wheels/": None, f"wheels/{wheel}": data})]
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {
            "Labels": {
                "org.opencontainers.image.version": tags.versioned,
                "org.rocm-pytorch.image.target": target,
                "org.rocm-pytorch.image.arch": arch or "noarch",
            }
            if labels
            else {}
        },
        "rootfs": {"type": "layers", "diff_ids": []},
    }
    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": MANIFEST_TYPE,
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                **staging.put(repo, json.dumps(config).encode()),
            },
            "layers": [
                {
                    "mediaType": "application/vnd.oci.image.layer.v1.tar"
                    + ("+gzip" if layer[:2] == b"\x1f\x8b" else ""),
                    **staging.put(repo, layer),
                }
                for layer in layers
            ],
        }
    ).encode()
    digest = digest_of(manifest)
    staging.manifests[(repo, digest)] = manifest
    d = desc.Descriptor(
        target=target,
        arch=arch,
        repository=t.repository,
        digest=digest,
        media_type=MANIFEST_TYPE,
        manifest=manifest,
        config=config,
        staging_registry=staging.registry,
        staging_name=repo,
        staging_tag="c-" + "0" * 64,
        embedded=False,
        content_key="sha256:" + "0" * 64,
        dockerfile=f"docker/Dockerfile.{target}",
        stage=t.stage,
    )
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.json"
    d.write(path)
    return path


def make_family(
    directory: Path, staging: FakeStaging, arch: str = "gfx950", rocm: str = ROCM
) -> list[Path]:
    """One staged image and its descriptor per wheel target built for ``arch``."""
    return [
        make_descriptor(directory, staging, t, arch if CATALOG.target(t).arch else None, rocm=rocm)
        for t in WHEELS
        if CATALOG.builds(CATALOG.target(t), arch)
    ]


def pip_install(index: Path, target: Path, *names: str) -> subprocess.CompletedProcess:
    """`pip install --index-url file://INDEX --target TARGET NAMES`, isolated from the host.

    No pip configuration (the host's adds extra indexes and find-links), no
    cache, no version check: the wheelhouse is the only place pip looks.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_NO_CACHE_DIR="1", HOME=str(target.parent))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--isolated",
            "--disable-pip-version-check",
            "--no-input",
            "--root-user-action=ignore",
            "--index-url",
            index.absolute().as_uri(),
            "--target",
            str(target),
            *names,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def import_build_info(site: Path, *modules: str) -> dict[str, dict]:
    """BUILD_INFO of each module, imported from ``site`` in a fresh interpreter."""
    code = (
        "import importlib, json, sys\n"
        f"sys.path.insert(0, {str(site)!r})\n"
        f"mods = {list(modules)!r}\n"
        "print(json.dumps({m: importlib.import_module(m).BUILD_INFO for m in mods}))"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)
