// ATen/native/cuda/ActivationGeluKernel.cu (stand-in): the GPU kernels of gelu, gelu_backward,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/gelu_native.h>
#include <ATen/ops/gelu_backward_native.h>

namespace at::native {

GPU_UNARY_KERNEL(gelu)
GPU_BINARY_KERNEL(gelu_backward)

}  // namespace at::native
