/* Stand-in UCX (rehearsal): status strings. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <ucs/type/status.h>

const char *ucs_status_string(ucs_status_t status)
{
    switch (status) {
    case UCS_OK:                return "Success";
    case UCS_ERR_NO_MEMORY:     return "Out of memory";
    case UCS_ERR_INVALID_PARAM: return "Invalid parameter";
    case UCS_ERR_NO_DEVICE:     return "No such device";
    case UCS_ERR_NO_ELEM:       return "No such element";
    case UCS_ERR_UNSUPPORTED:   return "Unsupported operation";
    }
    return "Unknown error";
}
