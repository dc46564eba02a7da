#include <c10/core/Allocator.h>
#include <c10/hip/HIPFunctions.h>
#include <c10/util/Exception.h>
#include <hip/hip_runtime.h>

namespace c10::hip {

int device_count() noexcept {
  int count = 0;
  return hipGetDeviceCount(&count) == hipSuccess ? count : 0;
}

namespace {

// The GPU's allocator (c10/hip/HIPCachingAllocator.cpp, without the cache):
// registered for DeviceType::CUDA when libc10_hip.so loads; HIP is asked
// nothing until a GPU tensor is made.
struct HIPAllocator final : Allocator {
  DataPtr allocate(size_t n) override {
    void* data = nullptr;
    if (n) {
      const hipError_t err = hipMalloc(&data, n);
      TORCH_CHECK(err == hipSuccess, "HIP out of memory or no GPU: tried to allocate ", n,
                  " bytes (", hipGetErrorString(err), ")");
    }
    return DataPtr(data, [](void* p) { (void)hipFree(p); }, Device(DeviceType::CUDA, 0));
  }
};

HIPAllocator g_hip_alloc;
AllocatorRegisterer g_hip_registerer(DeviceType::CUDA, &g_hip_alloc);

}  // namespace

}  // namespace c10::hip
