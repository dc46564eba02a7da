// ATen/native/cuda/LogAddExpKernel.cu (stand-in): the GPU kernels of logaddexp, logaddexp2, xlogy,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/logaddexp_native.h>
#include <ATen/ops/logaddexp2_native.h>
#include <ATen/ops/xlogy_native.h>

namespace at::native {

GPU_BINARY_KERNEL(logaddexp)
GPU_BINARY_KERNEL(logaddexp2)
GPU_BINARY_KERNEL(xlogy)

}  // namespace at::native
