"""triton_kernels (rehearsal stand-in): the mixture-of-experts routing helpers vLLM
imports from vllm.third_party.triton_kernels."""

from .topk import topk

__all__ = ["topk"]
