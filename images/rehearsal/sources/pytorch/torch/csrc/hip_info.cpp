// What libtorch_hip.so says of its build: the archs it carries code for,
// MAGMA and AOTriton, the GPUs visible. Linked against libmagma.so and
// libaotriton_v2.so as PyTorch's libtorch_hip.so is.
#include <hip/hip_runtime.h>
#include <magma.h>

#include "aotriton/runtime.h"

extern "C" const char* torch_hip_arch_list() { return TORCH_HIP_ARCH_LIST; }

extern "C" int torch_hip_has_magma() {
    magma_int_t major = 0, minor = 0, micro = 0;
    magma_version(&major, &minor, &micro);
    return major > 0;
}

extern "C" const char* torch_hip_aotriton_archs() { return aotriton::target_archs(); }

extern "C" int torch_hip_device_count() {
    int count = 0;
    return hipGetDeviceCount(&count) == hipSuccess ? count : 0;
}
