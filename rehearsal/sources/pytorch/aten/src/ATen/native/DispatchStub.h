// ATen/native/DispatchStub.h (stand-in): a kernel per CPU capability and one
// for the GPU, chosen at run time. Each native/cpu kernel file is compiled
// once per capability (cmake/Codegen.cmake: -DCPU_CAPABILITY=AVX2 -mavx2
// -mfma ...) and registers itself in its capability's slot.
#pragma once

#include <ATen/TensorIterator.h>
#include <c10/util/Exception.h>

#include <atomic>

namespace at::native {

enum class CPUCapability : int { DEFAULT = 0, AVX2 = 1, NUM_OPTIONS };

TORCH_API CPUCapability get_cpu_capability();

template <typename FnPtr, typename T>
struct DispatchStub;

template <typename rT, typename T, typename... Args>
struct DispatchStub<rT (*)(Args...), T> {
  using FnPtr = rT (*)(Args...);

  rT operator()(DeviceType device_type, Args&&... args) {
    return get_call_ptr(device_type)(std::forward<Args>(args)...);
  }

  FnPtr get_call_ptr(DeviceType device_type) {
    if (device_type == DeviceType::CUDA) {
      TORCH_CHECK(cuda_dispatch_ptr, "DispatchStub: missing CUDA kernel");
      return cuda_dispatch_ptr;
    }
    FnPtr fn = cpu_dispatch_ptr.load(std::memory_order_relaxed);
    if (!fn) {
      fn = T::DEFAULT;
      if (get_cpu_capability() == CPUCapability::AVX2 && T::AVX2) fn = T::AVX2;
      TORCH_CHECK(fn, "DispatchStub: missing default kernel");
      cpu_dispatch_ptr.store(fn, std::memory_order_relaxed);
    }
    return fn;
  }

  std::atomic<FnPtr> cpu_dispatch_ptr{nullptr};
  FnPtr cuda_dispatch_ptr = nullptr;
};

}  // namespace at::native

#define DECLARE_DISPATCH(fn, name)                                       \
  struct name##_type : ::at::native::DispatchStub<fn, name##_type> {     \
    static fn DEFAULT;                                                   \
    static fn AVX2;                                                      \
  };                                                                     \
  extern TORCH_API struct name##_type name

#define DEFINE_DISPATCH(name) struct name##_type name

// In a kernel file compiled per capability (CPU_CAPABILITY is DEFAULT or
// AVX2): the capability's slot of the stub (inside namespace at::native).
#define REGISTER_DISPATCH(name, fn) name##_type::FnPtr name##_type::CPU_CAPABILITY = fn;

// In libtorch_hip: the GPU kernel, set when the library loads.
#define REGISTER_CUDA_DISPATCH(name, fn)                    \
  static int C10_ANONYMOUS_VARIABLE(register_cuda_) = [] {  \
    ::at::native::name.cuda_dispatch_ptr = fn;              \
    return 0;                                               \
  }();
