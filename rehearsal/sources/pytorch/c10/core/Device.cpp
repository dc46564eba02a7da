#include <c10/core/Device.h>
#include <c10/util/Exception.h>

#include <cctype>

namespace c10 {

Device::Device(const std::string& spec) {
  const auto parts = split(spec, ':');
  TORCH_CHECK(parts.size() <= 2, "Invalid device string: '", spec, "'");
  if (parts[0] == "cpu") {
    type = DeviceType::CPU;
  } else if (parts[0] == "cuda" || parts[0] == "hip") {
    type = DeviceType::CUDA;
  } else if (parts[0] == "meta") {
    type = DeviceType::Meta;
  } else {
    TORCH_CHECK(false, "Expected one of cpu, cuda, meta device type at start of device string: ",
                spec);
  }
  if (parts.size() == 2) {
    TORCH_CHECK(!parts[1].empty() && std::isdigit(static_cast<unsigned char>(parts[1][0])),
                "Invalid device string: '", spec, "'");
    index = static_cast<int8_t>(std::stoi(parts[1]));
  }
}

std::string Device::str() const {
  std::string name = type == DeviceType::CPU ? "cpu" : type == DeviceType::CUDA ? "cuda" : "meta";
  return index < 0 ? name : name + ":" + std::to_string(index);
}

std::ostream& operator<<(std::ostream& out, const Device& d) { return out << d.str(); }

}  // namespace c10
