/* Stand-in UCX (rehearsal): what the ROCm transports share. */
#ifndef UCT_ROCM_BASE_H_
#define UCT_ROCM_BASE_H_

#include <uct/api/uct.h>

#include <hip/hip_runtime_api.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The GPUs of this host the HSA runtime reports (none without /dev/kfd). */
unsigned uct_rocm_base_query_devices(char (*names)[UCT_DEVICE_NAME_MAX], unsigned max);

/* rocm_copy: the copy kernel (copy/rocm_copy_kernel.hip, compiled by hipcc). */
hipError_t uct_rocm_copy_kernel_launch(void *dst, const void *src, size_t length,
                                       hipStream_t stream);
/* The GPU targets its code objects were compiled for. */
const char *uct_rocm_copy_kernel_targets(void);

#ifdef __cplusplus
}
#endif
#endif
