/* Stand-in UCX (rehearsal): libucp's context. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <ucp/api/ucp.h>
#include <uct/api/uct.h>
#include <ucm/api/ucm.h>
#include <ucs/debug/log.h>

#include <stdlib.h>

struct ucp_context {
    uint64_t         features;
    uct_component_t **components;
    unsigned         num_components;
};

void ucp_get_version(unsigned *major_version, unsigned *minor_version, unsigned *release_number)
{
    *major_version  = UCP_API_MAJOR;
    *minor_version  = UCP_API_MINOR;
    *release_number = UCP_API_RELEASE;
}

const char *ucp_get_version_string(void)
{
    return UCP_API_VERSION;
}

ucs_status_t ucp_init_version(unsigned api_major_version, unsigned api_minor_version,
                              const ucp_params_t *params, const ucp_config_t *config,
                              ucp_context_h *context_p)
{
    ucp_context_h context;
    ucs_status_t status;

    (void)config;
    if ((api_major_version != UCP_API_MAJOR) || (api_minor_version > UCP_API_MINOR)) {
        ucs_log(UCS_LOG_LEVEL_ERROR, "UCP API %u.%u is newer than this library's %s",
                api_major_version, api_minor_version, UCP_API_VERSION);
        return UCS_ERR_UNSUPPORTED;
    }
    if ((params == NULL) || !(params->field_mask & UCP_PARAM_FIELD_FEATURES) ||
        (params->features == 0)) {
        return UCS_ERR_INVALID_PARAM;
    }
    context = calloc(1, sizeof(*context));
    if (context == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    context->features = params->features;
    ucm_load_modules();
    status = uct_query_components(&context->components, &context->num_components);
    if (status != UCS_OK) {
        free(context);
        return status;
    }
    *context_p = context;
    return UCS_OK;
}

void ucp_cleanup(ucp_context_h context)
{
    uct_release_component_list(context->components);
    free(context);
}

unsigned ucp_context_num_transports(ucp_context_h context)
{
    return context->num_components;
}

const char *ucp_context_transport_name(ucp_context_h context, unsigned index)
{
    return (index < context->num_components) ? context->components[index]->name : NULL;
}

unsigned ucp_context_num_mem_hooks(ucp_context_h context)
{
    (void)context;
    return ucm_num_hooks();
}

const char *ucp_context_mem_hook_name(ucp_context_h context, unsigned index)
{
    (void)context;
    return ucm_hook_name(index);
}
