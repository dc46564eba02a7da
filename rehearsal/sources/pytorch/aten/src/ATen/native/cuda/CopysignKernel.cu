// ATen/native/cuda/CopysignKernel.cu (stand-in): the GPU kernels of copysign, nextafter, heaviside,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/copysign_native.h>
#include <ATen/ops/nextafter_native.h>
#include <ATen/ops/heaviside_native.h>

namespace at::native {

GPU_BINARY_KERNEL(copysign)
GPU_BINARY_KERNEL(nextafter)
GPU_BINARY_KERNEL(heaviside)

}  // namespace at::native
