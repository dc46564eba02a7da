// ATen/native/cuda/LogicalOpsKernels.cu (stand-in): the GPU kernels of logical_and, logical_or, logical_xor,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/logical_and_native.h>
#include <ATen/ops/logical_or_native.h>
#include <ATen/ops/logical_xor_native.h>

namespace at::native {

GPU_BINARY_KERNEL(logical_and)
GPU_BINARY_KERNEL(logical_or)
GPU_BINARY_KERNEL(logical_xor)

}  // namespace at::native
