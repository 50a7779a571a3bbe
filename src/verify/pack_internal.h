/*
 * pack_internal.h - what the generator (pack_gen.c, pack_vectors.c) and the
 * reader (pack_verify.c) of golden packs share inside the library: the
 * names of the pack's files and the JSON table builder of the vector files.
 * The pack's format is documented in the README.md it carries and in
 * docs/verify.md, "Golden packs".
 */
#ifndef NVFP4_VERIFY_PACK_INTERNAL_H
#define NVFP4_VERIFY_PACK_INTERNAL_H

#include <jansson.h>

#include "nvfp4/formats.h"
#include "nvfp4/suite.h"

#define PACK_INDEX "pack.json"
#define PACK_FORMAT "nvfp4kit-golden-pack"
#define PACK_VECTORS_FORMAT "nvfp4kit-pack-vectors"
#define PACK_FORMAT_VERSION "1"

/* One table of a vector file: columns of equal length, inputs and outputs
 * (arrays of JSON integers; an input may also be informative text). Output
 * columns listed in float_bits hold fp32 bit patterns: any NaN matches any
 * NaN there. */
typedef struct {
    json_t *obj, *inputs, *outputs, *float_bits;
} pack_table;

/* A new table (name, description) appended to the array tables. */
bool pack_table_new(pack_table *t, json_t *tables, const char *name, const char *desc);
/* The column `name` of inputs (outputs with out), created on first use; an
 * output marked float_bits holds fp32 bits. */
json_t *pack_col(pack_table *t, const char *name, bool out, bool float_bits);
/* Appends v to the column (an integer), or the text form of x. */
bool pack_put_int(json_t *col, long long v);
bool pack_put_f32_text(json_t *col, float x);
/* The fp32 bits of x as an unsigned integer. */
long long pack_f32_bits(float x);

/* The vector files, each a JSON object ready to be dumped:
 * e2m1.json, e4m3.json, ue8m0.json, ue5m3.json (pack_vectors.c) and sr.json
 * (pack_gen.c, from the quantizer). NULL when out of memory. */
json_t *pack_vectors_e2m1(void);
json_t *pack_vectors_e4m3(void);
json_t *pack_vectors_ue8m0(void);
json_t *pack_vectors_ue5m3(void);
/* The README.md text before and after the table of suites (pack_readme.c). */
void pack_readme(nvfp4_strbuf *b);
void pack_readme_tail(nvfp4_strbuf *b);
/* The header every vector file starts with. */
json_t *pack_vectors_file(const char *codec, const char *desc, json_t **tables);

#endif /* NVFP4_VERIFY_PACK_INTERNAL_H */
