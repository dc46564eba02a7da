"""ROCm, as vLLM's platform sees it: the archs its kernels were built for and the
triton_kernels package it ships (vllm/third_party/triton_kernels)."""

import importlib.util


class RocmPlatform:
    device_name = "rocm"
    device_type = "cuda"
    dispatch_key = "CUDA"

    def supported_archs(self) -> list[str]:
        from vllm._custom_ops import compiled_archs

        return compiled_archs()

    def has_triton_kernels(self) -> bool:
        return importlib.util.find_spec("vllm.third_party.triton_kernels") is not None
