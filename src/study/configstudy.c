/*
 * configstudy.c - studies defined by JSON configs (config.c): the built-in
 * ones whose arms are shipped as studies/<name>.json (compiled in by
 * mk/study.mk), and those loaded from a file (`nvfp4 study run --config`).
 * Both run through the training-study runner (runner.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/io.h"

#include "study/studies.h"

#include "study_configs.h"

const char *st_builtin_config(const char *name)
{
    for (size_t i = 0; name && i < sizeof st_builtin_configs / sizeof *st_builtin_configs; i++)
        if (!strcmp(st_builtin_configs[i].name, name)) return st_builtin_configs[i].text;
    return NULL;
}

const char *nvfp4_study_config_text(const nvfp4_study *s)
{
    return s->config ? st_builtin_config(s->config) : NULL;
}

static const char *cfg_arm_name(const void *ctx, size_t a) { return st_config_arm_name(ctx, a); }
static void cfg_arm_cfg(const void *ctx, size_t a, size_t steps, bool quick, nvfp4_train_cfg *c)
{
    st_config_job_cfg(ctx, a, steps, quick, c);
}

nvfp4_status st_run_config_study(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, nvfp4_error *err)
{
    st_config *sc = s->cfg;
    if (!sc) {
        const char *text = st_builtin_config(s->config);
        char file[96];
        snprintf(file, sizeof file, "studies/%s.json", s->config ? s->config : "?");
        if (!text) return nvfp4_error_set(err, NVFP4_EINVAL, "study %s: no built-in config %s", s->name, file);
        sc = st_config_parse(text, strlen(text), file, err);
        if (!sc) return NVFP4_EINVAL;
    }
    st_jobs js = {st_config_narms(sc), cfg_arm_name, cfg_arm_cfg, sc};
    /* a study from a file leaves its config beside its results, so that
     * `study plot` and `study merge` know its arms and findings without it;
     * written first, so that a run that fails later leaves it too */
    bool root = !o->dist || o->dist->size <= 1 || o->dist->rank == 0;
    nvfp4_status st = NVFP4_OK;
    if (sc == s->cfg && root) st = st_config_write(sc, o->out_dir, ST_CONFIG_FILE, err);
    if (st == NVFP4_OK) st = st_run_jobs(s, o, log, &js, err);
    if (sc != s->cfg) st_config_free(sc);
    return st;
}

nvfp4_status nvfp4_study_load_config(const char *path, nvfp4_study **out, nvfp4_error *err)
{
    *out = NULL;
    uint8_t *buf = NULL;
    size_t len = 0;
    /* read whole (a FIFO or a device is refused without waiting on it) */
    nvfp4_status rs = nvfp4_file_read_all(path, (size_t)4 << 20, &buf, &len, err);
    if (rs != NVFP4_OK) {
        char msg[sizeof err->message];
        snprintf(msg, sizeof msg, "%s", err->message);
        return nvfp4_error_set(err, rs == NVFP4_EFORMAT ? NVFP4_EINVAL : rs, "study config: %s%s", msg,
                               rs == NVFP4_EFORMAT ? " (at most 4 MiB)" : "");
    }
    st_config *sc = st_config_parse((const char *)buf, len, path, err);
    free(buf);
    if (!sc) return NVFP4_EINVAL;
    nvfp4_study *s = calloc(1, sizeof *s);
    if (!s) {
        st_config_free(sc);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    }
    s->name = st_config_name(sc);
    s->claim = st_config_claim(sc);
    s->seeds = st_config_seeds(sc);
    s->steps = st_config_steps(sc);
    s->quick_steps = st_config_quick_steps(sc);
    s->run = st_run_config_study;
    s->cfg = sc;
    *out = s;
    return NVFP4_OK;
}

void nvfp4_study_free(nvfp4_study *s)
{
    if (!s || !s->cfg) return; /* built-in studies are static */
    st_config_free(s->cfg);
    free(s);
}
