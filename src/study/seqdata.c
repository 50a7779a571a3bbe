/*
 * seqdata.c - the sequences the GPT trains on (docs/studies.md, "The GPT"):
 *
 * - fortunes: the English text of Debian's `fortunes` package, read from its
 *   installed path (/usr/share/games/fortunes, a fixed list of its files in a
 *   fixed order), as bytes (vocabulary 256). Each file's first 90% goes to
 *   the training text, its last 10% to the held-out text, so both parts see
 *   every topic. Training sequences start at offsets drawn from Philox keyed
 *   by (seed, step, sequence); the held-out sequences are evenly spaced.
 * - markov: the order-2 Markov source with a Dirichlet(0.1) transition table
 *   and a computable entropy rate (the MLP LM studies' source).
 *
 * Every draw is keyed, so the batches do not depend on the thread count.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/seqdata.h"
#include "study/rng.h"
#include "study/dirichlet.h"

#define FORTUNES_DIR "/usr/share/games/fortunes"
#define SEQ_N_EVAL 32

/* The files of the Debian package `fortunes` (not fortunes-min or the
 * offensive set), ascii-art and the untranslated translate-me left out. */
static const char *const fortune_files[] = {
    "art",      "computers",   "cookie",   "definitions", "disclaimer",   "drugs",     "education", "ethnic",
    "food",     "goedel",      "humorists", "kids",       "knghtbrd",     "law",       "linux",     "linuxcookie",
    "love",     "magic",       "medicine", "men-women",   "miscellaneous", "news",     "paradoxum", "people",
    "perl",     "pets",        "platitudes", "politics",  "pratchett",    "science",   "songs-poems", "sports",
    "startrek", "tao",         "wisdom",   "work",        "zippy"};

struct st_seqdata {
    nvfp4_data kind;
    size_t V;
    double *P, entropy;
    uint8_t *train, *held;
    size_t ntrain, nheld;
};

/* ---- the Markov source ------------------------------------------------------------ */
void st_markov_build(uint64_t seed, size_t V, double *P, double *entropy)
{
    st_dirichlet_rows(seed, V * V, V, 0.1, P);
    /* stationary distribution of the pair chain by power iteration */
    double *pi = malloc(V * V * sizeof *pi), *nx = malloc(V * V * sizeof *nx);
    *entropy = 0.0;
    if (!pi || !nx) {
        free(pi);
        free(nx);
        return;
    }
    for (size_t s = 0; s < V * V; s++) pi[s] = 1.0 / (double)(V * V);
    for (int it = 0; it < 2000; it++) {
        memset(nx, 0, V * V * sizeof *nx);
        for (size_t a = 0; a < V; a++)
            for (size_t b = 0; b < V; b++)
                for (size_t c = 0; c < V; c++) nx[b * V + c] += pi[a * V + b] * P[(a * V + b) * V + c];
        double diff = 0.0;
        for (size_t s = 0; s < V * V; s++) {
            diff += fabs(nx[s] - pi[s]);
            pi[s] = 0.5 * (pi[s] + nx[s]); /* lazy chain: converges even if periodic */
        }
        if (diff < 1e-12) break;
    }
    double H = 0.0;
    for (size_t s = 0; s < V * V; s++) {
        double hs = 0.0;
        for (size_t c = 0; c < V; c++) {
            double p = P[s * V + c];
            if (p > 0) hs -= p * log(p);
        }
        H += pi[s] * hs;
    }
    *entropy = H;
    free(pi);
    free(nx);
}

uint32_t st_markov_next(const double *P, size_t V, uint32_t a, uint32_t b, double u)
{
    const double *row = P + ((size_t)a * V + b) * V;
    double c = 0.0;
    for (size_t i = 0; i < V; i++) {
        c += row[i];
        if (u < c) return (uint32_t)i;
    }
    return (uint32_t)(V - 1);
}

/* S + 1 tokens of the chain after a 16-token burn-in from a uniform pair. */
static void markov_sequence(const st_seqdata *d, uint64_t seed, uint64_t stream, uint64_t idx, size_t S,
                            uint32_t *tok, uint32_t *lab)
{
    uint64_t base = idx * (S + 32);
    uint32_t a = (uint32_t)(st_uniform(seed, stream, base) * (double)d->V);
    uint32_t b = (uint32_t)(st_uniform(seed, stream, base + 1) * (double)d->V);
    for (size_t j = 0; j < 16 + S + 1; j++) {
        uint32_t c = st_markov_next(d->P, d->V, a, b, st_uniform(seed, stream + 1, base + j));
        if (j >= 16 && j < 16 + S) tok[j - 16] = c;
        if (j >= 17) lab[j - 17] = c;
        a = b;
        b = c;
    }
}

/* ---- the corpus ------------------------------------------------------------------------ */
static nvfp4_status read_file(const char *path, uint8_t **buf, size_t *n, nvfp4_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return nvfp4_error_set(err, NVFP4_EIO,
                               "cannot read %s (%s): the GPT's text comes from the Debian package 'fortunes' "
                               "(apt-get install -y fortunes)",
                               path, strerror(errno));
    size_t cap = 1 << 16, len = 0;
    uint8_t *b = malloc(cap);
    while (b) {
        if (len == cap) {
            uint8_t *nb = realloc(b, cap * 2);
            if (!nb) {
                free(b);
                b = NULL;
                break;
            }
            b = nb;
            cap *= 2;
        }
        size_t got = fread(b + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    bool bad = ferror(f);
    fclose(f);
    if (!b) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory reading %s", path);
    if (bad) {
        free(b);
        return nvfp4_error_set(err, NVFP4_EIO, "read error in %s", path);
    }
    *buf = b;
    *n = len;
    return NVFP4_OK;
}

static bool append(uint8_t **dst, size_t *n, size_t *cap, const uint8_t *src, size_t k)
{
    if (*n + k > *cap) {
        size_t nc = (*n + k) * 2;
        uint8_t *p = realloc(*dst, nc);
        if (!p) return false;
        *dst = p;
        *cap = nc;
    }
    memcpy(*dst + *n, src, k);
    *n += k;
    return true;
}

static nvfp4_status load_fortunes(st_seqdata *d, size_t S, nvfp4_error *err)
{
    size_t ct = 0, ch = 0;
    /* NVFP4_FORTUNES_DIR: another copy of the package's files (tests) */
    const char *dir = getenv("NVFP4_FORTUNES_DIR");
    if (!dir || !*dir) dir = FORTUNES_DIR;
    for (size_t i = 0; i < sizeof fortune_files / sizeof *fortune_files; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, fortune_files[i]);
        uint8_t *b = NULL;
        size_t n = 0;
        nvfp4_status s = read_file(path, &b, &n, err);
        if (s != NVFP4_OK) return s;
        size_t cut = n - n / 10;
        bool ok = append(&d->train, &d->ntrain, &ct, b, cut) && append(&d->held, &d->nheld, &ch, b + cut, n - cut);
        free(b);
        if (!ok) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory reading the corpus");
    }
    if (d->nheld < S + 2 || d->ntrain < S + 2)
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: the corpus is shorter than one sequence", dir);
    return NVFP4_OK;
}

/* ---- the data set ----------------------------------------------------------------------- */
nvfp4_status st_seqdata_create(const nvfp4_train_cfg *cfg, st_seqdata **out, nvfp4_error *err)
{
    *out = NULL;
    st_seqdata *d = calloc(1, sizeof *d);
    if (!d) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    d->kind = cfg->data;
    d->V = cfg->model.vocab;
    nvfp4_status s = NVFP4_OK;
    if (d->kind == NVFP4_DATA_FORTUNES) {
        if (d->V != 256) s = nvfp4_error_set(err, NVFP4_EINVAL, "fortunes data: byte tokens need vocab 256");
        else s = load_fortunes(d, cfg->model.seq_len, err);
    } else if (d->V < 2 || d->V > 64) {
        s = nvfp4_error_set(err, NVFP4_EINVAL, "markov data: vocab must be 2..64 (its table has vocab^3 entries)");
    } else {
        d->P = malloc(d->V * d->V * d->V * sizeof *d->P);
        if (!d->P) s = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
        else st_markov_build(cfg->seed, d->V, d->P, &d->entropy);
    }
    if (s != NVFP4_OK) {
        st_seqdata_free(d);
        return s;
    }
    *out = d;
    return NVFP4_OK;
}

void st_seqdata_free(st_seqdata *d)
{
    if (!d) return;
    free(d->P);
    free(d->train);
    free(d->held);
    free(d);
}

static void text_window(const uint8_t *text, size_t off, size_t S, uint32_t *tok, uint32_t *lab)
{
    for (size_t j = 0; j < S; j++) {
        tok[j] = text[off + j];
        lab[j] = text[off + j + 1];
    }
}

void st_seqdata_batch(const st_seqdata *d, uint64_t seed, size_t step, size_t nseq, size_t S, uint32_t *tok,
                      uint32_t *lab)
{
    for (size_t i = 0; i < nseq; i++) {
        uint64_t idx = (uint64_t)step * nseq + i;
        if (d->kind == NVFP4_DATA_FORTUNES) {
            size_t span = d->ntrain - S - 1;
            size_t off = (size_t)(st_uniform(seed, ST_STREAM_GPT_WINDOW, idx) * (double)span);
            text_window(d->train, off < span ? off : span - 1, S, tok + i * S, lab + i * S);
        } else {
            markov_sequence(d, seed, ST_STREAM_MARKOV_TRAIN, idx, S, tok + i * S, lab + i * S);
        }
    }
}

size_t st_seqdata_n_eval(const st_seqdata *d)
{
    (void)d;
    return SEQ_N_EVAL;
}

void st_seqdata_eval(const st_seqdata *d, size_t i, size_t S, uint32_t *tok, uint32_t *lab)
{
    st_seqdata_heldout(d, i, SEQ_N_EVAL, S, tok, lab);
}

void st_seqdata_heldout(const st_seqdata *d, size_t i, size_t n, size_t S, uint32_t *tok, uint32_t *lab)
{
    if (d->kind == NVFP4_DATA_FORTUNES) {
        size_t span = d->nheld - S - 1;
        text_window(d->held, (size_t)((double)i * (double)span / (double)n), S, tok, lab);
    } else {
        /* a seed of its own: never one of the training sequences */
        markov_sequence(d, 0x4556414cu, ST_STREAM_MARKOV_EVAL, i, S, tok, lab);
    }
}

double st_seqdata_entropy(const st_seqdata *d) { return d->entropy; }

void st_seqdata_sizes(const st_seqdata *d, size_t *train, size_t *heldout)
{
    *train = d->ntrain;
    *heldout = d->nheld;
}
