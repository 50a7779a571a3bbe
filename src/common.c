/* common.c - version, status strings, error records, checked size math. */
#include "nvfp4/common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        va_list ap2;
        va_copy(ap2, ap);
        const size_t cap = sizeof err->message;
        int n = vsnprintf(err->message, cap, fmt, ap);
        va_end(ap);
        char *full = n >= 0 && (size_t)n >= cap ? malloc((size_t)n + 1) : NULL;
        if (n < 0) {
            snprintf(err->message, cap, "%s (the message could not be formatted)", nvfp4_status_string(s));
        } else if (full) {
            vsnprintf(full, (size_t)n + 1, fmt, ap2);
            /* Too long (a long path): cut the middle, not the end, so the
             * problem stated at the end stays visible: head "..." tail. */
            const size_t head = 120, tail = cap - 1 - head - 3;
            memcpy(err->message, full, head);
            memcpy(err->message + head, "...", 3);
            memcpy(err->message + head + 3, full + (size_t)n - tail, tail + 1);
            free(full);
        }
        va_end(ap2);
    }
    return s;
}

bool nvfp4_mul_size(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a) return false;
    *out = a * b;
    return true;
}
