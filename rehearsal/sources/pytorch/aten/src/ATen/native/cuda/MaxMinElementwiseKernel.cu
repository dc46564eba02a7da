// ATen/native/cuda/MaxMinElementwiseKernel.cu (stand-in): the GPU kernels of maximum, minimum, fmax, fmin,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/maximum_native.h>
#include <ATen/ops/minimum_native.h>
#include <ATen/ops/fmax_native.h>
#include <ATen/ops/fmin_native.h>

namespace at::native {

GPU_BINARY_KERNEL(maximum)
GPU_BINARY_KERNEL(minimum)
GPU_BINARY_KERNEL(fmax)
GPU_BINARY_KERNEL(fmin)

}  // namespace at::native
