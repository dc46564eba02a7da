"""Stand-in Triton (the rehearsal's): the version, the backends, the native module,
``triton.jit`` whose first launch compiles its C launcher as Triton's does."""

__version__ = "3.9.0"

from triton import backends  # noqa: F401  (backends.backends: found by entry point)
from triton._C import libtriton  # noqa: F401  (the native module loads)
from triton.runtime import JITFunction, jit  # noqa: F401
