/* Stand-in UCX (rehearsal): libucm, the memory hooks and their modules. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <ucm/api/ucm.h>
#include <ucs/debug/log.h>
#include <ucs/sys/module_loader.h>

#include <stdarg.h>
#include <stdlib.h>
#include <strings.h>

#define UCM_MAX_HOOKS 8

static const char *ucm_hooks[UCM_MAX_HOOKS];
static unsigned ucm_hook_count;

static void ucm_debug(const char *fmt, ...)
{
    const char *level = getenv("UCX_LOG_LEVEL");
    va_list ap;

    if ((UCS_MAX_LOG_LEVEL < UCS_LOG_LEVEL_DEBUG) || (level == NULL) ||
        strcasecmp(level, "debug")) {
        return;
    }
    va_start(ap, fmt);
    fprintf(stderr, "[UCX  DEBUG] ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

unsigned ucm_load_modules(void)
{
    static int loaded;

    if (!loaded) {
        loaded = 1;
        ucs_module_load_all("ucm", ucm_MODULES, (const void*)ucm_load_modules, "libucm",
                            ucm_debug);
    }
    return ucm_hook_count;
}

void ucm_register_hook(const char *name)
{
    if (ucm_hook_count < UCM_MAX_HOOKS) {
        ucm_hooks[ucm_hook_count++] = name;
    }
}

unsigned ucm_num_hooks(void)
{
    return ucm_hook_count;
}

const char *ucm_hook_name(unsigned index)
{
    return (index < ucm_hook_count) ? ucm_hooks[index] : NULL;
}
