/*
 * status.c -- version and status codes (base module).
 */
#include "rbf_base.h"

const char *rbf_version(void) { return RBF_VERSION_STRING; }

int rbf_version_number(void) { return RBF_VERSION_NUMBER; }

const char *rbf_strerror(int code)
{
    switch (code) {
    case RBF_OK: return "success";
    case RBF_EINVAL: return "invalid argument or configuration";
    case RBF_ENOMEM: return "out of memory (or a size too large to allocate)";
    case RBF_EIO: return "input/output error";
    case RBF_EFORMAT: return "not an rbf filter file, or an unsupported format version";
    case RBF_ECORRUPT: return "rbf filter file is truncated or corrupted";
    case RBF_ERANGE: return "value out of range";
    case RBF_ECANCELED: return "canceled by the progress callback";
    case RBF_ENOMODEL: return "no model exists for this configuration";
    default: return "unknown error";
    }
}
