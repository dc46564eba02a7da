import contextlib
import enum


class SDPBackend(enum.Enum):
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2


@contextlib.contextmanager
def sdpa_kernel(backends):
    yield
