/*
 * nvfp4_mpi.c - nvfp4-mpi, the nvfp4 command with the study runner spread
 * over MPI ranks: `mpirun -np N nvfp4-mpi study run ...` runs the (arm, seed)
 * jobs k with k % N == rank on each rank, and rank 0 gathers their outputs
 * and writes the files, the same bytes as one process (docs/studies.md,
 * "MPI"). Built by mk/mpi.mk where mpicc exists; every other command runs
 * as in nvfp4 (on each rank).
 */
#include <cblas.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "nvfp4/study.h"

int nvfp4_cli_main(int argc, char **argv); /* tools/nvfp4.c's main, renamed by mk/mpi.mk */
extern const nvfp4_study_dist *nvfp4_cli_study_dist; /* tools/cmd_study.c */

enum { TAG_LEN = 1, TAG_DATA = 2, CHUNK = 1 << 30 };

/* One job's output bytes from rank `from` to rank 0, in chunks of at most
 * 1 GiB (MPI counts are int). */
static bool move_to_root(void *ctx, int from, char **buf, size_t *len)
{
    int rank;
    (void)ctx;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    unsigned long long n = *len;
    if (rank == from) {
        if (MPI_Send(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, TAG_LEN, MPI_COMM_WORLD) != MPI_SUCCESS) return false;
        for (size_t off = 0; off < *len; off += CHUNK) {
            int k = (int)(*len - off < CHUNK ? *len - off : CHUNK);
            if (MPI_Send(*buf + off, k, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD) != MPI_SUCCESS) return false;
        }
        return true;
    }
    if (MPI_Recv(&n, 1, MPI_UNSIGNED_LONG_LONG, from, TAG_LEN, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return false;
    *buf = malloc(n ? n : 1);
    *len = n;
    bool ok = *buf != NULL;
    for (size_t off = 0; off < n; off += CHUNK) {
        int k = (int)(n - off < CHUNK ? n - off : CHUNK);
        char *dst = ok ? *buf + off : NULL;
        if (MPI_Recv(dst, ok ? k : 0, MPI_BYTE, from, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            ok = false;
    }
    return ok;
}

/* The gate's state: how many times this rank passed it, and whether the
 * pass is main's stand-in for a rank that never reached the runner (which
 * then only keeps the collectives in step). */
typedef struct {
    int calls;
    bool stand_in;
} gate_state;

enum { KERNEL_NAME = 64 };

/* Whether this rank runs rank 0's OpenBLAS kernel (a study's files depend
 * on it: docs/studies.md, "Reproducibility"); where not, it says so
 * (report). Collective: rank 0's name is broadcast, nothing allocated. */
static bool same_blas_kernel(int rank, bool report)
{
    char mine[KERNEL_NAME] = {0}, root[KERNEL_NAME] = {0};
    const char *core = openblas_get_corename();
    snprintf(mine, sizeof mine, "%s", core ? core : "");
    memcpy(root, mine, sizeof root);
    if (MPI_Bcast(root, KERNEL_NAME, MPI_CHAR, 0, MPI_COMM_WORLD) != MPI_SUCCESS) return false;
    bool same = strncmp(root, mine, KERNEL_NAME) == 0;
    if (!same && report)
        fprintf(stderr,
                "nvfp4-mpi: rank %d runs OpenBLAS's %s kernel and rank 0 %s, and a study's files depend on the "
                "kernel: give every rank the same OPENBLAS_CORETYPE\n",
                rank, mine, root);
    return same;
}

/* The runner's gate: true when every rank passed ok = true and all run
 * one OpenBLAS kernel. */
static bool all_ranks_ok(void *ctx, bool ok)
{
    gate_state *g = ctx;
    int rank, mine, all = 0;
    ++g->calls;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    mine = same_blas_kernel(rank, !g->stand_in) && ok;
    if (MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD) != MPI_SUCCESS) return false;
    return all != 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    static nvfp4_study_dist dist;
    MPI_Comm_rank(MPI_COMM_WORLD, &dist.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &dist.size);
    dist.move_to_root = move_to_root;
    dist.all_ok = all_ranks_ok;
    static gate_state gate;
    dist.ctx = &gate;
    nvfp4_cli_study_dist = &dist;
    int rc = nvfp4_cli_main(argc, argv), worst = rc;
    /* A rank that never reached the study runner's start gate (it failed
     * before, or ran another command) passes it here, so the ranks waiting
     * there stop too instead of waiting for this rank's jobs. */
    if (gate.calls == 0) {
        gate.stand_in = true;
        all_ranks_ok(&gate, rc == 0);
    }
    /* every rank exits with the worst status, so mpirun reports a failure */
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return worst;
}
