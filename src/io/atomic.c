/* atomic.c - writing a file or a folder so that its destination holds either
 * the old contents or the new, never a mix: the contents are written under a
 * temporary sibling name (".<base>.tmp-XXXXXX"), then renamed into place; and
 * the registry of those temporaries, which must not outlive the process.
 *
 * Every temporary file and folder (a folder output or a golden suite under
 * construction) is registered here while it exists. On SIGINT, SIGTERM or
 * SIGHUP a handler removes them with async-signal-safe calls only (unlink,
 * openat, getdents64, unlinkat), then re-raises the signal with its default
 * action, so the process still dies of it. The handler is installed on the
 * first registration, and only for a signal whose action is still the
 * default: a program with its own handler keeps it. SIGKILL cannot be
 * caught; it can leave a hidden temporary. */
#include "io_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/splitmix.h"

/* ---- removing a folder tree without malloc (usable in a signal handler) ---- */

struct io_dirent64 { /* the kernel's linux_dirent64 */
    unsigned long long d_ino;
    long long d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

/* Our folders are at most two levels deep (a suite of bundle folders). */
#define IO_TREE_DEPTH 4

/* Removes name (relative to dirfd) and, for a folder, what it holds. Never
 * follows a symbolic link (a link is removed, not what it points to). */
static bool remove_tree_at(int dirfd, const char *name, int depth)
{
    if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT) return true;
    if (errno != EISDIR && errno != EPERM) return false;
    if (depth <= 0) return false;
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return false;
    /* Scan until a whole pass removes nothing (removing entries while
     * reading the folder must not make us miss one). */
    char buf[4096] __attribute__((aligned(8)));
    bool removed_any = true, ok = true;
    while (removed_any) {
        removed_any = false;
        if (lseek(fd, 0, SEEK_SET) < 0) break;
        for (;;) {
            long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
            if (n <= 0) break;
            for (long off = 0; off < n;) {
                struct io_dirent64 *e = (struct io_dirent64 *)(void *)(buf + off);
                off += e->d_reclen;
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
                if (remove_tree_at(fd, e->d_name, depth - 1)) removed_any = true;
                else ok = false;
            }
        }
        if (!ok) break;
    }
    close(fd);
    return unlinkat(dirfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT;
}

bool io_remove_tree(const char *path) { return remove_tree_at(AT_FDCWD, path, IO_TREE_DEPTH); }

/* ---- the registry -------------------------------------------------------------- */

#define IO_MAX_TEMPS 64
static _Atomic(char *) temp_slot[IO_MAX_TEMPS];
static atomic_bool handlers_installed;
static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP};

static void on_signal(int sig)
{
    int saved = errno;
    for (size_t i = 0; i < IO_MAX_TEMPS; i++) {
        char *p = atomic_load(&temp_slot[i]);
        if (p) (void)remove_tree_at(AT_FDCWD, p, IO_TREE_DEPTH);
    }
    errno = saved;
    /* SA_RESETHAND restored the default action and SA_NODEFER left the
     * signal unblocked: this ends the process as the signal would have. */
    raise(sig);
}

static void install_handlers(void)
{
    if (atomic_exchange(&handlers_installed, true)) return;
    for (size_t i = 0; i < sizeof cleanup_signals / sizeof cleanup_signals[0]; i++) {
        struct sigaction old, sa;
        if (sigaction(cleanup_signals[i], NULL, &old) != 0) continue;
        if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue; /* the program's own */
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sa.sa_flags = (int)(SA_RESETHAND | SA_NODEFER);
        sigemptyset(&sa.sa_mask);
        (void)sigaction(cleanup_signals[i], &sa, NULL);
    }
}

int io_temp_register(const char *path)
{
    install_handlers();
    char *p = strdup(path);
    if (!p) return -1;
    for (int i = 0; i < IO_MAX_TEMPS; i++) {
        char *expected = NULL;
        if (atomic_compare_exchange_strong(&temp_slot[i], &expected, p)) return i;
    }
    free(p); /* more temporaries at once than slots: this one is not cleaned on a signal */
    return -1;
}

void io_temp_unregister(int slot)
{
    if (slot < 0 || slot >= IO_MAX_TEMPS) return;
    free(atomic_exchange(&temp_slot[slot], NULL));
}

/* A temporary name next to `path` ("<dir>/.<base>.tmp-XXXXXX"). */
static char *temp_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dlen = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = slash ? slash + 1 : path;
    size_t n = dlen + strlen(base) + 16;
    char *t = malloc(n);
    if (!t) return NULL;
    snprintf(t, n, "%.*s.%s.tmp-XXXXXX", (int)dlen, path, base);
    return t;
}

/* The six characters that end a temp_name, drawn afresh: 36 bits from the
 * process id, the clock and a counter, mixed. Uniqueness comes from
 * O_EXCL / mkdir, which refuse a name that exists. */
static void temp_suffix(char *t)
{
    static const char digits[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static atomic_uint_fast64_t counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t state = ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
                     (atomic_fetch_add(&counter, 1) * 0x9E3779B97F4A7C15ull);
    uint64_t r = nvfp4_core_splitmix64(&state);
    char *x = t + strlen(t) - 6;
    for (int i = 0; i < 6; i++, r /= 62) x[i] = digits[r % 62];
}

/* Creates the temporary t (a temp_name: its suffix is replaced), a file
 * open for writing in *fd or, with fd NULL, a folder, both mode 0600/0700
 * as mkstemp and mkdtemp make them; *slot gets its registration. The name is
 * registered before the file exists, so that a signal at any point finds
 * it (mkstemp and mkdtemp create first: a signal between the creation and
 * the registration left the temporary behind). A name that exists already
 * is someone else's: unregistered at once, and another name drawn. 0, or
 * -1 with errno set. */
static int create_registered(char *t, int *fd, int *slot)
{
    for (int attempt = 0; attempt < 100; attempt++) {
        temp_suffix(t);
        *slot = io_temp_register(t);
        int rc = fd ? (*fd = open(t, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) : mkdir(t, 0700);
        if (rc >= 0) return 0;
        int e = errno;
        io_temp_unregister(*slot);
        *slot = -1;
        errno = e;
        if (e != EEXIST) return -1;
    }
    errno = EEXIST;
    return -1;
}

/* ---- a folder built under a temporary name ------------------------------------------ */

nvfp4_status nvfp4_dir_txn_begin(nvfp4_dir_txn *t, const char *dest, nvfp4_error *err)
{
    memset(t, 0, sizeof *t);
    t->slot = -1;
    t->dest = strdup(dest);
    if (!t->dest) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    size_t n = strlen(t->dest);
    while (n > 1 && t->dest[n - 1] == '/') t->dest[--n] = '\0';
    t->tmp = temp_name(t->dest);
    nvfp4_status st = NVFP4_OK;
    if (!t->tmp) st = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    else if (create_registered(t->tmp, NULL, &t->slot) != 0)
        st = nvfp4_error_set(err, NVFP4_EIO, "%s: cannot create a temporary folder: %s", t->dest, strerror(errno));
    if (st) {
        nvfp4_dir_txn_abort(t);
        return st;
    }
    t->live = true;
    /* mkdtemp makes the folder 0700; give it the usual umask-based mode. */
    mode_t um = umask(0);
    umask(um);
    (void)chmod(t->tmp, 0777 & ~um);
    return NVFP4_OK;
}

/* Without RENAME_EXCHANGE (a file system that lacks it): the old folder
 * aside, the new one in, the old one removed. A crash between the two
 * renames leaves the destination absent, never mixed. */
static nvfp4_status replace_in_two_steps(nvfp4_dir_txn *t, nvfp4_error *err)
{
    char *old = temp_name(t->dest);
    nvfp4_status rc = NVFP4_OK;
    int oslot = -1;
    if (!old || create_registered(old, NULL, &oslot) != 0) {
        rc = nvfp4_error_set(err, NVFP4_EIO, "%s: cannot move the old folder aside: %s", t->dest, strerror(errno));
        free(old);
        return rc;
    }
    if (rename(t->dest, old) != 0) {
        rc = nvfp4_error_set(err, NVFP4_EIO, "%s: cannot move the old folder aside: %s", t->dest, strerror(errno));
        (void)rmdir(old);
    } else if (rename(t->tmp, t->dest) != 0) {
        rc = nvfp4_error_set(err, NVFP4_EIO, "%s: cannot rename into place: %s", t->dest, strerror(errno));
        (void)rename(old, t->dest);
    } else {
        t->live = false;
        (void)io_remove_tree(old);
    }
    io_temp_unregister(oslot);
    free(old);
    return rc;
}

nvfp4_status nvfp4_dir_txn_commit(nvfp4_dir_txn *t, nvfp4_error *err)
{
    struct stat st;
    nvfp4_status rc = NVFP4_OK;
    if (lstat(t->dest, &st) != 0) {
        if (rename(t->tmp, t->dest) == 0) t->live = false;
        else rc = nvfp4_error_set(err, NVFP4_EIO, "%s: cannot rename into place: %s", t->dest, strerror(errno));
    } else if (!S_ISDIR(st.st_mode)) {
        /* checked by the callers before they write; checked again here, as
         * the exchange would otherwise swap out (and then remove) a file, a
         * FIFO or a device node that took the folder's name meanwhile */
        rc = nvfp4_error_set(err, NVFP4_EIO, "%s: is %s, not a folder; refusing to replace it", t->dest,
                             io_file_kind((unsigned)st.st_mode));
    } else if (renameat2(AT_FDCWD, t->tmp, AT_FDCWD, t->dest, RENAME_EXCHANGE) == 0) {
        /* One atomic step: the new folder has the destination's name, the
         * old one the temporary name, still registered (a signal from here
         * on removes the old one) and removed below. */
    } else if (errno == EINVAL || errno == ENOSYS) {
        rc = replace_in_two_steps(t, err);
    } else {
        rc = nvfp4_error_set(err, NVFP4_EIO, "%s: cannot replace: %s", t->dest, strerror(errno));
    }
    nvfp4_dir_txn_abort(t); /* what the temporary name still holds: the old folder, or the new one on failure */
    return rc;
}

void nvfp4_dir_txn_abort(nvfp4_dir_txn *t)
{
    if (t->tmp && t->live) (void)io_remove_tree(t->tmp);
    io_temp_unregister(t->slot);
    free(t->tmp);
    free(t->dest);
    memset(t, 0, sizeof *t);
    t->slot = -1;
}

/* ---- a file written under a temporary name ------------------------------------------ */

/* The one check every writer makes before it creates a temporary file and
 * again just before the rename: the rename would replace whatever has the
 * destination's name, so a FIFO, a device node (as root: /dev/null, /dev/full),
 * a socket or a folder there is refused, never swapped for a regular file. A
 * symbolic link is itself replaced by the rename (nothing is written through
 * it), but one that points to such a file is refused too: the user named a
 * special file. Only a name that does not exist, a regular file, a link to a
 * regular file and a link to nothing are written. */
nvfp4_status nvfp4_file_check_destination(const char *path, nvfp4_error *err)
{
    struct stat ls, ts;
    /* Nothing there that a rename could replace (no such name, a missing
     * folder, a name too long): creating the temporary reports the problem. */
    if (lstat(path, &ls) != 0) return NVFP4_OK;
    if (S_ISREG(ls.st_mode)) return NVFP4_OK;
    if (!S_ISLNK(ls.st_mode))
        return nvfp4_error_set(err, NVFP4_EIO, "%s: is %s, not a regular file; refusing to replace it", path,
                               io_file_kind((unsigned)ls.st_mode));
    if (stat(path, &ts) != 0) {
        if (errno == ENOENT) return NVFP4_OK; /* a link to nothing: the rename replaces the link */
        return nvfp4_error_set(err, NVFP4_EIO, "%s: is a symbolic link that cannot be followed: %s", path,
                               strerror(errno));
    }
    if (S_ISREG(ts.st_mode)) return NVFP4_OK;
    return nvfp4_error_set(err, NVFP4_EIO, "%s: is a symbolic link to %s, not to a regular file; refusing to replace it",
                           path, io_file_kind((unsigned)ts.st_mode));
}

/* The temporary file of t (created, registered for removal on a signal,
 * given the usual umask-based mode), open for writing in *fd. */
static nvfp4_status txn_create(nvfp4_file_txn *t, const char *path, int *fd, nvfp4_error *err)
{
    memset(t, 0, sizeof *t);
    t->slot = -1;
    nvfp4_status st = nvfp4_file_check_destination(path, err);
    if (st) return st;
    t->dest = strdup(path);
    t->tmp = temp_name(path);
    if (!t->dest || !t->tmp) {
        nvfp4_file_txn_abort(t);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    }
    /* registered: removed if a signal ends the process mid-write */
    if (create_registered(t->tmp, fd, &t->slot) != 0) {
        st = nvfp4_error_set(err, NVFP4_EIO, "%s: cannot create a temporary file: %s", path, strerror(errno));
        free(t->tmp);
        t->tmp = NULL; /* nothing of ours to remove */
        nvfp4_file_txn_abort(t);
        return st;
    }
    /* mkstemp creates 0600; give the file the usual umask-based mode. */
    mode_t um = umask(0);
    umask(um);
    (void)fchmod(*fd, 0666 & ~um);
    return NVFP4_OK;
}

nvfp4_status nvfp4_file_txn_begin(nvfp4_file_txn *t, const char *path, nvfp4_error *err)
{
    int fd;
    nvfp4_status st = txn_create(t, path, &fd, err);
    if (!st && close(fd) != 0) {
        st = nvfp4_error_set(err, NVFP4_EIO, "%s: write failed: %s", path, strerror(errno));
        nvfp4_file_txn_abort(t);
    }
    return st;
}

nvfp4_status nvfp4_file_txn_write(nvfp4_file_txn *t, const char *path, nvfp4_file_writer write, void *ctx,
                                  nvfp4_error *err)
{
    int fd;
    nvfp4_status st = txn_create(t, path, &fd, err);
    if (st) return st;
    FILE *f = fdopen(fd, "wb");
    bool ok = f != NULL;
    if (ok) {
        st = write(f, ctx, err);
        ok = st == NVFP4_OK && !ferror(f);
        ok = (fclose(f) == 0) && ok;
    } else {
        close(fd);
    }
    if (!ok && st == NVFP4_OK) st = nvfp4_error_set(err, NVFP4_EIO, "%s: write failed: %s", path, strerror(errno));
    if (st) nvfp4_file_txn_abort(t);
    return st;
}

nvfp4_status nvfp4_file_txn_commit(nvfp4_file_txn *t, nvfp4_error *err)
{
    /* checked again: the destination may have changed while the file was written */
    nvfp4_status st = nvfp4_file_check_destination(t->dest, err);
    if (!st && rename(t->tmp, t->dest) != 0)
        st = nvfp4_error_set(err, NVFP4_EIO, "%s: cannot rename into place: %s", t->dest, strerror(errno));
    if (!st) {
        free(t->tmp); /* renamed: nothing to remove */
        t->tmp = NULL;
    }
    nvfp4_file_txn_abort(t);
    return st;
}

void nvfp4_file_txn_abort(nvfp4_file_txn *t)
{
    if (t->tmp) (void)unlink(t->tmp);
    io_temp_unregister(t->slot);
    free(t->tmp);
    free(t->dest);
    memset(t, 0, sizeof *t);
    t->slot = -1;
}

nvfp4_status nvfp4_file_write_atomic_with(const char *path, nvfp4_file_writer write, void *ctx, nvfp4_error *err)
{
    nvfp4_file_txn t;
    nvfp4_status st = nvfp4_file_txn_write(&t, path, write, ctx, err);
    return st ? st : nvfp4_file_txn_commit(&t, err);
}

typedef struct {
    const void *buf;
    size_t len;
} io_bytes;

static nvfp4_status write_bytes(FILE *f, void *ctx, nvfp4_error *err)
{
    const io_bytes *b = ctx;
    (void)err; /* a short write shows as a stream error, reported by the caller */
    if (b->len) (void)fwrite(b->buf, 1, b->len, f);
    return NVFP4_OK;
}

nvfp4_status nvfp4_file_write_atomic(const char *path, const void *buf, size_t len, nvfp4_error *err)
{
    io_bytes b = {buf, len};
    return nvfp4_file_write_atomic_with(path, write_bytes, &b, err);
}

void io_error_retarget(nvfp4_error *err, const char *tmp, const char *dest)
{
    if (!err || !tmp || !dest) return;
    const char *at = strstr(err->message, tmp);
    if (!at) return;
    /* The message may have been shortened around the middle; rebuild it from
     * its three parts, nvfp4_error_set shortens again if needed. */
    char head[sizeof err->message], tail[sizeof err->message];
    size_t h = (size_t)(at - err->message);
    memcpy(head, err->message, h);
    head[h] = '\0';
    snprintf(tail, sizeof tail, "%s", at + strlen(tmp));
    nvfp4_error_set(err, err->status, "%s%s%s", head, dest, tail);
}
