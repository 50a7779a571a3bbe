/* pack_vectors.c - the codec vectors of a golden pack (docs/verify.md,
 * "Golden packs"): E2M1, E4M3, UE8M0 and UE5M3, each decoded at every code
 * and encoded at every grid value, every midpoint between two neighbouring
 * codes (the ties, subnormal ones included) with the floats just above and
 * below it, and the saturation and special inputs, in both signs. The
 * inputs are built from the library's own decoders (a midpoint is the mean
 * of two decoded neighbours, exact in fp32); every expected output is the
 * library's conversion of the input (nvfp4/formats.h). No rounding rule is
 * written here. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/formats.h"
#include "verify/pack_internal.h"

/* ---- the JSON table builder ----------------------------------------------------------------------- */

bool pack_table_new(pack_table *t, json_t *tables, const char *name, const char *desc)
{
    memset(t, 0, sizeof *t);
    t->obj = json_object();
    t->inputs = json_object();
    t->outputs = json_object();
    t->float_bits = json_array();
    if (!t->obj || !t->inputs || !t->outputs || !t->float_bits ||
        json_object_set_new(t->obj, "name", json_string(name)) ||
        json_object_set_new(t->obj, "description", json_string(desc)) ||
        json_object_set_new(t->obj, "inputs", t->inputs) || json_object_set_new(t->obj, "outputs", t->outputs) ||
        json_object_set_new(t->obj, "float_bits", t->float_bits) || json_array_append_new(tables, t->obj))
        return false; /* the objects hang off tables (freed with it) or leak on out of memory only */
    return true;
}

json_t *pack_col(pack_table *t, const char *name, bool out, bool float_bits)
{
    json_t *where = out ? t->outputs : t->inputs, *col = json_object_get(where, name);
    if (col) return col;
    col = json_array();
    if (!col || json_object_set_new(where, name, col)) return NULL;
    if (float_bits && json_array_append_new(t->float_bits, json_string(name))) return NULL;
    return col;
}

bool pack_put_int(json_t *col, long long v) { return col && json_array_append_new(col, json_integer(v)) == 0; }

bool pack_put_f32_text(json_t *col, float x)
{
    char buf[48];
    return col && json_array_append_new(col, json_string(nvfp4_format_f32_shortest(x, buf, sizeof buf))) == 0;
}

long long pack_f32_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return (long long)u;
}

json_t *pack_vectors_file(const char *codec, const char *desc, json_t **tables)
{
    json_t *f = json_object();
    *tables = json_array();
    if (!f || !*tables || json_object_set_new(f, "format", json_string(PACK_VECTORS_FORMAT)) ||
        json_object_set_new(f, "format_version", json_string(PACK_FORMAT_VERSION)) ||
        json_object_set_new(f, "codec", json_string(codec)) ||
        json_object_set_new(f, "description", json_string(desc)) || json_object_set_new(f, "tables", *tables)) {
        json_decref(f);
        return NULL;
    }
    return f;
}

/* ---- input lists ------------------------------------------------------------------------------------ */

typedef struct {
    float *v;
    size_t n, cap;
    bool failed;
} flist;

static void add(flist *l, float x)
{
    if (l->failed) return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        float *v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            l->failed = true;
            return;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = x;
}

/* x and the floats just above and below it (x > 0). */
static void add_with_neighbours(flist *l, float x)
{
    add(l, x);
    add(l, nextafterf(x, INFINITY));
    if (x > 0.0f) add(l, nextafterf(x, 0.0f));
}

/* Every code value of decode (codes 0 .. last) with its neighbours, and every
 * midpoint between codes c and c+1 with its neighbours. */
static void add_grid(flist *l, float (*decode)(uint8_t), unsigned last)
{
    for (unsigned c = 0; c <= last; c++) {
        float v = decode((uint8_t)c);
        if (v > 0.0f) add_with_neighbours(l, v);
        if (c < last) add_with_neighbours(l, (v + decode((uint8_t)(c + 1))) * 0.5f); /* exact: adjacent codes */
    }
}

/* The specials every codec sees: zero, the smallest subnormal, FLT_MIN,
 * FLT_MAX, infinity and NaN. */
static void add_specials(flist *l)
{
    add(l, 0.0f);
    add(l, 0x1p-149f);
    add(l, FLT_MIN);
    add(l, FLT_MAX);
    add(l, INFINITY);
    add(l, NAN);
}

/* Then every value again with its sign flipped. */
static void add_negatives(flist *l)
{
    size_t n = l->n;
    for (size_t i = 0; i < n; i++) add(l, -l->v[i]);
}

/* ---- tables --------------------------------------------------------------------------------------- */

/* Decoding every code 0 .. ncodes-1 to its fp32 value. */
static bool decode_table(json_t *tables, const char *desc, unsigned ncodes, float (*decode)(uint8_t))
{
    pack_table t;
    if (!pack_table_new(&t, tables, "decode", desc)) return false;
    json_t *code = pack_col(&t, "code", false, false), *value = pack_col(&t, "value", false, false),
           *bits = pack_col(&t, "value_bits", true, true);
    bool ok = true;
    for (unsigned c = 0; ok && c < ncodes; c++) {
        float v = decode((uint8_t)c);
        ok = pack_put_int(code, c) && pack_put_f32_text(value, v) && pack_put_int(bits, pack_f32_bits(v));
    }
    return ok;
}

/* One encode table: the inputs of l, one output column per mode, each the
 * library's conversion (encode(x, mode)). */
static bool encode_table(json_t *tables, const char *name, const char *desc, const flist *l, size_t nmodes,
                         const char *const *mode_names, uint8_t (*encode)(float, int))
{
    pack_table t;
    if (l->failed || !pack_table_new(&t, tables, name, desc)) return false;
    json_t *xb = pack_col(&t, "x_bits", false, false), *xt = pack_col(&t, "x", false, false), *out[8];
    for (size_t m = 0; m < nmodes; m++) out[m] = pack_col(&t, mode_names[m], true, false);
    bool ok = true;
    for (size_t i = 0; ok && i < l->n; i++) {
        ok = pack_put_int(xb, pack_f32_bits(l->v[i])) && pack_put_f32_text(xt, l->v[i]);
        for (size_t m = 0; ok && m < nmodes; m++) ok = pack_put_int(out[m], encode(l->v[i], (int)m));
    }
    return ok;
}

static uint8_t e2m1_mode(float x, int m) { return nvfp4_e2m1_from_f32(x, m ? NVFP4_RZ : NVFP4_RN, 0); }
static uint8_t e4m3_mode(float x, int m) { return nvfp4_e4m3_from_f32(x, m == 0); }
static uint8_t ue8m0_mode(float x, int m) { return nvfp4_ue8m0_from_f32(x, (nvfp4_ue8m0_mode)m); }
static uint8_t ue5m3_mode(float x, int m) { return nvfp4_ue5m3_from_f32(x, (nvfp4_ue5m3_mode)m); }

/* SR: each input with the random bytes 0 and 255 and the two on either side
 * of where its code steps away from zero (found with the library's encoder,
 * so the pack states where the step is without restating the rule). */
static bool e2m1_sr_table(json_t *tables)
{
    static const float mags[] = {0.1f, 0.25f, 0.3f, 0.6f, 0.75f, 1.1f, 1.3f, 1.75f, 2.2f, 2.9f,
                                 3.3f, 4.5f, 5.5f, 5.99f, 6.0f, 6.5f, 0.0f, 0x1p-149f, INFINITY, NAN};
    pack_table t;
    if (!pack_table_new(&t, tables, "encode_sr",
                        "E2M1 stochastic rounding: x with its 8 random bits rbits; away from zero iff "
                        "floor(256*frac) + rbits >= 256, frac the position of |x| in its E2M1 step"))
        return false;
    json_t *xb = pack_col(&t, "x_bits", false, false), *xt = pack_col(&t, "x", false, false),
           *rb = pack_col(&t, "rbits", false, false), *code = pack_col(&t, "code", true, false);
    bool ok = true;
    for (int sign = 0; ok && sign < 2; sign++)
        for (size_t i = 0; ok && i < sizeof mags / sizeof mags[0]; i++) {
            float x = sign ? -mags[i] : mags[i];
            uint8_t c0 = nvfp4_e2m1_from_f32(x, NVFP4_SR, 0);
            int step = 256;
            for (int r = 1; r < 256 && step == 256; r++)
                if (nvfp4_e2m1_from_f32(x, NVFP4_SR, (uint8_t)r) != c0) step = r;
            int rs[4] = {0, 255, step - 1, step};
            for (int k = 0; ok && k < (step < 256 ? 4 : 2); k++) {
                if (k >= 2 && (rs[k] == 0 || rs[k] == 255)) continue; /* already listed */
                ok = pack_put_int(xb, pack_f32_bits(x)) && pack_put_f32_text(xt, x) && pack_put_int(rb, rs[k]) &&
                     pack_put_int(code, nvfp4_e2m1_from_f32(x, NVFP4_SR, (uint8_t)rs[k]));
            }
        }
    return ok;
}

static json_t *finish(json_t *f, bool ok, flist *l)
{
    free(l->v);
    if (ok && !l->failed) return f;
    json_decref(f);
    return NULL;
}

json_t *pack_vectors_e2m1(void)
{
    json_t *tables, *f = pack_vectors_file("e2m1", "FP4 E2M1 (element format of NVFP4 and MXFP4): 4-bit codes, "
                                                   "sign in bit 3", &tables);
    flist l = {0};
    add_grid(&l, nvfp4_e2m1_to_f32, 7);
    add(&l, 7.0f); /* beyond 6: where an 8 would start */
    add(&l, 6.5f);
    add_specials(&l);
    add_negatives(&l);
    static const char *const modes[] = {"rn", "rz"};
    bool ok = f && decode_table(tables, "the value of each of the 16 codes", 16, nvfp4_e2m1_to_f32) &&
              encode_table(tables, "encode",
                           "fp32 to E2M1, satfinite: rn (ties to even), rz (toward zero); |x| > 6 and +-Inf give "
                           "+-6, NaN gives 0x7, the sign is kept (-0 gives 0x8)",
                           &l, 2, modes, e2m1_mode) &&
              e2m1_sr_table(tables);
    return finish(f, ok, &l);
}

json_t *pack_vectors_e4m3(void)
{
    json_t *tables, *f = pack_vectors_file("e4m3", "FP8 E4M3 (fn: no infinity, NaN 0x7F/0xFF; the NVFP4 block "
                                                   "scale and the MXFP8 element)", &tables);
    flist l = {0};
    add_grid(&l, nvfp4_e4m3_to_f32, 0x7E);
    add_with_neighbours(&l, 464.0f); /* the midpoint between 448 and a missing 480 */
    add(&l, 480.0f);
    add(&l, 1e10f);
    add_with_neighbours(&l, 0x1p-10f); /* half the smallest subnormal: a tie to 0 */
    add_specials(&l);
    add_negatives(&l);
    static const char *const modes[] = {"satfinite", "nonsat"};
    bool ok = f && decode_table(tables, "the value of each of the 256 bytes (0x7F and 0xFF are NaN)", 256,
                                nvfp4_e4m3_to_f32) &&
              encode_table(tables, "encode",
                           "fp32 to E4M3, round to nearest even: satfinite (|x| > 464 and +-Inf give +-448, 464 "
                           "rounds to 448) and nonsat (|x| > 464 and +-Inf give 0x7F|sign; 464 rounds to 448); "
                           "NaN gives 0x7F",
                           &l, 2, modes, e4m3_mode);
    return finish(f, ok, &l);
}

json_t *pack_vectors_ue8m0(void)
{
    json_t *tables, *f = pack_vectors_file("ue8m0", "UE8M0 (the MX block scale): the power of two 2^(code-127), "
                                                    "0xFF NaN", &tables);
    flist l = {0};
    for (int e = -149; e <= 127; e++) {
        float p = ldexpf(1.0f, e);
        add_with_neighbours(&l, p);
        if (e >= -148) add_with_neighbours(&l, 1.5f * p); /* the tie between 2^e and 2^(e+1) */
    }
    add_specials(&l);
    add(&l, -0.0f);
    add(&l, -1.0f);
    add(&l, -1.5f);
    add(&l, -3.0f);
    add(&l, -INFINITY);
    static const char *const modes[] = {"floor", "rceil", "ceil", "even", "rn", "rn_torch"};
    bool ok = f && decode_table(tables, "the value of each of the 256 codes (0xFF is NaN)", 256,
                                nvfp4_ue8m0_to_f32) &&
              encode_table(tables, "encode",
                           "fp32 to UE8M0 by each rule (docs/semantics.md, \"Scalar codecs\"): floor "
                           "(cvt.rz.satfinite), rceil (cvt.rp.satfinite), ceil, even (torchao MX modes), rn "
                           "(ml_dtypes float8_e8m0fnu), rn_torch (torch float8_e8m0fnu)",
                           &l, 6, modes, ue8m0_mode);
    return finish(f, ok, &l);
}

json_t *pack_vectors_ue5m3(void)
{
    json_t *tables, *f = pack_vectors_file("ue5m3", "UE5M3 (prototype NVFP4 block scale): unsigned, bias 15, "
                                                    "subnormals k*2^-17, max 114688, 0xFF the only NaN", &tables);
    flist l = {0};
    add_grid(&l, nvfp4_ue5m3_to_f32, 0xFE);
    add_with_neighbours(&l, 118784.0f); /* halfway to the missing 1.875 * 2^16 */
    add(&l, 122880.0f);
    add(&l, 1e6f);
    add_with_neighbours(&l, 0x1p-18f); /* half the smallest subnormal: a tie to 0 */
    add_specials(&l);
    add_negatives(&l);
    static const char *const modes[] = {"satfinite", "ml_dtypes"};
    bool ok = f && decode_table(tables, "the value of each of the 256 codes (0xFF is NaN)", 256,
                                nvfp4_ue5m3_to_f32) &&
              encode_table(tables, "encode",
                           "fp32 to UE5M3, round to nearest even: satfinite (the CUDA 13.4 __nv_fp8_ue5m3 "
                           "constructor: x > 114688 and +Inf give 0xFE, negative values 0x00, NaN 0xFF) and "
                           "ml_dtypes (float8_e5m3fnu: x > 118784, +-Inf and negative nonzero values give 0xFF)",
                           &l, 2, modes, ue5m3_mode);
    return finish(f, ok, &l);
}
