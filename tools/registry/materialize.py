"""Materialize images from staging: an OCI image layout directory, or the local engine.

Images live in the staging registry; Bazel holds only their descriptors.
`layout` streams an image's blobs from staging into an OCI image layout
(each checked against its digest), written next to the destination and
renamed into place at the end, so a failure leaves nothing half-written.
`load` has the local Docker engine pull the image from staging by digest and
tags it with its real refs (dockerd treats 127.0.0.0/8 registries as
insecure, so the embedded staging registry needs no configuration).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from tools.oci.errors import NotFound, RegistryError
from tools.oci.media import OCI_INDEX
from tools.oci.reference import Reference
from tools.registry.parallel import parallel
from tools.staging.clients import Clients, lost

if TYPE_CHECKING:
    from tools.registry.plan import PlannedImage
    from tools.staging.descriptor import Descriptor

REF_NAME = "org.opencontainers.image.ref.name"


# -- OCI layout ---------------------------------------------------------------


def write_layouts(
    images: list[tuple[Descriptor, str | None, str]],
    out: Path,
    clients: Clients,
    jobs: int = 4,
    log: Callable[[str], None] = lambda _msg: None,
) -> None:
    """Each (descriptor, ref name or None, subdirectory or "") as an OCI layout under ``out``.

    ``out`` must be new or empty; it appears complete or not at all.
    """
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise RegistryError(f"{out}: exists and is not an empty directory; give a new --out")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    have: dict[str, Path] = {}  # blobs already written: later images hard-link them
    try:
        for d, ref_name, subdir in images:
            log(f"{d.label()} {d.digest}: {len(d.blobs)} blobs -> {out / subdir}")
            write_layout(d, tmp / subdir, ref_name, clients, jobs, have)
        tmp.chmod(0o755)
        os.replace(tmp, out)  # POSIX: a directory may replace an empty one
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def write_layout(
    d: Descriptor,
    root: Path,
    ref_name: str | None,
    clients: Clients,
    jobs: int = 4,
    have: dict[str, Path] | None = None,
) -> None:
    """One image as an OCI layout in the new directory ``root``.

    Blobs in ``have`` (digest -> file) are hard-linked, not fetched again;
    the ones written here are added to it.
    """
    have = {} if have is None else have
    s = clients.check_staged(d)
    blobs = root / "blobs" / "sha256"
    blobs.mkdir(parents=True)
    (blobs / d.digest.removeprefix("sha256:")).write_bytes(d.manifest)

    def fetch(digest: str) -> None:
        algo, _, hexdigest = digest.partition(":")
        if algo != "sha256":
            raise RegistryError(f"{d.label()}: blob {digest}: only sha256 digests are supported")
        if digest in have:
            os.link(have[digest], blobs / hexdigest)
            return
        try:
            s.download_blob(d.staging_name, digest, blobs / hexdigest)
        except NotFound:
            raise lost(d) from None

    digests = list(dict.fromkeys(b.digest for b in d.blobs))
    parallel(jobs, fetch, digests)
    have.update((digest, blobs / digest.partition(":")[2]) for digest in digests)
    entry: dict = {"mediaType": d.media_type, "digest": d.digest, "size": d.size}
    if ref_name:
        entry["annotations"] = {REF_NAME: ref_name}
    index = {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [entry]}
    (root / "index.json").write_text(json.dumps(index, indent=2) + "\n")
    (root / "oci-layout").write_text(json.dumps({"imageLayoutVersion": "1.0.0"}) + "\n")


def subdirectory(image: PlannedImage) -> str:
    """Where `layout --plan` puts an image: `<target>.<arch>`, or `<target>` if arch-free."""
    return f"{image.target}.{image.arch}" if image.arch else image.target


# -- the local Docker engine --------------------------------------------------


def _docker(docker: str, *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run([docker, *args], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise RegistryError(
            f"docker CLI {docker!r} not found; install Docker or pass --docker PATH"
        ) from None


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else "no output"


def check_engine(docker: str) -> None:
    r = _docker(docker, "version", "--format", "{{.Server.Version}}")
    if r.returncode != 0:
        where = os.environ.get("DOCKER_HOST") or "unset, so the default socket"
        raise RegistryError(
            f"cannot reach the Docker engine (DOCKER_HOST={where}): {_last_line(r.stderr)};"
            " start it, or point DOCKER_HOST at a running one"
        )


def load(
    images: list[tuple[PlannedImage, Descriptor]],
    clients: Clients,
    docker: str = "docker",
    log: Callable[[str], None] = lambda _msg: None,
) -> Iterator[str]:
    """Pull each image from staging into the engine and tag it: yields each ref loaded."""
    check_engine(docker)
    for image, d in images:
        s = clients.check_staged(d)
        staged = str(Reference(s.host, d.staging_name, digest=d.digest))
        log(f"{image.label()}: docker pull {staged}")
        r = _docker(docker, "pull", "--quiet", staged)
        if r.returncode != 0:
            raise RegistryError(
                f"{image.label()}: docker pull {staged} failed: {_last_line(r.stderr)};"
                f" the engine must reach {s.host} (a plain-HTTP registry beyond loopback"
                " belongs in dockerd's insecure-registries)"
            )
        for ref in image.refs:
            ref = ref.split("://", 1)[-1]
            r = _docker(docker, "tag", staged, ref)
            if r.returncode != 0:
                raise RegistryError(
                    f"{image.label()}: docker tag {staged} {ref} failed: {_last_line(r.stderr)}"
                )
            yield ref
        # drop the staging name only: the image stays under its real refs
        _docker(docker, "image", "rm", staged)
