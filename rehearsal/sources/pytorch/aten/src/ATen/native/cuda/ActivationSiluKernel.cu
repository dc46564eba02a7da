// ATen/native/cuda/ActivationSiluKernel.cu (stand-in): the GPU kernels of silu, silu_backward,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/silu_native.h>
#include <ATen/ops/silu_backward_native.h>

namespace at::native {

GPU_UNARY_KERNEL(silu)
GPU_BINARY_KERNEL(silu_backward)

}  // namespace at::native
