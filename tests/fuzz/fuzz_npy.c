/* fuzz_npy.c - libFuzzer target for the .npy reader. */
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
    if (nvfp4_npy_parse(data, size, "fuzz.npy", "x", &s, &err) == NVFP4_OK) {
        if (s.count != 1) abort();
    } else if (err.message[0] == '\0') {
        abort();
    }
    nvfp4_tset_free(&s);
    return 0;
}
