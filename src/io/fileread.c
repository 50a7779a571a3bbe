/* fileread.c - opening a file for reading (a regular file only, never
 * blocking on a FIFO or a device) and reading one whole; the one place a
 * reader in src/io/ opens a file. */
#include "io_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *io_file_kind(unsigned mode)
{
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISLNK(mode)) return "a symbolic link";
    if (S_ISREG(mode)) return "a regular file";
    return "not a regular file";
}

/* The one place a reader opens a file: O_NONBLOCK so that a FIFO (or a
 * device) cannot make open() wait for a writer, then fstat on the descriptor
 * (no race with a stat of the name), and only a regular file is read. */
FILE *io_open_regular(const char *path, struct stat *st, nvfp4_error *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        nvfp4_error_set(err, NVFP4_EIO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, st) != 0) {
        nvfp4_error_set(err, NVFP4_EIO, "%s: cannot stat: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    if (!S_ISREG(st->st_mode)) {
        nvfp4_error_set(err, NVFP4_EIO, "%s: is %s, not a regular file; refusing to read it", path,
                        io_file_kind((unsigned)st->st_mode));
        close(fd);
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        nvfp4_error_set(err, NVFP4_EIO, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

nvfp4_status nvfp4_file_read_all(const char *path, size_t max, uint8_t **buf, size_t *len, nvfp4_error *err)
{
    struct stat st;
    FILE *f = io_open_regular(path, &st, err);
    if (!f) return NVFP4_EIO; /* err set by io_open_regular */
    if ((unsigned long long)st.st_size > (unsigned long long)max) {
        fclose(f);
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: file too large (%lld bytes)", path, (long long)st.st_size);
    }
    size_t n = (size_t)st.st_size;
    uint8_t *b = malloc(n ? n : 1);
    if (!b) {
        fclose(f);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory (%zu bytes)", path, n);
    }
    size_t got = fread(b, 1, n, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || got != n) {
        free(b);
        return nvfp4_error_set(err, NVFP4_EIO, "%s: read error", path);
    }
    *buf = b;
    *len = n;
    return NVFP4_OK;
}
