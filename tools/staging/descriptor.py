"""Image descriptors: what an image build leaves in Bazel instead of blob bytes.

The ImageBuild action pushes the image to the staging registry and writes a
small JSON descriptor: the manifest (raw bytes, pushed unchanged later), the
config, the layer descriptors and where staging holds it. Push, load, layout,
the wheelhouse and child builds read images through it.

Format (schema 1)::

    {
      "schema": 1,
      "target": "pytorch", "arch": "gfx950" | null, "repository": "pytorch",
      "digest": "sha256:...", "media_type": "application/vnd.oci.image.manifest.v1+json",
      "size": 1234,                      # manifest bytes
      "manifest": "<the manifest, exact text>",
      "config": {...},                   # the image config, parsed
      "layers": [{"digest": ..., "size": ..., "mediaType": ...}],
      "staging": {"registry": "127.0.0.1:5480/staging",   # HOST[:PORT]/PREFIX
                  "name": "staging/pytorch",              # repository path on the host
                  "tag": "c-<content key hex>",           # keeps the manifest alive
                  "embedded": true},                      # the project's own registry
      "content_key": "sha256:...",       # of every input that shapes the bytes
      "parents": {"pytorch-base": "sha256:..."},
      "dockerfile": "docker/Dockerfile.pytorch", "stage": "pytorch",
      "builder": {"name": "local" | "<context or buildx builder>", "driver": "docker",
                  "endpoints": [...], "buildkit": ["v0.23.2"], "engine": "28.5.2"},
      "reproducible": true | false
    }

`builder` says which BuildKit built the image (`--builders=`) and its
versions; they are part of the content key. `reproducible` is the output
mode (`--reproducible`, --config=release: timestamps rewritten, a
clean rebuild gives the same digest), also part of the content key; the push
refuses an immutable tag for an image built without it. A descriptor without
the field is from before the modes, when every image was built reproducibly:
it reads as true.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from tools.oci.digest import digest_of
from tools.oci.reference import Reference
from tools.staging import Staging

SCHEMA = 1


class DescriptorError(Exception):
    """A descriptor file that cannot be read or does not hold together."""


@dataclass(frozen=True)
class BlobRef:
    digest: str
    size: int
    media_type: str = ""


@dataclass(frozen=True)
class Descriptor:
    target: str
    arch: str | None
    repository: str
    digest: str
    media_type: str
    manifest: bytes
    config: dict
    staging_registry: str
    staging_name: str
    staging_tag: str
    embedded: bool
    content_key: str = ""
    parents: dict[str, str] = field(default_factory=dict)
    dockerfile: str = ""
    stage: str = ""
    builder: dict = field(default_factory=lambda: {"name": "local"})
    staging_instance: str = ""  # the embedded staging's state dir identity; '' if shared
    # the output mode: timestamps rewritten (a clean rebuild gives this digest again);
    # True also for descriptors from before the modes, all built that way
    reproducible: bool = True
    path: Path | None = None

    # -- derived --------------------------------------------------------------

    @property
    def size(self) -> int:
        return len(self.manifest)

    @property
    def staging_host(self) -> str:
        return self.staging_registry.split("/", 1)[0]

    @property
    def staging(self) -> Staging:
        """The staging registry that holds the image."""
        return Staging(self.staging_registry, self.embedded)

    @property
    def staging_ref(self) -> str:
        """`HOST[:PORT]/NAME@sha256:…`: what `docker pull` and build contexts use."""
        return str(Reference(self.staging_host, self.staging_name, digest=self.digest))

    @property
    def _manifest(self) -> dict:
        return json.loads(self.manifest)

    @property
    def config_blob(self) -> BlobRef:
        c = self._manifest["config"]
        return BlobRef(c["digest"], int(c["size"]), c.get("mediaType", ""))

    @property
    def layers(self) -> tuple[BlobRef, ...]:
        return tuple(
            BlobRef(d["digest"], int(d["size"]), d.get("mediaType", ""))
            for d in self._manifest.get("layers") or []
        )

    @property
    def blobs(self) -> tuple[BlobRef, ...]:
        """Config first, then the layers (what a registry must hold for the manifest)."""
        return (self.config_blob, *self.layers)

    @property
    def image_size(self) -> int:
        return sum(b.size for b in self.blobs)

    def label(self) -> str:
        return f"{self.target} ({self.arch or 'noarch'})"

    # -- (de)serialisation ----------------------------------------------------

    def to_json(self) -> dict:
        return {
            "schema": SCHEMA,
            "target": self.target,
            "arch": self.arch,
            "repository": self.repository,
            "digest": self.digest,
            "media_type": self.media_type,
            "size": self.size,
            "manifest": self.manifest.decode(),
            "config": self.config,
            "layers": [
                {"digest": b.digest, "size": b.size, "mediaType": b.media_type} for b in self.layers
            ],
            "staging": {
                "registry": self.staging_registry,
                "name": self.staging_name,
                "tag": self.staging_tag,
                "embedded": self.embedded,
                **({"instance": self.staging_instance} if self.staging_instance else {}),
            },
            "content_key": self.content_key,
            "parents": dict(sorted(self.parents.items())),
            "dockerfile": self.dockerfile,
            "stage": self.stage,
            "builder": dict(self.builder),
            "reproducible": self.reproducible,
        }

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=2, sort_keys=True) + "\n")


def from_json(data: dict, path: Path | None = None) -> Descriptor:
    """A Descriptor from its JSON form; checks the manifest against its digest."""
    where = str(path) if path else "descriptor"
    try:
        if data.get("schema") != SCHEMA:
            raise DescriptorError(
                f"{where}: schema {data.get('schema')!r}, want {SCHEMA}; rebuild the image"
            )
        staging = data["staging"]
        manifest = data["manifest"].encode()
        d = Descriptor(
            target=data["target"],
            arch=data.get("arch"),
            repository=data["repository"],
            digest=data["digest"],
            media_type=data["media_type"],
            manifest=manifest,
            config=data.get("config") or {},
            staging_registry=staging["registry"],
            staging_name=staging["name"],
            staging_tag=staging["tag"],
            embedded=bool(staging.get("embedded")),
            content_key=data.get("content_key", ""),
            parents=dict(data.get("parents") or {}),
            dockerfile=data.get("dockerfile", ""),
            stage=data.get("stage", ""),
            builder=_builder(data.get("builder")),
            staging_instance=str(staging.get("instance") or ""),
            reproducible=_reproducible(data.get("reproducible", True), where),
            path=path,
        )
    except (KeyError, TypeError, AttributeError) as e:
        raise DescriptorError(f"{where}: not an image descriptor (missing {e})") from None
    if digest_of(manifest) != d.digest:
        raise DescriptorError(f"{where}: manifest does not match its digest {d.digest}; rebuild")
    return d


def _reproducible(value: object, where: str) -> bool:
    """The output mode; absent (older descriptors, all built reproducibly): True."""
    if not isinstance(value, bool):
        raise DescriptorError(f"{where}: reproducible is {value!r}, want true or false; rebuild")
    return value


def _builder(value: object) -> dict:
    """The builder record (older descriptors hold a name only)."""
    if isinstance(value, dict):
        return dict(value)
    return {"name": value if isinstance(value, str) and value else "local"}


def load(path: Path) -> Descriptor:
    """Read the descriptor at ``path``."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise DescriptorError(f"{path}: cannot read image descriptor ({e})") from None
    if not isinstance(data, dict):
        raise DescriptorError(f"{path}: not an image descriptor")
    return from_json(data, Path(path))


def is_descriptor(data: object) -> bool:
    """Whether parsed JSON looks like a descriptor (for scanning bazel-out)."""
    return (
        isinstance(data, dict)
        and data.get("schema") == SCHEMA
        and isinstance(data.get("staging"), dict)
        and "digest" in data
    )
