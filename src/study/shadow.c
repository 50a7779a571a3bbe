/*
 * shadow.c - the trace of an FP32 shadow shared by the runs of one seed
 * (docs/studies.md, "The baseline"): what a run's rows take from its
 * shadow at every step, kept so that the arms that differ only in their
 * recipe and switch steps read one trace instead of each training the same
 * shadow. The trace is filled by st_shadow_train (train.c), which steps the
 * shadow exactly as a run steps it beside its quantized model.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/io.h"
#include "study/labfile.h"
#include "study/shadow.h"
#include "study/step.h"

void st_shadow_key(const nvfp4_train_cfg *c, nvfp4_train_cfg *key)
{
    memcpy(key, c, sizeof *key);
    memset(&key->recipe, 0, sizeof key->recipe);
    key->switch_fwd_step = key->switch_bwd_step = SIZE_MAX;
    key->diverge_factor = 0.0f; /* stops the quantized model; the shadow trains every step */
    key->probe_scale = 0; /* the probe reads the quantized model only */
}

size_t st_shadow_bytes(const st_shadow *sh)
{
    return sh->steps * (3 * sizeof(double) + sizeof(size_t)) + sh->nlogs * sh->np * sizeof(float);
}

void st_shadow_free(st_shadow *sh)
{
    if (!sh) return;
    free(sh->loss);
    free(sh->eval);
    free(sh->heldout);
    free(sh->snap);
    free(sh->p);
    free(sh);
}

st_shadow *st_shadow_alloc(const nvfp4_train_cfg *c, size_t np)
{
    st_shadow *sh = calloc(1, sizeof *sh);
    if (!sh) return NULL;
    st_shadow_key(c, &sh->key);
    sh->steps = c->steps;
    sh->np = np;
    for (size_t i = 0; i < c->steps; i++) sh->nlogs += st_step_logged(c, i);
    sh->loss = malloc(c->steps * sizeof *sh->loss);
    sh->eval = malloc(c->steps * sizeof *sh->eval);
    sh->heldout = malloc(c->steps * sizeof *sh->heldout);
    sh->snap = malloc(c->steps * sizeof *sh->snap);
    sh->p = malloc((sh->nlogs ? sh->nlogs : 1) * np * sizeof *sh->p);
    if (!sh->loss || !sh->eval || !sh->heldout || !sh->snap || !sh->p) {
        st_shadow_free(sh);
        return NULL;
    }
    return sh;
}

void st_shadow_logged(const st_shadow *sh, size_t step, nvfp4_log_row *row)
{
    row->ref_eval_loss = sh->eval[step];
    row->ref_heldout_loss = sh->heldout[step];
}

const float *st_shadow_params(const st_shadow *sh, size_t step) { return sh->p + sh->snap[step] * sh->np; }

/* ---- the trace file ------------------------------------------------------------- */
static const char SHADOW_MAGIC[8] = {'N', 'V', 'F', '4', 'S', 'H', 'D', '1'};

/* The arrays of the trace in file order, with their sizes in bytes. */
static size_t shadow_blobs(const st_shadow *sh, void **p, size_t *n)
{
    p[0] = sh->loss, n[0] = sh->steps * sizeof *sh->loss;
    p[1] = sh->eval, n[1] = sh->steps * sizeof *sh->eval;
    p[2] = sh->heldout, n[2] = sh->steps * sizeof *sh->heldout;
    p[3] = sh->snap, n[3] = sh->steps * sizeof *sh->snap;
    p[4] = sh->p, n[4] = sh->nlogs * sh->np * sizeof *sh->p;
    return 5;
}

/* The trace's bytes before its checksum line (a short write: m's error flag). */
static void compose_shadow(FILE *m, const void *ctx)
{
    const st_shadow *sh = ctx;
    void *p[5];
    size_t n[5], k = shadow_blobs(sh, p, n);
    bool ok = fwrite(SHADOW_MAGIC, 1, 8, m) == 8 && fwrite(&sh->key, sizeof sh->key, 1, m) == 1 &&
              fwrite(&sh->steps, sizeof sh->steps, 1, m) == 1 && fwrite(&sh->np, sizeof sh->np, 1, m) == 1 &&
              fwrite(&sh->nlogs, sizeof sh->nlogs, 1, m) == 1 && fwrite(&sh->sec, sizeof sh->sec, 1, m) == 1;
    for (size_t i = 0; ok && i < k; i++) ok = fwrite(p[i], 1, n[i], m) == n[i];
}

static nvfp4_status write_shadow(FILE *f, void *ctx, nvfp4_error *err)
{
    return st_write_summed(f, compose_shadow, ctx, "shadow trace", err);
}

nvfp4_status st_shadow_save(const st_shadow *sh, const char *path, nvfp4_error *err)
{
    return nvfp4_file_write_atomic_with(path, write_shadow, (void *)sh, err);
}

nvfp4_status st_shadow_load(const char *path, const nvfp4_train_cfg *key, st_shadow **out, nvfp4_error *err)
{
    *out = NULL;
    uint8_t *b = NULL;
    size_t len = 0;
    nvfp4_status s = nvfp4_file_read_all(path, (size_t)1 << 40, &b, &len, err);
    if (s != NVFP4_OK) return s;
    size_t head = 8 + sizeof *key + 3 * sizeof(size_t) + sizeof(double), summed = 0;
    if (len < head + ST_SUM_LINE_LEN || memcmp(b, SHADOW_MAGIC, 8) || !st_summed_ok(b, len, &summed)) {
        free(b);
        return nvfp4_error_set(err, NVFP4_EFORMAT,
                               "%s: not a sound shadow trace (damaged, truncated, or another file); remove it to "
                               "train that shadow again",
                               path);
    }
    if (memcmp(b + 8, key, sizeof *key)) {
        free(b);
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: the shadow trace is of another config; remove it", path);
    }
    size_t steps, np, nlogs;
    const uint8_t *q = b + 8 + sizeof *key;
    memcpy(&steps, q, sizeof steps);
    memcpy(&np, q + sizeof steps, sizeof np);
    memcpy(&nlogs, q + 2 * sizeof steps, sizeof nlogs);
    st_shadow *sh = st_shadow_alloc(key, np);
    if (!sh) {
        free(b);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory", path);
    }
    memcpy(&sh->sec, q + 3 * sizeof steps, sizeof sh->sec);
    void *p[5];
    size_t n[5], k = shadow_blobs(sh, p, n), body = head;
    for (size_t i = 0; i < k; i++) body += n[i];
    if (steps != sh->steps || nlogs != sh->nlogs || body != summed) {
        st_shadow_free(sh);
        free(b);
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: the shadow trace's sizes do not match its config", path);
    }
    for (size_t i = 0, at = head; i < k; at += n[i], i++) memcpy(p[i], b + at, n[i]);
    free(b);
    for (size_t i = 0; i < sh->steps; i++)
        if (sh->snap[i] != SIZE_MAX && sh->snap[i] >= sh->nlogs) {
            st_shadow_free(sh);
            return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: the shadow trace's weight index is out of range", path);
        }
    *out = sh;
    return NVFP4_OK;
}
