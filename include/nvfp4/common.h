/*
 * nvfp4/common.h - version, status codes and the error record shared by all
 * nvfp4kit modules.
 */
#ifndef NVFP4_COMMON_H
#define NVFP4_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/* Every public header wraps its declarations in NVFP4_BEGIN_DECLS /
 * NVFP4_END_DECLS: C linkage for C++ callers and default visibility. The
 * library is built with -fvisibility=hidden, so what is declared between
 * these two markers in an installed header is exactly what libnvfp4.so
 * exports; internal functions stay hidden without any marking. */
#ifdef __cplusplus
#define NVFP4_EXTERN_C_BEGIN extern "C" {
#define NVFP4_EXTERN_C_END }
#else
#define NVFP4_EXTERN_C_BEGIN
#define NVFP4_EXTERN_C_END
#endif
#if defined(__GNUC__)
#define NVFP4_BEGIN_DECLS NVFP4_EXTERN_C_BEGIN _Pragma("GCC visibility push(default)")
#define NVFP4_END_DECLS _Pragma("GCC visibility pop") NVFP4_EXTERN_C_END
#else
#define NVFP4_BEGIN_DECLS NVFP4_EXTERN_C_BEGIN
#define NVFP4_END_DECLS NVFP4_EXTERN_C_END
#endif

NVFP4_BEGIN_DECLS

#define NVFP4_VERSION_MAJOR 0
#define NVFP4_VERSION_MINOR 1
#define NVFP4_VERSION_PATCH 0
#define NVFP4_VERSION_STRING "0.1.0"

/* Library status codes. The CLI maps them to exit codes: NVFP4_OK -> 0,
 * everything else -> 2 (usage or input error). A mismatch found by the
 * verifier is not an error status; the CLI reports it with exit code 1. */
typedef enum {
    NVFP4_OK = 0,
    NVFP4_EINVAL = 1,   /* bad argument: unknown name, bad shape, bad option */
    NVFP4_ESHAPE = 2,   /* dimensions not a multiple of the block (and no padding asked) */
    NVFP4_ENOMEM = 3,   /* allocation failed or a size overflowed size_t */
    NVFP4_EIO = 4,      /* file could not be read or written */
    NVFP4_EFORMAT = 5,  /* a file is malformed */
    NVFP4_EUNSUPPORTED = 6
} nvfp4_status;

/* Optional error record: functions that take one fill it with a sentence
 * naming the problem (and the file, for I/O). */
typedef struct {
    nvfp4_status status;
    char message[512];
} nvfp4_error;

const char *nvfp4_version(void);
const char *nvfp4_status_string(nvfp4_status s);

/* Sets err (if not NULL) and returns s; printf-style message. A message too
 * long for err->message is cut in the middle ("head...tail"), keeping the
 * problem named at its end. */
nvfp4_status nvfp4_error_set(nvfp4_error *err, nvfp4_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* a*b with overflow detection: returns false (and leaves *out alone) when
 * the product does not fit in size_t. */
bool nvfp4_mul_size(size_t a, size_t b, size_t *out);

NVFP4_END_DECLS
#endif /* NVFP4_COMMON_H */
