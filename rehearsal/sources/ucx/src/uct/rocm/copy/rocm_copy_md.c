/* Stand-in UCX (rehearsal): the rocm_cpy component, copies to and from GPU
 * memory with the copy kernel. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "../base/rocm_base.h"

#include <stdio.h>

static const char *uct_rocm_copy_info(void)
{
    static char info[128];

    snprintf(info, sizeof(info), "HIP copy kernel, code objects for %s",
             *uct_rocm_copy_kernel_targets() ? uct_rocm_copy_kernel_targets() : "hipcc's default");
    return info;
}

static uct_component_t uct_rocm_copy_component = {
    .name          = "rocm_cpy",
    .module        = "rocm",
    .query_devices = uct_rocm_base_query_devices,
    .info          = uct_rocm_copy_info,
};

static void __attribute__((constructor)) uct_rocm_copy_init(void)
{
    uct_component_register(&uct_rocm_copy_component);
}
