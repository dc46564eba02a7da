"""Write a wheelhouse: the wheels, the PEP 503 index, wheelhouse.json and README.txt.

OUT is either new, empty, or a previous wheelhouse (it has wheelhouse.json),
whose wheels and index are replaced only once every image has been read.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tools.wheelhouse.errors import WheelhouseError
from tools.wheelhouse.extract import Wheel, extract_wheels, move
from tools.wheelhouse.index import WheelFile, parse_filename, project_of, write_index
from tools.wheelhouse.model import WheelImage

MANIFEST = "wheelhouse.json"
README = "README.txt"
SCRATCH_PREFIX = ".wheelhouse-"


def for_images(arch: str, rocm_version: str) -> str:
    """What the wheels need, said where they are published: they are built for the family's
    images and run only there (docs/wheelhouse.md, "What the wheels need")."""
    return (
        f"these wheels are for the rocm-pytorch images for {arch} (ROCm {rocm_version}) only:"
        " they link the ROCm of those images (/opt/rocm: HIP, rocBLAS, hipBLASLt, MIOpen,"
        " RCCL, ...) and neither bundle it nor declare it, so pip installs them anywhere,"
        " but outside those images `import torch` fails naming the ROCm library it lacks"
        " (ImportError: libamdhip64.so...: cannot open shared object file); install them"
        f" in an image of the family (runtime:*-{arch}, FROM it, or its ROCm {rocm_version})"
    )


@dataclass(frozen=True)
class Result:
    out: Path
    arch: str
    rocm_version: str
    images: tuple[WheelImage, ...]
    wheels: tuple[Wheel, ...]


def check_out(out: Path) -> None:
    """OUT must be new, empty or a previous wheelhouse: never clobber other files."""
    if out.exists() and not out.is_dir():
        raise WheelhouseError(f"--out {out}: not a directory", "give a directory path")
    if out.is_dir():
        others = [p.name for p in out.iterdir() if not p.name.startswith(SCRATCH_PREFIX)]
        if others and not (out / MANIFEST).is_file():
            raise WheelhouseError(
                f"--out {out}: not empty and not a wheelhouse (no {MANIFEST};"
                f" holds {', '.join(sorted(others)[:3])}{', ...' if len(others) > 3 else ''})",
                "give a new or empty directory, or a previous wheelhouse to replace",
            )


def _clear_previous(out: Path) -> None:
    for p in out.glob("*.whl"):
        p.unlink()
    shutil.rmtree(out / "simple", ignore_errors=True)
    (out / MANIFEST).unlink(missing_ok=True)
    (out / README).unlink(missing_ok=True)


def _unique(wheels: Sequence[Wheel]) -> list[Wheel]:
    by_name: dict[str, Wheel] = {}
    for wheel in wheels:
        other = by_name.setdefault(wheel.filename, wheel)
        if other.sha256 != wheel.sha256:
            raise WheelhouseError(
                f"{wheel.filename} differs between {other.image.describe()} and"
                f" {wheel.image.describe()}",
                "rebuild the images from one commit",
            )
    return sorted(by_name.values(), key=lambda w: w.filename)


def manifest(result: Result) -> dict:
    return {
        "arch": result.arch,
        "rocm_version": result.rocm_version,
        "for": for_images(result.arch, result.rocm_version),
        "images": [
            {
                "target": i.target,
                "arch": i.arch,
                "repository": i.repository,
                "digest": i.digest,
                "origin": i.origin,
                "wheels": [w.filename for w in result.wheels if w.image == i],
            }
            for i in result.images
        ],
        "wheels": [
            {
                "filename": w.filename,
                "project": project_of(w.filename),
                "version": parse_filename(w.filename)["version"],
                "sha256": w.sha256,
                "size": w.size,
                "target": w.image.target,
            }
            for w in result.wheels
        ],
    }


def write(
    images: Sequence[WheelImage],
    out: Path,
    *,
    arch: str,
    rocm_version: str,
    log: Callable[[str], None] = lambda _msg: None,
) -> Result:
    """Extract every image's wheels into OUT and index them."""
    check_out(out)
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX, dir=out))
    try:
        extracted: list[Wheel] = []
        for n, image in enumerate(images, 1):
            log(f"[{n}/{len(images)}] {image.describe()}")
            extracted += extract_wheels(image, scratch / f"image-{n}", scratch)
        wheels = _unique(extracted)
        _clear_previous(out)
        wheels = [move(w, out) for w in wheels]
        write_index(out, [WheelFile(w.filename, w.sha256) for w in wheels])
        result = Result(out, arch, rocm_version, tuple(images), tuple(wheels))
        (out / MANIFEST).write_text(json.dumps(manifest(result), indent=2) + "\n")
        (out / README).write_text(for_images(arch, rocm_version) + "\n")
        return result
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
