"""torch.autograd: the profiler's Kineto integration (the tensors' autograd is torch._tensor)."""

from torch.autograd import profiler
from torch.autograd.profiler import kineto_available

__all__ = ["kineto_available", "profiler"]
