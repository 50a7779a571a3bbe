/* sha256.c - SHA-256 of a buffer and of a file (OpenSSL's EVP digest), as
 * lowercase hex, for MANIFEST files and bundle checksums. */
#include "io_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <openssl/evp.h>

void nvfp4_sha256_hex(const void *buf, size_t len, char hex[65])
{
    unsigned char md[32];
    unsigned int mdlen = 0;
    EVP_Digest(buf, len, md, &mdlen, EVP_sha256(), NULL);
    for (unsigned i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
    hex[64] = '\0';
}

/* Streams the file through the digest in 1 MiB pieces: hashing a large
 * tensor file costs no memory of its size. */
nvfp4_status nvfp4_sha256_file(const char *path, char hex[65], nvfp4_error *err)
{
    struct stat st;
    FILE *f = io_open_regular(path, &st, err);
    if (!f) return NVFP4_EIO;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    size_t cap = (size_t)1 << 20;
    unsigned char *buf = malloc(cap);
    nvfp4_status rc = NVFP4_OK;
    if (!md || !buf || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1)
        rc = nvfp4_error_set(err, NVFP4_ENOMEM, "%s: out of memory", path);
    size_t got;
    while (!rc && (got = fread(buf, 1, cap, f)) > 0)
        if (EVP_DigestUpdate(md, buf, got) != 1) rc = nvfp4_error_set(err, NVFP4_EIO, "%s: hashing failed", path);
    if (!rc && ferror(f)) rc = nvfp4_error_set(err, NVFP4_EIO, "%s: read error", path);
    unsigned char out[32];
    unsigned int outlen = 0;
    if (!rc && EVP_DigestFinal_ex(md, out, &outlen) != 1) rc = nvfp4_error_set(err, NVFP4_EIO, "%s: hashing failed", path);
    if (!rc)
        for (unsigned i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", out[i]);
    if (!rc) hex[64] = '\0';
    EVP_MD_CTX_free(md);
    free(buf);
    fclose(f);
    return rc;
}
