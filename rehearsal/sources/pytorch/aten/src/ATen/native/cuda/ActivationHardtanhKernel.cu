// ATen/native/cuda/ActivationHardtanhKernel.cu (stand-in): the GPU kernels of hardtanh, hardtanh_backward,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/hardtanh_native.h>
#include <ATen/ops/hardtanh_backward_native.h>

namespace at::native {

GPU_UNARY_KERNEL(hardtanh)
GPU_BINARY_KERNEL(hardtanh_backward)

}  // namespace at::native
