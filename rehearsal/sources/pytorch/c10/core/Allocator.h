// c10/core/Allocator.h (stand-in): a DataPtr owns memory through its deleter;
// an Allocator per device type makes them (c10::GetAllocator).
#pragma once

#include <c10/core/Device.h>

#include <cstddef>
#include <functional>
#include <memory>

namespace c10 {

using DeleterFn = void (*)(void*);

class C10_API DataPtr {
 public:
  DataPtr() : ptr_(nullptr, [](void*) {}) {}
  DataPtr(void* data, DeleterFn deleter, Device device)
      : ptr_(data, deleter), device_(device) {}
  void* get() const { return ptr_.get(); }
  Device device() const { return device_; }

 private:
  std::unique_ptr<void, DeleterFn> ptr_;
  Device device_;
};

struct C10_API Allocator {
  virtual ~Allocator() = default;
  virtual DataPtr allocate(size_t n) = 0;
};

C10_API void SetAllocator(DeviceType t, Allocator* alloc);
C10_API Allocator* GetAllocator(DeviceType t);
C10_API Allocator* GetCPUAllocator();

struct AllocatorRegisterer {
  AllocatorRegisterer(DeviceType t, Allocator* alloc) { SetAllocator(t, alloc); }
};

}  // namespace c10
