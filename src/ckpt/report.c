/* report.c - a scan's report: counting, JSON, freeing. */
#include "ckpt_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void nvfp4_ckpt_report_free(nvfp4_ckpt_report *rep)
{
    if (!rep) return;
    for (size_t i = 0; i < rep->nlayers; i++) {
        free(rep->layers[i].name);
        free(rep->layers[i].weight_tensor);
        free(rep->layers[i].algo);
    }
    for (size_t i = 0; i < rep->nfindings; i++) {
        free(rep->findings[i].tensor);
        free(rep->findings[i].message);
    }
    free(rep->layers);
    free(rep->findings);
    free(rep->scheme);
    memset(rep, 0, sizeof *rep);
}

size_t nvfp4_ckpt_report_errors(const nvfp4_ckpt_report *rep, bool strict)
{
    size_t n = 0;
    for (size_t i = 0; i < rep->nfindings; i++) n += strict || rep->findings[i].severity == NVFP4_CKPT_ERROR;
    return n;
}

/* JSON has no NaN or infinity: those become null. */
static json_t *jnum(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *layer_json(const nvfp4_ckpt_layer *l)
{
    json_t *o = json_object(), *h = json_array(), *shape = json_array();
    json_array_append_new(shape, json_integer((json_int_t)l->rows));
    json_array_append_new(shape, json_integer((json_int_t)l->cols));
    for (int i = 0; i < 16; i++) json_array_append_new(h, json_integer((json_int_t)l->code_hist[i]));
    json_object_set_new(o, "name", json_string(l->name));
    json_object_set_new(o, "weight", json_string(l->weight_tensor));
    json_object_set_new(o, "algo", json_string(l->algo));
    json_object_set_new(o, "activations", json_string(l->weight_only ? "bf16 (W4A16)" : "nvfp4 (W4A4)"));
    json_object_set_new(o, "shape", shape);
    json_object_set_new(o, "decoded", json_boolean(l->decoded));
    json_object_set_new(o, "global_scale", l->has_global ? jnum(l->global_scale) : json_null());
    json_object_set_new(o, "amax_implied", l->has_global ? jnum(l->amax_implied) : json_null());
    json_object_set_new(o, "amax_decoded", l->decoded ? jnum(l->amax_decoded) : json_null());
    json_object_set_new(o, "scale_min", jnum(l->scale_min));
    json_object_set_new(o, "scale_max", jnum(l->scale_max));
    json_object_set_new(o, "scale_zero", json_integer((json_int_t)l->scale_zero));
    json_object_set_new(o, "scale_nan", json_integer((json_int_t)l->scale_nan));
    json_object_set_new(o, "scale_count", json_integer((json_int_t)l->scale_count));
    json_object_set_new(o, "code_hist", h);
    json_object_set_new(o, "input_scale", l->has_input_scale ? jnum(l->input_scale) : json_null());
    if (l->compared) { /* only with --original */
        json_t *c = json_object();
        json_object_set_new(c, "rel_rms_error", jnum(l->err_rel_rms));
        json_object_set_new(c, "max_abs_error", jnum(l->err_max_abs));
        json_object_set_new(c, "reference_rel_rms_error", jnum(l->ref_rel_rms));
        json_object_set_new(c, "swapped_nibbles_rel_rms_error", jnum(l->err_swapped_rel_rms));
        json_object_set_new(c, "swizzled_scales_rel_rms_error",
                            l->err_swizzled_rel_rms >= 0 ? jnum(l->err_swizzled_rel_rms) : json_null());
        json_object_set_new(c, "written_by", l->written_by ? json_string(l->written_by) : json_null());
        const char *amax = l->written_group_amax ? "fused group" : "own";
        json_object_set_new(c, "written_amax", l->written_by ? json_string(amax) : json_null());
        json_object_set_new(o, "original", c);
    }
    return o;
}

char *nvfp4_ckpt_report_json(const nvfp4_ckpt_report *rep)
{
    json_t *root = json_object(), *fs = json_array(), *ls = json_array();
    json_object_set_new(root, "convention", json_string(nvfp4_ckpt_convention_name(rep->convention)));
    json_object_set_new(root, "scheme", json_string(rep->scheme ? rep->scheme : ""));
    for (size_t i = 0; i < rep->nfindings; i++) {
        const nvfp4_ckpt_finding *f = &rep->findings[i];
        json_t *o = json_object();
        json_object_set_new(o, "tensor", json_string(f->tensor));
        json_object_set_new(o, "category", json_string(f->category));
        json_object_set_new(o, "severity", json_string(nvfp4_ckpt_severity_name(f->severity)));
        json_object_set_new(o, "message", json_string(f->message));
        json_array_append_new(fs, o);
    }
    for (size_t i = 0; i < rep->nlayers; i++) json_array_append_new(ls, layer_json(&rep->layers[i]));
    json_object_set_new(root, "findings", fs);
    json_object_set_new(root, "layers", ls);
    char *s = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(root);
    return s;
}
