/* checks.c - the findings that need no original weights (docs/checkpoints.md,
 * "Checks"): each rule reads the statistics scan.c took and the tensor
 * directory, and names the tensor, the evidence and the fix. */
#include "ckpt_internal.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/swizzle.h"

/* The band of plausible weight amaxes for the reciprocal rule. A stored
 * global scale v and its reciprocal reading imply amaxes A and 2688^2/A,
 * which meet at A = 2688: below it the convention's reading is the smaller
 * and wins, above it the reciprocal's. Below 2^-16 neither reading is a
 * weight (a nonzero layer's bf16 weights are that small only when the
 * global scale is garbage). */
#define AMAX_PLAUSIBLE_MIN 0x1p-16
#define AMAX_PLAUSIBLE_MAX CKPT_GLOBAL_CONST

bool ckpt_add_finding(nvfp4_ckpt_report *rep, const char *tensor, const char *category, nvfp4_ckpt_severity sev,
                      const char *fmt, ...)
{
    if (rep->nfindings == rep->findings_cap) {
        size_t nc = rep->findings_cap ? 2 * rep->findings_cap : 16;
        nvfp4_ckpt_finding *nf = realloc(rep->findings, nc * sizeof *nf);
        if (!nf) return false;
        rep->findings = nf;
        rep->findings_cap = nc;
    }
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    nvfp4_ckpt_finding *f = &rep->findings[rep->nfindings];
    f->tensor = strdup(tensor);
    f->message = strdup(msg);
    f->category = category;
    f->severity = sev;
    if (!f->tensor || !f->message) {
        free(f->tensor);
        free(f->message);
        return false;
    }
    rep->nfindings++;
    return true;
}

static void tname(char *buf, size_t n, const char *module, const char *suffix)
{
    snprintf(buf, n, "%s.%s", module, suffix);
}

static const char *dtype_name(const ckpt_tensor *t) { return nvfp4_tdtype_name(t->e->dtype); }

static void shape_str(const nvfp4_st_entry *e, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (unsigned d = 0; d < e->ndim && k < n; d++) k += (size_t)snprintf(buf + k, n - k, d ? ", %zu" : "%zu", e->shape[d]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

/* The weight codes and block scales: dtypes and shapes. */
static bool check_codes_and_scales(const nvfp4_ckpt *c, const nvfp4_ckpt_layer *l, nvfp4_ckpt_report *rep)
{
    char sn[1100], ws[128], ss[128];
    const ckpt_tensor *w = ckpt_find(c, l->weight_tensor), *s = ckpt_find2(c, l->name, "weight_scale");
    tname(sn, sizeof sn, l->name, "weight_scale");
    if (w->e->dtype != NVFP4_T_U8)
        return ckpt_add_finding(rep, l->weight_tensor, "dtype-mismatch", NVFP4_CKPT_ERROR,
                                "%s is %s; the %s convention stores NVFP4 codes as U8, two per byte (element 2i in the "
                                "low nibble). Fix: re-export the layer, or list it as unquantized",
                                l->weight_tensor, dtype_name(w), nvfp4_ckpt_convention_name(c->conv));
    if (!s)
        return ckpt_add_finding(rep, sn, "scale-shape", NVFP4_CKPT_ERROR,
                                "%s holds NVFP4 codes but %s is missing: the layer cannot be decoded. Fix: export the "
                                "E4M3 block scales with the codes", l->weight_tensor, sn);
    if (s->e->dtype != NVFP4_T_F8_E4M3 && s->e->dtype != NVFP4_T_U8)
        return ckpt_add_finding(rep, sn, "dtype-mismatch", NVFP4_CKPT_ERROR,
                                "%s is %s; NVFP4 block scales are E4M3 bytes (F8_E4M3). Fix: cast the scales to "
                                "float8_e4m3fn", sn, dtype_name(s));
    if (l->decoded) return true;
    const nvfp4_st_entry *we = w->e, *se = s->e;
    shape_str(we, ws, sizeof ws);
    shape_str(se, ss, sizeof ss);
    size_t half = we->shape[we->ndim - 1];
    if (half % 8 != 0)
        return ckpt_add_finding(rep, l->weight_tensor, "scale-shape", NVFP4_CKPT_ERROR,
                                "%s has shape %s: %zu columns are not a multiple of the 16-element block. Fix: pad "
                                "the input dimension to a multiple of 16 before quantizing", l->weight_tensor, ws,
                                2 * half);
    size_t n = l->rows, kb = half / 8, zr, zc;
    (void)nvfp4_core_swizzle_padded_shape(n, kb, &zr, &zc);
    if (we->ndim == 2 && se->ndim == 2) {
        if (se->shape[0] == zr && se->shape[1] == zc)
            return ckpt_add_finding(rep, sn, "scale-layout", NVFP4_CKPT_ERROR,
                                    "%s has shape %s, the padded [%zu, %zu] of cuBLAS's 128x4 swizzled tiles, for "
                                    "codes %s; the convention stores linear scales [%zu, %zu]. Fix: unswizzle and "
                                    "drop the padding", sn, ss, zr, zc, ws, n, kb);
        if (se->shape[0] == kb && se->shape[1] == n)
            return ckpt_add_finding(rep, sn, "scale-layout", NVFP4_CKPT_ERROR,
                                    "%s has shape %s, transposed: codes %s need linear scales [%zu, %zu] (one per 16 "
                                    "elements of a row). Fix: transpose the scales", sn, ss, ws, n, kb);
    }
    return ckpt_add_finding(rep, sn, "scale-shape", NVFP4_CKPT_ERROR,
                            "%s has shape %s but codes %s need [%s%zu] scales (one E4M3 byte per 16 elements). Fix: "
                            "re-export the scales with the codes", sn, ss, ws, we->ndim > 2 ? "..., " : "", kb);
}

static bool all_codes_zero(const nvfp4_ckpt_layer *l)
{
    uint64_t total = 0;
    for (int i = 0; i < 16; i++) total += l->code_hist[i];
    return l->code_hist[0] + l->code_hist[8] == total;
}

/* The reading of v in the other convention: modelopt multiplier <-> c-t divisor. */
static const char *other_reading(nvfp4_ckpt_convention conv)
{
    return conv == NVFP4_CKPT_MODELOPT ? "a compressed-tensors weight_global_scale (2688/amax)"
           : conv == NVFP4_CKPT_GGUF
               ? "a compressed-tensors weight_global_scale (2688/amax) copied without inverting it"
                                       : "a modelopt weight_scale_2 (amax/2688)";
}

static const char *convention_rule(nvfp4_ckpt_convention conv)
{
    return conv == NVFP4_CKPT_MODELOPT ? "weight_scale_2 = amax/2688"
           : conv == NVFP4_CKPT_GGUF   ? ".scale = amax/2688 (modelopt's weight_scale_2, 1/weight_global_scale)"
                                       : "weight_global_scale = 2688/amax";
}

/* Global scale: present, one finite positive normal float, and an amax in
 * the plausible band (or its reciprocal reading in it: the reciprocal rule). */
static bool check_global(const nvfp4_ckpt *c, const nvfp4_ckpt_layer *l, nvfp4_ckpt_report *rep)
{
    char gn[1100], gs[128];
    tname(gn, sizeof gn, l->name, ckpt_global_suffix(c));
    const ckpt_tensor *g = ckpt_find(c, gn);
    if (!g && c->conv == NVFP4_CKPT_GGUF) return true; /* omitted: 1 (llama.cpp drops a scale within 1e-6 of 1) */
    if (!g)
        return ckpt_add_finding(rep, gn, "global-scale-missing", NVFP4_CKPT_ERROR,
                                "%s is missing: %s cannot be decoded (a loader that leaves it unset decodes with "
                                "uninitialised memory). Fix: export the per-tensor scale, %s",
                                gn, l->weight_tensor, convention_rule(c->conv));
    if (!l->has_global) {
        shape_str(g->e, gs, sizeof gs);
        return ckpt_add_finding(rep, gn, "scale-shape", NVFP4_CKPT_ERROR,
                                "%s is %s %s; a per-tensor global scale is one float. Fix: store one F32 value, %s", gn,
                                dtype_name(g), gs, convention_rule(c->conv));
    }
    double v = l->global_scale, a = l->amax_implied;
    if (!isfinite(v))
        return ckpt_add_finding(rep, gn, "global-scale-nonfinite", NVFP4_CKPT_ERROR,
                                "%s = %g: every decoded weight of %s is NaN or infinite. Fix: recompute it from the "
                                "weight's amax, %s", gn, v, l->name, convention_rule(c->conv));
    if (v <= 0 || v < FLT_MIN)
        return ckpt_add_finding(rep, gn, "global-scale-garbage", NVFP4_CKPT_ERROR,
                                "%s = %g is not a positive normal float: no amax gives it (uninitialised or "
                                "zeroed memory?). Fix: recompute it, %s", gn, v, convention_rule(c->conv));
    if (all_codes_zero(l) || (a >= AMAX_PLAUSIBLE_MIN && a <= AMAX_PLAUSIBLE_MAX)) return true;
    double recip = CKPT_GLOBAL_CONST * CKPT_GLOBAL_CONST / a;
    if (a > AMAX_PLAUSIBLE_MAX && recip >= AMAX_PLAUSIBLE_MIN)
        return ckpt_add_finding(rep, gn, "global-scale-reciprocal", NVFP4_CKPT_ERROR,
                                "%s = %g implies a weight amax of %g (%s), above 2688, and the block scales decode "
                                "to |w| up to %g; read as %s it implies amax %g, a plausible weight: the value is "
                                "the reciprocal of what the convention stores. Fix: store 1/%g = %g",
                                gn, v, a, convention_rule(c->conv), l->amax_decoded, other_reading(c->conv), recip,
                                v, 1.0 / v);
    return ckpt_add_finding(rep, gn, "global-scale-garbage", NVFP4_CKPT_ERROR,
                            "%s = %g implies a weight amax of %g, and its reciprocal reading %g: neither is in "
                            "[2^-16, 2688], the band of weights (uninitialised memory?). Fix: recompute it from the "
                            "weight's amax, %s", gn, v, a, recip, convention_rule(c->conv));
}

static bool check_input_scale(const nvfp4_ckpt *c, const nvfp4_ckpt_layer *l, nvfp4_ckpt_report *rep)
{
    char in[1100];
    tname(in, sizeof in, l->name, ckpt_input_suffix(c));
    const ckpt_tensor *t = ckpt_find(c, in);
    if (!t && c->conv == NVFP4_CKPT_GGUF && !l->weight_only)
        return ckpt_add_finding(rep, l->weight_tensor, "activation-precision", NVFP4_CKPT_ERROR,
                                "%s is not marked weight-only (general.tensor_extra.prec_a4 false) and has no %s: "
                                "llama.cpp runs it W4A4 with an input scale of 1 (an activation amax of 2688, which "
                                "no calibration gives); a W4A16 source lost its intent (llama.cpp issue 24364). "
                                "Fix: mark the tensor prec_a4 false for W4A16, or store the calibrated input scale",
                                l->weight_tensor, in);
    if (!t) {
        if (!ckpt_needs_input_scale(c, l->name, l->weight_only)) return true;
        return ckpt_add_finding(rep, in, "input-scale-missing", NVFP4_CKPT_ERROR,
                                "%s is missing, but %s is %s (W4A4: activations quantized to NVFP4 with a static "
                                "per-tensor scale); a runtime then quantizes activations with a default or "
                                "uninitialised scale. Fix: calibrate and export it (%s), or declare the layer "
                                "weight-only (W4A16)", in, l->name, l->algo,
                                c->conv == NVFP4_CKPT_MODELOPT ? "input_scale = activation amax/2688"
                                                               : "input_global_scale = 2688/activation amax");
    }
    if (l->weight_only)
        return ckpt_add_finding(rep, in, "activation-precision", NVFP4_CKPT_ERROR,
                                "%s is stored, but the configuration declares %s weight-only (%s: W4A16, activations "
                                "in bf16): the checkpoint says both. A runtime or converter that keys on the tensor "
                                "runs the layer W4A4 (llama.cpp issue 24364), one that keys on the configuration "
                                "ignores it. Fix: drop %s for W4A16, or declare the layer %s for W4A4",
                                in, l->name, l->algo, in, c->conv == NVFP4_CKPT_MODELOPT ? "NVFP4" : "NVFP4 "
                                "(input_activations num_bits 4, type float, group_size 16)");
    if (!l->has_input_scale)
        return ckpt_add_finding(rep, in, "scale-shape", NVFP4_CKPT_ERROR,
                                "%s is %s with %zu bytes; an activation global scale is one float", in, dtype_name(t),
                                t->e->nbytes);
    if (!isfinite(l->input_scale))
        return ckpt_add_finding(rep, in, "global-scale-nonfinite", NVFP4_CKPT_ERROR,
                                "%s = %g: every quantized activation of %s is NaN. Fix: recalibrate it", in,
                                l->input_scale, l->name);
    if (l->input_scale <= 0 || l->input_scale < FLT_MIN)
        return ckpt_add_finding(rep, in, "global-scale-garbage", NVFP4_CKPT_ERROR,
                                "%s = %g is not a positive normal float. Fix: recalibrate it", in, l->input_scale);
    return true;
}

bool ckpt_check_layer(const nvfp4_ckpt *c, const nvfp4_ckpt_layer *l, nvfp4_ckpt_report *rep)
{
    bool wo;
    if (!ckpt_layer_algo(c, l->name, &wo) &&
        !ckpt_add_finding(rep, l->weight_tensor, "dtype-mismatch", NVFP4_CKPT_ERROR,
                          "%s holds NVFP4 codes, but the configuration (%s) does not quantize %s to NVFP4 (excluded, "
                          "ignored or not listed): a loader will read the bytes as an unquantized weight. Fix: list "
                          "the layer as NVFP4, or store it unquantized",
                          l->weight_tensor, c->conv == NVFP4_CKPT_MODELOPT ? "hf_quant_config.json" : "config.json",
                          l->name))
        return false;
    if ((c->conv != NVFP4_CKPT_GGUF && !check_codes_and_scales(c, l, rep)) || !check_global(c, l, rep) ||
        !check_input_scale(c, l, rep))
        return false;
    if (l->scale_nan) {
        char sn[1100];
        tname(sn, sizeof sn, l->name, "weight_scale");
        if (c->conv == NVFP4_CKPT_GGUF) snprintf(sn, sizeof sn, "%s", l->weight_tensor); /* scales inside its blocks */
        return ckpt_add_finding(rep, sn, "scale-nonfinite", NVFP4_CKPT_ERROR,
                                "%s holds %llu NaN bytes (E4M3 0x7F/0xFF) of %llu block scales: those blocks decode "
                                "to NaN. Fix: recompute the scales (writers clamp to 448)", sn,
                                (unsigned long long)l->scale_nan, (unsigned long long)l->scale_count);
    }
    return true;
}

const char *ckpt_leaf(const char *name)
{
    const char *d = strrchr(name, '.');
    return d ? d + 1 : name;
}

static bool is_float_dtype(nvfp4_tdtype t)
{
    return t == NVFP4_T_BF16 || t == NVFP4_T_F16 || t == NVFP4_T_F32 || t == NVFP4_T_F64;
}

/* A float weight of a module that the configuration quantizes to NVFP4:
 * listed in modelopt's quantized_layers, or (for configurations that name
 * classes: modelopt's single quant_algo, compressed-tensors' "Linear")
 * not excluded and in the same role (the last name component) as a layer
 * stored in NVFP4, so embeddings and norms are never taken for linears. */
static bool check_unquantized(const nvfp4_ckpt *c, nvfp4_ckpt_report *rep)
{
    bool mixed = json_is_object(json_object_get(c->qcfg, "quantized_layers"));
    char module[1024];
    for (size_t i = 0; i < c->ntensors; i++) {
        const nvfp4_st_entry *e = c->tensors[i].e;
        size_t n = strlen(e->name);
        if (n < 8 || strcmp(e->name + n - 7, ".weight") != 0 || n - 7 >= sizeof module || !is_float_dtype(e->dtype) ||
            e->ndim < 2)
            continue;
        memcpy(module, e->name, n - 7);
        module[n - 7] = 0;
        bool wo;
        const char *algo = ckpt_layer_algo(c, module, &wo);
        if (!algo || ckpt_find2(c, module, "weight_packed")) continue;
        bool sibling = false;
        for (size_t k = 0; !sibling && k < rep->nlayers; k++)
            sibling = strcmp(ckpt_leaf(rep->layers[k].name), ckpt_leaf(module)) == 0;
        if (!mixed && !sibling) continue;
        if (!ckpt_add_finding(rep, e->name, "dtype-mismatch", NVFP4_CKPT_ERROR,
                              "%s is %s, but the configuration quantizes %s as %s%s: a loader expecting NVFP4 codes "
                              "and scales fails or reads bf16 bytes as codes. Fix: quantize the layer, or list it in "
                              "%s", e->name, nvfp4_tdtype_name(e->dtype), module, algo,
                              mixed ? " (quantized_layers)" : " (its siblings are stored in NVFP4)",
                              c->conv == NVFP4_CKPT_MODELOPT ? "exclude_modules" : "ignore"))
            return false;
    }
    return true;
}

/* Fused groups: projections that runtimes (vLLM, TensorRT-LLM, SGLang) run
 * as one GEMM with one global scale. modelopt unifies their amax on export
 * (torch/export/quant_utils.py preprocess_linear_fusion) and llm-compressor
 * their global scales (update_fused_layer_weight_global_scales); a runtime
 * that fuses members with different scales takes one (vLLM: the max) and
 * decodes the others off by the ratio (vLLM issue 47515). */
static const char *const fused_sets[][4] = {
    {"q_proj", "k_proj", "v_proj", NULL}, {"gate_proj", "up_proj", NULL, NULL}, {"w1", "w3", NULL, NULL},
    /* llama.cpp's GGUF names */
    {"attn_q", "attn_k", "attn_v", NULL}, {"ffn_gate", "ffn_up", NULL, NULL},
    {"ffn_gate_exps", "ffn_up_exps", NULL, NULL}};

int ckpt_fused_set_of(const char *lf)
{
    for (int s = 0; s < (int)(sizeof fused_sets / sizeof *fused_sets); s++)
        for (int k = 0; fused_sets[s][k]; k++)
            if (strcmp(lf, fused_sets[s][k]) == 0) return s;
    return -1;
}

const char *const *ckpt_fused_members(int set) { return fused_sets[set]; }

/* A MoE expert's three projections under each spelling: the names modelopt
 * and llm-compressor write, Mixtral's own checkpoint names, and the merged
 * tensor llama.cpp's converter makes of them (conversion/base.py
 * _flush_nvfp4_experts). */
static const char *const expert_proj[3][3] = {
    {"gate_proj", "w1", "ffn_gate_exps"}, {"up_proj", "w3", "ffn_up_exps"}, {"down_proj", "w2", "ffn_down_exps"}};

int ckpt_expert_proj(const char *leaf)
{
    for (int p = 0; p < 3; p++)
        if (!strcmp(leaf, expert_proj[p][0]) || !strcmp(leaf, expert_proj[p][1])) return p;
    return -1;
}

const char *ckpt_expert_proj_name(int proj, int spelling) { return expert_proj[proj][spelling]; }

static bool same_parent(const char *a, const char *b)
{
    size_t la = (size_t)(ckpt_leaf(a) - a), lb = (size_t)(ckpt_leaf(b) - b);
    return la == lb && strncmp(a, b, la) == 0;
}

static bool check_fused(const nvfp4_ckpt *c, nvfp4_ckpt_report *rep)
{
    size_t n = rep->nlayers;
    for (size_t i = 0; i < n; i++) {
        const nvfp4_ckpt_layer *l = &rep->layers[i];
        int set = ckpt_fused_set_of(ckpt_leaf(l->name));
        if (set < 0 || !l->has_global || !isfinite(l->amax_implied)) continue;
        /* the group's unified scale: the largest implied amax of its members */
        const nvfp4_ckpt_layer *top = l;
        char members[512] = "";
        size_t mlen = 0;
        for (size_t k = 0; k < n; k++) {
            const nvfp4_ckpt_layer *m = &rep->layers[k];
            if (!same_parent(l->name, m->name) || ckpt_fused_set_of(ckpt_leaf(m->name)) != set || !m->has_global)
                continue;
            if (isfinite(m->amax_implied) && m->amax_implied > top->amax_implied) top = m;
            if (mlen < sizeof members)
                mlen += (size_t)snprintf(members + mlen, sizeof members - mlen, "%s%s", mlen ? ", " : "",
                                         ckpt_leaf(m->name));
        }
        if (top == l || top->global_scale == l->global_scale) continue;
        char gn[1100];
        tname(gn, sizeof gn, l->name, ckpt_global_suffix(c));
        if (!ckpt_add_finding(rep, gn, "fused-global-scale-mismatch", NVFP4_CKPT_HAZARD,
                              "%s = %g (amax %g) differs from %s's %g (amax %g) in the fused group {%s}: correct for "
                              "this layer alone, but a runtime that fuses the group and takes one scale (vLLM takes "
                              "the max) decodes %s off by %.4gx. Fix: requantize the group with one shared amax (what "
                              "modelopt and llm-compressor do), or keep the layers unfused",
                              gn, l->global_scale, l->amax_implied, top->name, top->global_scale, top->amax_implied,
                              members, l->name, top->amax_implied / l->amax_implied))
            return false;
    }
    return true;
}

/* A correct writer's global scale maps the weights' amax (the fused group's)
 * to 6 x 448, so the decoded |w| of the group reaches about the amax the
 * global scale implies (within E4M3's rounding of the block scale, a few
 * percent). Far above it, the block scales sit low in E4M3's range, down
 * in its subnormals, and lose precision: compressed-tensors on an fp16
 * model stores 1 (implied amax 2688) whenever 2688 / amax overflows fp16,
 * which is every amax below about 0.041. */
#define GLOBAL_UNUSED_FACTOR 16.0

static double group_amax_decoded(const nvfp4_ckpt_report *rep, const nvfp4_ckpt_layer *l)
{
    double a = l->amax_decoded;
    int set = ckpt_fused_set_of(ckpt_leaf(l->name));
    for (size_t k = 0; set >= 0 && k < rep->nlayers; k++) {
        const nvfp4_ckpt_layer *m = &rep->layers[k];
        if (m->decoded && same_parent(l->name, m->name) && ckpt_fused_set_of(ckpt_leaf(m->name)) == set &&
            m->amax_decoded > a)
            a = m->amax_decoded;
    }
    return a;
}

static bool check_global_fits_data(const nvfp4_ckpt *c, nvfp4_ckpt_report *rep)
{
    for (size_t i = 0; i < rep->nlayers; i++) {
        const nvfp4_ckpt_layer *l = &rep->layers[i];
        double a = l->amax_implied, d = l->decoded ? group_amax_decoded(rep, l) : 0;
        if (!l->decoded || !l->has_global || !(a >= AMAX_PLAUSIBLE_MIN && a <= AMAX_PLAUSIBLE_MAX) ||
            all_codes_zero(l) || !(d > 0) || a <= GLOBAL_UNUSED_FACTOR * d)
            continue;
        char gn[1100];
        tname(gn, sizeof gn, l->name, ckpt_global_suffix(c));
        bool ct_fp16 = c->conv != NVFP4_CKPT_MODELOPT && a == CKPT_GLOBAL_CONST;
        if (!ckpt_add_finding(rep, gn, "global-scale-garbage", NVFP4_CKPT_ERROR,
                              "%s = %g implies a weight amax of %g, but the block scales decode %s%s to |w| of at "
                              "most %g, %.3gx less: the global scale is not the weights' amax, so the block scales "
                              "sit low in E4M3's range (largest %g, of 448) and lose precision.%s Fix: recompute it "
                              "from the weights' amax, %s", gn, l->global_scale, a, l->name,
                              d > l->amax_decoded ? " and its fused group" : "", d, a / d, l->scale_max,
                              ct_fp16 ? " A stored 1 is compressed-tensors' fallback when 2688 / amax overflows "
                                        "fp16 (an fp16 model's layer of amax below about 0.041): quantize from "
                                        "fp32 or bf16 weights." : "",
                              convention_rule(c->conv)))
            return false;
    }
    return true;
}

nvfp4_status ckpt_check_layers(nvfp4_ckpt *c, nvfp4_ckpt_report *rep, nvfp4_error *err)
{
    if ((c->conv != NVFP4_CKPT_GGUF && !check_unquantized(c, rep)) || !check_fused(c, rep) ||
        !check_global_fits_data(c, rep))
        return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    return NVFP4_OK;
}
