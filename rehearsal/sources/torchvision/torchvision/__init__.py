"""Stand-in torchvision: the version and its native extension."""

import torch  # noqa: F401  (libtorch_hip.so, which torchvision._C links, loads first)

from torchvision import _C

__version__ = _C.version()


def extension_archs() -> list[str]:
    """The GPU archs torchvision._C carries code for."""
    return [a for a in _C.archs().split(";") if a]


def image_codecs() -> str:
    """The libjpeg and libpng versions torchvision._C decodes with."""
    return _C.codecs()
