// ATen/native/cuda/UnarySpecialOpsKernel.cu (stand-in): the GPU kernels of erf, erfc, lgamma, sinc,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/erf_native.h>
#include <ATen/ops/erfc_native.h>
#include <ATen/ops/lgamma_native.h>
#include <ATen/ops/sinc_native.h>

namespace at::native {

GPU_UNARY_KERNEL(erf)
GPU_UNARY_KERNEL(erfc)
GPU_UNARY_KERNEL(lgamma)
GPU_UNARY_KERNEL(sinc)

}  // namespace at::native
