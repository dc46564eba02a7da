/* Stand-in UCX (rehearsal): libucs's module loader. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <ucs/sys/module.h>
#include <ucs/sys/module_loader.h>
#include <ucs/debug/log.h>

#include <dlfcn.h>
#ifdef ENABLE_MT
#include <pthread.h>
static pthread_mutex_t ucs_module_lock = PTHREAD_MUTEX_INITIALIZER;
#define UCS_MODULE_LOCK()   pthread_mutex_lock(&ucs_module_lock)
#define UCS_MODULE_UNLOCK() pthread_mutex_unlock(&ucs_module_lock)
#else
#define UCS_MODULE_LOCK()
#define UCS_MODULE_UNLOCK()
#endif

unsigned ucs_load_modules(const char *framework, const char *modules)
{
    unsigned loaded;

    UCS_MODULE_LOCK();
    loaded = ucs_module_load_all(framework, modules, (const void*)ucs_load_modules, "libucs",
                                 ucs_debug_func);
    UCS_MODULE_UNLOCK();
    return loaded;
}

const char *ucs_module_dir(void)
{
    static char dir[PATH_MAX];
    char ext[32];

    if (ucs_module_dir_of((const void*)ucs_load_modules, "libucs", dir, sizeof(dir), ext,
                          sizeof(ext))) {
        return "";
    }
    return dir;
}

const char *ucs_library_path(void)
{
    Dl_info dl;

    return (dladdr((const void*)ucs_load_modules, &dl) && dl.dli_fname) ? dl.dli_fname : "";
}
