// ATen/native/cuda/UnaryGeometricKernels.cu (stand-in): the GPU kernels of sin, cos, tan, asin, acos, atan,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/sin_native.h>
#include <ATen/ops/cos_native.h>
#include <ATen/ops/tan_native.h>
#include <ATen/ops/asin_native.h>
#include <ATen/ops/acos_native.h>
#include <ATen/ops/atan_native.h>

namespace at::native {

GPU_UNARY_KERNEL(sin)
GPU_UNARY_KERNEL(cos)
GPU_UNARY_KERNEL(tan)
GPU_UNARY_KERNEL(asin)
GPU_UNARY_KERNEL(acos)
GPU_UNARY_KERNEL(atan)

}  // namespace at::native
