/* open.c - opening a checkpoint folder: the convention from its
 * configuration files, the shard list (model.safetensors.index.json, or
 * every *.safetensors file), each shard's safetensors header and the
 * directory of tensors sorted by name. Tensor data is mapped on first use
 * and read by scan.c; nothing here reads it. */
#include "ckpt_internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static char *path_join(const char *dir, const char *file)
{
    size_t n = strlen(dir) + strlen(file) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, file);
    return p;
}

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Loads a JSON file that must hold an object. */
static nvfp4_status load_json(const char *path, json_t **out, nvfp4_error *err)
{
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    if (!j) {
        if (!file_exists(path)) return nvfp4_error_set(err, NVFP4_EIO, "%s: cannot read the file", path);
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: not valid JSON: %s (line %d)", path, je.text, je.line);
    }
    if (!json_is_object(j)) {
        json_decref(j);
        return nvfp4_error_set(err, NVFP4_EFORMAT, "%s: not a JSON object", path);
    }
    *out = j;
    return NVFP4_OK;
}

static const char *json_str(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* modelopt's hf_quant_config.json ({"producer", "quantization": {quant_algo,
 * group_size, exclude_modules | quantized_layers}}; modelopt 0.47
 * torch/export/unified_export_hf.py _write_hf_export_config), or config.json's
 * quantization_config: quant_method "modelopt" (convert_hf_config.py
 * convert_hf_quant_config_format; our reader then needs hf_quant_config.json)
 * or "compressed-tensors" (config_groups, ignore, format). */
static nvfp4_status read_config(nvfp4_ckpt *c, nvfp4_error *err)
{
    char *hq = path_join(c->dir, "hf_quant_config.json"), *cj = path_join(c->dir, "config.json");
    nvfp4_status st = NVFP4_OK;
    json_t *root = NULL;
    if (!hq || !cj) st = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    else if (file_exists(hq)) {
        st = load_json(hq, &root, err);
        const json_t *q = st ? NULL : json_object_get(root, "quantization");
        if (!st && !json_is_object(q))
            st = nvfp4_error_set(err, NVFP4_EFORMAT, "%s: no \"quantization\" object (modelopt writes one)", hq);
        if (!st) {
            c->conv = NVFP4_CKPT_MODELOPT;
            c->qcfg = json_incref((json_t *)q);
            const char *algo = json_str(q, "quant_algo");
            c->scheme = strdup(algo ? algo : "(no quant_algo)");
        }
    } else if (file_exists(cj)) {
        st = load_json(cj, &root, err);
        const json_t *q = st ? NULL : json_object_get(root, "quantization_config");
        const char *method = q ? json_str(q, "quant_method") : NULL;
        if (!st && (!json_is_object(q) || !method))
            st = nvfp4_error_set(err, NVFP4_EFORMAT,
                                 "%s: no quantization_config with a quant_method: not a quantized checkpoint", cj);
        else if (!st && strcmp(method, "compressed-tensors") == 0) {
            c->conv = NVFP4_CKPT_COMPRESSED_TENSORS;
            c->qcfg = json_incref((json_t *)q);
            const char *fmt = json_str(q, "format");
            c->scheme = strdup(fmt ? fmt : "(no format)");
        } else if (!st && strcmp(method, "modelopt") == 0)
            st = nvfp4_error_set(err, NVFP4_EFORMAT,
                                 "%s: quant_method \"modelopt\" but %s is missing (modelopt writes both)", cj, hq);
        else if (!st)
            st = nvfp4_error_set(err, NVFP4_EUNSUPPORTED,
                                 "%s: quant_method \"%s\" is not an NVFP4 convention this tool reads "
                                 "(modelopt, compressed-tensors)", cj, method);
    } else
        st = nvfp4_error_set(err, NVFP4_EIO, "%s: neither hf_quant_config.json nor config.json found", c->dir);
    if (!st && !c->scheme) st = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    json_decref(root);
    free(hq);
    free(cj);
    return st;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static nvfp4_status add_file(nvfp4_ckpt *c, const char *name, size_t *cap, nvfp4_error *err)
{
    for (size_t i = 0; i < c->nfiles; i++) {
        const char *base = strrchr(c->files[i], '/') + 1;
        if (strcmp(base, name) == 0) return NVFP4_OK;
    }
    if (c->nfiles == *cap) {
        size_t nc = *cap ? 2 * *cap : 8;
        char **nf = realloc(c->files, nc * sizeof *nf);
        if (!nf) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
        c->files = nf;
        *cap = nc;
    }
    if (!(c->files[c->nfiles] = path_join(c->dir, name))) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    c->nfiles++;
    return NVFP4_OK;
}

/* The shards: the files named by model.safetensors.index.json's weight_map,
 * else every *.safetensors file of the folder, in name order. */
static nvfp4_status list_files(nvfp4_ckpt *c, json_t **weight_map, nvfp4_error *err)
{
    size_t cap = 0;
    char *ix = path_join(c->dir, "model.safetensors.index.json");
    if (!ix) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    nvfp4_status st = NVFP4_OK;
    if (file_exists(ix)) {
        json_t *root = NULL;
        st = load_json(ix, &root, err);
        const json_t *wm = st ? NULL : json_object_get(root, "weight_map");
        if (!st && !json_is_object(wm))
            st = nvfp4_error_set(err, NVFP4_EFORMAT, "%s: no \"weight_map\" object", ix);
        const char *k;
        const json_t *v;
        if (!st) json_object_foreach((json_t *)wm, k, v) {
            if (!json_is_string(v) || strchr(json_string_value(v), '/')) {
                st = nvfp4_error_set(err, NVFP4_EFORMAT, "%s: weight_map[\"%s\"] is not a file name in the folder",
                                     ix, k);
                break;
            }
            if ((st = add_file(c, json_string_value(v), &cap, err))) break;
        }
        if (!st) *weight_map = json_incref((json_t *)wm);
        json_decref(root);
    } else {
        DIR *d = opendir(c->dir);
        if (!d) st = nvfp4_error_set(err, NVFP4_EIO, "%s: cannot list the folder", c->dir);
        struct dirent *de;
        while (!st && (de = readdir(d))) {
            size_t n = strlen(de->d_name);
            if (n > 12 && strcmp(de->d_name + n - 12, ".safetensors") == 0 && de->d_name[0] != '.')
                st = add_file(c, de->d_name, &cap, err);
        }
        if (d) closedir(d);
        if (!st && c->nfiles) qsort(c->files, c->nfiles, sizeof *c->files, cmp_str); /* qsort(NULL, 0): UB */
    }
    if (!st && c->nfiles == 0) st = nvfp4_error_set(err, NVFP4_EIO, "%s: no *.safetensors file", c->dir);
    free(ix);
    return st;
}

static nvfp4_status build_directory(nvfp4_ckpt *c, const json_t *weight_map, nvfp4_error *err);

static int cmp_tensor(const void *a, const void *b)
{
    return strcmp(((const ckpt_tensor *)a)->e->name, ((const ckpt_tensor *)b)->e->name);
}

/* Reads every shard's header and builds the sorted directory; a tensor in
 * two shards, or one the index places in a shard that lacks it, is an error. */
static nvfp4_status read_headers(nvfp4_ckpt *c, const json_t *weight_map, nvfp4_error *err)
{
    c->idx = calloc(c->nfiles, sizeof *c->idx);
    c->map = calloc(c->nfiles, sizeof *c->map);
    if (!c->idx || !c->map) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    for (size_t f = 0; f < c->nfiles; f++) {
        nvfp4_status st = nvfp4_safetensors_read_index(c->files[f], &c->idx[f], err);
        if (st) return st;
    }
    return build_directory(c, weight_map, err);
}

/* The directory of every file's tensors, sorted by name; a tensor in two
 * files, or one the index places in a file that lacks it, is an error. */
static nvfp4_status build_directory(nvfp4_ckpt *c, const json_t *weight_map, nvfp4_error *err)
{
    size_t total = 0;
    for (size_t f = 0; f < c->nfiles; f++) total += c->idx[f].count;
    c->tensors = calloc(total ? total : 1, sizeof *c->tensors);
    if (!c->tensors) return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    for (size_t f = 0; f < c->nfiles; f++)
        for (size_t i = 0; i < c->idx[f].count; i++) c->tensors[c->ntensors++] = (ckpt_tensor){&c->idx[f].entries[i], f};
    qsort(c->tensors, c->ntensors, sizeof *c->tensors, cmp_tensor);
    for (size_t i = 1; i < c->ntensors; i++)
        if (strcmp(c->tensors[i].e->name, c->tensors[i - 1].e->name) == 0)
            return nvfp4_error_set(err, NVFP4_EFORMAT, "%s and %s both hold tensor '%s'",
                                   c->files[c->tensors[i - 1].file], c->files[c->tensors[i].file],
                                   c->tensors[i].e->name);
    const char *k;
    const json_t *v;
    if (weight_map) json_object_foreach((json_t *)weight_map, k, v) {
        const ckpt_tensor *t = ckpt_find(c, k);
        const char *base = t ? strrchr(c->files[t->file], '/') + 1 : NULL;
        if (!t || strcmp(base, json_string_value(v)) != 0)
            return nvfp4_error_set(err, NVFP4_EFORMAT,
                                   "%s/model.safetensors.index.json: tensor '%s' is mapped to %s, which does not hold it",
                                   c->dir, k, json_string_value(v));
    }
    return NVFP4_OK;
}

/* The unquantized weights of --original: one .safetensors file, or a
 * folder of them (index or every *.safetensors), no configuration read. */
nvfp4_status ckpt_open_weights(const char *path, nvfp4_ckpt **out, nvfp4_error *err)
{
    *out = NULL;
    struct stat st;
    if (stat(path, &st) != 0) return nvfp4_error_set(err, NVFP4_EIO, "%s: no such file or folder", path);
    nvfp4_ckpt *c = calloc(1, sizeof *c);
    if (!c || !(c->dir = strdup(path)) || !(c->scheme = strdup("original"))) {
        if (c) free(c->dir);
        free(c);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    }
    json_t *weight_map = NULL;
    nvfp4_status s = NVFP4_OK;
    if (S_ISDIR(st.st_mode)) s = list_files(c, &weight_map, err);
    else if (!(c->files = malloc(sizeof *c->files)) || !(c->files[0] = strdup(path)))
        s = nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    else c->nfiles = 1;
    if (!s) s = read_headers(c, weight_map, err);
    json_decref(weight_map);
    if (s) nvfp4_ckpt_close(c);
    else *out = c;
    return s;
}

/* A regular file is read as GGUF when it is named *.gguf or starts with
 * the magic "GGUF" (a temporary file, a .bin). */
static bool looks_gguf(const char *path, const struct stat *st)
{
    size_t plen = strlen(path);
    if (!S_ISREG(st->st_mode)) return false;
    if (plen > 5 && strcmp(path + plen - 5, ".gguf") == 0) return true;
    char magic[4];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    bool yes = fd >= 0 && read(fd, magic, 4) == 4 && memcmp(magic, "GGUF", 4) == 0;
    if (fd >= 0) close(fd);
    return yes;
}

nvfp4_status nvfp4_ckpt_open(const char *path, nvfp4_ckpt **out, nvfp4_error *err)
{
    *out = NULL;
    struct stat st;
    if (stat(path, &st) != 0) return nvfp4_error_set(err, NVFP4_EIO, "%s: no such file or folder", path);
    bool gguf = looks_gguf(path, &st);
    if (!S_ISDIR(st.st_mode) && !gguf)
        return nvfp4_error_set(err, NVFP4_EIO, "%s: not a folder (a checkpoint is a folder with config.json or "
                               "hf_quant_config.json and *.safetensors) nor a GGUF file (*.gguf, or starting "
                               "with the magic GGUF)", path);
    nvfp4_ckpt *c = calloc(1, sizeof *c);
    if (!c || !(c->dir = strdup(path))) {
        free(c);
        return nvfp4_error_set(err, NVFP4_ENOMEM, "out of memory");
    }
    if (gguf) {
        nvfp4_status s = ckpt_open_gguf(c, path, err);
        if (!s) s = build_directory(c, NULL, err);
        if (s) nvfp4_ckpt_close(c);
        else *out = c;
        return s;
    }
    json_t *weight_map = NULL;
    nvfp4_status s = read_config(c, err);
    if (!s) s = list_files(c, &weight_map, err);
    if (!s) s = read_headers(c, weight_map, err);
    json_decref(weight_map);
    if (s) nvfp4_ckpt_close(c);
    else *out = c;
    return s;
}

void nvfp4_ckpt_close(nvfp4_ckpt *c)
{
    if (!c) return;
    for (size_t f = 0; c->files && f < c->nfiles; f++) {
        if (c->map && c->map[f] && c->idx[f].file_size) munmap((void *)c->map[f], c->idx[f].file_size);
        if (c->idx) nvfp4_st_index_free(&c->idx[f]);
        free(c->files[f]);
    }
    free(c->files);
    free(c->idx);
    free(c->map);
    free(c->tensors);
    json_decref(c->qcfg);
    free(c->scheme);
    free(c->dir);
    free(c);
}
