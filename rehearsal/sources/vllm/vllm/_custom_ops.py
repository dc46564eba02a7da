"""The custom ops of vllm._C (hipcc-compiled for the image's arch); importing this
module loads the extension, as vLLM's does, and fails when it cannot."""

import torch  # noqa: F401  (libtorch_hip.so, which vllm._C links, loads first)

from vllm import _C


def compiled_archs() -> list[str]:
    """The GPU archs vllm._C carries code objects for."""
    return [a for a in _C.archs().split(";") if a]


def torch_archs() -> list[str]:
    """The archs of the torch the extension links (libtorch_hip.so)."""
    return [a for a in _C.torch_archs().split(";") if a]
