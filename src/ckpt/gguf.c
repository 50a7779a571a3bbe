/* gguf.c - llama.cpp's GGUF files holding NVFP4 tensors (docs/checkpoints.md,
 * "GGUF"), as llama.cpp's converter writes them (llama-cpp-python 0.3.36's
 * vendored llama.cpp, conversion/base.py: _nvfp4_pack, _repack_nvfp4,
 * _write_scale_tensor, _flush_nvfp4_experts, _tag_prec_a4; gguf-py
 * gguf/constants.py and gguf_writer.py):
 *   NAME.weight        GGML_TYPE_NVFP4 (40): rows of 64-element blocks of 36
 *                      bytes, 4 UE4M3 scale bytes (the E4M3 bits with the sign
 *                      stripped) then 32 code bytes, byte j of a 16-element
 *                      sub-block holding element j low and j + 8 high
 *                      (nvfp4/ggml.h);
 *   NAME.scale         F32 [1] (or [n_expert] for merged experts): modelopt's
 *                      weight_scale_2 (compressed-tensors' 1/weight_global_scale),
 *                      a multiplier, omitted when within 1e-6 of 1;
 *   NAME.input_scale   F32, the same for input_scale, omitted when about 1;
 *   general.tensor_extra.name / general.tensor_extra.prec_a4: parallel arrays,
 *                      prec_a4 false for a W4A16 (weight-only) tensor.
 * The file's header (GGUF v2/v3: magic, version, counts, key/value pairs,
 * tensor infos, data aligned to general.alignment, default 32) is parsed
 * here into the same tensor directory as a safetensors checkpoint; the scan
 * unpacks each NVFP4 tensor into linear codes and scales
 * (nvfp4_ggml_nvfp4_unpack) and takes the same statistics. */
#include "ckpt_internal.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvfp4/ggml.h"

enum { GGML_F32 = 0, GGML_F16 = 1, GGML_BF16 = 30, GGML_NVFP4 = 40 };
enum { GV_U8 = 0, GV_I8, GV_U16, GV_I16, GV_U32, GV_I32, GV_F32, GV_BOOL, GV_STRING, GV_ARRAY, GV_U64, GV_I64, GV_F64 };

typedef struct {
    const uint8_t *p;
    size_t n, pos;
    bool ok;
} rd;

static bool take(rd *r, void *out, size_t k)
{
    if (!r->ok || r->n - r->pos < k) return r->ok = false;
    if (out) memcpy(out, r->p + r->pos, k);
    r->pos += k;
    return true;
}

static uint64_t u64(rd *r)
{
    uint64_t v = 0;
    take(r, &v, 8);
    return v;
}

static uint32_t u32(rd *r)
{
    uint32_t v = 0;
    take(r, &v, 4);
    return v;
}

/* A GGUF string: length then bytes (no NUL); a malloc'd copy. */
static char *str(rd *r)
{
    uint64_t len = u64(r);
    if (!r->ok || len > r->n - r->pos || len > (1u << 20)) {
        r->ok = false;
        return NULL;
    }
    char *s = malloc(len + 1);
    if (!s) {
        r->ok = false;
        return NULL;
    }
    memcpy(s, r->p + r->pos, len);
    s[len] = 0;
    r->pos += len;
    return s;
}

static size_t scalar_size(uint32_t t)
{
    static const size_t sz[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return t < sizeof sz / sizeof *sz ? sz[t] : 0;
}

/* One value of type t; strings and arrays of strings and bools are kept
 * (into *jout, as JSON) for the keys that matter, everything else skipped. */
static json_t *value(rd *r, uint32_t t, int depth)
{
    if (t == GV_STRING) {
        char *s = str(r);
        json_t *j = s ? json_string(s) : NULL;
        free(s);
        return j ? j : json_null();
    }
    if (t == GV_ARRAY) {
        uint32_t et = u32(r);
        uint64_t cnt = u64(r);
        json_t *a = json_array();
        if (depth > 2) r->ok = false;
        for (uint64_t i = 0; r->ok && i < cnt; i++) {
            if (et != GV_STRING && et != GV_BOOL && et != GV_ARRAY) { /* numbers: skip */
                size_t k = scalar_size(et);
                if (!k || cnt > (r->n - r->pos) / k) r->ok = false;
                else r->pos += (size_t)cnt * k;
                break;
            }
            json_array_append_new(a, value(r, et, depth + 1));
        }
        return a;
    }
    size_t k = scalar_size(t);
    if (!k) {
        r->ok = false;
        return json_null();
    }
    uint64_t v = 0;
    take(r, &v, k);
    if (t == GV_BOOL) return json_boolean(v != 0);
    if (t == GV_U32 || t == GV_U8 || t == GV_U16 || t == GV_U64) return json_integer((json_int_t)v);
    return json_null();
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && !strcmp(s + n - k, tail);
}

static nvfp4_status bad(const char *path, const char *what, nvfp4_error *err)
{
    return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: not a valid GGUF file: %s", path, what);
}

/* The directory entry of one tensor info; false when its type or size is out of range. */
static bool tensor_entry(nvfp4_st_entry *e, uint32_t type, unsigned nd, const uint64_t *ne, uint64_t rel,
                         size_t data_start, size_t file_size, json_t *nvfp4)
{
    size_t n = 1;
    for (unsigned d = 0; d < nd; d++) {
        if (ne[d] && n > SIZE_MAX / ne[d]) return false;
        n *= (size_t)ne[d];
        e->shape[nd - 1 - d] = (size_t)ne[d]; /* ggml ne[0] is the fastest dimension */
    }
    e->ndim = nd;
    switch (type) {
    case GGML_F32: e->dtype = NVFP4_T_F32; e->nbytes = 4 * n; break;
    case GGML_F16: e->dtype = NVFP4_T_F16; e->nbytes = 2 * n; break;
    case GGML_BF16: e->dtype = NVFP4_T_BF16; e->nbytes = 2 * n; break;
    case GGML_NVFP4:
        if (nd < 1 || ne[0] % 64) return false;
        e->dtype = NVFP4_T_U8;
        e->nbytes = n / 64 * 36;
        json_object_set_new(nvfp4, e->name, json_true());
        break;
    default: /* another ggml type: listed, never read */
        e->dtype = NVFP4_T_U8;
        e->nbytes = 0;
    }
    e->offset = data_start + (size_t)rel;
    return rel <= file_size - data_start && e->nbytes <= file_size - e->offset;
}

nvfp4_status ckpt_open_gguf(nvfp4_ckpt *c, const char *path, nvfp4_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0) close(fd);
        return nvfp4_error_set(err, NVFP4_EIO, "%s: cannot open the file", path);
    }
    size_t size = (size_t)st.st_size;
    void *p = size ? mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
    close(fd);
    if (p == MAP_FAILED) return bad(path, "empty or cannot be mapped", err);
    c->files = calloc(1, sizeof *c->files);
    c->idx = calloc(1, sizeof *c->idx);
    c->map = calloc(1, sizeof *c->map);
    if (!c->files || !c->idx || !c->map || !(c->files[0] = strdup(path))) {
        munmap(p, size);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    }
    c->nfiles = 1;
    c->map[0] = p;
    c->idx[0].file_size = size;
    rd r = {p, size, 0, true};
    char magic[4];
    take(&r, magic, 4);
    uint32_t version = u32(&r);
    if (!r.ok || memcmp(magic, "GGUF", 4) != 0) return bad(path, "no GGUF magic", err);
    if (version < 2 || version > 3)
        return nvfp4_error_set(err, NVFP4_EUNSUPPORTED, "%s: GGUF version %u (2 and 3 are read)", path, version);
    uint64_t ntensors = u64(&r), nkv = u64(&r);
    if (!r.ok || ntensors > size / 24 || nkv > size / 12) return bad(path, "counts past the end of the file", err);
    json_t *cfg = json_object(), *nvfp4 = json_object(), *kv = json_object();
    c->qcfg = cfg;
    json_object_set_new(cfg, "nvfp4", nvfp4);
    json_object_set_new(cfg, "kv", kv);
    uint64_t alignment = 32;
    for (uint64_t i = 0; r.ok && i < nkv; i++) {
        char *key = str(&r);
        uint32_t t = u32(&r);
        json_t *v = r.ok ? value(&r, t, 0) : NULL;
        if (key && v && (!strcmp(key, "general.tensor_extra.name") || !strcmp(key, "general.tensor_extra.prec_a4") ||
                         !strcmp(key, "general.file_type") || !strcmp(key, "general.architecture") ||
                         ends_with(key, ".attention.head_count") || ends_with(key, ".attention.head_count_kv")))
            json_object_set(kv, key, v);
        if (key && !strcmp(key, "general.alignment") && json_is_integer(v)) alignment = (uint64_t)json_integer_value(v);
        json_decref(v);
        free(key);
    }
    if (!r.ok) return bad(path, "a key/value pair runs past the end of the file", err);
    if (!alignment || alignment > 4096 || (alignment & (alignment - 1)))
        return bad(path, "general.alignment is not a power of two up to 4096", err);
    nvfp4_st_index *ix = &c->idx[0];
    ix->entries = calloc(ntensors ? ntensors : 1, sizeof *ix->entries);
    if (!ix->entries) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    uint32_t *types = calloc(ntensors ? ntensors : 1, sizeof *types);
    size_t cnt = ntensors ? (size_t)ntensors : 1;
    uint64_t (*ne)[4] = calloc(cnt, sizeof *ne), *rel = calloc(cnt, sizeof *rel);
    unsigned *nd = calloc(cnt, sizeof *nd);
    nvfp4_status s = (!types || !ne || !rel || !nd) ? nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory") : NVFP4_OK;
    for (uint64_t i = 0; !s && i < ntensors; i++) {
        nvfp4_st_entry *e = &ix->entries[ix->count++];
        e->name = str(&r);
        nd[i] = u32(&r);
        if (!r.ok || !e->name || nd[i] < 1 || nd[i] > 4) {
            s = bad(path, "a tensor info is truncated or has more than 4 dimensions", err);
            break;
        }
        for (unsigned d = 0; d < nd[i]; d++) ne[i][d] = u64(&r);
        types[i] = u32(&r);
        rel[i] = u64(&r);
        if (!r.ok) s = bad(path, "the tensor infos run past the end of the file", err);
    }
    size_t data_start = (r.pos + (size_t)alignment - 1) / (size_t)alignment * (size_t)alignment;
    for (size_t i = 0; !s && i < ix->count; i++)
        if (data_start > size ||
            !tensor_entry(&ix->entries[i], types[i], nd[i], ne[i], rel[i], data_start, size, nvfp4))
            s = nvfp4_error_set(err, NVFP4_EFORMAT, "%s: tensor '%s' (ggml type %u) lies outside the file or has a "
                                "shape its type cannot have", path, ix->entries[i].name, types[i]);
    free(types);
    free(ne);
    free(rel);
    free(nd);
    if (s) return s;
    const json_t *ft = json_object_get(kv, "general.file_type");
    char scheme[64];
    snprintf(scheme, sizeof scheme, "GGUF v%u, file type %lld%s", version,
             json_is_integer(ft) ? (long long)json_integer_value(ft) : -1LL,
             json_is_integer(ft) && json_integer_value(ft) == 39 ? " (MOSTLY_NVFP4)" : "");
    if (!(c->scheme = strdup(scheme))) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    c->conv = NVFP4_CKPT_GGUF;
    return NVFP4_OK;
}

/* A per-tensor F32 scale: one value, or one per expert; the value the
 * checks judge is the first that is not a positive finite float, else the
 * largest. */
static bool read_scales(nvfp4_ckpt *c, const ckpt_tensor *t, size_t want, double *v, double *all, nvfp4_error *err,
                        bool *io_failed)
{
    *io_failed = false;
    if (t->e->dtype != NVFP4_T_F32 || (t->e->nbytes != 4 && t->e->nbytes != 4 * want)) return false;
    const uint8_t *p = ckpt_bytes(c, t, err);
    if (!p) return !(*io_failed = true);
    size_t n = t->e->nbytes / 4;
    *v = -INFINITY;
    bool bad_seen = false;
    for (size_t i = 0; i < want; i++) {
        float f;
        memcpy(&f, p + 4 * (n == 1 ? 0 : i), 4);
        all[i] = f;
        if (bad_seen) continue;
        if (!(f > 0) || !isfinite(f)) {
            *v = f;
            bad_seen = true;
        } else if (f > *v) *v = f;
    }
    return true;
}

static nvfp4_status scan_gguf_layer(nvfp4_ckpt *c, const ckpt_tensor *w, nvfp4_ckpt_layer *l, nvfp4_error *err)
{
    const nvfp4_st_entry *e = w->e;
    size_t experts = e->ndim == 3 ? e->shape[0] : 1;
    l->cols = e->shape[e->ndim - 1];
    l->rows = e->nbytes / 36 * 64 / l->cols;
    double *D = malloc(experts * sizeof *D);
    if (!D) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    for (size_t x = 0; x < experts; x++) D[x] = 1.0;
    const ckpt_tensor *g = ckpt_find2(c, l->name, "scale"), *in = ckpt_find2(c, l->name, "input_scale");
    bool io_failed;
    l->has_global = true; /* omitted means 1 (the converter drops a scale within 1e-6 of 1) */
    l->global_scale = 1.0;
    if (g) l->has_global = read_scales(c, g, experts, &l->global_scale, D, err, &io_failed);
    if (g && io_failed) {
        free(D);
        return err->status;
    }
    l->decode_mult = l->global_scale;
    l->amax_implied = CKPT_GLOBAL_CONST * l->decode_mult;
    if (in) {
        double *tmp = malloc(experts * sizeof *tmp);
        l->has_input_scale = tmp && read_scales(c, in, experts, &l->input_scale, tmp, err, &io_failed);
        free(tmp);
        if (io_failed) {
            free(D);
            return err->status;
        }
    }
    const uint8_t *blocks = ckpt_bytes(c, w, err);
    size_t n = l->rows * l->cols, per = n / experts;
    uint8_t *codes = malloc(n / 2 + 1), *scales = malloc(n / 16 + 1);
    nvfp4_status st = NVFP4_OK;
    if (!blocks) st = err->status;
    else if (!codes || !scales) st = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    else st = nvfp4_ggml_nvfp4_unpack(blocks, e->nbytes, l->rows, l->cols, codes, scales, err);
    for (size_t x = 0; !st && x < experts; x++) {
        nvfp4_ckpt_layer part = {0};
        ckpt_scan_blocks(codes + x * per / 2, scales + x * per / 16, per / 16, l->has_global ? D[x] : 1.0, &part);
        ckpt_merge_stats(l, &part);
    }
    if (!st) l->decoded = true;
    free(codes);
    free(scales);
    free(D);
    ckpt_release(c, w);
    return st;
}

nvfp4_status ckpt_scan_gguf(nvfp4_ckpt *c, nvfp4_ckpt_progress progress, void *ctx, nvfp4_ckpt_report *rep,
                            nvfp4_error *err)
{
    size_t n = json_object_size(json_object_get(c->qcfg, "nvfp4"));
    rep->layers = calloc(n ? n : 1, sizeof *rep->layers);
    if (!rep->layers) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    for (size_t i = 0; i < c->ntensors; i++) {
        const ckpt_tensor *t = &c->tensors[i];
        size_t len = strlen(t->e->name);
        if (!ckpt_gguf_is_nvfp4(c, t->e->name)) continue;
        nvfp4_ckpt_layer *l = &rep->layers[rep->nlayers++];
        l->weight_tensor = strdup(t->e->name);
        l->name = strndup(t->e->name, len > 7 && !strcmp(t->e->name + len - 7, ".weight") ? len - 7 : len);
        l->weight_only = ckpt_gguf_weight_only(c, t->e->name);
        l->algo = strdup(l->weight_only ? "NVFP4 (prec_a4 false)" : "NVFP4");
        if (!l->name || !l->weight_tensor || !l->algo) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
        nvfp4_status st = scan_gguf_layer(c, t, l, err);
        if (st) return st;
        rep->bytes_scanned += t->e->nbytes;
        if (!ckpt_check_layer(c, l, rep)) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
        if (progress) progress(rep->nlayers, n, l->name, ctx);
    }
    return ckpt_check_layers(c, rep, err);
}

/* The head counts of the model (the converter's "<arch>.attention.head_count"
 * and "...head_count_kv"); 0 when the file does not say. */
void ckpt_gguf_heads(const nvfp4_ckpt *c, size_t *n_head, size_t *n_head_kv)
{
    *n_head = *n_head_kv = 0;
    const json_t *kv = json_object_get(c->qcfg, "kv"), *arch = json_object_get(kv, "general.architecture");
    if (!json_is_string(arch)) return;
    char key[128];
    snprintf(key, sizeof key, "%s.attention.head_count", json_string_value(arch));
    const json_t *h = json_object_get(kv, key);
    snprintf(key, sizeof key, "%s.attention.head_count_kv", json_string_value(arch));
    const json_t *hk = json_object_get(kv, key);
    if (json_is_integer(h) && json_integer_value(h) > 0) *n_head = (size_t)json_integer_value(h);
    *n_head_kv = json_is_integer(hk) && json_integer_value(hk) > 0 ? (size_t)json_integer_value(hk) : *n_head;
}

/* Whether the file's q/k rows are in llama.cpp's RoPE order: the converter
 * permutes them for the llama architecture (conversion/llama.py
 * LlamaModel.permute, applied to NVFP4 weights and their scales alike in
 * its _repack_nvfp4; Mixtral converts as llama). */
bool ckpt_gguf_qk_permuted(const nvfp4_ckpt *c)
{
    const json_t *arch = json_object_get(json_object_get(c->qcfg, "kv"), "general.architecture");
    return json_is_string(arch) && !strcmp(json_string_value(arch), "llama");
}

/* The GGUF name of a safetensors layer "model.layers.N.M" and, for an expert
 * of a merged tensor, its index (-1 otherwise); false for a name the
 * converter's llama/Mixtral tensor map has no entry for. */
bool ckpt_gguf_name_of(const char *hf, char *out, size_t cap, int *expert)
{
    static const char *const plain[][2] = {{"self_attn.q_proj", "attn_q"},    {"self_attn.k_proj", "attn_k"},
                                           {"self_attn.v_proj", "attn_v"},    {"self_attn.o_proj", "attn_output"},
                                           {"mlp.gate_proj", "ffn_gate"},     {"mlp.up_proj", "ffn_up"},
                                           {"mlp.down_proj", "ffn_down"}};
    unsigned layer, e;
    int n = 0;
    *expert = -1;
    if (sscanf(hf, "model.layers.%u.%n", &layer, &n) != 1 || n == 0) return false;
    const char *m = hf + n, *x = strstr(m, ".experts.");
    for (size_t i = 0; !x && i < sizeof plain / sizeof plain[0]; i++)
        if (!strcmp(m, plain[i][0])) return (size_t)snprintf(out, cap, "blk.%u.%s", layer, plain[i][1]) < cap;
    int k = 0;
    if (!x || sscanf(x, ".experts.%u.%n", &e, &k) != 1 || k == 0) return false;
    int p = strchr(x + k, '.') ? -1 : ckpt_expert_proj(x + k);
    if (p < 0) return false;
    *expert = (int)e;
    return (size_t)snprintf(out, cap, "blk.%u.%s", layer, ckpt_expert_proj_name(p, 2)) < cap;
}

/* The q/k row order of a llama GGUF: its row g holds the safetensors row
 * h*2d + half*d + i where g = h*2d + 2i + half (LlamaModel.permute:
 * reshape(n_head, 2, d, ...).swapaxes(1, 2)). NULL for other tensors, or
 * rows the head count does not divide. */
size_t *ckpt_gguf_rope_rowmap(const nvfp4_ckpt *g, const char *gguf_name, size_t rows, nvfp4_error *err, bool *oom)
{
    *oom = false;
    size_t nh, nkv, len = strlen(gguf_name);
    bool q = len > 7 && !strcmp(gguf_name + len - 7, ".attn_q"), k = len > 7 && !strcmp(gguf_name + len - 7, ".attn_k");
    if (!(q || k) || !ckpt_gguf_qk_permuted(g)) return NULL;
    ckpt_gguf_heads(g, &nh, &nkv);
    size_t heads = k ? nkv : nh;
    if (!heads || rows % (2 * heads)) return NULL;
    size_t *map = malloc(rows * sizeof *map), per = rows / heads, half = per / 2;
    if (!map) {
        *oom = true;
        nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
        return NULL;
    }
    /* map[hf row] = gguf row */
    for (size_t h = 0; h < heads; h++)
        for (size_t i = 0; i < half; i++)
            for (size_t s = 0; s < 2; s++) map[h * per + s * half + i] = h * per + 2 * i + s;
    return map;
}

/* The multiplier of expert e (or of the tensor) from NAME.scale: 1 where
 * the converter left it out. */
float ckpt_gguf_multiplier(nvfp4_ckpt *g, const char *name, int e, nvfp4_error *err, bool *ok)
{
    *ok = true;
    const ckpt_tensor *t = ckpt_find2(g, name, "scale");
    if (!t) return 1.0f;
    const uint8_t *p = ckpt_bytes(g, t, err);
    size_t n = t->e->nbytes / 4, i = e < 0 || n == 1 ? 0 : (size_t)e;
    if (!p || t->e->dtype != NVFP4_T_F32 || i >= n) {
        *ok = p != NULL;
        return NAN;
    }
    float v;
    memcpy(&v, p + 4 * i, 4);
    return v;
}
