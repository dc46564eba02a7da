// ATen/native/cuda/ActivationMishKernel.cu (stand-in): the GPU kernels of mish, mish_backward,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/mish_native.h>
#include <ATen/ops/mish_backward_native.h>

namespace at::native {

GPU_UNARY_KERNEL(mish)
GPU_BINARY_KERNEL(mish_backward)

}  // namespace at::native
