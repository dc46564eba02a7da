/* Stand-in UCX (rehearsal): libucm_rocm, the memory hooks of ROCm. UCX's
 * replaces hsa_amd_memory_pool_allocate and friends to learn which buffers
 * are GPU memory; this one keeps the link to the HSA runtime and registers
 * itself with libucm when loaded. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <ucm/api/ucm.h>

#include <hsa.h>
#include <hsa_ext_amd.h>

hsa_status_t ucm_hsa_amd_memory_pool_allocate(hsa_amd_memory_pool_t pool, size_t size,
                                              uint32_t flags, void **ptr)
{
    return hsa_amd_memory_pool_allocate(pool, size, flags, ptr);
}

static void __attribute__((constructor)) ucm_rocm_init(void)
{
    ucm_register_hook("rocm");
}
