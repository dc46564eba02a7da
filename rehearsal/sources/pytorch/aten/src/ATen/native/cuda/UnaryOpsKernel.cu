// ATen/native/cuda/UnaryOpsKernel.cu (stand-in): the GPU kernels of sqrt, rsqrt, exp, exp2, expm1, reciprocal,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/sqrt_native.h>
#include <ATen/ops/rsqrt_native.h>
#include <ATen/ops/exp_native.h>
#include <ATen/ops/exp2_native.h>
#include <ATen/ops/expm1_native.h>
#include <ATen/ops/reciprocal_native.h>

namespace at::native {

GPU_UNARY_KERNEL(sqrt)
GPU_UNARY_KERNEL(rsqrt)
GPU_UNARY_KERNEL(exp)
GPU_UNARY_KERNEL(exp2)
GPU_UNARY_KERNEL(expm1)
GPU_UNARY_KERNEL(reciprocal)

}  // namespace at::native
