/* Stand-in UCX (rehearsal): log messages. configure --disable-logging leaves
 * the debug level out (UCS_MAX_LOG_LEVEL), as UCX's release builds do. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <ucs/debug/log.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

static ucs_log_level_t ucs_log_level(void)
{
    const char *env = getenv("UCX_LOG_LEVEL");

    if (env == NULL) {
        return UCS_LOG_LEVEL_WARN;
    } else if (!strcasecmp(env, "error")) {
        return UCS_LOG_LEVEL_ERROR;
    } else if (!strcasecmp(env, "info")) {
        return UCS_LOG_LEVEL_INFO;
    } else if (!strcasecmp(env, "debug") || !strcasecmp(env, "trace")) {
        return UCS_LOG_LEVEL_DEBUG;
    }
    return UCS_LOG_LEVEL_WARN;
}

int ucs_log_is_enabled(ucs_log_level_t level)
{
    return (level <= UCS_MAX_LOG_LEVEL) && (level <= ucs_log_level());
}

static void ucs_vlog(ucs_log_level_t level, const char *fmt, va_list ap)
{
    static const char *names[] = {"", "ERROR", "WARN", "", "INFO", "DEBUG"};

    if (!ucs_log_is_enabled(level)) {
        return;
    }
    fprintf(stderr, "[UCX  %-5s] ", names[level]);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void ucs_log(ucs_log_level_t level, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    ucs_vlog(level, fmt, ap);
    va_end(ap);
}

void ucs_debug_func(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    ucs_vlog(UCS_LOG_LEVEL_DEBUG, fmt, ap);
    va_end(ap);
}
