// ATen/native/cuda/ActivationReluKernel.cu (stand-in): the GPU kernels of relu, threshold_backward,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/relu_native.h>
#include <ATen/ops/threshold_backward_native.h>

namespace at::native {

GPU_UNARY_KERNEL(relu)
GPU_BINARY_KERNEL(threshold_backward)

}  // namespace at::native
