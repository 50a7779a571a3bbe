/* dtype.c - the element types a tensor file can hold (name, size) and the
 * byte size of a shape of them; no tensor set, no files. */
#include "io_internal.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    size_t size;
} dtype_table[NVFP4_T_COUNT] = {
    [NVFP4_T_F64] = {"F64", 8},  [NVFP4_T_F32] = {"F32", 4}, [NVFP4_T_F16] = {"F16", 2},
    [NVFP4_T_BF16] = {"BF16", 2}, [NVFP4_T_I64] = {"I64", 8}, [NVFP4_T_I32] = {"I32", 4},
    [NVFP4_T_I16] = {"I16", 2},  [NVFP4_T_I8] = {"I8", 1},   [NVFP4_T_U64] = {"U64", 8},
    [NVFP4_T_U32] = {"U32", 4},  [NVFP4_T_U16] = {"U16", 2}, [NVFP4_T_U8] = {"U8", 1},
    [NVFP4_T_F8_E4M3] = {"F8_E4M3", 1}, [NVFP4_T_F8_E5M2] = {"F8_E5M2", 1}, [NVFP4_T_F8_E8M0] = {"F8_E8M0", 1},
    [NVFP4_T_F4] = {"F4", 1}, /* two elements per byte: see io_shape_bytes */
};

const char *nvfp4_tdtype_name(nvfp4_tdtype t)
{
    return (unsigned)t < NVFP4_T_COUNT ? dtype_table[t].name : "?";
}

size_t nvfp4_tdtype_size(nvfp4_tdtype t) { return (unsigned)t < NVFP4_T_COUNT ? dtype_table[t].size : 0; }

bool nvfp4_tdtype_parse(const char *name, nvfp4_tdtype *out)
{
    for (unsigned i = 0; i < NVFP4_T_COUNT; i++)
        if (strcmp(name, dtype_table[i].name) == 0) {
            *out = (nvfp4_tdtype)i;
            return true;
        }
    return false;
}

bool io_shape_bytes(nvfp4_tdtype dtype, unsigned ndim, const size_t *shape, size_t *bytes)
{
    size_t n = nvfp4_tdtype_size(dtype);
    if (n == 0) return false;
    for (unsigned d = 0; d < ndim; d++)
        if (!nvfp4_mul_size(n, shape[d], &n)) return false;
    if (dtype == NVFP4_T_F4) { /* safetensors' F4 shape counts 4-bit elements */
        if (n % 2) return false;
        n /= 2;
    }
    *bytes = n;
    return true;
}

/* The dimensions as "[a, b]" ("[]" for a scalar), cut short with "..." when they do not fit. */
static void shape_text(unsigned ndim, const size_t *shape, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (unsigned d = 0; d < ndim && k < n; d++)
        k += (size_t)snprintf(buf + k, n - k, "%s%zu", d ? ", " : "", shape[d]);
    if (k < n) snprintf(buf + k, n - k, "]");
    if (k >= n && n > 4) memcpy(buf + n - 4, "...", 4);
}

void io_shape_why(nvfp4_tdtype dtype, unsigned ndim, const size_t *shape, char *why, size_t n)
{
    char sh[96];
    shape_text(ndim, shape, sh, sizeof sh);
    size_t elems = 1;
    bool fits = true;
    for (unsigned d = 0; d < ndim && fits; d++) fits = nvfp4_mul_size(elems, shape[d], &elems);
    if (dtype == NVFP4_T_F4 && fits && elems % 2)
        snprintf(why, n, "dtype F4 packs two elements per byte, but shape %s holds %zu element%s, an odd count "
                 "(no whole number of bytes)%s", sh, elems, elems == 1 ? "" : "s",
                 ndim == 0 ? ": a scalar cannot be F4" : "");
    else if (nvfp4_tdtype_size(dtype) == 0)
        snprintf(why, n, "unknown dtype %d", (int)dtype);
    else
        snprintf(why, n, "shape %s: its size in bytes overflows (2^%zu or more)", sh, sizeof(size_t) * 8);
}
