/*
 * wtrack.c - the layer diagnostics that need memory across logged steps
 * (docs/studies.md "Layer diagnostics"): the oscillation of each linear's
 * quantized weights between codes (TetraJet-v2, arXiv 2510.27527), and its
 * persistent hot input channels (arXiv 2602.02047). Fed by lin_forward on
 * the logged steps only, with the Fprop operands it already holds; it
 * changes nothing of the run. Its state travels in checkpoints and clones
 * (st_wtrack_write / _read / _clone), so that a resumed or forked run
 * reports the bytes of the uninterrupted one.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/wtrack.h"

struct st_wtrack {
    /* oscillation: the last logged quantized weights, each element's last
     * nonzero direction of change (-1, 0, +1), and the logged-step index of
     * its last reversal plus 1 (0: never reversed) */
    size_t nw;
    float *prev_q;
    int8_t *last_dir;
    uint32_t *last_flip;
    uint32_t nw_logged;
    /* hot channels: per input channel, the logged steps it was in the top
     * ST_HOT_FRAC by amax; amax and a mark as scratch */
    size_t nin;
    uint32_t *hot_count;
    float *amax;
    uint8_t *mark;
    uint32_t nx_logged;
};

void st_wtrack_free(st_wtrack *t)
{
    if (!t) return;
    free(t->prev_q);
    free(t->last_dir);
    free(t->last_flip);
    free(t->hot_count);
    free(t->amax);
    free(t->mark);
    free(t);
}

void st_wtrack_free_all(st_wtrack **t, size_t n)
{
    if (!t) return;
    for (size_t i = 0; i < n; i++) st_wtrack_free(t[i]);
    free(t);
}

void st_wtrack_attach(st_wtrack ***tracks, size_t n, lin_diag *dg)
{
    if (!*tracks) *tracks = calloc(n, sizeof **tracks);
    for (size_t l = 0; l < n; l++) {
        if (*tracks && !(*tracks)[l]) (*tracks)[l] = calloc(1, sizeof(st_wtrack));
        dg[l].track = *tracks ? (*tracks)[l] : NULL;
        dg[l].osc_w = NAN;
        dg[l].hot_persist = NAN;
    }
}

/* (Re)sizes the weight state to nw elements; false when out of memory. */
static bool weights_sized(st_wtrack *t, size_t nw)
{
    if (t->prev_q && t->nw == nw) return true;
    free(t->prev_q);
    free(t->last_dir);
    free(t->last_flip);
    t->prev_q = malloc(nw * sizeof *t->prev_q);
    t->last_dir = calloc(nw, sizeof *t->last_dir);
    t->last_flip = calloc(nw, sizeof *t->last_flip);
    t->nw = nw;
    t->nw_logged = 0;
    return t->prev_q && t->last_dir && t->last_flip;
}

double st_wtrack_weights(st_wtrack *t, const float *q, size_t nw)
{
    if (!weights_sized(t, nw)) {
        t->nw = 0;
        return NAN;
    }
    uint32_t k = t->nw_logged++; /* this logged step's index */
    if (k == 0) {
        memcpy(t->prev_q, q, nw * sizeof *q);
        return 0.0;
    }
    size_t osc = 0;
    for (size_t i = 0; i < nw; i++) {
        int8_t d = (int8_t)((q[i] > t->prev_q[i]) - (q[i] < t->prev_q[i]));
        if (d) {
            if (d == -t->last_dir[i]) t->last_flip[i] = k + 1; /* reversed here */
            t->last_dir[i] = d;
        }
        t->prev_q[i] = q[i];
        /* reversed at one of the last ST_OSC_WINDOW logged steps (k-W, k] */
        osc += t->last_flip[i] && k + 1 - t->last_flip[i] < ST_OSC_WINDOW;
    }
    return (double)osc / (double)nw;
}

static bool inputs_sized(st_wtrack *t, size_t in)
{
    if (t->hot_count && t->nin == in) return true;
    free(t->hot_count);
    free(t->amax);
    free(t->mark);
    t->hot_count = calloc(in, sizeof *t->hot_count);
    t->amax = malloc(in * sizeof *t->amax);
    t->mark = malloc(in);
    t->nin = in;
    t->nx_logged = 0;
    return t->hot_count && t->amax && t->mark;
}

size_t st_hot_k(size_t in)
{
    size_t k = (size_t)ceil(ST_HOT_FRAC * (double)in);
    return k ? k : 1;
}

double st_wtrack_inputs(st_wtrack *t, const float *x, size_t rows, size_t in)
{
    if (!in || !inputs_sized(t, in)) {
        t->nin = 0;
        return NAN;
    }
    for (size_t j = 0; j < in; j++) t->amax[j] = 0.0f;
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < in; j++) {
            float a = fabsf(x[r * in + j]);
            t->amax[j] = a > t->amax[j] ? a : t->amax[j]; /* NaN ignored */
        }
    /* the top K by amax, ties to the lower channel index */
    memset(t->mark, 0, in);
    size_t K = st_hot_k(in);
    for (size_t n = 0; n < K; n++) {
        size_t best = in;
        for (size_t j = 0; j < in; j++)
            if (!t->mark[j] && (best == in || t->amax[j] > t->amax[best])) best = j;
        t->mark[best] = 1;
    }
    uint32_t logged = ++t->nx_logged;
    size_t persist = 0;
    for (size_t j = 0; j < in; j++) {
        t->hot_count[j] += t->mark[j];
        persist += t->hot_count[j] == logged;
    }
    return (double)persist;
}

/* ---- checkpoints and clones: the state that persists across logged steps ------ */

/* Per linear: a presence byte, then nw, nw_logged, prev_q, last_dir,
 * last_flip, nin, nx_logged, hot_count (amax and mark are scratch). */
static bool write_one(const st_wtrack *t, FILE *f)
{
    uint8_t present = t != NULL;
    if (fwrite(&present, 1, 1, f) != 1) return false;
    if (!t) return true;
    size_t nw = t->prev_q ? t->nw : 0, nin = t->hot_count ? t->nin : 0;
    /* the arrays only when they exist: fwrite of a NULL buffer is undefined even for 0 items */
    bool ok = fwrite(&nw, sizeof nw, 1, f) == 1 && fwrite(&t->nw_logged, sizeof t->nw_logged, 1, f) == 1;
    ok = ok && (!nw || (fwrite(t->prev_q, sizeof *t->prev_q, nw, f) == nw && fwrite(t->last_dir, 1, nw, f) == nw &&
                        fwrite(t->last_flip, sizeof *t->last_flip, nw, f) == nw));
    ok = ok && fwrite(&nin, sizeof nin, 1, f) == 1 && fwrite(&t->nx_logged, sizeof t->nx_logged, 1, f) == 1;
    return ok && (!nin || fwrite(t->hot_count, sizeof *t->hot_count, nin, f) == nin);
}

bool st_wtrack_write(st_wtrack *const *tracks, size_t n, FILE *f)
{
    uint8_t any = tracks != NULL;
    if (fwrite(&any, 1, 1, f) != 1) return false;
    for (size_t l = 0; any && l < n; l++)
        if (!write_one(tracks[l], f)) return false;
    return true;
}

static st_wtrack *read_one(FILE *f, size_t max, bool *ok)
{
    uint8_t present;
    if (fread(&present, 1, 1, f) != 1 || present > 1) return *ok = false, NULL;
    if (!present) return NULL;
    st_wtrack *t = calloc(1, sizeof *t);
    size_t nw = 0, nin = 0;
    uint32_t logged = 0;
    *ok = t && fread(&nw, sizeof nw, 1, f) == 1 && fread(&logged, sizeof logged, 1, f) == 1 && nw <= max;
    if (*ok && nw) {
        *ok = weights_sized(t, nw) && fread(t->prev_q, sizeof *t->prev_q, nw, f) == nw &&
              fread(t->last_dir, 1, nw, f) == nw && fread(t->last_flip, sizeof *t->last_flip, nw, f) == nw;
        t->nw_logged = logged;
    }
    *ok = *ok && fread(&nin, sizeof nin, 1, f) == 1 && fread(&logged, sizeof logged, 1, f) == 1 && nin <= max;
    if (*ok && nin) {
        *ok = inputs_sized(t, nin) && fread(t->hot_count, sizeof *t->hot_count, nin, f) == nin;
        t->nx_logged = logged;
    }
    return t;
}

bool st_wtrack_read(st_wtrack ***tracks, size_t n, size_t max, FILE *f)
{
    uint8_t any;
    if (fread(&any, 1, 1, f) != 1 || any > 1) return false;
    if (!any) return true;
    st_wtrack **t = calloc(n ? n : 1, sizeof *t);
    bool ok = t != NULL;
    for (size_t l = 0; ok && l < n; l++) t[l] = read_one(f, max, &ok);
    if (!ok) {
        st_wtrack_free_all(t, n);
        return false;
    }
    st_wtrack_free_all(*tracks, n);
    *tracks = t;
    return true;
}

static st_wtrack *clone_one(const st_wtrack *s, bool *ok)
{
    if (!s) return NULL;
    st_wtrack *t = calloc(1, sizeof *t);
    if (!t) return *ok = false, NULL;
    if (s->prev_q) {
        *ok = *ok && weights_sized(t, s->nw);
        if (*ok) {
            memcpy(t->prev_q, s->prev_q, s->nw * sizeof *s->prev_q);
            memcpy(t->last_dir, s->last_dir, s->nw);
            memcpy(t->last_flip, s->last_flip, s->nw * sizeof *s->last_flip);
            t->nw_logged = s->nw_logged;
        }
    }
    if (s->hot_count) {
        *ok = *ok && inputs_sized(t, s->nin);
        if (*ok) {
            memcpy(t->hot_count, s->hot_count, s->nin * sizeof *s->hot_count);
            t->nx_logged = s->nx_logged;
        }
    }
    return t;
}

bool st_wtrack_clone(st_wtrack ***dst, st_wtrack *const *src, size_t n)
{
    if (!src) return true;
    st_wtrack **t = calloc(n ? n : 1, sizeof *t);
    bool ok = t != NULL;
    for (size_t l = 0; ok && l < n; l++) t[l] = clone_one(src[l], &ok);
    if (!ok) {
        st_wtrack_free_all(t, n);
        return false;
    }
    st_wtrack_free_all(*dst, n);
    *dst = t;
    return true;
}
