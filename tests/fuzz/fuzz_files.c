/* fuzz_files.c - libFuzzer target for what in-memory fuzzing cannot reach:
 * the readers and writers on the file system. Each input builds, in a scratch
 * folder, a path of fuzzed depth and component lengths (up to ~6,000
 * characters: past PATH_MAX and NAME_MAX) ending in an object of a fuzzed
 * kind (a regular file with the payload, a FIFO, a folder, a folder with a
 * meta.json and a tensor file, a symbolic link to a file, to /dev/zero or to
 * nothing), optionally with the payload's header grown to megabytes. Then:
 *   - every reader (safetensors, npy, folder, by extension, the bundle
 *     loader, sha256) must return, never block, and set a message on error;
 *   - the suite MANIFEST reader as well;
 *   - a writer (safetensors, npy, folder) to a path beside it or onto it must
 *     leave no temporary (".NAME.tmp-XXXXXX") whether it succeeds or fails,
 *     never replace a FIFO, a folder or a link to /dev/zero with a file (nor
 *     a non-folder with a folder), and what it wrote must read back with the
 *     same number of tensors.
 * Input: byte 0 kind, byte 1 depth, byte 2 component length, byte 3 header
 * growth and which writer, then the payload. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvfp4/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[64];

static void remove_at(int dfd, const char *name)
{
    if (unlinkat(dfd, name, 0) == 0) return;
    int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    if (fd < 0) return;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) remove_at(dirfd(d), e->d_name);
    closedir(d);
    (void)unlinkat(dfd, name, AT_REMOVEDIR);
}

static void clear_root(void)
{
    int fd = open(root, O_RDONLY | O_DIRECTORY);
    if (fd < 0) abort();
    DIR *d = fdopendir(fd);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) remove_at(dirfd(d), e->d_name);
    closedir(d);
}

/* Any ".tmp-" name under the folder fd (recursively): a writer left one. */
static int has_temp(int dfd)
{
    int fd = dup(dfd);
    if (fd < 0) return 0;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return 0;
    }
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (strstr(e->d_name, ".tmp-")) found = 1;
        else if (e->d_type == DT_DIR) {
            int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
            if (sub >= 0) {
                found = has_temp(sub);
                close(sub);
            }
        }
    }
    closedir(d);
    return found;
}

static int write_all(int dfd, const char *name, const void *b, size_t n)
{
    int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return -1;
    ssize_t w = n ? write(fd, b, n) : 0;
    close(fd);
    return w == (ssize_t)n ? 0 : -1;
}

/* A safetensors-like payload whose header is grown by `grow` MiB of spaces
 * (the header length field says so), or the payload as it is. */
static uint8_t *grown(const uint8_t *p, size_t n, unsigned grow, size_t *outn)
{
    size_t extra = (size_t)grow << 20;
    uint8_t *b = malloc(8 + n + extra + 1);
    if (!b) return NULL;
    uint64_t hlen = n + extra;
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(hlen >> (8 * i));
    memcpy(b + 8, p, n);
    memset(b + 8 + n, ' ', extra);
    *outn = 8 + n + extra;
    return b;
}

static void check_reader_error(nvfp4_status st, const nvfp4_error *err)
{
    if (st != NVFP4_OK && err->message[0] == '\0') abort();
}

static void remove_root(void)
{
    clear_root();
    (void)rmdir(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!root[0]) {
        /* tmpfs where there is one: the file-system calls are the cost of an input */
        snprintf(root, sizeof root, "%s/fuzz_files.XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
        if (!mkdtemp(root)) abort();
        atexit(remove_root); /* the scratch folder goes with the run */
    }
    if (size < 4) return 0;
    unsigned kind = data[0] % 8, depth = data[1] % 40, clen = 1 + data[2] % 255,
             grow = (data[3] & 7) == 7 ? 1u + (data[3] >> 6) : 0, /* 1-4 MiB of header, one input in 8 */
             writer = (data[3] >> 3) % 4;
    const uint8_t *payload = data + 4;
    size_t plen = size - 4;
    static const char *const ext[] = {".safetensors", ".npy", "", ".bin"};
    clear_root();

    /* The folders: depth components of clen characters (a name over NAME_MAX
     * fails mkdirat: the path then stops there, as a user's would). */
    char *path = malloc(strlen(root) + (size_t)depth * 257 + 300);
    strcpy(path, root);
    int dfd = open(root, O_RDONLY | O_DIRECTORY);
    char comp[300];
    for (unsigned i = 0; i < depth; i++) {
        memset(comp, 'a' + (int)(i % 26), clen);
        comp[clen] = '\0';
        if (mkdirat(dfd, comp, 0755) != 0) break;
        int nfd = openat(dfd, comp, O_RDONLY | O_DIRECTORY);
        close(dfd);
        dfd = nfd;
        strcat(path, "/");
        strcat(path, comp);
        if (dfd < 0) break;
    }
    if (dfd < 0) {
        free(path);
        return 0;
    }
    char name[32];
    snprintf(name, sizeof name, "in%s", ext[kind % 4]);
    size_t gn = 0;
    uint8_t *g = grow ? grown(payload, plen, grow, &gn) : NULL;
    const uint8_t *body = g ? g : payload;
    size_t blen = g ? gn : plen;
    switch (kind) {
    case 0: case 1: case 3: (void)write_all(dfd, name, body, blen); break;
    case 2: /* a folder with meta.json (the payload) and a tensor file */
        if (mkdirat(dfd, name, 0755) == 0) {
            int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY);
            if (sub >= 0) {
                (void)write_all(sub, "meta.json", body, blen);
                (void)write_all(sub, "x.bin", payload, plen < 64 ? plen : 64);
                (void)mkfifoat(sub, "x.npy", 0644);
                close(sub);
            }
        }
        break;
    case 4: (void)mkfifoat(dfd, name, 0644); break;
    case 5: (void)mkdirat(dfd, name, 0755); break;
    case 6: (void)symlinkat(plen & 1 ? "/dev/zero" : "nowhere", dfd, name); break;
    default:
        (void)write_all(dfd, "target.safetensors", body, blen);
        (void)symlinkat("target.safetensors", dfd, name);
        break;
    }
    free(g);
    char *full = malloc(strlen(path) + 40);
    sprintf(full, "%s/%s", path, name);

    nvfp4_tensor_set s;
    nvfp4_error err;
    nvfp4_status st;
    char hex[65];
    nvfp4_tset_init(&s);
    err.message[0] = '\0';
    check_reader_error(st = nvfp4_tset_read(full, &s, &err), &err);
    nvfp4_tset_free(&s);
    err.message[0] = '\0';
    check_reader_error(nvfp4_safetensors_read(full, &s, &err), &err);
    nvfp4_tset_free(&s);
    err.message[0] = '\0';
    check_reader_error(nvfp4_npy_read(full, "x", &s, &err), &err);
    nvfp4_tset_free(&s);
    err.message[0] = '\0';
    check_reader_error(nvfp4_tdir_read(full, &s, &err), &err);
    nvfp4_tset_free(&s);
    err.message[0] = '\0';
    check_reader_error(nvfp4_bundle_load(full, &s, &err), &err);
    nvfp4_tset_free(&s);
    err.message[0] = '\0';
    check_reader_error(nvfp4_sha256_file(full, hex, &err), &err);
    nvfp4_manifest m;
    err.message[0] = '\0';
    if (nvfp4_manifest_read(full, &m, &err) == NVFP4_OK) nvfp4_manifest_free(&m);
    else check_reader_error(NVFP4_EFORMAT, &err);

    /* A writer beside it: a small set, to a name next to (or onto) the input. */
    nvfp4_tset_init(&s);
    size_t shape[1] = {plen < 256 ? plen : 256};
    static const nvfp4_file_format fmts[] = {NVFP4_FMT_SAFETENSORS, NVFP4_FMT_NPY, NVFP4_FMT_NPY_DIR,
                                             NVFP4_FMT_BIN_DIR};
    if (nvfp4_tset_add(&s, "x", NVFP4_T_U8, 1, shape, payload, NULL, &err) != NVFP4_OK) abort();
    static const char *const outname[] = {"out.safetensors", "out.npy", "outdir", "outbin"};
    char *out = malloc(strlen(path) + 40);
    bool onto = plen && (payload[0] & 1); /* replace the input (a file, FIFO, folder ...) */
    if (onto) sprintf(out, "%s", full);
    else sprintf(out, "%s/%s", path, outname[writer]);
    struct stat before, target;
    bool existed = lstat(out, &before) == 0;
    bool to_regular = existed && S_ISLNK(before.st_mode) && stat(out, &target) == 0 && S_ISREG(target.st_mode);
    bool to_nothing = existed && S_ISLNK(before.st_mode) && stat(out, &target) != 0;
    err.message[0] = '\0';
    st = nvfp4_tset_write(out, &s, fmts[writer], &err);
    check_reader_error(st, &err);
    if (has_temp(dfd)) abort(); /* a temporary outlived its writer */
    /* Never a special file replaced: a write that succeeded replaced nothing,
     * a regular file or a link to one (or to nothing) for a file format, a
     * folder for a folder format; a failed one left the name as it was. */
    struct stat after;
    bool folder = writer >= 2;
    if (existed && st == NVFP4_OK) {
        bool allowed = folder ? S_ISDIR(before.st_mode) : S_ISREG(before.st_mode) || to_regular || to_nothing;
        if (!allowed) abort();
    }
    if (existed && st != NVFP4_OK &&
        (lstat(out, &after) != 0 || (after.st_mode & S_IFMT) != (before.st_mode & S_IFMT)))
        abort();
    if (st == NVFP4_OK && !onto) {
        nvfp4_tensor_set r;
        nvfp4_tset_init(&r);
        if (nvfp4_tset_read(out, &r, &err) != NVFP4_OK || r.count != 1) abort();
        nvfp4_tset_free(&r);
    }
    nvfp4_tset_free(&s);
    close(dfd);
    free(out);
    free(full);
    free(path);
    return 0;
}
