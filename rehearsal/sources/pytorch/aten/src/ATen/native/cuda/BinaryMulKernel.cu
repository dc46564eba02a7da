// ATen/native/cuda/BinaryMulKernel.cu (stand-in): the GPU kernels of mul,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/mul_native.h>

namespace at::native {

GPU_BINARY_KERNEL(mul)

}  // namespace at::native
