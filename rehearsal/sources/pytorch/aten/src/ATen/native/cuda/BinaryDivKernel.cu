// ATen/native/cuda/BinaryDivKernel.cu (stand-in): the GPU kernels of div, floor_divide,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/div_native.h>
#include <ATen/ops/floor_divide_native.h>

namespace at::native {

GPU_BINARY_KERNEL(div)
GPU_BINARY_KERNEL(floor_divide)

}  // namespace at::native
