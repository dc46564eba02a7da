/* Stand-in UCX (rehearsal): libuct_ib, the InfiniBand/RoCE transports over
 * libibverbs (which the host provides, with the providers of its NICs). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <uct/api/uct.h>

#include <infiniband/verbs.h>
#include <stdio.h>

static unsigned uct_ib_query_devices(char (*names)[UCT_DEVICE_NAME_MAX], unsigned max)
{
    struct ibv_device **devices;
    int i, count = 0;
    unsigned n = 0;

    devices = ibv_get_device_list(&count);
    if (devices == NULL) {
        return 0;
    }
    for (i = 0; (i < count) && (n < max); ++i) {
        snprintf(names[n++], UCT_DEVICE_NAME_MAX, "%s", ibv_get_device_name(devices[i]));
    }
    ibv_free_device_list(devices);
    return n;
}

static const char *uct_ib_info(void)
{
#ifdef HAVE_IBV_DM
    return "verbs, with NIC device memory (ibv_alloc_dm)";
#else
    return "verbs";
#endif
}

static uct_component_t uct_ib_component = {
    .name          = "ib",
    .module        = "ib",
    .query_devices = uct_ib_query_devices,
    .info          = uct_ib_info,
};

static void __attribute__((constructor)) uct_ib_init(void)
{
    uct_component_register(&uct_ib_component);
}
