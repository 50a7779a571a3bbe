/* fuzz_bundle.c - libFuzzer target for the bundle loader: a safetensors
 * file is parsed, validated as a golden bundle (metadata and the shape of
 * every component) and turned back into a quantization, which is then
 * dequantized; none of it may crash, leak or invoke UB. */
#include <stdint.h>
#include <stdlib.h>

#include "nvfp4/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nvfp4_tensor_set s;
    nvfp4_tset_init(&s);
    nvfp4_error err;
    err.message[0] = '\0';
    if (nvfp4_safetensors_parse(data, size, "fuzz.safetensors", &s, &err) == NVFP4_OK) {
        (void)nvfp4_bundle_validate(&s, "fuzz.safetensors", true, &err);
        nvfp4_quantized q;
        if (nvfp4_bundle_to_quantized(&s, "fuzz.safetensors", &q, &err) == NVFP4_OK) {
            for (int cw = 0; cw < 2; cw++) {
                const nvfp4_qtensor *t = cw ? &q.col : &q.row;
                if (!(cw ? q.has_col : q.has_row)) continue;
                /* Bounded: the data area of the fuzz input bounds the shape. */
                float *out = malloc(t->rows * t->cols * sizeof *out);
                if (out) (void)nvfp4_dequantize(&q, cw != 0, out, &err);
                free(out);
            }
            nvfp4_quantized_free(&q);
        } else if (err.message[0] == '\0') {
            abort();
        }
    }
    nvfp4_tset_free(&s);
    return 0;
}
