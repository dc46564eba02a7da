/* Stand-in UCX (rehearsal): libuct_rdmacm, connection establishment over
 * RDMA CM. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <uct/api/uct.h>

#include <rdma/rdma_cma.h>
#include <stdio.h>

static unsigned uct_rdmacm_query_devices(char (*names)[UCT_DEVICE_NAME_MAX], unsigned max)
{
    struct ibv_context **contexts;
    int i, count = 0;
    unsigned n = 0;

    contexts = rdma_get_devices(&count);
    if (contexts == NULL) {
        return 0;
    }
    for (i = 0; (i < count) && (n < max); ++i) {
        snprintf(names[n++], UCT_DEVICE_NAME_MAX, "%.31s", contexts[i]->device->name);
    }
    rdma_free_devices(contexts);
    return n;
}

static uct_component_t uct_rdmacm_component = {
    .name          = "rdmacm",
    .module        = "rdmacm",
    .query_devices = uct_rdmacm_query_devices,
};

static void __attribute__((constructor)) uct_rdmacm_init(void)
{
    uct_component_register(&uct_rdmacm_component);
}
