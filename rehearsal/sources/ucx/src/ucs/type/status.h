/* Stand-in UCX (rehearsal): status codes of every UCX call. */
#ifndef UCS_TYPE_STATUS_H_
#define UCS_TYPE_STATUS_H_

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    UCS_OK                = 0,
    UCS_ERR_NO_MEMORY     = -4,
    UCS_ERR_INVALID_PARAM = -5,
    UCS_ERR_NO_DEVICE     = -7,
    UCS_ERR_NO_ELEM       = -12,
    UCS_ERR_UNSUPPORTED   = -22
} ucs_status_t;

const char *ucs_status_string(ucs_status_t status);

#ifdef __cplusplus
}
#endif
#endif
