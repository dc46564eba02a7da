#include <ATen/native/DispatchStub.h>

#include <cstdlib>
#include <cstring>

namespace at::native {

// ATEN_CPU_CAPABILITY=default forces the portable kernels, as in PyTorch.
static CPUCapability compute_cpu_capability() {
  const char* env = std::getenv("ATEN_CPU_CAPABILITY");
  if (env && std::strcmp(env, "default") == 0) return CPUCapability::DEFAULT;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return CPUCapability::AVX2;
  }
#endif
  return CPUCapability::DEFAULT;
}

CPUCapability get_cpu_capability() {
  static const CPUCapability capability = compute_cpu_capability();
  return capability;
}

}  // namespace at::native
