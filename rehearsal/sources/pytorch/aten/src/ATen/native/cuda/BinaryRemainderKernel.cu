// ATen/native/cuda/BinaryRemainderKernel.cu (stand-in): the GPU kernels of remainder, fmod,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/remainder_native.h>
#include <ATen/ops/fmod_native.h>

namespace at::native {

GPU_BINARY_KERNEL(remainder)
GPU_BINARY_KERNEL(fmod)

}  // namespace at::native
