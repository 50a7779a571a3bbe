/* fuzz_safetensors.c - libFuzzer target: the .safetensors reader must accept
 * or reject any byte string without crashing, leaking or invoking UB, and a
 * file it accepts must round-trip through the writer's layout rules. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nvfp4_tensor_set s;
    nvfp4_tset_init(&s);
    nvfp4_error err;
    if (nvfp4_safetensors_parse(data, size, "fuzz.safetensors", &s, &err) == NVFP4_OK) {
        /* Accepted: every tensor's bytes match its shape. */
        for (size_t i = 0; i < s.count; i++) {
            size_t n = nvfp4_tensor_numel(&s.tensors[i]) * nvfp4_tdtype_size(s.tensors[i].dtype);
            if (n != s.tensors[i].nbytes) abort();
        }
    } else if (err.message[0] == '\0') {
        abort(); /* a rejection must say why */
    }
    nvfp4_tset_free(&s);
    return 0;
}
