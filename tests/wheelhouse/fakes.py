"""Test helpers: tiny wheels, hand-written OCI layouts, and an isolated pip."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from tools.tagconf import catalog as catalog_mod
from tools.tagconf.tags import render_tags, resolve_values

CATALOG = catalog_mod.load("images/catalog.toml")
WHEELS = CATALOG.group("wheels")
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


def _put(root: Path, data: bytes) -> dict:
    digest = hashlib.sha256(data).hexdigest()
    (root / "blobs" / "sha256").mkdir(parents=True, exist_ok=True)
    (root / "blobs" / "sha256" / digest).write_bytes(data)
    return {"digest": f"sha256:{digest}", "size": len(data)}


def make_layout(
    directory: Path,
    target: str,
    arch: str | None,
    *,
    rocm: str = "10.1.0-full",
    layers: list[bytes] | None = None,
    metadata: bool = True,
    labels: bool = True,
    name: str | None = None,
) -> Path:
    """An OCI layout like the image rule writes (plus <name>.json unless metadata=False).

    Default content: one gzip layer with /wheels/<dist>-<version>-py3-none-any.whl.
    """
    t = CATALOG.target(target)
    tags = render_tags(CATALOG, t, arch, resolve_values(CATALOG, {"ROCM_VERSION": rocm}))
    name = name or (f"{target}.{arch}" if arch else target)
    root = directory / f"{name}.layout"
    root.mkdir(parents=True)
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
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {
            "mediaType": "application/vnd.oci.image.config.v1+json",
            **_put(root, json.dumps(config).encode()),
        },
        "layers": [
            {"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", **_put(root, layer)}
            for layer in layers
        ],
    }
    descriptor = {
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        **_put(root, json.dumps(manifest).encode()),
    }
    (root / "index.json").write_text(json.dumps({"schemaVersion": 2, "manifests": [descriptor]}))
    (root / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    if metadata:
        (directory / f"{name}.json").write_text(
            json.dumps(
                {
                    "target": target,
                    "arch": arch,
                    "repository": t.repository,
                    "digest": descriptor["digest"],
                    "tags": {
                        "versioned": tags.versioned,
                        "floating": tags.floating,
                        "immutable": None,
                    },
                }
            )
        )
    return root


def make_family(directory: Path, arch: str = "gfx950", rocm: str = "10.1.0-full") -> list[Path]:
    """One fake layout per wheel target for ``arch``."""
    return [
        make_layout(directory, t, arch if CATALOG.target(t).arch else None, rocm=rocm)
        for t in WHEELS
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
