// ATen/native/cuda/ActivationHardsigmoidKernel.cu (stand-in): the GPU kernels of hardsigmoid, hardsigmoid_backward,
// hipified by tools/amd_build/build_amd.py and compiled for every arch of
// PYTORCH_ROCM_ARCH into libtorch_hip.so.
#include <ATen/native/cuda/Loops.cuh>
#include <ATen/ops/hardsigmoid_native.h>
#include <ATen/ops/hardsigmoid_backward_native.h>

namespace at::native {

GPU_UNARY_KERNEL(hardsigmoid)
GPU_BINARY_KERNEL(hardsigmoid_backward)

}  // namespace at::native
