"""Hipify (rehearsal stand-in): rewrite the CUDA sources of the tree to HIP, in place.

As PyTorch's tools/amd_build/build_amd.py, it runs from the root of the tree
and writes every .cu/.cuh of a cuda/ directory under aten/ and c10/ into the
hip/ directory beside it (BinaryMulKernel.cu -> hip/BinaryMulKernel.hip,
Loops.cuh -> hip/Loops.cuh) with the CUDA names and the cuda/ include paths
mapped to HIP's, leaving files already hipified as they are (an unchanged
file keeps its time stamp, so a rebuild recompiles nothing).
"""

import re
import sys
from pathlib import Path

NAMES = {
    "cuda_runtime.h": "hip/hip_runtime.h",
    "cudaMalloc": "hipMalloc",
    "cudaFree": "hipFree",
    "cudaMemcpy": "hipMemcpy",
    "cudaDeviceSynchronize": "hipDeviceSynchronize",
    "cudaStream_t": "hipStream_t",
    "cudaError_t": "hipError_t",
    "cudaSuccess": "hipSuccess",
    "cudaGetLastError": "hipGetLastError",
    "ATen/native/cuda/": "ATen/native/hip/",
}
PATTERN = re.compile("|".join(re.escape(k) for k in sorted(NAMES, key=len, reverse=True)))


def main() -> int:
    root = Path.cwd()
    if not (root / "tools" / "amd_build" / "build_amd.py").is_file():
        print("build_amd.py: run from the root of the PyTorch tree", file=sys.stderr)
        return 1
    done = 0
    for folder in ("aten", "c10"):
        for src in sorted((root / folder).rglob("*.cu*")):
            if src.suffix not in (".cu", ".cuh"):
                continue
            if src.parent.name != "cuda":
                continue
            name = src.name if src.suffix == ".cuh" else src.stem + ".hip"
            target = src.parent.parent / "hip" / name
            target.parent.mkdir(exist_ok=True)
            text = PATTERN.sub(lambda m: NAMES[m.group(0)], src.read_text())
            if not target.exists() or target.read_text() != text:
                target.write_text(text)
                done += 1
    print(f"build_amd.py: hipified {done} file(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
