"""Take /wheels/*.whl out of an image's layers, streaming, whiteouts applied."""

from __future__ import annotations

import hashlib
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path

from tools.wheelhouse.errors import WheelhouseError
from tools.wheelhouse.index import parse_filename
from tools.wheelhouse.model import WheelImage

WHEEL_DIR = "wheels"
WHITEOUT = ".wh."
OPAQUE = ".wh..wh..opq"
CHUNK = 1 << 20


@dataclass(frozen=True)
class Wheel:
    """One wheel file taken out of an image."""

    filename: str
    path: Path
    sha256: str
    size: int
    image: WheelImage


def _copy(src, dest: Path) -> tuple[str, int]:
    h = hashlib.sha256()
    size = 0
    with dest.open("wb") as out:
        while chunk := src.read(CHUNK):
            h.update(chunk)
            out.write(chunk)
            size += len(chunk)
    return h.hexdigest(), size


def _clean(name: str) -> str:
    """A tar member name as a path relative to the image root."""
    name = name.lstrip("/")
    while name.startswith("./"):
        name = name[2:].lstrip("/")
    return name.rstrip("/")


def extract_wheels(image: WheelImage, dest: Path, scratch: Path) -> list[Wheel]:
    """Write the image's /wheels/*.whl into ``dest``; layers in order, whiteouts honoured."""
    if image.open_layer is None:
        raise WheelhouseError(f"{image.describe()}: no layers to read", "internal error")
    dest.mkdir(parents=True, exist_ok=True)
    wheels: dict[str, Wheel] = {}

    def drop(name: str | None) -> None:
        for n in [name] if name else list(wheels):
            if n in wheels:
                wheels.pop(n).path.unlink(missing_ok=True)

    for digest in image.layers:
        with image.open_layer(digest, scratch) as blob:
            try:
                tar = tarfile.open(fileobj=blob, mode="r|*")
            except tarfile.TarError as e:
                raise WheelhouseError(
                    f"{image.describe()}: layer {digest[:19]} is not a (gzip) tar ({e})",
                    "rebuild the image",
                ) from None
            with tar:
                for member in tar:
                    path = _clean(member.name)
                    parent, _, base = path.rpartition("/")
                    if path == WHITEOUT + WHEEL_DIR or (parent == WHEEL_DIR and base == OPAQUE):
                        drop(None)
                    elif parent != WHEEL_DIR or not base:
                        continue
                    elif base.startswith(WHITEOUT):
                        drop(base[len(WHITEOUT) :])
                    elif base.endswith(".whl") and member.isfile():
                        parse_filename(base)  # refuse a malformed name early
                        drop(base)
                        target = dest / base
                        sha, size = _copy(tar.extractfile(member), target)
                        wheels[base] = Wheel(base, target, sha, size, image)
    if not wheels:
        raise WheelhouseError(
            f"{image.describe()}: no /wheels/*.whl in the image",
            "is it a *-wheel image? rebuild it from its Dockerfile's wheel stage",
        )
    return sorted(wheels.values(), key=lambda w: w.filename)


def move(wheel: Wheel, out: Path) -> Wheel:
    target = out / wheel.filename
    shutil.move(wheel.path, target)
    return Wheel(wheel.filename, target, wheel.sha256, wheel.size, wheel.image)
