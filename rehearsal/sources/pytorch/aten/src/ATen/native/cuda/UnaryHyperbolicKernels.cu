// ATen/native/cuda/UnaryHyperbolicKernels.cu (stand-in): the GPU kernels of sinh, cosh, tanh, asinh, acosh, atanh,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/sinh_native.h>
#include <ATen/ops/cosh_native.h>
#include <ATen/ops/tanh_native.h>
#include <ATen/ops/asinh_native.h>
#include <ATen/ops/acosh_native.h>
#include <ATen/ops/atanh_native.h>

namespace at::native {

GPU_UNARY_KERNEL(sinh)
GPU_UNARY_KERNEL(cosh)
GPU_UNARY_KERNEL(tanh)
GPU_UNARY_KERNEL(asinh)
GPU_UNARY_KERNEL(acosh)
GPU_UNARY_KERNEL(atanh)

}  // namespace at::native
