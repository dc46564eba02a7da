/* Stand-in UCX (rehearsal): the GPUs of the ROCm transports, from the HSA
 * runtime, as UCX's rocm_base.c finds them. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "rocm_base.h"

#include <hsa.h>
#include <hsa_ext_amd.h>
#include <stdio.h>

typedef struct {
    char (*names)[UCT_DEVICE_NAME_MAX];
    unsigned max, count;
} uct_rocm_agents_t;

static hsa_status_t uct_rocm_base_agent(hsa_agent_t agent, void *arg)
{
    uct_rocm_agents_t *agents = arg;
    hsa_device_type_t type;
    char name[64];

    if ((hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type) == HSA_STATUS_SUCCESS) &&
        (type == HSA_DEVICE_TYPE_GPU) && (agents->count < agents->max) &&
        (hsa_agent_get_info(agent, HSA_AGENT_INFO_NAME, name) == HSA_STATUS_SUCCESS)) {
        snprintf(agents->names[agents->count++], UCT_DEVICE_NAME_MAX, "%.31s", name);
    }
    return HSA_STATUS_SUCCESS;
}

unsigned uct_rocm_base_query_devices(char (*names)[UCT_DEVICE_NAME_MAX], unsigned max)
{
    uct_rocm_agents_t agents = {names, max, 0};

    if (hsa_init() != HSA_STATUS_SUCCESS) {
        return 0;
    }
    hsa_iterate_agents(uct_rocm_base_agent, &agents);
    hsa_shut_down();
    return agents.count;
}
