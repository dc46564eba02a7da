// ATen/native/cuda/BinaryAddSubKernel.cu (stand-in): the GPU kernels of add, sub,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/add_native.h>
#include <ATen/ops/sub_native.h>

namespace at::native {

GPU_BINARY_KERNEL(add)
GPU_BINARY_KERNEL(sub)

}  // namespace at::native
