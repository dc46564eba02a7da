/* Stand-in UCX (rehearsal): log messages, up to $UCX_LOG_LEVEL (default warn). */
#ifndef UCS_DEBUG_LOG_H_
#define UCS_DEBUG_LOG_H_

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    UCS_LOG_LEVEL_ERROR = 1,
    UCS_LOG_LEVEL_WARN  = 2,
    UCS_LOG_LEVEL_INFO  = 4,
    UCS_LOG_LEVEL_DEBUG = 5
} ucs_log_level_t;

int ucs_log_is_enabled(ucs_log_level_t level);
void ucs_log(ucs_log_level_t level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void ucs_debug_func(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#ifdef __cplusplus
}
#endif
#endif
