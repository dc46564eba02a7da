"""torch.cuda on ROCm: HIP behind CUDA's names, as in PyTorch."""

from torch import _C

has_magma = _C._has_magma()


def is_available() -> bool:
    return _C._device_count() > 0


def device_count() -> int:
    return _C._device_count()


def get_arch_list() -> list[str]:
    return [a for a in _C._hip_arch_list().split(";") if a]


def get_device_properties(device=0):
    raise RuntimeError("no GPU visible")
