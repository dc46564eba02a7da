// ATen/native/cuda/BinaryGeometricKernels.cu (stand-in): the GPU kernels of atan2, hypot,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/atan2_native.h>
#include <ATen/ops/hypot_native.h>

namespace at::native {

GPU_BINARY_KERNEL(atan2)
GPU_BINARY_KERNEL(hypot)

}  // namespace at::native
