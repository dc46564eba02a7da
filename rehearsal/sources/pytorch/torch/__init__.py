"""The stand-in torch (the rehearsal's): a small tensor library on numpy, with the
build facts of a ROCm torch (torch.version.hip, the arch list, MAGMA, AOTriton)
read from its native libtorch_hip.so through torch._C."""

import numpy as _np

from torch import (
    _C,  # noqa: F401  (libtorch_hip.so, MAGMA and AOTriton load)
    version,
)
from torch._tensor import (
    Tensor,
    eye,
    float16,
    float32,
    float64,
    full,
    no_grad,
    ones,
    randn,
    tensor,
    zeros,
)

__version__ = version.__version__

from torch import autograd, backends, cuda, distributed, linalg, nn, testing

__all__ = [
    "Tensor",
    "autograd",
    "backends",
    "cuda",
    "distributed",
    "eye",
    "float16",
    "float32",
    "float64",
    "full",
    "linalg",
    "nn",
    "no_grad",
    "ones",
    "randn",
    "tensor",
    "testing",
    "version",
    "zeros",
]
_np.seterr(all="ignore")
