/*
 * nvfp4_mpi.c - nvfp4-mpi, the nvfp4 command with the study runner spread
 * over MPI ranks: `mpirun -np N nvfp4-mpi study run ...` runs the (arm, seed)
 * jobs k with k % N == rank on each rank, and rank 0 gathers their outputs
 * and writes the files, the same bytes as one process (docs/studies.md,
 * "MPI"). Built by mk/mpi.mk where mpicc exists; every other command runs
 * as in nvfp4 (on each rank).
 */
#include <limits.h>
#include <mpi.h>
#include <stdlib.h>

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

/* Logical AND of ok over the ranks; ctx counts this rank's calls. */
static bool all_ranks_ok(void *ctx, bool ok)
{
    int mine = ok, all = 0;
    ++*(int *)ctx;
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
    static int gate_calls;
    dist.ctx = &gate_calls;
    nvfp4_cli_study_dist = &dist;
    int rc = nvfp4_cli_main(argc, argv), worst = rc;
    /* A rank that never reached the study runner's start gate (it failed
     * before, or ran another command) passes it here, so the ranks waiting
     * there stop too instead of waiting for this rank's jobs. */
    if (gate_calls == 0) all_ranks_ok(&gate_calls, rc == 0);
    /* every rank exits with the worst status, so mpirun reports a failure */
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return worst;
}
