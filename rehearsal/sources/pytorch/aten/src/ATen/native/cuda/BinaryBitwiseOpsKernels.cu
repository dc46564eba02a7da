// ATen/native/cuda/BinaryBitwiseOpsKernels.cu (stand-in): the GPU kernels of bitwise_and, bitwise_or, bitwise_xor, bitwise_left_shift, bitwise_right_shift,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/bitwise_and_native.h>
#include <ATen/ops/bitwise_or_native.h>
#include <ATen/ops/bitwise_xor_native.h>
#include <ATen/ops/bitwise_left_shift_native.h>
#include <ATen/ops/bitwise_right_shift_native.h>

namespace at::native {

GPU_BINARY_KERNEL(bitwise_and)
GPU_BINARY_KERNEL(bitwise_or)
GPU_BINARY_KERNEL(bitwise_xor)
GPU_BINARY_KERNEL(bitwise_left_shift)
GPU_BINARY_KERNEL(bitwise_right_shift)

}  // namespace at::native
