/*
 * checkpoint.c - a run's full state out and back: a deep copy (clone) and
 * the checkpoint file (save, load), whose bytes resume the run exactly. The
 * state is the mutable part of nvfp4_run (train.h) in a fixed order: both
 * models' parameters and optimizer moments, the tiny LM's stream windows,
 * the step and divergence, the logged rows and the cross-step diagnostics.
 * A run rebuilt from its config (nvfp4_run_create) holds the rest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/io.h"
#include "study/labfile.h"
#include "study/train.h"
#include "study/wtrack.h"

/* The mutable state, in a fixed order. */
typedef struct {
    void *p;
    size_t n;
} blob;

static size_t state_blobs(nvfp4_run *r, blob *b)
{
    size_t k = 0;
    st_model *ms[2] = {&r->q, &r->ref};
    for (int i = 0; i < 2; i++) {
        b[k++] = (blob){ms[i]->p, ms[i]->np * sizeof(float)};
        b[k++] = (blob){ms[i]->m, ms[i]->np * sizeof(float)};
        b[k++] = (blob){ms[i]->v, ms[i]->np * sizeof(float)};
    }
    if (r->task.hist) b[k++] = (blob){r->task.hist, r->cfg.batch * r->cfg.model.ctx * sizeof *r->task.hist};
    b[k++] = (blob){&r->step, sizeof r->step};
    b[k++] = (blob){&r->diverged, sizeof r->diverged};
    b[k++] = (blob){&r->div_step, sizeof r->div_step};
    b[k++] = (blob){&r->init_eval, sizeof r->init_eval};
    b[k++] = (blob){&r->ref_external, sizeof r->ref_external};
    return k;
}

static nvfp4_status copy_logs(nvfp4_run *dst, const nvfp4_run *src, nvfp4_error *err)
{
    size_t L = src->q.nlin;
    for (size_t i = 0; i < src->nlogs; i++) {
        lin_diag dg[ST_MAXLIN];
        for (size_t l = 0; l < L; l++) {
            const nvfp4_layer_diag *d = &src->diags[i * L + l];
            memcpy(dg[l].sqnr, d->sqnr_db, sizeof dg[l].sqnr);
            dg[l].wgrad_cos = d->wgrad_cos;
            dg[l].wgrad_align = d->wgrad_align;
            dg[l].gnr = d->gnr;
            memcpy(dg[l].zero, d->zero_frac, sizeof dg[l].zero);
            memcpy(dg[l].clip, d->clip_frac, sizeof dg[l].clip);
            memcpy(dg[l].zero_in, d->zero_in_frac, sizeof dg[l].zero_in);
            memcpy(dg[l].zero_scale, d->zero_scale_frac, sizeof dg[l].zero_scale);
            dg[l].osc_w = d->osc_frac;
            dg[l].hot_persist = d->hot_persist;
            dg[l].dgrad_cos = d->dgrad_cos;
            dg[l].dgrad_align = d->dgrad_align;
            dg[l].dgrad_rel_err = d->dgrad_rel_err;
            dg[l].probe[0] = d->probe_rel_err;
            dg[l].probe[1] = d->probe_cos;
            dg[l].probe[2] = d->probe_rel_bias;
            dg[l].probe[3] = d->probe_rel_std;
        }
        if (!st_run_push_log(dst, &src->logs[i], dg)) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    }
    return NVFP4_OK;
}

nvfp4_status nvfp4_run_clone(const nvfp4_run *r, nvfp4_run **out, nvfp4_error *err)
{
    nvfp4_status s = nvfp4_run_create(&r->cfg, out, err);
    if (s != NVFP4_OK) return s;
    blob a[16], b[16];
    size_t n = state_blobs((nvfp4_run *)r, a);
    state_blobs(*out, b);
    for (size_t i = 0; i < n; i++) memcpy(b[i].p, a[i].p, a[i].n);
    (*out)->shadow = r->shadow;
    s = copy_logs(*out, r, err);
    if (s == NVFP4_OK && !st_wtrack_clone(&(*out)->wtrack, r->wtrack, r->q.nlin))
        s = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    if (s != NVFP4_OK) {
        nvfp4_run_free(*out);
        *out = NULL;
    }
    return s;
}

/* Version 2 also holds the logged rows, so that a run resumed from its
 * checkpoint reports the rows logged before it; version 4 on ends with the
 * SHA-256 of everything before it (64 hex digits and a line feed), so that
 * a changed byte is refused instead of resuming another run. */
static const char CKPT_MAGIC[8] = {'N', 'V', 'F', '4', 'R', 'U', 'N', '6'}; /* 3: held-out fields; 4: checksum;
                                                                               5: shared shadow, wtrack state;
                                                                               6: probe_scale in the config */

static void write_state(FILE *f, const void *ctx)
{
    const nvfp4_run *r = ctx;
    blob b[16];
    size_t n = state_blobs((nvfp4_run *)r, b);
    if (fwrite(CKPT_MAGIC, 1, 8, f) != 8 || fwrite(&r->cfg, sizeof r->cfg, 1, f) != 1) return;
    for (size_t i = 0; i < n; i++)
        if (fwrite(b[i].p, 1, b[i].n, f) != b[i].n) return;
    if (fwrite(&r->nlogs, sizeof r->nlogs, 1, f) != 1 || fwrite(r->logs, sizeof *r->logs, r->nlogs, f) != r->nlogs)
        return;
    if (fwrite(r->diags, sizeof *r->diags, r->nlogs * r->q.nlin, f) != r->nlogs * r->q.nlin) return;
    st_wtrack_write(r->wtrack, r->q.nlin, f); /* a short write: the stream's error flag */
}

/* A short write sets the stream's error flag: the atomic writer then
 * reports it, naming the file, and keeps the old checkpoint. */
static nvfp4_status write_checkpoint(FILE *f, void *ctx, nvfp4_error *err)
{
    return st_write_summed(f, write_state, ctx, "checkpoint", err);
}

nvfp4_status nvfp4_run_save(const nvfp4_run *r, const char *path, nvfp4_error *err)
{
    return nvfp4_file_write_atomic_with(path, write_checkpoint, (void *)r, err);
}

/* The checkpoint's bytes before its checksum line, when that line is the
 * SHA-256 of them. */
static nvfp4_status checkpoint_body(const char *path, const uint8_t *buf, size_t len, size_t *body,
                                    nvfp4_error *err)
{
    if (len < 8 + ST_SUM_LINE_LEN || memcmp(buf, CKPT_MAGIC, 8))
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s is not an nvfp4 run checkpoint (version 6)", path);
    if (!st_summed_ok(buf, len, body))
        return nvfp4_error_set(err, NVFP4_EFORMAT,
                               "%s: checksum mismatch: the checkpoint is damaged (changed or truncated after it "
                               "was written); remove it to restart that job from its first step",
                               path);
    return NVFP4_OK;
}

nvfp4_status nvfp4_run_load(const char *path, nvfp4_run **out, nvfp4_error *err)
{
    *out = NULL;
    uint8_t *bytes = NULL;
    size_t len = 0, body = 0;
    /* read whole: a FIFO or a device is refused without waiting on it */
    nvfp4_status rs = nvfp4_file_read_all(path, (size_t)1 << 40, &bytes, &len, err);
    if (rs != NVFP4_OK) return rs;
    rs = checkpoint_body(path, bytes, len, &body, err);
    FILE *f = rs == NVFP4_OK ? fmemopen(bytes, body, "rb") : NULL;
    if (!f) {
        free(bytes);
        return rs != NVFP4_OK ? rs : nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory", path);
    }
    char magic[8];
    nvfp4_train_cfg cfg;
    if (fread(magic, 1, 8, f) != 8 || memcmp(magic, CKPT_MAGIC, 8) || fread(&cfg, sizeof cfg, 1, f) != 1) {
        fclose(f);
        free(bytes);
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s is not an nvfp4 run checkpoint", path);
    }
    nvfp4_status s = nvfp4_run_create(&cfg, out, err);
    if (s != NVFP4_OK) {
        fclose(f);
        free(bytes);
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: invalid configuration in checkpoint", path);
    }
    blob b[16];
    size_t n = state_blobs(*out, b);
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) ok = fread(b[i].p, 1, b[i].n, f) == b[i].n;
    size_t nl = 0, L = (*out)->q.nlin;
    ok = ok && fread(&nl, sizeof nl, 1, f) == 1 && nl <= (*out)->cfg.steps + 1;
    long at = ok ? ftell(f) : -1; /* no more rows than the file holds, before allocating them */
    ok = ok && at >= 0 && nl <= (body - (size_t)at) / (sizeof *(*out)->logs + L * sizeof *(*out)->diags);
    if (ok && nl) {
        nvfp4_run *r = *out;
        free(r->logs);
        free(r->diags);
        r->nlogs = r->caplogs = 0;
        r->logs = malloc(nl * sizeof *r->logs);
        r->diags = malloc(nl * L * sizeof *r->diags);
        ok = r->logs && r->diags && fread(r->logs, sizeof *r->logs, nl, f) == nl &&
             fread(r->diags, sizeof *r->diags, nl * L, f) == nl * L;
        if (r->logs && r->diags) r->nlogs = r->caplogs = nl;
    }
    ok = ok && st_wtrack_read(&(*out)->wtrack, L, (*out)->q.np, f);
    ok = ok && fgetc(f) == EOF;
    fclose(f);
    free(bytes);
    if (!ok) {
        nvfp4_run_free(*out);
        *out = NULL;
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: truncated or oversized checkpoint", path);
    }
    return NVFP4_OK;
}
