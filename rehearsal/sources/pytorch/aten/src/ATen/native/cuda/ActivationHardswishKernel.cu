// ATen/native/cuda/ActivationHardswishKernel.cu (stand-in): the GPU kernels of hardswish, hardswish_backward,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/hardswish_native.h>
#include <ATen/ops/hardswish_backward_native.h>

namespace at::native {

GPU_UNARY_KERNEL(hardswish)
GPU_BINARY_KERNEL(hardswish_backward)

}  // namespace at::native
