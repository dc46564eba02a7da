/* Stand-in UCX (rehearsal): UCT, the transports. Each transport module
 * (lib/ucx/libuct_<name>.so) registers its components when it is loaded. */
#ifndef UCT_API_UCT_H_
#define UCT_API_UCT_H_

#include <ucs/type/status.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UCT_DEVICE_NAME_MAX 32

typedef struct uct_component uct_component_t;

struct uct_component {
    const char      *name;   /* "rocm_cpy" */
    const char      *module; /* the module that registered it: "rocm" */
    /* The devices of this host it can use (names), at most ``max``; how many. */
    unsigned        (*query_devices)(char (*names)[UCT_DEVICE_NAME_MAX], unsigned max);
    /* A line about how it was built, or NULL. */
    const char     *(*info)(void);
    uct_component_t *next;
};

void uct_component_register(uct_component_t *component);

/* Every component of the loaded modules (the modules are loaded on the first
 * call); the list is released with uct_release_component_list(). */
ucs_status_t uct_query_components(uct_component_t ***components_p, unsigned *num_components_p);
void uct_release_component_list(uct_component_t **components);

#ifdef __cplusplus
}
#endif
#endif
