"""torch.distributed: available when built with USE_DISTRIBUTED; its NCCL backend on ROCm
is RCCL, linked into libtorch_hip.so (as PyTorch's ProcessGroupNCCL is)."""

from torch import _C


def is_available() -> bool:
    return _C._has_distributed()


def is_nccl_available() -> bool:
    return is_available() and _C._rccl_version() > 0
