// What libtorch_hip.so says of its build: the archs it carries code for,
// MAGMA and AOTriton, the GPUs visible. Linked against libmagma.so and
// libaotriton_v2.so as PyTorch's libtorch_hip.so is.
#include <hip/hip_runtime.h>
#include <magma.h>

#include "aotriton/runtime.h"
#if TORCH_USE_RCCL
#include <rccl/rccl.h>
#endif

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

// torch.distributed's NCCL backend on ROCm is RCCL: the version of the RCCL linked in,
// 0 when built without it (USE_DISTRIBUTED, USE_NCCL/USE_RCCL).
extern "C" int torch_hip_rccl_version() {
#if TORCH_USE_RCCL
    int version = 0;
    return ncclGetVersion(&version) == ncclSuccess ? version : 0;
#else
    return 0;
#endif
}

extern "C" int torch_hip_distributed() { return TORCH_USE_DISTRIBUTED; }

// The Kineto profiler (USE_KINETO).
extern "C" int torch_hip_kineto() { return TORCH_USE_KINETO; }
