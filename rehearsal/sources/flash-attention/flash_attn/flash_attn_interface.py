"""FlashAttention's Python interface (rehearsal stand-in): what the extension holds."""

import flash_attn_2_cuda as flash_attn_gpu
import torch  # noqa: F401  (libtorch_hip.so, which the extension links, loads first)


def flash_attn_archs() -> list[str]:
    """The GPU archs flash_attn_2_cuda carries code for."""
    return [a for a in flash_attn_gpu.archs().split(";") if a]


def flash_attn_kernels(direction: str = "fwd") -> list[str]:
    """The CK fmha kernels of one direction (fwd, fwd_appendkv, fwd_splitkv, bwd)."""
    return flash_attn_gpu.kernels(direction)
