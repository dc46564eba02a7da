#include <c10/core/Allocator.h>
#include <c10/util/Exception.h>

#include <array>
#include <cstdlib>
#include <mutex>

namespace c10 {

namespace {

std::array<Allocator*, 3>& allocators() {
  static std::array<Allocator*, 3> table{};
  return table;
}
std::mutex& allocators_mutex() {
  static std::mutex m;
  return m;
}

// 64-byte aligned, as c10's alloc_cpu (gAlignment) is for AVX-512 loads.
struct DefaultCPUAllocator final : Allocator {
  DataPtr allocate(size_t n) override {
    void* data = nullptr;
    if (n) {
      TORCH_CHECK(posix_memalign(&data, 64, n) == 0, "DefaultCPUAllocator: can't allocate ", n,
                  " bytes");
    }
    return DataPtr(data, &std::free, Device(DeviceType::CPU));
  }
};

DefaultCPUAllocator g_cpu_alloc;
AllocatorRegisterer g_cpu_registerer(DeviceType::CPU, &g_cpu_alloc);

}  // namespace

void SetAllocator(DeviceType t, Allocator* alloc) {
  std::lock_guard<std::mutex> guard(allocators_mutex());
  allocators()[static_cast<size_t>(t)] = alloc;
}

Allocator* GetAllocator(DeviceType t) {
  std::lock_guard<std::mutex> guard(allocators_mutex());
  Allocator* alloc = allocators()[static_cast<size_t>(t)];
  TORCH_CHECK(alloc, "Allocator for ", Device(t), " is not set.");
  return alloc;
}

Allocator* GetCPUAllocator() { return GetAllocator(DeviceType::CPU); }

}  // namespace c10
