// ATen/core/dispatch/Dispatcher.h (stand-in): operators by name, a kernel per
// dispatch key, registered by the generated RegisterCPU_*/RegisterCUDA_*
// translation units at load time (TORCH_LIBRARY_IMPL's static registrars).
#pragma once

#include <ATen/core/Tensor.h>

#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace c10 {

enum class DispatchKey : uint8_t { CPU, CUDA, NumDispatchKeys };

TORCH_API const char* toString(DispatchKey k);
TORCH_API DispatchKey dispatchKeyFor(Device d);

class TORCH_API Dispatcher {
 public:
  using Unary = at::Tensor (*)(const at::Tensor&);
  using Binary = at::Tensor (*)(const at::Tensor&, const at::Tensor&);

  static Dispatcher& singleton();
  void registerKernel(const std::string& op, DispatchKey key, void* fn);
  void* findKernel(const std::string& op, DispatchKey key) const;
  std::vector<std::string> operators() const;

  template <typename Fn, typename... Args>
  at::Tensor call(const char* op, const at::Tensor& self, const Args&... args) const {
    const DispatchKey key = dispatchKeyFor(self.device());
    return reinterpret_cast<Fn>(findKernel(op, key))(self, args...);
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::vector<void*>> table_;
};

struct TORCH_API RegisterOperators {
  RegisterOperators(const char* op, DispatchKey key, void* fn) {
    Dispatcher::singleton().registerKernel(op, key, fn);
  }
};

}  // namespace c10
