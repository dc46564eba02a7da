// Stand-in UCX (rehearsal): rocm_copy's GPU copy kernel, compiled by hipcc
// for the configured targets into libuct_rocm (config/hip.am's rule, through
// libtool).
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <hip/hip_runtime.h>

#include "../base/rocm_base.h"

__global__ void uct_rocm_copy_kernel(unsigned char *dst, const unsigned char *src, size_t length)
{
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < length;
         i += (size_t)gridDim.x * blockDim.x) {
        dst[i] = src[i];
    }
}

extern "C" hipError_t uct_rocm_copy_kernel_launch(void *dst, const void *src, size_t length,
                                                  hipStream_t stream)
{
    unsigned blocks = (unsigned)((length + 255) / 256);

    hipLaunchKernelGGL(uct_rocm_copy_kernel, dim3(blocks < 1024 ? blocks : 1024), dim3(256), 0,
                       stream, (unsigned char*)dst, (const unsigned char*)src, length);
    return hipGetLastError();
}

extern "C" const char *uct_rocm_copy_kernel_targets(void)
{
    return UCT_ROCM_ARCHS;
}
