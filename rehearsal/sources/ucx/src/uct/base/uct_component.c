/* Stand-in UCX (rehearsal): libuct, the registry of transport components. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <uct/api/uct.h>
#include <ucs/sys/module.h>

#include <stdlib.h>

static uct_component_t *uct_components;
static int uct_modules_loaded;

void uct_component_register(uct_component_t *component)
{
    uct_component_t **tail = &uct_components;

    while (*tail != NULL) {
        tail = &(*tail)->next;
    }
    component->next = NULL;
    *tail           = component;
}

ucs_status_t uct_query_components(uct_component_t ***components_p, unsigned *num_components_p)
{
    uct_component_t *c, **list;
    unsigned n = 0;

    if (!uct_modules_loaded) {
        uct_modules_loaded = 1;
        ucs_load_modules("uct", uct_MODULES);
    }
    for (c = uct_components; c != NULL; c = c->next) {
        ++n;
    }
    list = calloc(n + 1, sizeof(*list));
    if (list == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    n = 0;
    for (c = uct_components; c != NULL; c = c->next) {
        list[n++] = c;
    }
    *components_p     = list;
    *num_components_p = n;
    return UCS_OK;
}

void uct_release_component_list(uct_component_t **components)
{
    free(components);
}
