"""triton.language (stand-in): what a kernel body reads of its launch, its program id.

A stand-in kernel's body is Python that indexes its arguments directly; it runs
once per program of the grid, on the CPU when the host has no GPU (see
triton.backends.amd.driver), where ``program_id`` is that program's index.
"""

import threading

_program = threading.local()


def program_id(axis: int) -> int:
    return _program.ids[axis]


def num_programs(axis: int) -> int:
    return _program.grid[axis]
