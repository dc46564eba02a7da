"""``triton.jit`` (stand-in): ``kernel[grid](*args)`` launches through the AMD driver.

On the first launch of a signature, the driver compiles its C launcher into
Triton's cache (triton.backends.amd.driver, triton.runtime.build) and the launcher
runs the grid. The signature comes from the arguments, as Triton specializes
them: an array is a pointer to its element type, an int is i32 (i64 beyond),
a float fp32.
"""

import functools

import triton.language as tl

_DTYPES = {"int64": "i64", "int32": "i32", "float32": "fp32", "float64": "fp64", "uint8": "u8"}


def _type(arg) -> str:
    if hasattr(arg, "dtype") and hasattr(arg, "shape"):
        return "*" + _DTYPES.get(str(arg.dtype), str(arg.dtype))
    if isinstance(arg, bool) or not isinstance(arg, (int, float)):
        raise TypeError(f"stand-in triton: cannot pass {type(arg).__name__} to a kernel")
    if isinstance(arg, float):
        return "fp32"
    return "i32" if -(2**31) <= arg < 2**31 else "i64"


def _pointer(arg):
    if hasattr(arg, "data_ptr"):
        return arg
    if hasattr(arg, "__array_interface__"):
        return arg.__array_interface__["data"][0]
    return arg


@functools.cache
def _launcher(signature: tuple[str, ...]):
    from triton.backends.amd import driver

    return driver.active().launcher_cls(list(signature))


class JITFunction:
    def __init__(self, fn):
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __getitem__(self, grid):
        return lambda *args: self.run(grid, *args)

    def run(self, grid, *args):
        grid = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
        signature = tuple(_type(a) for a in args)
        full = (*grid, 1, 1)[:3]

        def emulate(x: int, y: int, z: int) -> None:
            tl._program.ids, tl._program.grid = (x, y, z), full
            self.fn(*args)

        pairs = zip(args, signature, strict=True)
        launch_args = [_pointer(a) if s.startswith("*") else a for a, s in pairs]
        return _launcher(signature)(full, 0, emulate, *launch_args)


def jit(fn):
    return JITFunction(fn)
