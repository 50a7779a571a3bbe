/* philox.c - cuRAND-compatible Philox4x32-10 stream (curand_kernel.h,
 * curand_philox4x32_x.h, CUDA 13.0) over the shared block function. */
#include "nvfp4/philox.h"

#include "core/philox.h"

void nvfp4_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    nvfp4_core_philox4x32_10(ctr, key, out);
}

/* ctr += n, transcribing cuRAND's Philox_State_Incr(s, n) including its
 * carry test (which drops a carry when nhi wraps: kept for bit-compatibility). */
static void ctr_add(uint32_t ctr[4], uint64_t n)
{
    uint32_t nlo = (uint32_t)n, nhi = (uint32_t)(n >> 32);
    ctr[0] += nlo;
    if (ctr[0] < nlo) nhi++;
    ctr[1] += nhi;
    if (nhi <= ctr[1]) return;
    if (++ctr[2]) return;
    ++ctr[3];
}

/* ctr.zw += n (cuRAND's Philox_State_Incr_hi). */
static void ctr_add_hi(uint32_t ctr[4], uint64_t n)
{
    uint32_t nlo = (uint32_t)n, nhi = (uint32_t)(n >> 32);
    ctr[2] += nlo;
    if (ctr[2] < nlo) nhi++;
    ctr[3] += nhi;
}

static void refresh(nvfp4_philox_stream *st)
{
    nvfp4_core_philox4x32_10(st->ctr, st->key, st->output);
}

void nvfp4_philox_skipahead(nvfp4_philox_stream *st, uint64_t n)
{
    st->state += (unsigned)(n & 3u);
    n /= 4;
    if (st->state > 3u) {
        n += 1;
        st->state -= 4u;
    }
    ctr_add(st->ctr, n);
    refresh(st);
}

void nvfp4_philox_skipahead_sequence(nvfp4_philox_stream *st, uint64_t n)
{
    ctr_add_hi(st->ctr, n);
    refresh(st);
}

void nvfp4_philox_init(nvfp4_philox_stream *st, uint64_t seed, uint64_t subsequence, uint64_t offset)
{
    st->ctr[0] = st->ctr[1] = st->ctr[2] = st->ctr[3] = 0u;
    st->key[0] = (uint32_t)seed;
    st->key[1] = (uint32_t)(seed >> 32);
    st->state = 0u;
    ctr_add_hi(st->ctr, subsequence);
    nvfp4_philox_skipahead(st, offset);
}

uint32_t nvfp4_philox_next(nvfp4_philox_stream *st)
{
    uint32_t r = st->output[st->state++];
    if (st->state == 4u) {
        ctr_add(st->ctr, 1);
        refresh(st);
        st->state = 0u;
    }
    return r;
}

void nvfp4_philox_next4(nvfp4_philox_stream *st, uint32_t out[4])
{
    /* curand4: the next four words in stream order, then one counter step. */
    uint32_t cur[4] = {st->output[0], st->output[1], st->output[2], st->output[3]};
    ctr_add(st->ctr, 1);
    refresh(st);
    for (unsigned i = 0; i < 4u; i++) {
        unsigned j = st->state + i;
        out[i] = j < 4u ? cur[j] : st->output[j - 4u];
    }
}

void nvfp4_sr_block_bytes(uint64_t seed, uint64_t offset, uint64_t block, uint8_t bytes[16])
{
    nvfp4_core_sr_block_bytes(seed, offset, block, bytes);
}
