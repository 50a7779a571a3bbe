/*
 * nvfp4/suite.h - golden suites: generate one (hard cases and seeded random
 * tensors by TestFloat-style level, each a golden bundle, plus a MANIFEST
 * with every file's sha256), search which case kills each catalogued mutant
 * (the mutation report), and verify a kernel's outputs against a suite with
 * a structured result rendered as text, JSON, TAP or JUnit XML.
 *
 * `nvfp4 golden` and `nvfp4 verify --suite` print what these calls return,
 * and the Python package (nvfp4kit.golden_suite, nvfp4kit.verify_suite)
 * calls them in-process, so both write the same bytes (docs/golden.md,
 * docs/verify.md "Suite verify", docs/file-formats.md section 6).
 */
#ifndef NVFP4_SUITE_H
#define NVFP4_SUITE_H

#include "nvfp4/common.h"
#include "nvfp4/layout.h"
#include "nvfp4/quant.h"
#include "nvfp4/verify.h"

NVFP4_BEGIN_DECLS

/* ---- generation ------------------------------------------------------------------------------- */

/* A line of progress or a note ("edge-e2m1-ties.safetensors (16 x 48)", a
 * case skipped for the recipe, pairs of candidates no case separates), no
 * command prefix and no newline; the CLI writes them to stderr. */
typedef void (*nvfp4_suite_log_fn)(void *ctx, const char *line);

typedef struct {
    const char *suite;        /* edge, random, shapes, mutants, grouped or all (nvfp4_suite_name_valid) */
    const char *recipe;       /* default "te" */
    int level;                /* 1 (default) or 2: more cases, larger tensors */
    uint64_t seed;            /* default 1: the random data, and the Philox stream under SR (case k: offset 4k) */
    nvfp4_rounding round;     /* NVFP4_RN (default) or NVFP4_SR */
    const char *format;       /* NULL: safetensors; else a name nvfp4_file_format_parse takes, recorded as given */
    nvfp4_scale_layout layout; /* of scale_swizzled; default 128x4 */
    bool force;               /* replace an existing folder that is not a suite of ours */
    bool global_scale_inverted; /* the recipe's global scale handed over inverted (nvfp4_quant_opts) */
    nvfp4_suite_log_fn log;   /* NULL: silent */
    void *log_ctx;
} nvfp4_suite_opts;

void nvfp4_suite_opts_init(nvfp4_suite_opts *o);

/* True for the suite names edge, random, shapes, mutants, grouped and all. */
bool nvfp4_suite_name_valid(const char *name);

/* Writes the suite into dir: one bundle per case (rowwise and columnwise,
 * padding on; suite grouped: grouped bundles, rowwise, RN, 128x4, no
 * padding) and dir/MANIFEST. The suite is built in a hidden folder beside
 * dir and swapped into place when complete; an existing dir must be empty
 * or a suite of ours (a MANIFEST listing all it holds) unless o->force.
 * Every byte depends only on the options (no time, no path). NVFP4_OK, or a
 * status with err naming the problem (nothing of a failed run stays). */
nvfp4_status nvfp4_suite_generate(const char *dir, const nvfp4_suite_opts *o, nvfp4_error *err);

/* The mutation report (`nvfp4 golden --mutants`): the suite o->suite (NULL:
 * all) generated in memory, then for every catalogued mutant of the recipe
 * at this rounding the case that kills it and the causes verify names,
 * the separating cases, the pairs not separated and the candidates not
 * singled out (suite grouped: each grouped mutant, killed where a grouped
 * golden differs from its outputs and verify names it, or not applicable).
 * *text (malloc'd, nvfp4_free) is the report as text, or JSON with json;
 * *verdict is 0 when every mutant is killed and named, 1 otherwise. */
nvfp4_status nvfp4_suite_mutation_report(const nvfp4_suite_opts *o, bool json, char **text, int *verdict,
                                         nvfp4_error *err);

/* ---- verification ----------------------------------------------------------------------------- */

typedef enum {
    NVFP4_CASE_MISSING = -1, /* no output for the case in the actual folder */
    NVFP4_CASE_MATCH = 0,
    NVFP4_CASE_MISMATCH = 1,
    NVFP4_CASE_ERROR = 2     /* the golden or the output could not be read, or the golden was altered */
} nvfp4_case_status;

typedef struct {
    nvfp4_verify_opts verify; /* components, max_errors (at most 3 are kept per case) */
    nvfp4_vcomponent lone;    /* a lone .npy output is taken as this component (default data) */
    bool require_all;         /* a missing output fails the suite (else it is skipped) */
    /* called before each case (the CLI draws its progress line), or NULL */
    void (*progress)(void *ctx, size_t done, size_t total, const char *case_name);
    void *progress_ctx;
} nvfp4_suite_verify_opts;

void nvfp4_suite_verify_opts_init(nvfp4_suite_verify_opts *o);

typedef struct nvfp4_suite_result nvfp4_suite_result;

/* Every case of the suite (its folder or its MANIFEST) against what the
 * kernel wrote for it in actual_dir (OUTS/CASE.safetensors, OUTS/CASE/ or
 * OUTS/CASE.npy). Each golden's sha256 is checked against the MANIFEST
 * before it is used. An unreadable case is a case with status ERROR, never
 * a failed call: NVFP4_OK with *res set whenever the MANIFEST was read and
 * actual_dir is a folder; else a status with err set and *res NULL. */
nvfp4_status nvfp4_suite_verify(const char *suite, const char *actual_dir, const nvfp4_suite_verify_opts *o,
                                nvfp4_suite_result **res, nvfp4_error *err);
void nvfp4_suite_result_free(nvfp4_suite_result *r);

/* 0 every case matches (missing ones skipped unless require_all), 1 one
 * differs (or is missing with require_all), 2 a case is unreadable or the
 * actual folder holds no output for any case. */
int nvfp4_suite_result_verdict(const nvfp4_suite_result *r);
/* Why the verdict is 2 ("3 of 40 cases could not be read ...", "OUTS holds
 * no output for any case of DIR"), or NULL. */
const char *nvfp4_suite_result_message(const nvfp4_suite_result *r);
/* counts[4]: matched, differing, missing, unreadable. */
void nvfp4_suite_result_counts(const nvfp4_suite_result *r, size_t counts[4]);

/* The cases, in MANIFEST order: name, status, the kernel file compared
 * (NULL when missing), a one-line summary (its most specific cause) or
 * NULL, the error of an unreadable case or NULL, and the reports of its
 * orientations as verify --json gives them (per component counts, the
 * causes with step and status proven/consistent) or NULL. */
size_t nvfp4_suite_result_cases(const nvfp4_suite_result *r);
const char *nvfp4_suite_result_case_name(const nvfp4_suite_result *r, size_t i);
nvfp4_case_status nvfp4_suite_result_case_status(const nvfp4_suite_result *r, size_t i);
const char *nvfp4_suite_result_case_actual(const nvfp4_suite_result *r, size_t i);
const char *nvfp4_suite_result_case_summary(const nvfp4_suite_result *r, size_t i);
const char *nvfp4_suite_result_case_error(const nvfp4_suite_result *r, size_t i);
char *nvfp4_suite_result_case_json(const nvfp4_suite_result *r, size_t i); /* JSON array (nvfp4_free), or NULL */

typedef enum {
    NVFP4_SUITE_TEXT = 0,  /* the report of `verify --suite` (without its final "verdict:" line) */
    NVFP4_SUITE_JSON = 1,  /* `verify --suite --json` */
    NVFP4_SUITE_TAP = 2,   /* `verify --suite --tap` */
    NVFP4_SUITE_JUNIT = 3  /* the file `verify --suite --junit FILE` writes */
} nvfp4_suite_format;

/* The result rendered as the CLI prints it (malloc'd, free with nvfp4_free; NULL when out of memory). */
char *nvfp4_suite_result_render(const nvfp4_suite_result *r, nvfp4_suite_format f);

/* The JUnit XML written to path atomically (a temporary name, then rename). */
nvfp4_status nvfp4_suite_result_write_junit(const nvfp4_suite_result *r, const char *path, nvfp4_error *err);

/* ---- golden packs ----------------------------------------------------------------------------- */
/* A golden pack (`nvfp4 golden --pack DIR`, docs/verify.md "Golden packs"):
 * language-neutral conformance vectors for implementers without this tool:
 * the E2M1, E4M3, UE8M0 and UE5M3 codecs at every code, tie, subnormal and
 * saturation input (JSON), stochastic-rounding tensors with each element's
 * random byte (sr.json), golden suites per recipe and scale layout (.npy
 * bundles), a README.md that explains every file, pack.json (the index)
 * and a MANIFEST. */
typedef struct {
    const char *recipe;     /* NULL: the default suites (te, torchao, modelopt, mxfp4-rceil, mxfp8,
                               te-ue5m3); a recipe: its edge cases (RN, SR) and odd shapes in each layout */
    bool force;             /* replace an existing folder that is not a suite or pack of ours */
    nvfp4_suite_log_fn log; /* progress lines, or NULL */
    void *log_ctx;
} nvfp4_pack_opts;

void nvfp4_pack_opts_init(nvfp4_pack_opts *o);

/* Writes the pack into dir, built aside and swapped into place as a suite
 * is (an existing dir must be empty or ours unless o->force). */
nvfp4_status nvfp4_pack_generate(const char *dir, const nvfp4_pack_opts *o, nvfp4_error *err);

/* True when path is a golden pack (a folder holding pack.json) or its MANIFEST. */
bool nvfp4_pack_is(const char *path);

/* A kernel's outputs in actual_dir (laid out like the pack: OUTS/e2m1.json
 * with its own output columns, OUTS/suite-.../CASE...) against the pack.
 * Every file of the pack is first checked against its MANIFEST. *text
 * (nvfp4_free) is the report; *verdict 0 every part present matches (parts
 * missing from actual_dir are skipped unless require_all), 1 one differs, 2
 * the pack was altered, a file could not be read, or actual_dir holds none
 * of the pack's parts. A status (err set) when the pack's index or MANIFEST
 * cannot be read or actual_dir is not a folder. */
/* pack: the pack's folder or its MANIFEST. o (NULL: defaults) is what each
 * of the pack's suites is verified with (components, require_all, which
 * also fails a vector file missing from actual_dir; progress). */
nvfp4_status nvfp4_pack_verify(const char *pack, const char *actual_dir, const nvfp4_suite_verify_opts *o,
                               char **text, int *verdict, nvfp4_error *err);

NVFP4_END_DECLS

#endif /* NVFP4_SUITE_H */
