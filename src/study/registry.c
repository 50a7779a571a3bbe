/*
 * registry.c - the built-in studies, in the order of their file names: the
 * list is generated from the study files (src/study/s[0-9]*.c, one study
 * each, see studies.h) into build/gen/study_list.h by mk/study.mk, so a new
 * study is one new file and this file names none of them.
 */
#include <string.h>

#include "study/studies.h"
#include "study/labfile.h"
#include "study/fingerprint.h"

#include "study_list.h"

static const nvfp4_study *const studies[] = {NVFP4_STUDY_LIST};

size_t nvfp4_study_count(void) { return sizeof studies / sizeof *studies; }
const nvfp4_study *nvfp4_study_at(size_t i) { return i < nvfp4_study_count() ? studies[i] : NULL; }
const nvfp4_study *nvfp4_study_find(const char *name)
{
    for (size_t i = 0; name && i < nvfp4_study_count(); i++)
        if (!strcmp(studies[i]->name, name)) return studies[i];
    return NULL;
}
const char *nvfp4_study_name(const nvfp4_study *s) { return s->name; }
const char *nvfp4_study_claim(const nvfp4_study *s) { return s->claim; }
const char *nvfp4_study_wall(const nvfp4_study *s) { return s->wall; }

nvfp4_status nvfp4_study_run(const nvfp4_study *s, const nvfp4_study_opts *o, FILE *log, nvfp4_error *err)
{
    if (!o->out_dir) return nvfp4_error_set(err, NVFP4_EINVAL, "study: no output folder");
    if (o->shard_n && o->shard_i >= o->shard_n)
        return nvfp4_error_set(err, NVFP4_EINVAL, "study: shard %zu/%zu out of range", o->shard_i, o->shard_n);
    if (!st_mkdir_p(o->out_dir, err)) return NVFP4_EIO;
    nvfp4_study_set_threads(o->threads > 0 ? o->threads : 1);
    /* a study not made of (arm, seed) jobs runs on rank 0 alone */
    if (s->serial && o->dist && o->dist->size > 1 && o->dist->rank != 0) return NVFP4_OK;
    nvfp4_study_opts q = *o;
    if (q.quick) {
        if (!q.steps) q.steps = s->quick_steps ? s->quick_steps : 4;
        if (!q.seeds) q.seeds = 1;
    }
    return st_run_fingerprinted(s, &q, log, err);
}
