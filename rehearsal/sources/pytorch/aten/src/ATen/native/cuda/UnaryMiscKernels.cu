// ATen/native/cuda/UnaryMiscKernels.cu (stand-in): the GPU kernels of square, cbrt, deg2rad, rad2deg, angle, signbit, bitwise_not, logical_not, logit,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/square_native.h>
#include <ATen/ops/cbrt_native.h>
#include <ATen/ops/deg2rad_native.h>
#include <ATen/ops/rad2deg_native.h>
#include <ATen/ops/angle_native.h>
#include <ATen/ops/signbit_native.h>
#include <ATen/ops/bitwise_not_native.h>
#include <ATen/ops/logical_not_native.h>
#include <ATen/ops/logit_native.h>

namespace at::native {

GPU_UNARY_KERNEL(square)
GPU_UNARY_KERNEL(cbrt)
GPU_UNARY_KERNEL(deg2rad)
GPU_UNARY_KERNEL(rad2deg)
GPU_UNARY_KERNEL(angle)
GPU_UNARY_KERNEL(signbit)
GPU_UNARY_KERNEL(bitwise_not)
GPU_UNARY_KERNEL(logical_not)
GPU_UNARY_KERNEL(logit)

}  // namespace at::native
