"""aiter (rehearsal stand-in): its modules, prebuilt for GPU_ARCHS or built on first use."""

import torch  # noqa: F401  (libtorch_hip.so, which every module links, loads first)

from aiter._version import __version__
from aiter.jit.core import MHA_VARLEN_FWD_PREBUILT, get_module

__all__ = ["MHA_VARLEN_FWD_PREBUILT", "__version__", "get_module", "gpu_archs", "mha_kernels"]


def gpu_archs() -> list[str]:
    """The GPU archs the activation module carries code for."""
    return [a for a in get_module("module_activation").gpu_archs().split(";") if a]


def mha_kernels() -> list[str]:
    """The CK fmha kernels of the prebuilt mha_varlen_fwd variants."""
    return [k for name in MHA_VARLEN_FWD_PREBUILT for k in get_module(name).fwd_kernels()]
