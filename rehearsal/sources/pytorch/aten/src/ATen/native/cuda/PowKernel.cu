// ATen/native/cuda/PowKernel.cu (stand-in): the GPU kernels of pow,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/pow_native.h>

namespace at::native {

GPU_BINARY_KERNEL(pow)

}  // namespace at::native
