/* fuzz_labconfig.c - libFuzzer target for the lab's study config parser
 * (st_config_parse, docs/studies.md "Study configs"): any bytes either load
 * into a config whose every arm composes into a job config that can train
 * (the checks of config.c hold), or fail with a message naming the file;
 * never a crash, a leak or a hang. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "study/studies.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nvfp4_error err;
    err.message[0] = '\0';
    st_config *sc = st_config_parse((const char *)data, size, "fuzz.json", &err);
    if (!sc) {
        if (strncmp(err.message, "fuzz.json", 9) != 0) abort();
        return 0;
    }
    for (size_t a = 0; a < st_config_narms(sc); a++) {
        for (int q = 0; q < 2; q++) {
            nvfp4_train_cfg t;
            st_config_job_cfg(sc, a, q ? st_config_quick_steps(sc) : st_config_steps(sc), q, &t);
            const nvfp4_model_cfg *m = &t.model;
            /* what the loader promises: nothing that cannot train */
            if (!m->d_model || !(t.lr > 0) || !(t.init_scale > 0) || t.batch == 0) abort();
            if (t.opt == NVFP4_OPT_ADAM && !(t.beta1 < 1 && t.beta2 < 1 && t.adam_eps > 0)) abort();
            if (m->arch == NVFP4_ARCH_GPT && (!m->n_heads || m->d_model % m->n_heads || !m->vocab || !m->seq_len))
                abort();
        }
    }
    char *canon = st_config_canonical(sc);
    if (!canon) abort();
    free(canon);
    st_config_free(sc);
    return 0;
}
