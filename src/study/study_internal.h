/* study_internal.h - what the files of src/study/ share (not public). */
#ifndef NVFP4_STUDY_INTERNAL_H
#define NVFP4_STUDY_INTERNAL_H

#include <stdio.h>

#include "nvfp4/study.h"

nvfp4_block sq_block_resolved(const nvfp4_sq_cfg *c);
nvfp4_sq_scale sq_scale_resolved(const nvfp4_sq_cfg *c);
const char *sq_block_name(nvfp4_block b);
uint64_t sq_derive(uint64_t seed, uint32_t a, uint32_t b, uint32_t c, uint32_t tag);

/* Standard normal and uniform draws keyed by (seed, stream, index). */
double st_normal(uint64_t seed, uint64_t stream, uint64_t index);
double st_uniform(uint64_t seed, uint64_t stream, uint64_t index);

void st_dirichlet_rows(uint64_t seed, size_t rows, size_t k, double alpha, double *out);

/* Output helpers (output.c). */
bool st_mkdir_p(const char *dir, nvfp4_error *err);
FILE *st_open_tmp(const char *dir, const char *name, char *tmp, size_t tmpn, nvfp4_error *err);
nvfp4_status st_commit_tmp(FILE *f, const char *tmp, const char *dir, const char *name, nvfp4_error *err);
bool st_have_gnuplot(void);
/* mean and half-width of the 95% t confidence interval */
void st_mean_ci(const double *x, size_t n, double *mean, double *ci);

#endif
