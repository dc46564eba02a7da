// ATen/native/cuda/ActivationEluKernel.cu (stand-in): the GPU kernels of elu, selu, celu, elu_backward,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/elu_native.h>
#include <ATen/ops/selu_native.h>
#include <ATen/ops/celu_native.h>
#include <ATen/ops/elu_backward_native.h>

namespace at::native {

GPU_UNARY_KERNEL(elu)
GPU_UNARY_KERNEL(selu)
GPU_UNARY_KERNEL(celu)
GPU_BINARY_KERNEL(elu_backward)

}  // namespace at::native
