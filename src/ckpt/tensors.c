/* tensors.c - a checkpoint's tensors by name (the sorted directory),
 * their bytes mapped on first use and handed back after the pass, and the
 * names of the conventions and severities. */
#include "ckpt_internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

const char *nvfp4_ckpt_convention_name(nvfp4_ckpt_convention c)
{
    return c == NVFP4_CKPT_MODELOPT ? "modelopt" : c == NVFP4_CKPT_GGUF ? "gguf" : "compressed-tensors";
}

const char *nvfp4_ckpt_severity_name(nvfp4_ckpt_severity s)
{
    return s == NVFP4_CKPT_ERROR ? "error" : "hazard";
}

const ckpt_tensor *ckpt_find(const nvfp4_ckpt *c, const char *name)
{
    size_t lo = 0, hi = c->ntensors;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = strcmp(c->tensors[mid].e->name, name);
        if (r == 0) return &c->tensors[mid];
        if (r < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

const ckpt_tensor *ckpt_find2(const nvfp4_ckpt *c, const char *prefix, const char *suffix)
{
    char buf[1024];
    if ((size_t)snprintf(buf, sizeof buf, "%s.%s", prefix, suffix) >= sizeof buf) return NULL;
    return ckpt_find(c, buf);
}

const uint8_t *ckpt_bytes(nvfp4_ckpt *c, const ckpt_tensor *t, nvfp4_error *err)
{
    size_t f = t->file;
    if (!c->map[f]) {
        int fd = open(c->files[f], O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            nvfp4_error_set(err, NVFP4_EIO, "%s: cannot open the file", c->files[f]);
            return NULL;
        }
        void *p = mmap(NULL, c->idx[f].file_size, PROT_READ, MAP_SHARED, fd, 0);
        close(fd);
        if (p == MAP_FAILED) {
            nvfp4_error_set(err, NVFP4_EIO, "%s: cannot map the file", c->files[f]);
            return NULL;
        }
        (void)madvise(p, c->idx[f].file_size, MADV_SEQUENTIAL);
        c->map[f] = p;
    }
    return c->map[f] + t->e->offset;
}

void ckpt_release(nvfp4_ckpt *c, const ckpt_tensor *t)
{
    if (!c->map[t->file] || !t->e->nbytes) return;
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)(c->map[t->file] + t->e->offset), b = a + t->e->nbytes;
    a = (a + (uintptr_t)pg - 1) / (uintptr_t)pg * (uintptr_t)pg;
    b = b / (uintptr_t)pg * (uintptr_t)pg;
    if (b > a) (void)madvise((void *)a, b - a, MADV_DONTNEED);
}
