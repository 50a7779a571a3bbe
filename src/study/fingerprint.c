/*
 * fingerprint.c - what keeps the lab from mixing runs (docs/studies.md,
 * "Fingerprints, locks and checksums"): the fingerprint of a run (its
 * config's content, steps, seeds, --quick, shard and the tool's version),
 * stamped with the size and SHA-256 of each CSV file into summary.json and
 * kept in out_dir/.resume/ while the run is unfinished, so that `study
 * merge` and `study run --resume` refuse what belongs to another run; and
 * the lock a run holds on its output folder. It reads and writes only
 * these bookkeeping files, never a result.
 */
#include <cblas.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvfp4/io.h"

#include "study/studies.h"
#include "study/labfile.h"
#include "study/fingerprint.h"

#define FP_FILE "fingerprint.json"

/* sha256 of a config's canonical JSON (sorted keys, compact), so that the
 * shipped text and the same config run from a file agree */
static bool canonical_sha(const char *text, char hex[65])
{
    json_t *j = json_loads(text, 0, NULL);
    char *c = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(j);
    if (!c) return false;
    nvfp4_sha256_hex(c, strlen(c), hex);
    free(c);
    return true;
}

json_t *st_fingerprint(const nvfp4_study *s, const nvfp4_study_opts *o)
{
    char hex[65] = "", *text = s->cfg ? st_config_canonical(s->cfg) : NULL;
    const char *builtin = s->config ? st_builtin_config(s->config) : NULL;
    if (text) {
        nvfp4_sha256_hex(text, strlen(text), hex);
        free(text);
    } else if (!builtin || !canonical_sha(builtin, hex)) {
        /* a study written in C alone: its code is the tool's version */
        char tag[160];
        snprintf(tag, sizeof tag, "nvfp4 built-in study %s", s->name);
        nvfp4_sha256_hex(tag, strlen(tag), hex);
    }
    json_t *fp = json_pack("{s:s,s:s,s:I,s:I,s:b,s:s}", "study", s->name, "config_sha256", hex, "steps",
                           (json_int_t)(o->steps ? o->steps : s->steps), "seeds",
                           (json_int_t)(o->seeds ? o->seeds : s->seeds), "quick", o->quick, "version",
                           nvfp4_version());
    /* the GEMM kernel OpenBLAS chose for this CPU: kernels sum in other
     * orders, so the files depend on it (docs/studies.md, Reproducibility) */
    const char *core = openblas_get_corename();
    if (fp && core && *core) json_object_set_new(fp, "blas_kernel", json_string(core));
    if (fp && o->shard_n > 1)
        json_object_set_new(fp, "shard", json_pack("[I,I]", (json_int_t)o->shard_i, (json_int_t)o->shard_n));
    /* a later seed batch of `study run --target-ci` runs seeds first_seed.. */
    if (fp && o->seed_first) json_object_set_new(fp, "first_seed", json_integer((json_int_t)o->seed_first + 1));
    return fp;
}

/* ---- the stamp in summary.json ------------------------------------------------ */
static nvfp4_status file_entry(const char *dir, const char *name, json_t *files, nvfp4_error *err)
{
    char path[4096], hex[65];
    struct stat sb;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (lstat(path, &sb) != 0) return NVFP4_OK;
    nvfp4_status s = nvfp4_sha256_file(path, hex, err);
    if (s == NVFP4_OK)
        json_object_set_new(files, name, json_pack("{s:I,s:s}", "bytes", (json_int_t)sb.st_size, "sha256", hex));
    return s;
}

nvfp4_status st_stamp_summary(const char *dir, const nvfp4_study *s, json_t *fp, nvfp4_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_t *root = st_load_lab_json(path, NULL, err), *files = json_object();
    nvfp4_status st = root ? NVFP4_OK : NVFP4_EFORMAT;
    if (st == NVFP4_OK) st = file_entry(dir, "runs.csv", files, err);
    if (st == NVFP4_OK) st = file_entry(dir, "layers.csv", files, err);
    for (const char *const *f = s->files; st == NVFP4_OK && f && *f; f++) st = file_entry(dir, *f, files, err);
    if (st != NVFP4_OK) {
        json_decref(root);
        json_decref(files);
        return st;
    }
    json_object_set(root, "fingerprint", fp);
    json_object_set_new(root, "files", files);
    st_file sf;
    FILE *out = st_file_open(&sf, err);
    if (out) {
        json_dumpf(root, out, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
        fputc('\n', out);
    }
    json_decref(root);
    return out ? st_file_commit(&sf, dir, "summary.json", err) : NVFP4_ENOMEM;
}

/* ---- what differs between two fingerprints --------------------------------- */
static void value_text(const json_t *v, char *buf, size_t n)
{
    char *t = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    snprintf(buf, n, "%s", t ? t : "(none)");
    free(t);
}

bool st_fingerprint_differs(const json_t *a, const json_t *b, bool with_shard, char *why, size_t n)
{
    static const char *const keys[] = {"study", "config_sha256", "steps", "seeds", "quick", "version", "first_seed",
                                       "shard", "blas_kernel"};
    static const char *const what[] = {"study", "config (sha256 of its JSON)", "--steps", "--seeds",
                                       "--quick", "tool version", "first seed", "--shard",
                                       "OpenBLAS kernel (set OPENBLAS_CORETYPE alike)"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        if (!with_shard && !strcmp(keys[k], "shard")) continue;
        json_t *x = json_object_get(a, keys[k]), *y = json_object_get(b, keys[k]);
        /* folders written before the kernel was recorded have none: not a difference */
        if (!strcmp(keys[k], "blas_kernel") && !(x && y)) continue;
        if ((x || y) && !(x && y && json_equal(x, y))) {
            char xs[96], ys[96];
            value_text(x, xs, sizeof xs);
            value_text(y, ys, sizeof ys);
            snprintf(why, n, "%s %s, not %s", what[k], xs, ys);
            return true;
        }
    }
    return false;
}

/* ---- out_dir/.resume/fingerprint.json -------------------------------------- */
static void resume_file(const char *out_dir, const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "%s/.resume/%s", out_dir, name);
}

/* job-N.ckpt, job-N.done, fingerprint.json: the files a run keeps in .resume */
static bool resume_file_name(const char *n)
{
    size_t j;
    char ext[8], tail;
    return !strcmp(n, FP_FILE) ||
           (sscanf(n, "job-%zu.%7[a-z]%c", &j, ext, &tail) == 2 && (!strcmp(ext, "ckpt") || !strcmp(ext, "done")));
}

/* ... or the atomic writer's temporary of one (".NAME.tmp-XXXXXX") */
static bool resume_entry(const char *d_name)
{
    if (d_name[0] != '.') return resume_file_name(d_name);
    const char *t = strstr(d_name, ".tmp-");
    char base[256];
    size_t k = t ? (size_t)(t - (d_name + 1)) : sizeof base;
    if (k >= sizeof base) return false;
    memcpy(base, d_name + 1, k);
    base[k] = 0;
    return resume_file_name(base);
}

/* Removes what a run keeps in .resume (job-N.ckpt, job-N.done, the
 * fingerprint, and the atomic writer's temporaries of these that a kill
 * left; nothing else) and the folder when that leaves it empty. */
void st_resume_clear(const char *out_dir)
{
    char dir[4096], path[4400];
    snprintf(dir, sizeof dir, "%s/.resume", out_dir);
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        if (!resume_entry(e->d_name)) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    if (d) closedir(d);
    rmdir(dir);
}

static bool has_job_files(const char *out_dir)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/.resume", out_dir);
    DIR *d = opendir(dir);
    bool any = false;
    for (struct dirent *e; d && !any && (e = readdir(d)) != NULL;) any = !strncmp(e->d_name, "job-", 4);
    if (d) closedir(d);
    return any;
}

/* --resume: NVFP4_OK when out_dir/.resume is of this run (*have: it has
 * its fingerprint) or holds nothing to resume. */
static nvfp4_status resume_check(const nvfp4_study_opts *o, const json_t *fp, bool *have, nvfp4_error *err)
{
    char path[4096], why[256];
    resume_file(o->out_dir, FP_FILE, path, sizeof path);
    bool absent = false;
    json_t *old = st_load_lab_json(path, &absent, err);
    *have = old != NULL;
    if (!old && !absent) {
        char msg[sizeof err->message];
        snprintf(msg, sizeof msg, "%s", err->message);
        return nvfp4_error_set(err, err->status, "--resume: %s", msg);
    }
    if (!old && has_job_files(o->out_dir))
        return nvfp4_error_set(err, NVFP4_EINVAL,
                               "--resume: %s/.resume holds checkpoints but no %s (left by an older nvfp4): cannot "
                               "tell which run they belong to; run without --resume to start over",
                               o->out_dir, FP_FILE);
    bool differs = old && st_fingerprint_differs(fp, old, true, why, sizeof why);
    json_decref(old);
    if (differs)
        return nvfp4_error_set(err, NVFP4_EINVAL,
                               "--resume: %s holds an unfinished run of another configuration (now %s); run "
                               "without --resume to start over (its checkpoints are then discarded)",
                               path, why);
    return NVFP4_OK;
}

nvfp4_status st_resume_check(const nvfp4_study_opts *o, const json_t *fp, nvfp4_error *err)
{
    bool have;
    return resume_check(o, fp, &have, err);
}

nvfp4_status st_resume_begin(const nvfp4_study_opts *o, const json_t *fp, nvfp4_error *err)
{
    char path[4096];
    resume_file(o->out_dir, FP_FILE, path, sizeof path);
    if (o->resume) {
        bool have;
        nvfp4_status s = resume_check(o, fp, &have, err);
        if (s != NVFP4_OK || have) return s;
    } else {
        st_resume_clear(o->out_dir); /* a fresh run: nothing of an earlier one may be resumed later */
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/.resume", o->out_dir);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return nvfp4_error_set(err, NVFP4_EIO, "cannot create %s: %s", dir, strerror(errno));
    char *t = json_dumps(fp, JSON_INDENT(2) | JSON_SORT_KEYS);
    if (!t) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    nvfp4_status s = nvfp4_file_write_atomic(path, t, strlen(t), err);
    free(t);
    return s;
}

/* ---- the lock on an output folder ------------------------------------------ */
int st_lock_dir(const char *dir, nvfp4_error *err)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, ST_LOCK_FILE) >= sizeof path) {
        nvfp4_error_set(err, NVFP4_EINVAL, "%s: path too long", dir);
        return -1;
    }
    for (int tries = 0; tries < 100; tries++) {
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
        if (fd < 0) {
            nvfp4_error_set(err, NVFP4_EIO, "cannot create the lock file %s: %s", path, strerror(errno));
            return -1;
        }
        struct stat a, b;
        if (fstat(fd, &a) != 0 || !S_ISREG(a.st_mode)) {
            close(fd);
            nvfp4_error_set(err, NVFP4_EIO, "%s: not a regular file; refusing to use it as the folder's lock", path);
            return -1;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            char pid[32] = "";
            ssize_t k = read(fd, pid, sizeof pid - 1);
            pid[k > 0 ? k : 0] = 0;
            pid[strcspn(pid, "\n")] = 0;
            close(fd);
            nvfp4_error_set(err, NVFP4_EINVAL,
                            "%s is in use by another nvfp4 study run or merge%s%s%s (lock %s); wait for it, or "
                            "choose another --out",
                            dir, pid[0] ? " (pid " : "", pid, pid[0] ? ")" : "", path);
            return -1;
        }
        /* the holder before us may have removed the file after we opened
         * it: the lock counts only on the file that the name still names */
        if (stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
            char pid[32];
            int k = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
            if (ftruncate(fd, 0) == 0 && write(fd, pid, (size_t)k) != k) { /* the pid is for messages only */
            }
            return fd;
        }
        close(fd);
    }
    nvfp4_error_set(err, NVFP4_EIO, "%s: cannot take the lock", path);
    return -1;
}

void st_unlock_dir(const char *dir, int fd)
{
    if (fd < 0) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, ST_LOCK_FILE);
    unlink(path);
    close(fd);
}

/* ---- a run with its lock, its resume check and its stamp ------------------------ */
nvfp4_status st_run_fingerprinted(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, nvfp4_error *err)
{
    const nvfp4_study_dist *d = o->dist && o->dist->size > 1 ? o->dist : NULL;
    bool root = !d || d->rank == 0;
    json_t *fp = st_fingerprint(s, o);
    if (!fp) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    int lock = root ? st_lock_dir(o->out_dir, err) : -1;
    nvfp4_status st = root && lock < 0 ? (err->status != NVFP4_OK ? err->status : NVFP4_EIO) : NVFP4_OK;
    if (st == NVFP4_OK) {
        /* every rank checks (reading); only rank 0 clears and records */
        st = root ? st_resume_begin(o, fp, err) : (o->resume ? st_resume_check(o, fp, err) : NVFP4_OK);
    }
    /* The ranks' collective start, passed by every rank of a study made of
     * jobs: a rank that cannot start (rank 0 without the lock, a resume
     * check that fails) stops the others here, before any of them sends
     * results that no rank would receive (st_run_jobs and st_run_row_jobs
     * have one more, passed by every rank alike). */
    if (d && !s->serial && d->all_ok && !d->all_ok(d->ctx, st == NVFP4_OK) && st == NVFP4_OK)
        st = nvfp4_error_set(err, NVFP4_EINVAL,
                             "study: another MPI rank could not start the run (its message says why)");
    if (st == NVFP4_OK) st = s->run(s, o, log, err);
    if (st == NVFP4_OK && root) st = st_stamp_summary(o->out_dir, s, fp, err);
    if (st == NVFP4_OK && root) st_resume_clear(o->out_dir);
    st_unlock_dir(o->out_dir, lock);
    json_decref(fp);
    return st;
}
