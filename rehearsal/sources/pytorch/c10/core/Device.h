// c10/core/Device.h (stand-in): a device type and index; on ROCm builds the
// GPU is DeviceType::CUDA, as PyTorch masquerades HIP as CUDA.
#pragma once

#include <c10/macros/Macros.h>

#include <cstdint>
#include <ostream>
#include <string>

namespace c10 {

enum class DeviceType : int8_t { CPU = 0, CUDA = 1, Meta = 2 };

struct C10_API Device {
  DeviceType type = DeviceType::CPU;
  int8_t index = -1;
  Device() = default;
  Device(DeviceType t, int8_t i = -1) : type(t), index(i) {}
  explicit Device(const std::string& spec);
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  std::string str() const;
  bool operator==(const Device& other) const {
    return type == other.type && index == other.index;
  }
};

C10_API std::ostream& operator<<(std::ostream& out, const Device& d);

}  // namespace c10
