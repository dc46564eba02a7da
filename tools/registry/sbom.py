"""SBOMs from an image's files: Debian packages and Python distributions, as CycloneDX JSON.

No scanner image and no `docker run`: the layers are streamed from the
staging registry by digest (each checked against it), read as tar streams,
and only the files that name packages are kept:

* `var/lib/dpkg/status` and `var/lib/dpkg/status.d/*` (installed Debian
  packages: name, version, architecture, source, maintainer);
* `**/*.dist-info/METADATA` (installed Python distributions, in the venv or
  anywhere else: name, version, licence, summary);
* `etc/os-release` / `usr/lib/os-release` (the distribution, for purls).

Layers apply in order with OCI whiteouts (`.wh.NAME`, `.wh..wh..opq`), so a
package removed by a later layer is not listed. What each layer holds is
cached by layer digest (`~/.cache/rocm-pytorch-images/sbom-layers`), so the
SBOM of a child image reads only the layers its parents did not have.

The document is deterministic (no timestamp; the serial number derives from
the image digest): the same image gives the same bytes, so attaching it
twice is a no-op.
"""

from __future__ import annotations

import email.parser
import json
import re
import tarfile
import uuid
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from urllib.parse import quote

from tools import places
from tools.oci.digest import Digester
from tools.oci.errors import RegistryError

CYCLONEDX = "application/vnd.cyclonedx+json"
SPEC_VERSION = "1.6"
TOOL = "rocm-pytorch-images tools/registry sbom"
DPKG_STATUS = "var/lib/dpkg/status"
DPKG_STATUS_D = "var/lib/dpkg/status.d/"
OS_RELEASE = ("etc/os-release", "usr/lib/os-release")
_METADATA = re.compile(r"(^|/)[^/]+\.dist-info/METADATA$")
MAX_FILE = 8 << 20  # a package database bigger than this is not one


def wanted(path: str) -> bool:
    return (
        path == DPKG_STATUS
        or (path.startswith(DPKG_STATUS_D) and "/" not in path[len(DPKG_STATUS_D) :])
        or path in OS_RELEASE
        or bool(_METADATA.search(path))
    )


def cache_dir() -> Path:
    """$ROCM_PYTORCH_SBOM_CACHE, else <home>/.cache/rocm-pytorch-images/sbom-layers."""
    return places.state_dir("ROCM_PYTORCH_SBOM_CACHE", "sbom-layers")


class _Hashing:
    """A reader that hashes what passes through (the layer's digest is checked at the end)."""

    def __init__(self, reader) -> None:
        self.reader = reader
        self.sha = Digester()

    def read(self, n: int = -1) -> bytes:
        data = self.reader.read(n if n and n > 0 else 1 << 20)
        self.sha.update(data)
        return data


def tar_mode(media_type: str) -> str:
    if media_type.endswith("+zstd") or media_type.endswith(".zstd"):
        return "r|zst"
    if media_type.endswith("+gzip") or media_type.endswith(".gzip"):
        return "r|gz"
    if media_type.endswith(".tar") or media_type.endswith("tar"):
        return "r|"
    return "r|*"


def scan_layer(reader, media_type: str, digest: str) -> dict:
    """What one layer adds and removes of the wanted files: {"add": {path: text},
    "delete": [paths], "opaque": [dirs]}."""
    hashing = _Hashing(reader)
    add: dict[str, str] = {}
    delete: list[str] = []
    opaque: list[str] = []
    try:
        with tarfile.open(fileobj=hashing, mode=tar_mode(media_type)) as tar:
            for member in tar:
                path = member.name.removeprefix("./").lstrip("/")
                head, _, base = path.rpartition("/")
                if base == ".wh..wh..opq":
                    opaque.append(head)
                elif base.startswith(".wh."):
                    delete.append(f"{head}/{base[4:]}" if head else base[4:])
                elif member.isfile() and wanted(path) and member.size <= MAX_FILE:
                    f = tar.extractfile(member)
                    if f is not None:
                        text = f.read().decode("utf-8", errors="replace")
                        if path.endswith("/METADATA"):  # the headers; not the long description
                            text = text.split("\n\n", 1)[0] + "\n"
                        add[path] = text
        while hashing.read(1 << 20):  # the tar's padding, to check the digest
            pass
    except (tarfile.TarError, OSError, EOFError) as e:
        raise RegistryError(f"layer {digest}: not a readable tar ({e})") from None
    if hashing.sha.digest != digest:
        raise RegistryError(f"layer {digest}: content does not match its digest")
    return {"add": add, "delete": delete, "opaque": opaque}


LayerOpener = Callable[[str], AbstractContextManager]


def image_files(
    layers: Iterable[tuple[str, str]], open_layer: LayerOpener, cache: Path | None = None
) -> tuple[dict[str, str], int]:
    """The wanted files of the image whose layers (digest, media type) are given, in
    order; and how many layers were read from the registry (the rest came from cache)."""
    files: dict[str, str] = {}
    read = 0
    for digest, media_type in layers:
        cached = cache / f"{digest.replace(':', '-')}.json" if cache else None
        if cached and cached.exists():
            layer = json.loads(cached.read_text())
        else:
            with open_layer(digest) as reader:
                layer = scan_layer(reader, media_type, digest)
            read += 1
            if cached:
                places.write_atomic(cached, json.dumps(layer, sort_keys=True))
        gone = [*layer["delete"], *layer["opaque"]]
        for prefix in gone:
            for path in [p for p in files if p == prefix or p.startswith(prefix + "/")]:
                if prefix in layer["opaque"] and path == prefix:
                    continue
                del files[path]
        files.update(layer["add"])
    return files, read


# -- package databases ---------------------------------------------------------


def dpkg_packages(text: str) -> list[dict[str, str]]:
    """Installed packages of a dpkg status file: one dict of fields each."""
    packages = []
    for paragraph in re.split(r"\n\s*\n", text):
        fields: dict[str, str] = {}
        key = ""
        for line in paragraph.splitlines():
            if line[:1] in (" ", "\t") and key:
                continue  # continuation (descriptions, conffiles)
            key, sep, value = line.partition(":")
            if sep:
                fields[key.strip()] = value.strip()
        status = fields.get("Status", "install ok installed")
        if fields.get("Package") and status.endswith(" installed"):
            packages.append(fields)
    return packages


def python_distribution(text: str) -> dict[str, str]:
    msg = email.parser.HeaderParser().parsestr(text)
    return {
        k: v
        for k, v in {
            "name": msg.get("Name", ""),
            "version": msg.get("Version", ""),
            "license": msg.get("License-Expression") or msg.get("License") or "",
            "summary": msg.get("Summary", ""),
        }.items()
        if v
    }


def os_release(files: dict[str, str]) -> dict[str, str]:
    for path in OS_RELEASE:
        if path in files:
            out = {}
            for line in files[path].splitlines():
                key, sep, value = line.partition("=")
                if sep:
                    out[key.strip()] = value.strip().strip('"')
            return out
    return {}


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def components(files: dict[str, str]) -> list[dict]:
    distro = os_release(files).get("ID", "debian") or "debian"
    out: dict[str, dict] = {}
    statuses = [files[DPKG_STATUS]] if DPKG_STATUS in files else []
    statuses += [v for k, v in sorted(files.items()) if k.startswith(DPKG_STATUS_D)]
    for text in statuses:
        for p in dpkg_packages(text):
            version, arch = p.get("Version", ""), p.get("Architecture", "")
            purl = f"pkg:deb/{distro}/{quote(p['Package'], safe='')}@{quote(version, safe='')}"
            if arch:
                purl += f"?arch={arch}"
            component = {
                "type": "library",
                "bom-ref": purl,
                "name": p["Package"],
                "version": version,
                "purl": purl,
                "properties": [{"name": "org.rocm-pytorch.sbom:source", "value": "dpkg"}],
            }
            if p.get("Maintainer"):
                component["supplier"] = {"name": p["Maintainer"]}
            if p.get("Source"):
                component["properties"].append(
                    {"name": "org.rocm-pytorch.sbom:deb-source", "value": p["Source"]}
                )
            out[purl] = component
    for path, text in sorted(files.items()):
        if not _METADATA.search(path):
            continue
        d = python_distribution(text)
        if "name" not in d:
            continue
        purl = f"pkg:pypi/{_normalize(d['name'])}@{quote(d.get('version', ''), safe='+')}"
        component = {
            "type": "library",
            "bom-ref": f"{purl}#{path}",
            "name": d["name"],
            "version": d.get("version", ""),
            "purl": purl,
            "properties": [
                {"name": "org.rocm-pytorch.sbom:source", "value": "python"},
                {"name": "org.rocm-pytorch.sbom:location", "value": "/" + path.rsplit("/", 1)[0]},
            ],
        }
        if d.get("summary"):
            component["description"] = d["summary"]
        if d.get("license"):
            component["licenses"] = [{"expression": d["license"]}]
        out[component["bom-ref"]] = component
    return [out[k] for k in sorted(out)]


def cyclonedx(files: dict[str, str], name: str, digest: str, properties: dict[str, str]) -> dict:
    """The CycloneDX document of an image whose wanted files are ``files``."""
    serial = uuid.uuid5(uuid.NAMESPACE_URL, f"oci:{digest}")
    return {
        "bomFormat": "CycloneDX",
        "specVersion": SPEC_VERSION,
        "serialNumber": f"urn:uuid:{serial}",
        "version": 1,
        "metadata": {
            "tools": {"components": [{"type": "application", "name": TOOL}]},
            "component": {
                "type": "container",
                "bom-ref": f"{name}@{digest}",
                "name": name,
                "version": digest,
                "properties": [{"name": k, "value": v} for k, v in sorted(properties.items()) if v],
            },
        },
        "components": components(files),
    }
