// ATen/native/cuda/ActivationSoftplusKernel.cu (stand-in): the GPU kernels of softplus, softplus_backward,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/softplus_native.h>
#include <ATen/ops/softplus_backward_native.h>

namespace at::native {

GPU_UNARY_KERNEL(softplus)
GPU_BINARY_KERNEL(softplus_backward)

}  // namespace at::native
