// ATen/native/cuda/AbsKernel.cu (stand-in): the GPU kernels of abs, neg, sgn,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/abs_native.h>
#include <ATen/ops/neg_native.h>
#include <ATen/ops/sgn_native.h>

namespace at::native {

GPU_UNARY_KERNEL(abs)
GPU_UNARY_KERNEL(neg)
GPU_UNARY_KERNEL(sgn)

}  // namespace at::native
