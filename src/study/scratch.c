/* Per-thread growable scratch buffers for the lab's GEMM operands and
 * quantized bytes, reused across calls so a training step does not fault in
 * fresh pages.
 *
 * They hang off a C11 thread-specific key whose destructor frees them when
 * their thread exits. Plain _Thread_local pointers leaked them instead: a
 * nested OpenMP team (the quantized model and its shadow stepped side by
 * side inside a job) gets fresh threads from libgomp at every step, so a
 * 10^5-step run grew by about 2 MB a step. */
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#include "study/scratch.h"

typedef struct {
    void *buf[ST_SCRATCH_SLOTS];
    size_t cap[ST_SCRATCH_SLOTS];
} scratch_set;

static tss_t scratch_key;
static once_flag scratch_once = ONCE_FLAG_INIT;
static int scratch_key_ok;

static void scratch_set_free(void *v)
{
    scratch_set *s = v;
    for (int i = 0; i < ST_SCRATCH_SLOTS; i++) free(s->buf[i]);
    free(s);
}

static void scratch_key_create(void) { scratch_key_ok = tss_create(&scratch_key, scratch_set_free) == thrd_success; }

static scratch_set *this_threads_set(void)
{
    call_once(&scratch_once, scratch_key_create);
    if (!scratch_key_ok) return NULL;
    scratch_set *s = tss_get(scratch_key);
    if (!s) {
        s = calloc(1, sizeof *s);
        if (!s) return NULL;
        if (tss_set(scratch_key, s) != thrd_success) {
            free(s);
            return NULL;
        }
    }
    return s;
}

void *st_scratch(st_scratch_slot slot, size_t bytes)
{
    scratch_set *s = this_threads_set();
    if (!s) return NULL;
    if (bytes == 0) bytes = 1;
    if (bytes > s->cap[slot] || !s->buf[slot]) {
        /* 64-byte aligned (whole cache lines): the library's columnwise
         * quantizer writes a 64-byte-aligned output line by line straight
         * from registers, and any other through a staging buffer and a
         * second copy. The contents are kept, as realloc would. */
        size_t cap = (bytes + 63) / 64 * 64;
        if (cap < bytes) return NULL;
        void *p = aligned_alloc(64, cap);
        if (!p) return NULL;
        if (s->buf[slot]) memcpy(p, s->buf[slot], s->cap[slot]);
        free(s->buf[slot]);
        s->buf[slot] = p;
        s->cap[slot] = cap;
    }
    return s->buf[slot];
}
