/* dirichlet.h - Dirichlet rows keyed by a seed (dirichlet.c: GSL's sampler,
 * kept apart because GSL's and OpenBLAS's CBLAS headers clash). Not public. */
#ifndef NVFP4_STUDY_DIRICHLET_H
#define NVFP4_STUDY_DIRICHLET_H

#include <stddef.h>
#include <stdint.h>

/* rows x k Dirichlet(alpha) draws into out, keyed by seed. */
void st_dirichlet_rows(uint64_t seed, size_t rows, size_t k, double alpha, double *out);

#endif
