"""torch.testing.assert_close with PyTorch's default tolerances per dtype."""

import numpy as np

_TOLERANCES = {"float16": (1e-3, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}


def assert_close(actual, expected, *, rtol=None, atol=None):
    a, e = (
        np.asarray(getattr(actual, "data", actual)),
        np.asarray(getattr(expected, "data", expected)),
    )
    if a.shape != e.shape:
        raise AssertionError(f"shapes differ: {a.shape} and {e.shape}")
    if a.dtype != e.dtype:
        raise AssertionError(f"dtypes differ: {a.dtype} and {e.dtype}")
    default = _TOLERANCES.get(str(a.dtype), (0.0, 0.0))
    rtol = default[0] if rtol is None else rtol
    atol = default[1] if atol is None else atol
    if not np.allclose(a, e, rtol=rtol, atol=atol):
        raise AssertionError(f"tensors differ by up to {np.max(np.abs(a - e))}")
