// ATen/native/cuda/UnaryLogKernels.cu (stand-in): the GPU kernels of log, log2, log10, log1p,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/log_native.h>
#include <ATen/ops/log2_native.h>
#include <ATen/ops/log10_native.h>
#include <ATen/ops/log1p_native.h>

namespace at::native {

GPU_UNARY_KERNEL(log)
GPU_UNARY_KERNEL(log2)
GPU_UNARY_KERNEL(log10)
GPU_UNARY_KERNEL(log1p)

}  // namespace at::native
