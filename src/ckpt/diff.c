/* diff.c - `nvfp4 ckpt diff A B`: are two NVFP4 checkpoints of the same
 * model the same numbers (docs/checkpoints.md, "diff")? Layers are paired
 * by module name (the same in both safetensors conventions); for each pair
 * the shares of equal code bytes and scale bytes, whether the global scales
 * decode alike, and the decoded weights compared value by value, each side
 * decoded by its own convention's rule (ckpt_decode.h: the recipes'
 * dequantization in src/core), so a modelopt and a compressed-tensors copy
 * of the same bytes differ only by what their global scales' readings do. */
#include "ckpt_decode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const nvfp4_ckpt_layer *find_layer(const nvfp4_ckpt_report *r, const char *name)
{
    for (size_t i = 0; i < r->nlayers; i++)
        if (!strcmp(r->layers[i].name, name)) return &r->layers[i];
    return NULL;
}

static bool comparable(const nvfp4_ckpt_layer *l)
{
    return l && l->decoded && l->has_global && isfinite(l->global_scale) && l->global_scale > 0;
}

/* The decoded value of every (scale byte, code) pair of one side, once. */
static void decode_table(nvfp4_ckpt_convention conv, double v, float tab[256][16])
{
    const nvfp4_core_recipe *r = ckpt_conv_core(conv);
    nvfp4_core_global g = ckpt_stored_global(conv, (float)v);
    for (int s = 0; s < 256; s++)
        for (int q = 0; q < 16; q++) tab[s][q] = nvfp4_core_dequant_value(r, &g, (uint8_t)s, (uint8_t)q);
}

static nvfp4_status compare_pair(nvfp4_ckpt *a, const nvfp4_ckpt_layer *la, nvfp4_ckpt *b,
                                 const nvfp4_ckpt_layer *lb, nvfp4_ckpt_diff_layer *d, nvfp4_error *err)
{
    const ckpt_tensor *wa = ckpt_find(a, la->weight_tensor), *sa = ckpt_find2(a, la->name, "weight_scale"),
                      *wb = ckpt_find(b, lb->weight_tensor), *sb = ckpt_find2(b, lb->name, "weight_scale");
    const uint8_t *ca = ckpt_bytes(a, wa, err), *ka = ca ? ckpt_bytes(a, sa, err) : NULL,
                  *cb = ka ? ckpt_bytes(b, wb, err) : NULL, *kb = cb ? ckpt_bytes(b, sb, err) : NULL;
    if (!kb) return err->status;
    float (*ta)[16] = malloc(2 * 256 * sizeof *ta), (*tb)[16] = ta ? ta + 256 : NULL;
    if (!ta) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    decode_table(a->conv, la->global_scale, ta);
    decode_table(b->conv, lb->global_scale, tb);
    size_t ncode = wa->e->nbytes, nscale = sa->e->nbytes;
    uint64_t ceq = 0, seq = 0, diff = 0;
    double sse = 0, ssa = 0, maxd = 0;
    for (size_t k = 0; k < nscale; k++) {
        seq += ka[k] == kb[k];
        for (size_t j = 0; j < 8; j++) {
            size_t i = 8 * k + j;
            ceq += ca[i] == cb[i];
            for (int h = 0; h < 2; h++) {
                double x = ta[ka[k]][h ? ca[i] >> 4 : ca[i] & 15], y = tb[kb[k]][h ? cb[i] >> 4 : cb[i] & 15];
                double e = x - y;
                diff += x != y;
                sse += e * e;
                ssa += x * x;
                if (fabs(e) > maxd) maxd = fabs(e);
            }
        }
    }
    free(ta);
    d->compared = true;
    d->code_equal = ncode ? (double)ceq / (double)ncode : 1;
    d->scale_equal = nscale ? (double)seq / (double)nscale : 1;
    d->decode_mult_a = la->decode_mult;
    d->decode_mult_b = lb->decode_mult;
    d->elements = 2 * (uint64_t)ncode;
    d->elements_differ = diff;
    d->rel_rms_diff = ssa > 0 ? sqrt(sse / ssa) : sqrt(sse);
    d->max_abs_diff = maxd;
    ckpt_release(a, wa);
    ckpt_release(a, sa);
    ckpt_release(b, wb);
    ckpt_release(b, sb);
    return NVFP4_OK;
}

static nvfp4_ckpt_diff_layer *add(nvfp4_ckpt_diff *d, const char *name, nvfp4_error *err)
{
    nvfp4_ckpt_diff_layer *nl = realloc(d->layers, (d->nlayers + 1) * sizeof *nl);
    if (!nl) {
        nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
        return NULL;
    }
    d->layers = nl;
    nvfp4_ckpt_diff_layer *l = memset(&nl[d->nlayers], 0, sizeof *nl);
    if (!(l->name = strdup(name))) {
        nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
        return NULL;
    }
    d->nlayers++;
    return l;
}

nvfp4_status nvfp4_ckpt_diff_run(nvfp4_ckpt *a, const nvfp4_ckpt_report *ra, nvfp4_ckpt *b,
                                 const nvfp4_ckpt_report *rb, nvfp4_ckpt_diff *out, nvfp4_error *err)
{
    memset(out, 0, sizeof *out);
    if (a->conv == NVFP4_CKPT_GGUF || b->conv == NVFP4_CKPT_GGUF)
        return nvfp4_error_set(err, NVFP4_EUNSUPPORTED, "%s: diff reads modelopt and compressed-tensors folders; "
                               "GGUF is not compared yet", a->conv == NVFP4_CKPT_GGUF ? a->dir : b->dir);
    for (size_t i = 0; i < ra->nlayers + rb->nlayers; i++) {
        const nvfp4_ckpt_layer *l = i < ra->nlayers ? &ra->layers[i] : &rb->layers[i - ra->nlayers];
        const nvfp4_ckpt_layer *la = find_layer(ra, l->name), *lb = find_layer(rb, l->name);
        if (i >= ra->nlayers && la) continue; /* paired already */
        nvfp4_ckpt_diff_layer *d = add(out, l->name, err);
        if (!d) return err->status;
        d->in_a = la != NULL;
        d->in_b = lb != NULL;
        if (!comparable(la) || !comparable(lb) || la->rows != lb->rows || la->cols != lb->cols) continue;
        nvfp4_status st = compare_pair(a, la, b, lb, d, err);
        if (st) return st;
    }
    return NVFP4_OK;
}

void nvfp4_ckpt_diff_free(nvfp4_ckpt_diff *d)
{
    if (!d) return;
    for (size_t i = 0; i < d->nlayers; i++) free(d->layers[i].name);
    free(d->layers);
    memset(d, 0, sizeof *d);
}

const char *nvfp4_ckpt_diff_verdict(const nvfp4_ckpt_diff_layer *l)
{
    if (!l->in_a) return "only in B";
    if (!l->in_b) return "only in A";
    if (!l->compared) return "not compared (not decodable, or different shapes)";
    if (l->elements_differ == 0) return "same numbers";
    if (l->code_equal == 1 && l->scale_equal == 1)
        return "same codes and scales; the global scales decode differently (a reciprocal rounded in fp32, or "
               "another amax)";
    return "different codes or scales (another writer's rule, or other weights)";
}

static json_t *jnum(double v) { return isfinite(v) ? json_real(v) : json_null(); }

char *nvfp4_ckpt_diff_json(const nvfp4_ckpt_diff *d)
{
    json_t *root = json_object(), *ls = json_array();
    for (size_t i = 0; i < d->nlayers; i++) {
        const nvfp4_ckpt_diff_layer *l = &d->layers[i];
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(l->name));
        json_object_set_new(o, "in_a", json_boolean(l->in_a));
        json_object_set_new(o, "in_b", json_boolean(l->in_b));
        json_object_set_new(o, "verdict", json_string(nvfp4_ckpt_diff_verdict(l)));
        if (l->compared) {
            json_object_set_new(o, "code_bytes_equal", json_real(l->code_equal));
            json_object_set_new(o, "scale_bytes_equal", json_real(l->scale_equal));
            json_object_set_new(o, "decode_mult_a", json_real(l->decode_mult_a));
            json_object_set_new(o, "decode_mult_b", json_real(l->decode_mult_b));
            json_object_set_new(o, "elements", json_integer((json_int_t)l->elements));
            json_object_set_new(o, "elements_differ", json_integer((json_int_t)l->elements_differ));
            json_object_set_new(o, "rel_rms_diff", jnum(l->rel_rms_diff));
            json_object_set_new(o, "max_abs_diff", jnum(l->max_abs_diff));
        }
        json_array_append_new(ls, o);
    }
    json_object_set_new(root, "layers", ls);
    char *s = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(root);
    return s;
}
