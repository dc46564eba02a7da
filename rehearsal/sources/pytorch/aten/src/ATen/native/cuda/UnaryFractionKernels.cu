// ATen/native/cuda/UnaryFractionKernels.cu (stand-in): the GPU kernels of floor, ceil, round, trunc, frac,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/floor_native.h>
#include <ATen/ops/ceil_native.h>
#include <ATen/ops/round_native.h>
#include <ATen/ops/trunc_native.h>
#include <ATen/ops/frac_native.h>

namespace at::native {

GPU_UNARY_KERNEL(floor)
GPU_UNARY_KERNEL(ceil)
GPU_UNARY_KERNEL(round)
GPU_UNARY_KERNEL(trunc)
GPU_UNARY_KERNEL(frac)

}  // namespace at::native
