"""Triton's run time (stand-in): the JIT, the cache, the C builder of the launchers."""

from triton.runtime.jit import JITFunction, jit

__all__ = ["JITFunction", "jit"]
