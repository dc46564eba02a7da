/* Stand-in UCX (rehearsal): the rocm_ipc component, GPU memory shared between
 * processes with HSA's IPC handles. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "../base/rocm_base.h"

#include <hsa.h>
#include <hsa_ext_amd.h>

ucs_status_t uct_rocm_ipc_export(void *ptr, size_t length, hsa_amd_ipc_memory_t *handle)
{
    return (hsa_amd_ipc_memory_create(ptr, length, handle) == HSA_STATUS_SUCCESS) ?
           UCS_OK : UCS_ERR_INVALID_PARAM;
}

static uct_component_t uct_rocm_ipc_component = {
    .name          = "rocm_ipc",
    .module        = "rocm",
    .query_devices = uct_rocm_base_query_devices,
};

static void __attribute__((constructor)) uct_rocm_ipc_init(void)
{
    uct_component_register(&uct_rocm_ipc_component);
}
