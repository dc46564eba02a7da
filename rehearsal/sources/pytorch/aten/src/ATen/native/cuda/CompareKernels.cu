// ATen/native/cuda/CompareKernels.cu (stand-in): the GPU kernels of eq, ne, lt, le, gt, ge,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/eq_native.h>
#include <ATen/ops/ne_native.h>
#include <ATen/ops/lt_native.h>
#include <ATen/ops/le_native.h>
#include <ATen/ops/gt_native.h>
#include <ATen/ops/ge_native.h>

namespace at::native {

GPU_BINARY_KERNEL(eq)
GPU_BINARY_KERNEL(ne)
GPU_BINARY_KERNEL(lt)
GPU_BINARY_KERNEL(le)
GPU_BINARY_KERNEL(gt)
GPU_BINARY_KERNEL(ge)

}  // namespace at::native
