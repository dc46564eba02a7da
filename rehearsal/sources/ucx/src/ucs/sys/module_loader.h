/*
 * Stand-in UCX (rehearsal): how libucs and libucm find their modules.
 *
 * As UCX does: the modules of a framework ("uct", "ucm") are shared objects
 * lib<framework>_<name><ext> in the directory "ucx" next to the library that
 * loads them (found with dladdr(), so a relocated UCX finds its own), <ext>
 * being that library's own suffix (".so.0" for libucs.so.0). The names come
 * from configure (uct_MODULES, ":ib:rocm"). A module that is missing or does
 * not load (libibverbs absent on this host) is skipped with a debug message.
 */
#ifndef UCS_SYS_MODULE_LOADER_H_
#define UCS_SYS_MODULE_LOADER_H_

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

typedef void (*ucs_module_log_func_t)(const char *fmt, ...);

static inline int ucs_module_dir_of(const void *anchor, const char *self, char *dir,
                                    size_t dir_max, char *ext, size_t ext_max)
{
    Dl_info dl;
    const char *base, *suffix;
    size_t len;

    if (!dladdr(anchor, &dl) || (dl.dli_fname == NULL)) {
        return -1;
    }
    base   = strrchr(dl.dli_fname, '/');
    len    = (base == NULL) ? 0 : (size_t)(base - dl.dli_fname);
    base   = (base == NULL) ? dl.dli_fname : base + 1;
    suffix = strncmp(base, self, strlen(self)) ? NULL : base + strlen(self);
    if ((suffix == NULL) || strncmp(suffix, ".so", 3)) {
        suffix = ".so";
    }
    snprintf(dir, dir_max, "%.*s/ucx", (int)len, len ? dl.dli_fname : ".");
    snprintf(ext, ext_max, "%s", suffix);
    return 0;
}

/* Load every module of ``modules`` (":a:b") of ``framework``; how many loaded. */
static inline unsigned ucs_module_load_all(const char *framework, const char *modules,
                                           const void *anchor, const char *self,
                                           ucs_module_log_func_t debug)
{
    char dir[PATH_MAX], ext[32], path[PATH_MAX + 64], names[256];
    char *name, *save = NULL;
    unsigned loaded = 0;

    if (ucs_module_dir_of(anchor, self, dir, sizeof(dir), ext, sizeof(ext))) {
        debug("%s: cannot find the directory of %s", framework, self);
        return 0;
    }
    snprintf(names, sizeof(names), "%s", modules);
    for (name = strtok_r(names, ":", &save); name != NULL; name = strtok_r(NULL, ":", &save)) {
        snprintf(path, sizeof(path), "%s/lib%s_%s%s", dir, framework, name, ext);
        if (dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) == NULL) {
            debug("%s: module %s not loaded: %s", framework, name, dlerror());
            continue;
        }
        debug("%s: loaded module %s from %s", framework, name, path);
        ++loaded;
    }
    return loaded;
}

#endif
