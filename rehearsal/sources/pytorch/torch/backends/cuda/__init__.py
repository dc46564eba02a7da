"""torch.backends.cuda: which SDPA kernels and linear algebra library the build has."""

from pathlib import Path

from torch import _C

_LIB = Path(__file__).resolve().parents[2] / "lib"
_PREFERRED = ["default"]


def is_flash_attention_available() -> bool:
    # AOTriton's runtime and its kernel images for the archs torch was built for.
    archs = [a for a in _C._aotriton_archs().split(";") if a]
    images = _LIB / "aotriton.images"
    return bool(archs) and all((images / f"amd-{a}").is_dir() for a in archs)


def preferred_linalg_library(backend=None):
    if backend is not None:
        _PREFERRED[0] = backend
    return _PREFERRED[0]
