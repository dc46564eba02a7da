/* Stand-in UCX (rehearsal): UCM, the memory hooks. Its modules (libucm_rocm)
 * hook the allocators of a GPU runtime and register themselves here. */
#ifndef UCM_API_UCM_H_
#define UCM_API_UCM_H_

#ifdef __cplusplus
extern "C" {
#endif

/* Load the memory hook modules configure found (ucm_MODULES); how many hooks. */
unsigned ucm_load_modules(void);
void ucm_register_hook(const char *name);
unsigned ucm_num_hooks(void);
const char *ucm_hook_name(unsigned index);

#ifdef __cplusplus
}
#endif
#endif
