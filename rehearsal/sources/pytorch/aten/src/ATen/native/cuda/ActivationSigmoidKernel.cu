// ATen/native/cuda/ActivationSigmoidKernel.cu (stand-in): the GPU kernels of sigmoid, sigmoid_backward, tanh_backward,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/sigmoid_native.h>
#include <ATen/ops/sigmoid_backward_native.h>
#include <ATen/ops/tanh_backward_native.h>

namespace at::native {

GPU_UNARY_KERNEL(sigmoid)
GPU_BINARY_KERNEL(sigmoid_backward)
GPU_BINARY_KERNEL(tanh_backward)

}  // namespace at::native
