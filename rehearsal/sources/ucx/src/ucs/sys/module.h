/* Stand-in UCX (rehearsal): the module frameworks of libucs. */
#ifndef UCS_SYS_MODULE_H_
#define UCS_SYS_MODULE_H_

#ifdef __cplusplus
extern "C" {
#endif

/* Load the modules ``modules`` (":a:b") of ``framework`` from libucs's
 * directory/ucx; how many loaded. */
unsigned ucs_load_modules(const char *framework, const char *modules);

/* The directory the modules are loaded from. */
const char *ucs_module_dir(void);

/* Where libucs itself was loaded from. */
const char *ucs_library_path(void);

#ifdef __cplusplus
}
#endif
#endif
