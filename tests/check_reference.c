/* check_reference.c - the library against the committed golden suite
 * (reference/): for every bundle listed in a MANIFEST, quantize its x with
 * the options recorded in its metadata and demand that every component
 * (data, scale, scale_swizzled, amax, dequant and the *_t ones) equals the
 * committed bytes. Also checks the bundle loader accepts each file. The
 * folder is $NVFP4_REFERENCE, default ./reference (make runs from the root). */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvfp4.h"
#include "nvfp4/io.h"
#include "support/check_main.h"

static const char *ref_dir(void)
{
    const char *d = getenv("NVFP4_REFERENCE");
    return d ? d : "reference";
}

static int n_bundles, n_components;

/* Quantizes the bundle's x again and compares component by component. */
static void check_bundle(const char *path)
{
    nvfp4_tensor_set s, r;
    nvfp4_tset_init(&s);
    nvfp4_tset_init(&r);
    nvfp4_error err;
    ck_assert_msg(nvfp4_bundle_load(path, &s, &err) == NVFP4_OK, "%s", err.message);
    nvfp4_quant_opts o;
    ck_assert_msg(nvfp4_bundle_opts(&s, path, &o, &err) == NVFP4_OK, "%s", err.message);
    const nvfp4_tensor *x = nvfp4_tset_find(&s, "x");
    ck_assert_ptr_nonnull(x);
    nvfp4_dtype dt = x->dtype == NVFP4_T_BF16 ? NVFP4_DTYPE_BF16 : NVFP4_DTYPE_F32;
    nvfp4_quantized q;
    ck_assert_msg(nvfp4_quantize(x->data, dt, x->shape[0], x->shape[1], &o, &q, &err) == NVFP4_OK, "%s: %s", path,
                  err.message);
    ck_assert_msg(nvfp4_bundle_build(&q, x->data, dt, x->shape[0], x->shape[1], &r, &err) == NVFP4_OK, "%s",
                  err.message);
    ck_assert_uint_eq(r.count, s.count);
    for (size_t i = 0; i < s.count; i++) {
        const nvfp4_tensor *a = &s.tensors[i], *b = nvfp4_tset_find(&r, a->name);
        ck_assert_msg(b != NULL, "%s: component %s not produced", path, a->name);
        ck_assert_uint_eq(a->nbytes, b->nbytes);
        size_t first = a->nbytes;
        for (size_t k = 0; k < a->nbytes; k++)
            if (a->data[k] != b->data[k]) {
                first = k;
                break;
            }
        ck_assert_msg(first == a->nbytes, "%s: component %s differs first at byte %zu", path, a->name, first);
        n_components++;
    }
    n_bundles++;
    nvfp4_quantized_free(&q);
    nvfp4_tset_free(&s);
    nvfp4_tset_free(&r);
}

/* Every "sha256  file" line of DIR/MANIFEST names a bundle. */
static void check_suite(const char *dir)
{
    char m[2048], line[1024];
    snprintf(m, sizeof m, "%s/MANIFEST", dir);
    FILE *f = fopen(m, "r");
    ck_assert_msg(f != NULL, "cannot open %s", m);
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        char *name = strstr(line, "  ");
        ck_assert_ptr_nonnull(name);
        name += 2;
        name[strcspn(name, "\n")] = '\0';
        char p[2048];
        snprintf(p, sizeof p, "%s/%s", dir, name);
        check_bundle(p);
    }
    fclose(f);
}

START_TEST(library_reproduces_reference)
{
    DIR *d = opendir(ref_dir());
    ck_assert_msg(d != NULL, "no %s folder (run from the repository root)", ref_dir());
    struct dirent *e;
    int suites = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char sub[1024], m[1100];
        snprintf(sub, sizeof sub, "%s/%s", ref_dir(), e->d_name);
        snprintf(m, sizeof m, "%s/MANIFEST", sub);
        FILE *f = fopen(m, "r");
        if (!f) continue;
        fclose(f);
        check_suite(sub);
        suites++;
    }
    closedir(d);
    /* te, torchao, mxfp4-rceil, each RN and SR (tools/golden-reference.sh). */
    ck_assert_int_ge(suites, 6);
    ck_assert_int_ge(n_bundles, 6 * 30);
    printf("check_reference: %d suites, %d bundles, %d components byte-identical\n", suites, n_bundles,
           n_components);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("reference");
    TCase *tc = tcase_create("golden");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, library_reproduces_reference);
    suite_add_tcase(s, tc);
    return nvfp4_check_run_nofork(s);
}
