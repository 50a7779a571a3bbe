/* fuzz_checkpoint.c - libFuzzer target for the lab's run checkpoints
 * (nvfp4_run_load, docs/studies.md "Fingerprints, locks and checksums").
 * The input's first byte chooses the mode: odd, the rest is a checkpoint
 * body to which the target appends its correct SHA-256 line (so the fuzzer
 * reaches the parser behind the checksum); even, the rest is the file as
 * is (the checksum must refuse it unless it is sound). Either the run loads,
 * or NVFP4_EFORMAT / NVFP4_EINVAL / NVFP4_ENOMEM comes back with a message
 * naming the file and no run; never a crash or a leak. A body whose model
 * sizes would need more than the fuzzer's memory is skipped (a real
 * checkpoint holds the state those sizes need, and the loader checks that
 * the file is long enough before it allocates the logs). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvfp4/io.h"
#include "nvfp4/study.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool small_model(const uint8_t *body, size_t n)
{
    nvfp4_train_cfg c;
    if (n < 8 + sizeof c) return true; /* refused before any allocation */
    memcpy(&c, body + 8, sizeof c);
    const nvfp4_model_cfg *m = &c.model;
    size_t dims[] = {m->d_in, m->d_model, m->d_hidden, m->d_out, m->vocab, m->ctx, m->emb_dim, m->seq_len, c.batch};
    for (size_t i = 0; i < sizeof dims / sizeof *dims; i++)
        if (dims[i] > 256) return false;
    return m->n_blocks <= 4 && (m->vocab == 0 || m->vocab <= 64);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    bool fix = data[0] & 1;
    const uint8_t *body = data + 1;
    size_t n = size - 1;
    if (!small_model(body, n)) return 0;
    char path[64];
    snprintf(path, sizeof path, "/tmp/fuzz_checkpoint.%ld", (long)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(body, 1, n, f);
    if (fix) {
        char hex[65];
        nvfp4_sha256_hex(body, n, hex);
        fprintf(f, "%s\n", hex);
    }
    fclose(f);
    nvfp4_run *r = (nvfp4_run *)&r;
    nvfp4_error err;
    err.message[0] = '\0';
    nvfp4_status s = nvfp4_run_load(path, &r, &err);
    unlink(path);
    if (s == NVFP4_OK) {
        if (!r) abort();
        nvfp4_run_free(r);
        return 0;
    }
    if (r) abort();
    if (!strstr(err.message, path) && s != NVFP4_ENOMEM) abort();
    return 0;
}
