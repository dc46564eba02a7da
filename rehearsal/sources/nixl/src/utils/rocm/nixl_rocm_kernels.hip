// NIXL (rehearsal stand-in): a HIP kernel that gathers the blocks of a
// descriptor list into one buffer, compiled by hipcc for PYTORCH_ROCM_ARCH.
#include <hip/hip_runtime.h>

#include "nixl_rocm_kernels.h"

__global__ void nixlGatherKernel(unsigned char *dst, const unsigned char *src,
                                 const uint64_t *offsets, size_t block)
{
    const unsigned char *from = src + offsets[blockIdx.x];
    unsigned char *to = dst + blockIdx.x * block;
    for (size_t i = threadIdx.x; i < block; i += blockDim.x) {
        to[i] = from[i];
    }
}

extern "C" int nixlRocmGather(void *dst, const void *src, const uint64_t *offsets, size_t count,
                              size_t block)
{
    if (count == 0) {
        return 0;
    }
    hipLaunchKernelGGL(nixlGatherKernel, dim3(count), dim3(256), 0, 0,
                       static_cast<unsigned char *>(dst), static_cast<const unsigned char *>(src),
                       offsets, block);
    return static_cast<int>(hipGetLastError());
}

extern "C" const char *nixlRocmTargets()
{
    return NIXL_ROCM_ARCHS;
}
