"""torch.autograd.profiler: whether the build has Kineto (USE_KINETO), as PyTorch's
torch._C._autograd.kineto_available() says."""

from torch import _C


def kineto_available() -> bool:
    return _C._kineto_available()
