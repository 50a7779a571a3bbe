/* common.c - version, status strings, error records, checked size math. */
#include "nvfp4/common.h"

#include <stdarg.h>
#include <stdio.h>

const char *nvfp4_version(void) { return NVFP4_VERSION_STRING; }

const char *nvfp4_status_string(nvfp4_status s)
{
    switch (s) {
    case NVFP4_OK: return "ok";
    case NVFP4_EINVAL: return "invalid argument";
    case NVFP4_ESHAPE: return "shape not a multiple of the block";
    case NVFP4_ENOMEM: return "out of memory or size overflow";
    case NVFP4_EIO: return "I/O error";
    case NVFP4_EFORMAT: return "malformed file";
    case NVFP4_EUNSUPPORTED: return "unsupported";
    }
    return "unknown status";
}

nvfp4_status nvfp4_error_set(nvfp4_error *err, nvfp4_status s, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->status = s;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return s;
}

bool nvfp4_mul_size(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a) return false;
    *out = a * b;
    return true;
}
