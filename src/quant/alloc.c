/* alloc.c - output buffers of the quantizer: written in full by the paths,
 * so not zero-filled; large ones on transparent huge pages (quant_internal.h). */
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "quant/quant_internal.h"

void *nvfp4_quant_alloc_output(size_t bytes)
{
    if (bytes == 0) bytes = 1;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const size_t huge = (size_t)2 << 20;
    if (bytes >= huge && bytes <= SIZE_MAX - huge) {
        size_t rounded = (bytes + huge - 1) / huge * huge; /* C11 aligned_alloc wants a multiple */
        void *p = aligned_alloc(huge, rounded);
        /* advice only: without transparent huge pages the buffer still works */
        if (p) (void)madvise(p, rounded, MADV_HUGEPAGE);
        if (p) return p;
    }
#endif
    return malloc(bytes);
}
