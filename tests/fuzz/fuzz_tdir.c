/* fuzz_tdir.c - libFuzzer target for the folder reader (meta.json + .bin or
 * .npy files). The input is meta.json, a NUL byte, then up to four file
 * bodies separated by NUL NUL; body k is served as both <name_k>.bin and
 * <name_k>.npy for the names x, data, scale, amax. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const base[4] = {"x", "data", "scale", "amax"};
    const uint8_t *nul = memchr(data, 0, size);
    size_t jlen = nul ? (size_t)(nul - data) : size;
    const char *names[8];
    const uint8_t *bufs[8];
    size_t lens[8];
    char namebuf[8][16];
    const uint8_t *p = nul ? nul + 1 : data + size, *end = data + size;
    for (int k = 0; k < 4; k++) {
        const uint8_t *q = p;
        while (q + 1 < end && !(q[0] == 0 && q[1] == 0)) q++;
        if (q + 1 >= end) q = end;
        for (int e = 0; e < 2; e++) {
            int i = 2 * k + e;
            strcpy(namebuf[i], base[k]);
            strcat(namebuf[i], e ? ".npy" : ".bin");
            names[i] = namebuf[i];
            bufs[i] = p;
            lens[i] = (size_t)(q - p);
        }
        p = q + 2 <= end ? q + 2 : end;
    }
    nvfp4_tensor_set s;
    nvfp4_tset_init(&s);
    nvfp4_error err;
    err.message[0] = '\0';
    if (nvfp4_tdir_parse_mem((const char *)data, jlen, "fuzz", 8, names, bufs, lens, &s, &err) != NVFP4_OK &&
        err.message[0] == '\0')
        abort();
    nvfp4_tset_free(&s);
    return 0;
}
