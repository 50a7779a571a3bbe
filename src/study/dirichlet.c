/* dirichlet.c - Dirichlet draws for the Markov source of the LM study, from
 * GSL (kept in its own file: gsl_randist.h and OpenBLAS's cblas.h declare the
 * same CBLAS enums and cannot be included together). */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>

#include "study/dirichlet.h"

void st_dirichlet_rows(uint64_t seed, size_t rows, size_t k, double alpha, double *out)
{
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    double *a = malloc(k * sizeof *a);
    if (!g || !a) {
        for (size_t i = 0; i < rows * k; i++) out[i] = 1.0 / (double)k;
    } else {
        gsl_rng_set(g, (unsigned long)(seed * 2654435761u + 12345u));
        for (size_t i = 0; i < k; i++) a[i] = alpha;
        for (size_t s = 0; s < rows; s++) gsl_ran_dirichlet(g, k, a, out + s * k);
    }
    free(a);
    if (g) gsl_rng_free(g);
}
