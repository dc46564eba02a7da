// ATen/native/cuda/Loops.cuh (stand-in): gpu_kernel, the launch behind every
// elementwise GPU kernel of ATen (a grid-stride loop over contiguous
// operands), and the GPU_*_KERNEL macros the kernel files instantiate it
// with: one kernel per operator and dtype (float, double, Half), registered
// in the operator's DispatchStub when libtorch_hip.so loads.
#pragma once

#include <cuda_runtime.h>

#include <ATen/Dispatch.h>
#include <ATen/TensorIterator.h>
#include <ATen/native/DispatchStub.h>
#include <ATen/native/ufunc/ops.h>

#include <algorithm>
#include <cstdint>

namespace at::native {

constexpr int kNumThreads = 256;

template <typename scalar_t, typename func_t>
__global__ void unary_elementwise_kernel(int64_t n, scalar_t* out, const scalar_t* in, func_t f) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    out[i] = f(in[i]);
  }
}

template <typename scalar_t, typename func_t>
__global__ void binary_elementwise_kernel(int64_t n, scalar_t* out, const scalar_t* a,
                                          const scalar_t* b, func_t f) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    out[i] = f(a[i], b[i]);
  }
}

inline dim3 grid_for(int64_t n) {
  return dim3(static_cast<unsigned>(std::min<int64_t>((n + kNumThreads - 1) / kNumThreads, 65535)));
}

template <typename scalar_t, typename func_t>
void gpu_kernel_unary(TensorIteratorBase& iter, const func_t& f) {
  TORCH_CHECK(iter.is_contiguous(), "gpu_kernel: non-contiguous operands");
  const int64_t n = iter.numel();
  if (n == 0) return;
  unary_elementwise_kernel<scalar_t><<<grid_for(n), kNumThreads, 0, 0>>>(
      n, reinterpret_cast<scalar_t*>(iter.data_ptr(0)),
      reinterpret_cast<const scalar_t*>(iter.data_ptr(1)), f);
  TORCH_CHECK(cudaGetLastError() == cudaSuccess, "gpu_kernel: the launch failed");
}

template <typename scalar_t, typename func_t>
void gpu_kernel_binary(TensorIteratorBase& iter, const func_t& f) {
  TORCH_CHECK(iter.is_contiguous(), "gpu_kernel: non-contiguous operands");
  const int64_t n = iter.numel();
  if (n == 0) return;
  binary_elementwise_kernel<scalar_t><<<grid_for(n), kNumThreads, 0, 0>>>(
      n, reinterpret_cast<scalar_t*>(iter.data_ptr(0)),
      reinterpret_cast<const scalar_t*>(iter.data_ptr(1)),
      reinterpret_cast<const scalar_t*>(iter.data_ptr(2)), f);
  TORCH_CHECK(cudaGetLastError() == cudaSuccess, "gpu_kernel: the launch failed");
}

}  // namespace at::native

#define GPU_UNARY_KERNEL(name)                                                          \
  struct name##_functor {                                                               \
    template <typename T>                                                               \
    C10_HOST_DEVICE T operator()(T a) const {                                           \
      return ::at::native::ufunc::name(a);                                              \
    }                                                                                   \
  };                                                                                    \
  static void name##_kernel_cuda(TensorIteratorBase& iter) {                            \
    AT_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), #name "_cuda",             \
                                        [&] { gpu_kernel_unary<scalar_t>(iter, name##_functor()); }); \
  }                                                                                     \
  REGISTER_CUDA_DISPATCH(name##_stub, &name##_kernel_cuda)

#define GPU_BINARY_KERNEL(name)                                                         \
  struct name##_functor {                                                               \
    template <typename T>                                                               \
    C10_HOST_DEVICE T operator()(T a, T b) const {                                      \
      return ::at::native::ufunc::name(a, b);                                           \
    }                                                                                   \
  };                                                                                    \
  static void name##_kernel_cuda(TensorIteratorBase& iter) {                            \
    AT_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), #name "_cuda",             \
                                        [&] { gpu_kernel_binary<scalar_t>(iter, name##_functor()); }); \
  }                                                                                     \
  REGISTER_CUDA_DISPATCH(name##_stub, &name##_kernel_cuda)
