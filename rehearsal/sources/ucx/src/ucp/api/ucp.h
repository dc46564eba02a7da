/* Stand-in UCX (rehearsal): UCP, the protocols layer NIXL's UCX backend uses.
 * A context loads the transports (UCT modules) and memory hooks (UCM modules)
 * and knows which it got. */
#ifndef UCP_API_UCP_H_
#define UCP_API_UCP_H_

#include <ucp/api/ucp_version.h>
#include <ucs/type/status.h>

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ucp_params_field { UCP_PARAM_FIELD_FEATURES = 1u << 0 };

enum ucp_feature {
    UCP_FEATURE_TAG = 1u << 0,
    UCP_FEATURE_RMA = 1u << 1,
    UCP_FEATURE_AM  = 1u << 4
};

typedef struct ucp_params {
    uint64_t field_mask;
    uint64_t features;
} ucp_params_t;

typedef struct ucp_config  ucp_config_t;
typedef struct ucp_context *ucp_context_h;

void ucp_get_version(unsigned *major_version, unsigned *minor_version,
                     unsigned *release_number);
const char *ucp_get_version_string(void);

ucs_status_t ucp_init_version(unsigned api_major_version, unsigned api_minor_version,
                              const ucp_params_t *params, const ucp_config_t *config,
                              ucp_context_h *context_p);
/* As UCX's: the headers' version goes with the call, so a library older than
 * the headers refuses it. */
static inline ucs_status_t ucp_init(const ucp_params_t *params, const ucp_config_t *config,
                                    ucp_context_h *context_p)
{
    return ucp_init_version(UCP_API_MAJOR, UCP_API_MINOR, params, config, context_p);
}
void ucp_cleanup(ucp_context_h context);

/* The transports (UCT components) and memory hooks the context loaded. */
unsigned ucp_context_num_transports(ucp_context_h context);
const char *ucp_context_transport_name(ucp_context_h context, unsigned index);
unsigned ucp_context_num_mem_hooks(ucp_context_h context);
const char *ucp_context_mem_hook_name(ucp_context_h context, unsigned index);

#ifdef __cplusplus
}
#endif
#endif
