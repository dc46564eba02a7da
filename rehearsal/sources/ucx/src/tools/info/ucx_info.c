/* Stand-in UCX (rehearsal): ucx_info, what this UCX is and what it loads.
 *   -v  version, library path, how it was configured
 *   -d  the transports (modules loaded) and their devices
 *   -b  build configuration: the modules configure found
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <ucp/api/ucp.h>
#include <uct/api/uct.h>
#include <ucm/api/ucm.h>
#include <ucs/sys/module.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void print_version(void)
{
    printf("# Library version: %s\n", ucp_get_version_string());
    printf("# Library path: %s\n", ucs_library_path());
    printf("# API headers version: %s\n", UCP_API_VERSION);
    printf("# Git branch '', revision (rehearsal stand-in)\n");
    printf("# Configured with: %s\n", UCX_CONFIGURE_FLAGS);
}

static int print_devices(void)
{
    char names[16][UCT_DEVICE_NAME_MAX];
    uct_component_t **components;
    unsigned i, j, n, count;

    if (uct_query_components(&components, &count) != UCS_OK) {
        fprintf(stderr, "ucx_info: cannot query the transports\n");
        return 1;
    }
    printf("# Modules: %s (from %s)\n", uct_MODULES, ucs_module_dir());
    for (i = 0; i < count; ++i) {
        n = components[i]->query_devices(names, 16);
        printf("#\n# Component: %s (module %s)%s%s\n", components[i]->name,
               components[i]->module, components[i]->info ? ": " : "",
               components[i]->info ? components[i]->info() : "");
        for (j = 0; j < n; ++j) {
            printf("#   Device: %s\n", names[j]);
        }
        if (n == 0) {
            printf("#   (no device on this host)\n");
        }
    }
    uct_release_component_list(components);
    ucm_load_modules();
    for (i = 0; i < ucm_num_hooks(); ++i) {
        printf("#\n# Memory hooks: %s\n", ucm_hook_name(i));
    }
    return 0;
}

static void print_build_config(void)
{
    printf("#define UCX_VERSION \"%s\"\n", UCP_API_VERSION);
    printf("#define uct_MODULES \"%s\"\n", uct_MODULES);
    printf("#define ucm_MODULES \"%s\"\n", ucm_MODULES);
    printf("#define UCT_ROCM_ARCHS \"%s\"\n", UCT_ROCM_ARCHS);
#ifdef ENABLE_MT
    printf("#define ENABLE_MT 1\n");
#endif
}

int main(int argc, char **argv)
{
    int c, rc = 0, done = 0;

    while ((c = getopt(argc, argv, "vdbh")) != -1) {
        switch (c) {
        case 'v':
            print_version();
            break;
        case 'd':
            rc |= print_devices();
            break;
        case 'b':
            print_build_config();
            break;
        default:
            fprintf(stderr, "usage: ucx_info [-v] [-d] [-b]\n");
            return c == 'h' ? 0 : 1;
        }
        done = 1;
    }
    if (!done) {
        fprintf(stderr, "usage: ucx_info [-v] [-d] [-b]\n");
        return 1;
    }
    return rc;
}
