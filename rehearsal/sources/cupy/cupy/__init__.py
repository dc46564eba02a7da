"""Stand-in CuPy: the version and the archs its kernels were compiled for."""

from cupy._core import core

__version__ = core.version()


def get_targets() -> list[str]:
    return core.targets().split(",")
