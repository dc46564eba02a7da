#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/Exception.h>

#include <algorithm>

namespace c10 {

const char* toString(DispatchKey k) {
  switch (k) {
    case DispatchKey::CPU:
      return "CPU";
    case DispatchKey::CUDA:
      return "CUDA";
    default:
      return "Undefined";
  }
}

DispatchKey dispatchKeyFor(Device d) {
  TORCH_CHECK(!(d.type == DeviceType::Meta), "no kernels for the meta device here");
  return d.is_cuda() ? DispatchKey::CUDA : DispatchKey::CPU;
}

Dispatcher& Dispatcher::singleton() {
  static Dispatcher instance;
  return instance;
}

void Dispatcher::registerKernel(const std::string& op, DispatchKey key, void* fn) {
  std::lock_guard<std::mutex> guard(mutex_);
  auto& kernels = table_[op];
  kernels.resize(static_cast<size_t>(DispatchKey::NumDispatchKeys), nullptr);
  TORCH_CHECK(!kernels[static_cast<size_t>(key)], "a kernel for ", op, " on ", toString(key),
              " is already registered");
  kernels[static_cast<size_t>(key)] = fn;
}

void* Dispatcher::findKernel(const std::string& op, DispatchKey key) const {
  std::lock_guard<std::mutex> guard(mutex_);
  const auto it = table_.find(op);
  TORCH_CHECK(it != table_.end(), "no operator ", op, " is registered");
  void* fn = it->second[static_cast<size_t>(key)];
  TORCH_CHECK(fn, "Could not run '", op, "' with arguments from the '", toString(key),
              "' backend.");
  return fn;
}

std::vector<std::string> Dispatcher::operators() const {
  std::lock_guard<std::mutex> guard(mutex_);
  std::vector<std::string> names;
  for (const auto& entry : table_) names.push_back(entry.first);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace c10
