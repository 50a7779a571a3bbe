/* cmd_bench.c - `nvfp4 bench`: throughput of the fast CPU path against the
 * memcpy bound measured in the same run (docs/performance.md).
 *
 * For each kernel: elements per second, GB/s of traffic (the input read once
 * and each output written once) and the ratio of that traffic rate to the
 * memcpy rate (bytes read + bytes written per second of a parallel memcpy of
 * the input). The same kernels run once more with the scalar variant on one
 * thread (the straightforward code: src/core/ called per element) on a
 * quarter of the input, for the speed-up column. Best of --repeat runs after
 * one untimed warm-up that also faults in every output page.
 *
 * What each kernel is lives in the library (nvfp4/bench.h); this file owns
 * the buffers (alignment, huge pages), the inputs, the timing, the memcpy
 * bound, the public-API rows and the report. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "cli.h"
#include "nvfp4/bench.h"
#include "nvfp4/formats.h"
#include "nvfp4/quant.h"
#include "nvfp4/simd.h"

#define CMD "bench"

typedef struct {
    size_t rows, cols, n;
    float *x;
    uint16_t *xb;
    uint8_t *data, *scale, *cdata, *cscale, *swz;
    float *deq;
    size_t nswz;
    int wide;         /* --data wide */
    int hugepages;    /* buffers advised onto 2 MiB pages (--no-hugepages: not) */
    nvfp4_bench *lib; /* the library's kernels on these buffers */
    nvfp4_quant_plan row_plan; /* te, 1x16, RN, rowwise: made once, for nvfp4_quantize_into */
} bench_ctx;

/* A row of the table: a library kernel (nvfp4/bench.h) or a public call
 * timed here. */
typedef struct {
    const char *name;
    double in_bytes_per_elem, out_bytes_per_elem;
    size_t lib;                       /* the library kernel's index, when call is NULL */
    void (*call)(bench_ctx *c);       /* a public call */
    void (*run_scalar)(bench_ctx *c); /* the library's own scalar code, where it differs */
} bench_kernel;

#define MAX_KERNELS 64

/* ---- what is timed here --------------------------------------------------- */

static void k_memcpy(bench_ctx *c)
{
    size_t bytes = c->n * sizeof(float);
    int nt = omp_get_max_threads();
#pragma omp parallel for schedule(static)
    for (int t = 0; t < nt; t++) {
        size_t b0 = bytes / (size_t)nt * (size_t)t, b1 = t == nt - 1 ? bytes : bytes / (size_t)nt * (size_t)(t + 1);
        memcpy((char *)c->deq + b0, (const char *)c->x + b0, b1 - b0);
    }
}

/* The public API as users call it (allocation included): its speed depends
 * on whether the quantizer routes the configuration to the fast path. */
static void lib_quantize(bench_ctx *c, bool columnwise, bool rht)
{
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.columnwise = columnwise;
    o.rht = rht;
    nvfp4_quantized q;
    if (nvfp4_quantize(c->x, NVFP4_DTYPE_F32, c->rows, c->cols, &o, &q, NULL) == NVFP4_OK) nvfp4_quantized_free(&q);
}

static void k_lib_row(bench_ctx *c) { lib_quantize(c, false, false); }

/* The same call as a kernel would make it: the plan made once, the outputs
 * in reused buffers (the columnwise ones, unused by this row), so the call
 * costs its two passes (the global amax, then the fused quantize) and
 * nothing else. Its traffic counts both reads of the input: its memcpy
 * ratio is the fraction of the two-pass bound it reaches. */
static void k_lib_into_row(bench_ctx *c)
{
    nvfp4_quant_buffers b = {c->cdata, c->cscale, NULL, NULL};
    nvfp4_quantized q;
    (void)nvfp4_quantize_into(&c->row_plan, c->x, &b, &q, NULL);
}
static void k_lib_rowcol_rht(bench_ctx *c) { lib_quantize(c, true, true); }

/* The other E2M1 recipes of the generic driver, rowwise with their own
 * block (1x16; te-pow2 1x32), RN, through nvfp4_quantize:
 * on a vector variant the generic fast path, on the scalar baseline their
 * reference path (the speedup column is each recipe's own). */
static void lib_quantize_recipe(bench_ctx *c, const char *recipe)
{
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    o.recipe = recipe;
    nvfp4_quantized q;
    if (nvfp4_quantize(c->x, NVFP4_DTYPE_F32, c->rows, c->cols, &o, &q, NULL) == NVFP4_OK) nvfp4_quantized_free(&q);
}
#define RECIPE_CALL(fn, name) \
    static void fn(bench_ctx *c) { lib_quantize_recipe(c, name); }
RECIPE_CALL(k_te_pyref, "te-pyref")
RECIPE_CALL(k_torchao, "torchao")
RECIPE_CALL(k_torchao_0_13, "torchao-0.13-0.16")
RECIPE_CALL(k_modelopt, "modelopt")
RECIPE_CALL(k_exact, "exact")
RECIPE_CALL(k_te_4over6, "te-4over6")
RECIPE_CALL(k_te_4over6_mse, "te-4over6-mse")
RECIPE_CALL(k_te_4over6_fast, "te-4over6-fast")
RECIPE_CALL(k_te_4over6_mse_fast, "te-4over6-mse-fast")
RECIPE_CALL(k_te_rowscaled, "te-rowscaled")
RECIPE_CALL(k_torchao_1level, "torchao-1level")
RECIPE_CALL(k_fast_math, "fast-math")
RECIPE_CALL(k_ggml, "ggml")
RECIPE_CALL(k_te_pow2, "te-pow2")
static void k_swizzle_lib(bench_ctx *c) { nvfp4_scale_swizzle(c->scale, c->rows, c->cols / 16, c->swz); }

static const double CODES = 0.5 + 1.0 / 16.0; /* packed codes + E4M3 scale per element */
static const double MX_CODES = 0.5 + 1.0 / 32.0; /* packed codes + UE8M0 scale per element (1x32) */

/* The public calls, each placed before the library kernel named `before`
 * (at the end when there is none), and the library kernels whose baseline
 * is the library's plain code rather than the same kernel on the scalar
 * variant. */
static const struct {
    bench_kernel row;
    const char *before;
} public_rows[] = {
    {{"lib_quantize_te_row", 4, CODES, 0, k_lib_row, NULL}, "scale_swizzle"},
    {{"lib_quantize_into_te_row", 8, CODES, 0, k_lib_into_row, NULL}, "scale_swizzle"},
    {{"lib_quantize_te_row+col_rht", 4, 2 * CODES, 0, k_lib_rowcol_rht, NULL}, "scale_swizzle"},
    {{"lib_quantize_te-pyref", 4, CODES, 0, k_te_pyref, NULL}, "scale_swizzle"},
    {{"lib_quantize_torchao", 4, CODES, 0, k_torchao, NULL}, "scale_swizzle"},
    {{"lib_quantize_torchao-0.13-0.16", 4, CODES, 0, k_torchao_0_13, NULL}, "scale_swizzle"},
    {{"lib_quantize_modelopt", 4, CODES, 0, k_modelopt, NULL}, "scale_swizzle"},
    {{"lib_quantize_exact", 4, CODES, 0, k_exact, NULL}, "scale_swizzle"},
    {{"lib_quantize_te-4over6", 4, CODES, 0, k_te_4over6, NULL}, "scale_swizzle"},
    {{"lib_quantize_te-4over6-mse", 4, CODES, 0, k_te_4over6_mse, NULL}, "scale_swizzle"},
    {{"lib_quantize_te-4over6-fast", 4, CODES, 0, k_te_4over6_fast, NULL}, "scale_swizzle"},
    {{"lib_quantize_te-4over6-mse-fast", 4, CODES, 0, k_te_4over6_mse_fast, NULL}, "scale_swizzle"},
    {{"lib_quantize_te-rowscaled", 4, CODES, 0, k_te_rowscaled, NULL}, "scale_swizzle"},
    {{"lib_quantize_torchao-1level", 4, CODES, 0, k_torchao_1level, NULL}, "scale_swizzle"},
    {{"lib_quantize_fast-math", 4, CODES, 0, k_fast_math, NULL}, "scale_swizzle"},
    {{"lib_quantize_ggml", 4, CODES, 0, k_ggml, NULL}, "scale_swizzle"},
    {{"lib_quantize_te-pow2", 4, MX_CODES, 0, k_te_pow2, NULL}, "scale_swizzle"},
};
static const struct {
    const char *name;
    void (*run_scalar)(bench_ctx *c);
} baselines[] = {{"scale_swizzle", k_swizzle_lib}};
#define NPUBLIC (sizeof public_rows / sizeof public_rows[0])

static bool names_a_kernel(const char *name)
{
    for (size_t k = 0; k < nvfp4_bench_kernel_count(); k++)
        if (strcmp(nvfp4_bench_kernel_name(k), name) == 0) return true;
    return false;
}

/* Appends the public rows that go before library kernel `before` (NULL: at
 * the end, those whose kernel the library does not have). */
static void add_public_rows(const char *before, bench_kernel *t, size_t *n)
{
    for (size_t p = 0; p < NPUBLIC; p++) {
        const char *want = public_rows[p].before;
        bool here = before ? strcmp(before, want) == 0 : !names_a_kernel(want);
        if (here && *n < MAX_KERNELS) t[(*n)++] = public_rows[p].row;
    }
}

/* The table in display order: the library's kernels with the public calls
 * among them. */
static size_t build_table(bench_kernel *t)
{
    size_t n = 0;
    for (size_t k = 0; k < nvfp4_bench_kernel_count() && n < MAX_KERNELS; k++) {
        const char *name = nvfp4_bench_kernel_name(k);
        add_public_rows(name, t, &n);
        bench_kernel row = {name, nvfp4_bench_kernel_in_bytes(k), nvfp4_bench_kernel_out_bytes(k), k, NULL, NULL};
        for (size_t i = 0; i < sizeof baselines / sizeof baselines[0]; i++)
            if (strcmp(name, baselines[i].name) == 0) row.run_scalar = baselines[i].run_scalar;
        if (n < MAX_KERNELS) t[n++] = row;
    }
    add_public_rows(NULL, t, &n);
    return n;
}

static const bench_kernel memcpy_row = {"memcpy", 4, 4, 0, k_memcpy, NULL};

static void run_kernel(bench_ctx *c, const bench_kernel *k, bool baseline)
{
    if (baseline && k->run_scalar) k->run_scalar(c);
    else if (k->call) k->call(c);
    else nvfp4_bench_run(c->lib, k->lib);
}

/* ---- setup ----------------------------------------------------------------- */

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Deterministic inputs. gauss (default): standard normal (Box-Muller on a
 * hash of the index), like activations and gradients within a block; the
 * RHT kernels then take their fp32 paths (99.7% of 16x16 tiles have an
 * exponent spread <= 17). wide: the same kind of value times a random
 * 2^0..2^15 per element, a stress case whose tiles mostly need the
 * binary64 RHT path (docs/performance.md). */
static float gauss_of(uint64_t h)
{
    double u1 = ((double)(h >> 40) + 0.5) * 0x1p-24, u2 = (double)(h & 0xFFFFFF) * 0x1p-24;
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

static void fill(bench_ctx *c)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < c->n; i++) {
        uint64_t h = mix(i * 0x9E3779B97F4A7C15ull + 1);
        float v = gauss_of(h);
        if (c->wide) v *= (float)(1u << ((h >> 24) & 15u));
        c->x[i] = v;
        c->xb[i] = nvfp4_bf16_from_f32(v);
    }
}

/* Buffers start on a cache line, as tensor allocators place them (PyTorch's
 * CPU allocator aligns to 64 bytes): malloc's large blocks start 16 bytes
 * into a page, which splits every 64-byte row segment over two lines and
 * costs the columnwise kernels 10-20% (docs/performance.md). With
 * hugepages, buffers of 2 MiB or more start on a 2 MiB boundary and are
 * advised onto transparent huge pages (MADV_HUGEPAGE, as
 * nvfp4_quant_alloc_output does for the library's outputs): the columnwise
 * kernels read 16 rows 32 KiB apart, one 4 KiB page each, and on 4 KiB
 * pages lose 5-9% to TLB misses (docs/performance.md). Advice only: the
 * header reports what the kernel granted. */
static void *alloc_touched(size_t bytes, int hugepages)
{
    size_t align = 64;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const size_t huge = (size_t)2 << 20;
    if (hugepages && bytes >= huge) align = huge;
#else
    (void)hugepages;
#endif
    size_t rounded = (bytes + align - 1) / align * align;
    void *p = aligned_alloc(align, rounded);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p && align > 64) (void)madvise(p, rounded, MADV_HUGEPAGE);
#endif
    if (p) memset(p, 0, bytes);
    return p;
}

/* KiB of this process's anonymous memory on transparent huge pages
 * (/proc/self/smaps_rollup), or -1 where that cannot be read. */
static long anon_hugepages_kib(void)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    if (!f) return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "AnonHugePages: %ld kB", &kib) == 1) break;
    fclose(f);
    return kib;
}

static bool setup(bench_ctx *c, size_t n, size_t cols, int wide, int hugepages)
{
    memset(c, 0, sizeof *c);
    c->wide = wide;
    c->hugepages = hugepages;
    c->cols = cols;
    c->rows = n / cols;
    c->n = c->rows * cols;
    c->x = alloc_touched(c->n * 4, hugepages);
    c->xb = alloc_touched(c->n * 2, hugepages);
    c->data = alloc_touched(c->n / 2, hugepages);
    c->scale = alloc_touched(c->n / 16, hugepages);
    c->cdata = alloc_touched(c->n / 2, hugepages);
    c->cscale = alloc_touched(c->n / 16, hugepages);
    c->deq = alloc_touched(c->n * 4, hugepages);
    c->nswz = nvfp4_swizzled_size(c->rows, cols / 16);
    c->swz = alloc_touched(c->nswz, hugepages);
    if (!c->x || !c->xb || !c->data || !c->scale || !c->cdata || !c->cscale || !c->deq || !c->swz) return false;
    fill(c);
    nvfp4_bench_buffers b = {c->rows, c->cols, c->x, c->xb, c->deq, c->data, c->scale, c->cdata, c->cscale, c->swz};
    c->lib = nvfp4_bench_prepare(&b, NULL);
    nvfp4_quant_opts o;
    nvfp4_quant_opts_init(&o);
    return c->lib != NULL && nvfp4_quant_plan_init(&c->row_plan, &o, NVFP4_DTYPE_F32, c->rows, c->cols, NULL) == NVFP4_OK;
}

static void teardown(bench_ctx *c)
{
    nvfp4_bench_free(c->lib);
    free(c->x);
    free(c->xb);
    free(c->data);
    free(c->scale);
    free(c->cdata);
    free(c->cscale);
    free(c->deq);
    free(c->swz);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The main thread's effective clock in GHz (0 where not measured): a chain
 * of dependent integer additions runs at one per cycle, so a figure well
 * below the CPU's clock means the host gave the core to someone else (on
 * a KVM guest: another tenant on the same physical core), which busy does
 * not show. */
static double effective_clock_ghz(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    const uint64_t n = 50000000u;
    uint64_t x = 0;
    double t0 = now();
    for (uint64_t i = 0; i < n; i++) __asm__ volatile("add $1, %0" : "+r"(x));
    return (double)n / (now() - t0) * 1e-9;
#else
    return 0.0;
#endif
}

/* Best wall time of `repeat` runs; *busy = CPU time / (wall time * threads)
 * of that run: well below 1 means the machine was shared while measuring. */
static double best_time(const bench_kernel *k, bool baseline, bench_ctx *c, int repeat, double *busy)
{
    run_kernel(c, k, baseline); /* warm-up */
    double best = 1e300, best_busy = 0.0;
    for (int r = 0; r < repeat; r++) {
        double t0 = now(), c0 = cpu_now();
        run_kernel(c, k, baseline);
        double t = now() - t0, ct = cpu_now() - c0;
        if (t < best) {
            best = t;
            best_busy = ct / (t * (double)omp_get_max_threads());
        }
    }
    if (busy) *busy = best_busy;
    return best;
}

/* ---- command --------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: nvfp4 bench [--size MIB] [--threads T] [--variant V] [--data D] [--repeat R] [--kernels K,...]\n"
            "                   [--no-scalar] [--no-hugepages] [--json]\n"
            "       nvfp4 bench --variants     (list the SIMD variants this CPU runs, one per line)\n"
            "Throughput of the fast CPU path (te recipe) against a memcpy measured in the same run.\n"
            "  --size MIB     fp32 input size in MiB (default 256; at least 1)\n"
            "  --threads T    OpenMP threads (default: OMP_NUM_THREADS or all cores)\n"
            "  --variant V    scalar, avx2, avx512, neon or auto (default: NVFP4_SIMD or the best the CPU has)\n"
            "  --data D       gauss (default: standard normal values) or wide (times 2^0..2^15 per element:\n"
            "                 the RHT kernels' slower wide-spread paths)\n"
            "  --repeat R     timed runs per kernel, the best is reported (default 3)\n"
            "  --kernels K,.. run only these kernels (names as in the table, comma-separated; default all)\n"
            "  --no-scalar    skip the 1-thread scalar baseline (the speedup column)\n"
            "  --no-hugepages keep the buffers on 4 KiB pages (default: advised onto 2 MiB transparent huge\n"
            "                 pages, as the library's own outputs are; the header says what was granted)\n"
            "  --json         one JSON object on stdout instead of the table\n"
            "Traffic counts the input read once (twice for lib_quantize_into_te_row: its ratio is to the two-pass\n"
            "bound) and each output written once; ratio = traffic rate / memcpy rate,\n"
            "where the memcpy rate is (bytes read + bytes written) / time of a parallel memcpy of the input,\n"
            "measured again right before each kernel (the memcpy column; the header gives their median).\n"
            "busy = CPU time / (wall time x threads) of the reported run: well below 100%% means other\n"
            "processes shared the cores and the figures understate the kernels.\n"
            "The default run takes about 2 minutes on 2 cores; when stderr is a terminal it shows which\n"
            "kernel is being timed (NVFP4_PROGRESS=0 or 1 overrides).\n");
}

/* Marks the kernels named in a comma-separated list; false (with the
 * offending name in *bad, at most badlen bytes) for an unknown or empty name. */
static bool select_kernels(const bench_kernel *kernels, size_t nk, const char *list, bool sel[], char *bad,
                           size_t badlen)
{
    for (size_t i = 0; i < nk; i++) sel[i] = false;
    const char *p = list;
    for (;;) {
        size_t len = strcspn(p, ",");
        bool found = false;
        for (size_t i = 0; i < nk && len; i++)
            if (strlen(kernels[i].name) == len && strncmp(kernels[i].name, p, len) == 0) sel[i] = found = true;
        if (!found) {
            snprintf(bad, badlen, "%.*s", (int)len, p);
            return false;
        }
        if (!p[len]) return true;
        p += len + 1;
    }
}

/* Bytes of memory the system can give without swapping: MemAvailable of
 * /proc/meminfo, else free pages (sysconf); 0 when neither is known. */
static double available_bytes(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kib = 0;
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f)) found = sscanf(line, "MemAvailable: %llu kB", &kib) == 1;
    if (f) fclose(f);
    if (found) return (double)kib * 1024.0;
    long pages = sysconf(_SC_AVPHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    return pages > 0 && psize > 0 ? (double)pages * (double)psize : 0.0;
}

/* A size whose buffers (input, bf16 copy, codes, scales, dequantized copy,
 * plus the library's own outputs) do not fit in the available memory is
 * refused up front (exit 2), instead of being killed by the OOM killer. */
static int bench_refuse_size(size_t mib, size_t n)
{
    double need = (double)n * (4.0 + 2.0 + 4.0 + 2 * CODES) + (double)n * (4.0 + 2 * CODES) + 64.0 * 1048576.0;
    double avail = available_bytes();
    if (avail <= 0.0 || need <= avail) return 0;
    return cli_fail(CMD, "--size %zu needs about %.0f MiB of memory; only %.0f MiB is available (MemAvailable)", mib,
                    need / 1048576.0, avail / 1048576.0);
}

static int run(int argc, char **argv)
{
    size_t mib = 256, threads = 0, repeat = 3;
    bool json = false, scalar_baseline = true;
    int hugepages = 1;
    int wide = 0;
    nvfp4_simd_variant variant = NVFP4_SIMD_AUTO;
    bool variant_given = false;
    bench_kernel kernels[MAX_KERNELS];
    const size_t nk = build_table(kernels);
    bool sel[MAX_KERNELS];
    for (size_t i = 0; i < nk; i++) sel[i] = true;
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return NVFP4_EXIT_OK;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--variants") == 0) {
            /* the variants this CPU runs, one per line (for scripts looping over them) */
            for (int k = 0; k < NVFP4_SIMD_VARIANTS; k++)
                if (nvfp4_simd_available((nvfp4_simd_variant)k)) printf("%s\n", nvfp4_simd_name((nvfp4_simd_variant)k));
            return NVFP4_EXIT_OK;
        }
        if (strcmp(a, "--json") == 0) json = true;
        else if (strcmp(a, "--no-scalar") == 0) scalar_baseline = false;
        else if (strcmp(a, "--no-hugepages") == 0) hugepages = 0;
        else if (strcmp(a, "--kernels") == 0) {
            char bad[64];
            if (!v) return cli_fail(CMD, "--kernels needs a comma-separated list of kernel names");
            if (!select_kernels(kernels, nk, v, sel, bad, sizeof bad)) {
                fprintf(stderr, "kernels:");
                for (size_t k = 0; k < nk; k++) fprintf(stderr, " %s", kernels[k].name);
                fprintf(stderr, "\n");
                return cli_fail(CMD, "--kernels: unknown kernel '%s' (the list above)", bad);
            }
            i++;
        } else if (strcmp(a, "--data") == 0) {
            if (!v || (strcmp(v, "gauss") != 0 && strcmp(v, "wide") != 0))
                return cli_fail(CMD, "--data needs gauss or wide");
            wide = strcmp(v, "wide") == 0;
            i++;
        } else if (strcmp(a, "--size") == 0) {
            if (!v || !cli_parse_size(v, &mib) || mib < 1 || mib > (1u << 20))
                return cli_fail(CMD, "--size needs a number of MiB from 1 to 1048576");
            i++;
        } else if (strcmp(a, "--threads") == 0) {
            if (!v || !cli_parse_size(v, &threads) || threads < 1 || threads > 4096)
                return cli_fail(CMD, "--threads needs a number from 1 to 4096");
            i++;
        } else if (strcmp(a, "--repeat") == 0) {
            if (!v || !cli_parse_size(v, &repeat) || repeat < 1 || repeat > 1000)
                return cli_fail(CMD, "--repeat needs a number from 1 to 1000");
            i++;
        } else if (strcmp(a, "--variant") == 0) {
            if (!v || !nvfp4_simd_parse(v, &variant))
                return cli_fail(CMD, "--variant needs one of scalar, avx2, avx512, neon, auto");
            variant_given = true;
            i++;
        } else {
            usage(stderr);
            return cli_fail(CMD, "unknown argument '%s'", a);
        }
    }
    nvfp4_error err;
    if (variant_given && nvfp4_simd_set(variant, &err) != NVFP4_OK) return cli_fail(CMD, "%s", err.message);
    if (threads) omp_set_num_threads((int)threads);
    int nthreads = omp_get_max_threads();
    nvfp4_simd_variant active = nvfp4_simd_active();

    const size_t cols = 8192;
    size_t n = mib * (size_t)(1u << 20) / 4 / (cols * 16) * (cols * 16);
    if (n == 0) n = cols * 16;
    if (bench_refuse_size(mib, n)) return NVFP4_EXIT_USAGE;
    bench_ctx c;
    if (!setup(&c, n, cols, wide, hugepages)) {
        teardown(&c);
        return cli_fail(CMD, "out of memory for a %zu MiB benchmark", mib);
    }
    /* The bound is measured again right before each kernel and its ratio
     * uses that measurement: on a shared machine the memory rate drifts
     * within a run (seen here: 28 to 43 GB/s), so a pair taken under the
     * same conditions is the fair comparison. */
    double memcpy_busy = 0.0, mc[MAX_KERNELS], t[MAX_KERNELS], ts[MAX_KERNELS], busy[MAX_KERNELS],
           mcsel[MAX_KERNELS];
    size_t nsel = 0;
    long huge_kib = anon_hugepages_kib(); /* the buffers are all this process's large allocations */
    double buf_mib = (double)c.n * (4.0 + 2.0 + 4.0 + 2 * CODES) / 1048576.0;
    double clock_start = effective_clock_ghz();
    /* progress (a terminal only): the kernels, then their scalar baselines */
    size_t nsteps = 0, step = 0;
    for (size_t i = 0; i < nk; i++) nsteps += sel[i] ? (scalar_baseline ? 2u : 1u) : 0u;
    for (size_t i = 0; i < nk; i++) {
        if (!sel[i]) continue;
        cli_progress(CMD, step++, nsteps, kernels[i].name);
        double mb;
        double t_memcpy = best_time(&memcpy_row, false, &c, (int)repeat, &mb);
        mc[i] = 2.0 * (double)c.n * 4.0 / t_memcpy; /* bytes read + written per second */
        if (nsel == 0) memcpy_busy = mb;
        mcsel[nsel++] = mc[i];
        t[i] = best_time(&kernels[i], false, &c, (int)repeat, &busy[i]);
    }
    double mc_min, mc_max, memcpy_bw = cli_median(mcsel, nsel, &mc_min, &mc_max);
    double clock_end = effective_clock_ghz();
    size_t sn = 0;
    if (scalar_baseline) {
        /* the straightforward code: scalar variant, one thread, a quarter of the input */
        bench_ctx s;
        size_t qn = c.n / 4 / (cols * 16) * (cols * 16);
        if (qn == 0) qn = cols * 16;
        teardown(&c);
        memset(&c, 0, sizeof c);
        if (!setup(&s, qn, cols, wide, hugepages)) {
            teardown(&s);
            return cli_fail(CMD, "out of memory for the scalar baseline");
        }
        nvfp4_simd_set(NVFP4_SIMD_SCALAR, NULL);
        omp_set_num_threads(1);
        for (size_t i = 0; i < nk; i++)
            if (sel[i]) {
                char what[96];
                snprintf(what, sizeof what, "%s, scalar 1-thread baseline", kernels[i].name);
                cli_progress(CMD, step++, nsteps, what);
                ts[i] = best_time(&kernels[i], true, &s, 1, NULL);
            }
        sn = s.n;
        nvfp4_simd_set(active, NULL);
        omp_set_num_threads(nthreads);
        teardown(&s);
    } else {
        teardown(&c);
    }

    cli_progress_end();
    if (json) {
        printf("{\"variant\": \"%s\", \"threads\": %d, \"elements\": %zu, \"input_mib\": %.1f, \"data\": \"%s\", "
               "\"memcpy_gbps\": %.6g, \"memcpy_gbps_min\": %.6g, \"memcpy_gbps_max\": %.6g, \"memcpy_busy\": %.3f, "
               "\"clock_ghz_start\": %.3f, \"clock_ghz_end\": %.3f, \"hugepages\": %s, \"hugepages_mib\": %.1f, "
               "\"kernels\": [",
               nvfp4_simd_name(active), nthreads, n, (double)n * 4.0 / 1048576.0, wide ? "wide" : "gauss",
               memcpy_bw * 1e-9, mc_min * 1e-9, mc_max * 1e-9, memcpy_busy, clock_start, clock_end,
               hugepages ? "true" : "false", huge_kib < 0 ? -1.0 : (double)huge_kib / 1024.0);
        for (size_t i = 0, first = 1; i < nk; i++) {
            if (!sel[i]) continue;
            double bytes = (kernels[i].in_bytes_per_elem + kernels[i].out_bytes_per_elem) * (double)n;
            /* six significant digits: a rate rounded to fixed decimals loses its
             * relative precision on a slow or loaded machine (0.26 GB/s) */
            printf("%s{\"name\": \"%s\", \"seconds\": %.6g, \"gelem_per_s\": %.6g, \"gbps\": %.6g, "
                   "\"memcpy_gbps\": %.6g, \"memcpy_ratio\": %.6g, \"busy\": %.3f",
                   first ? "" : ", ", kernels[i].name, t[i], (double)n / t[i] * 1e-9, bytes / t[i] * 1e-9, mc[i] * 1e-9,
                   bytes / t[i] / mc[i], busy[i]);
            if (scalar_baseline)
                printf(", \"scalar_1t_gelem_per_s\": %.4f, \"speedup_vs_scalar_1t\": %.2f", (double)sn / ts[i] * 1e-9,
                       ((double)n / t[i]) / ((double)sn / ts[i]));
            printf("}");
            first = 0;
        }
        printf("]}\n");
        return NVFP4_EXIT_OK;
    }
    printf("nvfp4 bench: variant %s, %d thread%s, %zu x %zu fp32 (%.0f MiB), %s data\n", nvfp4_simd_name(active),
           nthreads, nthreads == 1 ? "" : "s", n / cols, cols, (double)n * 4.0 / 1048576.0, wide ? "wide" : "gauss");
    printf("memcpy: %.2f GB/s (read + write; median of the measurements before each kernel, %.2f to %.2f), busy "
           "%.0f%%\n",
           memcpy_bw * 1e-9, mc_min * 1e-9, mc_max * 1e-9, 100.0 * memcpy_busy);
    if (huge_kib < 0)
        printf("pages: %s (how many were granted is unknown here)\n",
               hugepages ? "2 MiB transparent huge pages advised" : "4 KiB (--no-hugepages)");
    else
        /* AnonHugePages counts the whole process (each buffer rounded up to
         * whole 2 MiB pages, the memcpy bound's buffers, the runtime's), so it
         * may exceed the buffers' own size: say so rather than "716 of 712" */
        printf("pages: %s; the process holds %.0f MiB on huge pages (the kernels' buffers: %.0f MiB)\n",
               hugepages ? "2 MiB transparent huge pages advised" : "4 KiB (--no-hugepages)", (double)huge_kib / 1024.0,
               buf_mib);
    if (clock_start > 0.0)
        printf("effective clock of the main thread: %.2f GHz before the kernels, %.2f after (a figure well below\n"
               "the CPU's clock means the host shared the core: every rate below then understates the kernels)\n\n",
               clock_start, clock_end);
    printf("%-32s %10s %10s %9s %8s %8s %5s%s\n", "kernel", "ms", "Gelem/s", "GB/s", "memcpy", "memcpy%", "busy",
           scalar_baseline ? "   scalar-1t Gelem/s  speedup" : "");
    for (size_t i = 0; i < nk; i++) {
        if (!sel[i]) continue;
        double bytes = (kernels[i].in_bytes_per_elem + kernels[i].out_bytes_per_elem) * (double)n;
        printf("%-32s %10.2f %10.3f %9.2f %8.2f %7.1f%% %4.0f%%", kernels[i].name, t[i] * 1e3,
               (double)n / t[i] * 1e-9, bytes / t[i] * 1e-9, mc[i] * 1e-9, 100.0 * bytes / t[i] / mc[i],
               100.0 * busy[i]);
        if (scalar_baseline)
            printf("   %17.4f %7.1fx", (double)sn / ts[i] * 1e-9, ((double)n / t[i]) / ((double)sn / ts[i]));
        printf("\n");
    }
    return NVFP4_EXIT_OK;
}

const nvfp4_cli_command nvfp4_cmd_bench = {"bench", "throughput of the fast CPU path against memcpy", run};
