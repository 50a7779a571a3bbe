/* cli_figures.c - the teaching pictures behind `--plot FILE` of table,
 * explain and explain-block (drawn through cli_plot.c). Every value placed
 * in a picture comes from the library's encoders, decoders and traces; this
 * file only decides where it goes on the page. */
#include "cli_figures.h"

#include <math.h>
#include <string.h>

#include "cli.h"
#include "cli_plot.h"
#include "nvfp4/formats.h"

static const char *f32(char *b, size_t n, float v) { return nvfp4_format_f32_shortest(v, b, n); }

/* Colours shared by every picture: what a learner reads once and reuses. */
#define COL_A "#cfe2f3"   /* rounding interval, even position */
#define COL_B "#fde9c9"   /* rounding interval, odd position */
#define COL_SAT "#f4cccc" /* saturation */
#define COL_SUB "#d9ead3" /* subnormal range */
#define COL_ZERO "#e6e6e6"
#define COL_TIE "#cc0000"
#define COL_POINT "#1f4e79"

/* One rounding interval as a bar on the number line, and its end points. */
static void interval_bar(FILE *gp, double lo, double hi, int parity, double h)
{
    fprintf(gp, "set object rect from %.9g,%g to %.9g,%g fc rgb '%s' fs solid 1.0 border lc rgb '#7f7f7f' lw 0.5 behind\n",
            lo, -h, hi, h, parity ? COL_B : COL_A);
}

/* A tie point m between grid values: a dashed red tick and an arrow to the
 * value RN picks (the even code), as the encoder says. */
static void tie_mark(FILE *gp, double m, double to, double h, double arrow_y)
{
    fprintf(gp, "set arrow from %.9g,%g to %.9g,%g nohead dt 2 lw 1.5 lc rgb '%s' front\n", m, -1.6 * h, m, 1.6 * h,
            COL_TIE);
    fprintf(gp, "set arrow from %.9g,%g to %.9g,%g head size screen 0.008,25 lw 1.2 lc rgb '%s' front\n", m, arrow_y,
            to, 1.7 * h, COL_TIE);
}

/* ---- table --format e2m1 --plot ----------------------------------------- */

static int figure_e2m1(const char *cmd, const char *file)
{
    cli_plot p;
    int rc = cli_plot_begin(cmd, file, 1200, 420, &p);
    if (rc) return rc;
    FILE *gp = p.script, *pts = cli_plot_data(&p, "points.dat");
    if (!pts) {
        cli_plot_abort(&p);
        return cli_fail(cmd, "--plot: cannot write the data");
    }
    char a[32], b[32];
    const double h = 0.1;
    /* positive grid 0..6 from the decoder; the negative side mirrors it */
    float v[8];
    for (unsigned c = 0; c < 8; c++) v[c] = nvfp4_e2m1_to_f32((uint8_t)c);
    for (int s = -1; s <= 1; s += 2)
        for (unsigned c = 0; c < 8; c++) {
            if (s < 0 && c == 0) continue;
            double x = s * (double)v[c];
            double lo = c == 0 ? -(double)v[1] / 2 : (s > 0 ? ((double)v[c - 1] + v[c]) / 2 : -((double)v[c] + (c < 7 ? v[c + 1] : v[c])) / 2);
            double hi = c == 0 ? (double)v[1] / 2 : (s > 0 ? (c < 7 ? ((double)v[c] + v[c + 1]) / 2 : v[c]) : -((double)v[c - 1] + v[c]) / 2);
            if (s < 0 && c == 7) lo = x;
            interval_bar(gp, lo, hi, (int)(c & 1u), h);
            unsigned code = s < 0 ? 8u | c : c;
            fprintf(pts, "%.9g 0\n", x);
            fprintf(gp, "set label \"%s\" at %.9g,%g center font 'Sans,11' front\n", f32(a, sizeof a, (float)x), x, -0.3);
            if (c == 0)
                fprintf(gp, "set label \"0x0 = +0\\n0x8 = -0\" at 0,-0.56 center font 'Sans,8' tc rgb '#555555' front\n");
            else
                fprintf(gp, "set label \"0x%X\" at %.9g,-0.5 center font 'Sans,8' tc rgb '#555555' front\n", code, x);
        }
    /* ties: every midpoint, with the even neighbour the encoder chooses */
    for (int s = -1; s <= 1; s += 2)
        for (unsigned c = 0; c < 7; c++) {
            float m = (float)s * (v[c] + v[c + 1]) / 2.0f;
            float to = nvfp4_e2m1_to_f32(nvfp4_e2m1_from_f32(m, NVFP4_RN, 0));
            tie_mark(gp, m, to, h, 0.55);
            fprintf(gp, "set label \"%s\" at %.9g,0.64 center font 'Sans,8' tc rgb '%s' front\n", f32(a, sizeof a, m), m,
                    COL_TIE);
        }
    fclose(pts);
    fprintf(gp,
            "set object rect from 6,%g to 7.6,%g fc rgb '%s' fs solid 1.0 noborder behind\n"
            "set object rect from -7.6,%g to -6,%g fc rgb '%s' fs solid 1.0 noborder behind\n"
            "set label \"saturation:\\nx > 6 gives 6\\n(no Inf in E2M1;\\nNaN gives +6)\" at 6.8,0.42 center font 'Sans,9'\n"
            "set label \"saturation:\\nx < -6 gives -6\" at -6.8,0.42 center font 'Sans,9'\n",
            -1.4 * h, 1.4 * h, COL_SAT, -1.4 * h, 1.4 * h, COL_SAT);
    fprintf(gp,
            "set title \"E2M1 (FP4), round to nearest even: the 15 values (codes below them), the interval of inputs that "
            "rounds to each (bars),\\nand the tie points (red, dashed) whose arrow shows the even code a tie goes to\" "
            "font 'Sans,12'\n"
            "set xrange [-7.6:7.6]\nset yrange [-0.75:1.05]\nunset ytics\nset xtics -7,1,7 nomirror\n"
            "set border 1\nset xlabel 'x (the input, already multiplied by the block scale factor)'\n"
            "set key at graph 0.5,0.99 center top horizontal font 'Sans,9' box opaque\n"
            "plot 'points.dat' using 1:2 with points pt 7 ps 1.4 lc rgb '%s' title 'E2M1 value', "
            "keyentry with boxes fs solid 1.0 fc rgb '%s' title 'inputs that round to it', "
            "keyentry with lines dt 2 lw 1.5 lc rgb '%s' title 'tie (goes to the even code)', "
            "keyentry with boxes fs solid 1.0 fc rgb '%s' title 'saturation'\n",
            COL_POINT, COL_A, COL_TIE, COL_SAT);
    (void)b;
    return cli_plot_finish(cmd, &p);
}

/* ---- table --format e4m3 --plot ----------------------------------------- */

static int figure_e4m3(const char *cmd, const char *file)
{
    cli_plot p;
    int rc = cli_plot_begin(cmd, file, 1200, 760, &p);
    if (rc) return rc;
    FILE *gp = p.script, *all = cli_plot_data(&p, "all.dat"), *zoom = cli_plot_data(&p, "zoom.dat");
    if (!all || !zoom) {
        if (all) fclose(all);
        if (zoom) fclose(zoom);
        cli_plot_abort(&p);
        return cli_fail(cmd, "--plot: cannot write the data");
    }
    char a[32];
    const double h = 0.1;
    fprintf(gp, "set multiplot layout 2,1 title \"E4M3 (FP8 e4m3fn), the NVFP4 block scale: 126 positive values, "
                "round to nearest even, satfinite\" font 'Sans,13'\n");
    /* top: every positive value on a log axis, with the ranges (the range
     * boxes first: gnuplot draws objects in the order they were set) */
    fprintf(gp,
            "set object rect from 2**-12,-0.6 to 2**-10,0.6 fc rgb '%s' fs solid 1.0 noborder behind\n"
            "set object rect from 2**-10,-0.6 to 2**-6,0.6 fc rgb '%s' fs solid 0.6 noborder behind\n"
            "set object rect from 464,-0.6 to 2**11,0.6 fc rgb '%s' fs solid 1.0 noborder behind\n",
            COL_ZERO, COL_SUB, COL_SAT);
    for (unsigned c = 1; c <= 0x7Eu; c++) {
        double x = nvfp4_e4m3_to_f32((uint8_t)c);
        double lo = c == 1 ? 0x1p-10 : (x + nvfp4_e4m3_to_f32((uint8_t)(c - 1))) / 2;
        double hi = c == 0x7Eu ? 464.0 : (x + nvfp4_e4m3_to_f32((uint8_t)(c + 1))) / 2;
        interval_bar(gp, lo, hi, (int)(c & 1u), h);
        fprintf(all, "%.9g 0\n", x);
    }
    fclose(all);
    fprintf(gp,
            "set label \"rounds to 0\\n(|x| <= 2^{-10})\" at 2**-11,0.38 center font 'Sans,9'\n"
            "set label \"subnormals 0x01..0x07:\\nequal steps of 2^{-9} = 0.001953125\" at 2**-8,0.38 center font 'Sans,9'\n"
            "set label \"normals 0x08..0x7E: 8 values per power of two, the step doubling with each\\n"
            "(relative spacing 1/8 to 1/16: the precision of a block scale)\" at 2**1.5,0.38 center font 'Sans,9'\n"
            "set label \"saturation:\\n> 464 gives 448\" at 2**9.9,0.38 center font 'Sans,9'\n"
            "set logscale x 2\nset xrange [2**-12:2**11]\nset yrange [-0.6:0.6]\nunset ytics\nset border 1\n"
            "set xtics nomirror ('2^{-10}' 2**-10, '2^{-9}' 2**-9, '2^{-6}' 2**-6, '2^{-4}' 2**-4, '2^{-2}' 2**-2, "
            "'1' 1, '4' 4, '16' 16, '64' 64, '256' 256, '448' 448)\n"
            "set xlabel 'value (log scale); each bar: the inputs that round to one value, alternating colours'\n"
            "set key at graph 0.97,0.3 right font 'Sans,9' box opaque\n"
            "plot 'all.dat' using 1:2 with points pt 7 ps 0.6 lc rgb '%s' title 'E4M3 value', "
            "keyentry with boxes fs solid 0.6 fc rgb '%s' title 'subnormal range', "
            "keyentry with boxes fs solid 1.0 fc rgb '%s' title 'inputs rounding to one value'\n",
            COL_POINT, COL_SUB, COL_A);
    /* bottom: the top of the range, linear: steps, ties, saturation */
    fprintf(gp, "unset object\nunset label\nunset arrow\nunset logscale x\n");
    for (unsigned c = 0x75u; c <= 0x7Eu; c++) {
        double x = nvfp4_e4m3_to_f32((uint8_t)c);
        double lo = (x + nvfp4_e4m3_to_f32((uint8_t)(c - 1))) / 2;
        double hi = c == 0x7Eu ? 464.0 : (x + nvfp4_e4m3_to_f32((uint8_t)(c + 1))) / 2;
        interval_bar(gp, lo, hi, (int)(c & 1u), h);
        fprintf(zoom, "%.9g 0\n", x);
        fprintf(gp, "set label \"%s\" at %.9g,-0.3 center font 'Sans,10' front\n", f32(a, sizeof a, (float)x), x);
        fprintf(gp, "set label \"0x%02X\" at %.9g,-0.45 center font 'Sans,8' tc rgb '#555555' front\n", c, x);
        float m = (float)((x + (c == 0x7Eu ? 480.0 : (double)nvfp4_e4m3_to_f32((uint8_t)(c + 1)))) / 2);
        float to = nvfp4_e4m3_to_f32(nvfp4_e4m3_from_f32(m, true));
        tie_mark(gp, m, to, h, 0.45);
    }
    fclose(zoom);
    fprintf(gp,
            "set object rect from 464,%g to 500,%g fc rgb '%s' fs solid 1.0 noborder behind\n"
            "set label \"step 16 below 256, 32 above\" at 232,0.6 center font 'Sans,9'\n"
            "set label \"464 = 448 + half a step: a tie, to the even 448;\\nabove it satfinite gives 448 "
            "(not saturating: NaN, 0x7F)\" at graph 0.995,0.9 right font 'Sans,9'\n"
            "set xrange [200:500]\nset yrange [-0.6:0.75]\nset xtics 208,16,496 nomirror\n"
            "set xlabel 'the top of the range, linear: red dashed = tie points, the arrow shows the even code a tie "
            "goes to'\n"
            "set key at graph 0.5,0.99 center top horizontal font 'Sans,9' box opaque\n"
            "plot 'zoom.dat' using 1:2 with points pt 7 ps 1.3 lc rgb '%s' title 'E4M3 value', "
            "keyentry with lines dt 2 lw 1.5 lc rgb '%s' title 'tie', "
            "keyentry with boxes fs solid 1.0 fc rgb '%s' title 'saturation'\n"
            "unset multiplot\n",
            -1.4 * h, 1.4 * h, COL_SAT, COL_POINT, COL_TIE, COL_SAT);
    return cli_plot_finish(cmd, &p);
}

int cli_figure_table(const char *cmd, const char *format, const char *file)
{
    if (strcmp(format, "e2m1") == 0) return figure_e2m1(cmd, file);
    if (strcmp(format, "e4m3") == 0) return figure_e4m3(cmd, file);
    return cli_fail(cmd, "--plot draws e2m1 or e4m3 (not %s)", format);
}

/* ---- explain VALUE --plot ----------------------------------------------- */

typedef struct {
    float lo, hi;           /* the neighbours of |x| (4 and 6, 416 and 448 past the top) */
    unsigned lo_code, hi_code;
    unsigned rn_code;       /* the RN (E4M3: satfinite) code of x */
    float rn_value;
    unsigned ups;           /* E2M1 SR: of the 256 random bytes, how many round away from zero */
    bool saturates;         /* |x| is past the largest value */
    float max;              /* the largest value */
} neighbours;

static bool value_neighbours(float x, bool e4m3, neighbours *n)
{
    float a = fabsf(x);
    memset(n, 0, sizeof *n);
    if (!e4m3) {
        n->max = 6.0f;
        unsigned lo = nvfp4_e2m1_from_f32(a, NVFP4_RZ, 0);
        if (lo == 7u && a > 6.0f) n->saturates = true;
        if (lo == 7u) lo = 6u;
        n->lo_code = lo;
        n->hi_code = lo + 1u;
        n->lo = nvfp4_e2m1_to_f32((uint8_t)lo);
        n->hi = nvfp4_e2m1_to_f32((uint8_t)(lo + 1u));
        n->rn_code = nvfp4_e2m1_from_f32(x, NVFP4_RN, 0);
        n->rn_value = nvfp4_e2m1_to_f32((uint8_t)n->rn_code);
        for (unsigned r = 0; r < 256u; r++) n->ups += (nvfp4_e2m1_from_f32(a, NVFP4_SR, (uint8_t)r) & 7u) == n->hi_code;
        return true;
    }
    n->max = 448.0f;
    unsigned lo = 0;
    while (lo < 0x7Eu && nvfp4_e4m3_to_f32((uint8_t)(lo + 1u)) <= a) lo++;
    if (lo == 0x7Eu) {
        n->saturates = a > 448.0f;
        lo = 0x7Du;
    }
    n->lo_code = lo;
    n->hi_code = lo + 1u;
    n->lo = nvfp4_e4m3_to_f32((uint8_t)lo);
    n->hi = nvfp4_e4m3_to_f32((uint8_t)(lo + 1u));
    n->rn_code = nvfp4_e4m3_from_f32(x, true);
    n->rn_value = nvfp4_e4m3_to_f32((uint8_t)n->rn_code);
    return true;
}

int cli_figure_value(const char *cmd, const char *file, float x, const char *format, nvfp4_rounding r)
{
    bool e4m3 = strcmp(format, "e4m3") == 0;
    if (!e4m3 && strcmp(format, "e2m1") != 0) return cli_fail(cmd, "--plot draws e2m1 or e4m3 values (not %s)", format);
    if (x != x) return cli_fail(cmd, "--plot: NaN has no place on the number line (it gives %s)", e4m3 ? "0x7F" : "+6");
    neighbours nb;
    value_neighbours(x, e4m3, &nb);
    double s = signbit(x) ? -1.0 : 1.0;
    double lo = s * nb.lo, hi = s * nb.hi, step = nb.hi - nb.lo, m = s * ((double)nb.lo + nb.hi) / 2;
    double left = fmin(lo, hi) - 0.35 * step, right = fmax(lo, hi) + 0.35 * step;
    double xs = x; /* where x is drawn: an overflowing x sits at the edge with its value written out */
    bool off_scale = false;
    if (nb.saturates) {
        right = s > 0 ? nb.max + 0.9 * step : right;
        left = s < 0 ? -nb.max - 0.9 * step : left;
        if (fabs(x) > nb.max + 0.8 * step) {
            xs = s * (nb.max + 0.8 * step);
            off_scale = true;
        }
    }
    cli_plot p;
    int rc = cli_plot_begin(cmd, file, 1000, 460, &p);
    if (rc) return rc;
    FILE *gp = p.script;
    char xv[32], lv[32], hv[32], mv[32], rv[32];
    f32(xv, sizeof xv, x);
    f32(lv, sizeof lv, (float)lo);
    f32(hv, sizeof hv, (float)hi);
    f32(mv, sizeof mv, (float)m);
    f32(rv, sizeof rv, nb.rn_value);
    unsigned sb = signbit(x) ? (e4m3 ? 0x80u : 8u) : 0u;
    const char *cfmt = e4m3 ? "0x%02X" : "0x%X";
    char lc[8], hc[8], rc_[8];
    snprintf(lc, sizeof lc, cfmt, sb | nb.lo_code);
    snprintf(hc, sizeof hc, cfmt, sb | nb.hi_code);
    snprintf(rc_, sizeof rc_, cfmt, nb.rn_code);
    const double h = 0.09;
    /* RN: the two halves of the step, split at the boundary */
    interval_bar(gp, fmin(lo, m), fmax(lo, m), 0, h);
    interval_bar(gp, fmin(m, hi), fmax(m, hi), 1, h);
    if (nb.saturates)
        fprintf(gp, "set object rect from %.9g,%g to %.9g,%g fc rgb '%s' fs solid 1.0 noborder behind\n",
                s > 0 ? (double)nb.max : left, -1.4 * h, s > 0 ? right : -(double)nb.max, 1.4 * h, COL_SAT);
    fprintf(gp, "set arrow from %.9g,-0.5 to %.9g,0.25 nohead dt 2 lw 2 lc rgb '%s' front\n", m, m, COL_TIE);
    fprintf(gp, "set label \"RN boundary %s\\n(a tie here goes to the even code)\" at %.9g,-0.58 center font 'Sans,9' "
                "tc rgb '%s' front\n",
            mv, m, COL_TIE);
    fprintf(gp, "set label \"%s = %s\" at %.9g,0.2 center font 'Sans,12' front\n", lc, lv, lo);
    fprintf(gp, "set label \"%s = %s\" at %.9g,0.2 center font 'Sans,12' front\n", hc, hv, hi);
    fprintf(gp, "set arrow from %.9g,0.62 to %.9g,0.06 head lw 2 lc rgb '#000000' front\n", xs, xs);
    fprintf(gp, "set label \"x = %s%s\" at %.9g,0.7 %s font 'Sans,12' front\n", xv, off_scale ? " (off the scale)" : "",
            off_scale ? xs - s * 0.05 * step : xs, !off_scale ? "center" : s > 0 ? "right" : "left");
    if (!e4m3 && !nb.saturates && fabsf(x) != nb.lo) {
        /* SR: P(away from zero) = ups/256, the distance from the lower neighbour
         * as a share of the step; drawn as the two parts of the step split at x */
        double y0 = -0.9, y1 = -0.72;
        fprintf(gp, "set object rect from %.9g,%g to %.9g,%g fc rgb '#b6d7a8' fs solid 1.0 border lc rgb '#555555'\n",
                fmin(lo, (double)x), y0, fmax(lo, (double)x), y1);
        fprintf(gp, "set object rect from %.9g,%g to %.9g,%g fc rgb '#ead1dc' fs solid 1.0 border lc rgb '#555555'\n",
                fmin((double)x, hi), y0, fmax((double)x, hi), y1);
        fprintf(gp, "set label \"P(to %s) = %u/256\" at %.9g,%g center font 'Sans,10' front\n", hv, nb.ups,
                ((double)x + lo) / 2, (y0 + y1) / 2);
        fprintf(gp, "set label \"P(to %s) = %u/256\" at %.9g,%g center font 'Sans,10' front\n", lv, 256u - nb.ups,
                ((double)x + hi) / 2, (y0 + y1) / 2);
        fprintf(gp, "set label \"stochastic rounding: the share of the step between %s and x is the chance of going "
                    "to %s: on average the result is x (unbiased, to 1/256 of a step)%s\" at graph 0.5,0.06 center font 'Sans,9' front\n",
                lv, hv, r == NVFP4_SR ? "" : " (--round sr)");
    }
    fprintf(gp,
            "set title \"%s: where x = %s falls between its two %s neighbours\\n"
            "round to nearest gives %s = %s%s\" font 'Sans,13'\n"
            "set xrange [%.9g:%.9g]\nset yrange [-1.05:0.95]\nunset ytics\nset border 1\nset xtics nomirror\n"
            "set key at graph 0.98,0.98 right top font 'Sans,9' box opaque\nset samples 2\n"
            "plot '+' using (%.9g):(0) with points pt 7 ps 1.8 lc rgb '%s' title '%s values', "
            "'+' using (%.9g):(0) with points pt 7 ps 1.8 lc rgb '%s' notitle, "
            "keyentry with boxes fs solid 1.0 fc rgb '%s' title 'RN gives the neighbour nearer 0', "
            "keyentry with boxes fs solid 1.0 fc rgb '%s' title 'RN gives the one farther from 0'%s\n",
            e4m3 ? "E4M3, round to nearest even (satfinite)" : "E2M1", xv, e4m3 ? "E4M3" : "E2M1", rc_, rv,
            nb.saturates ? " (saturated)" : "", left, right, lo,
            COL_POINT, e4m3 ? "E4M3" : "E2M1", hi, COL_POINT, COL_A, COL_B,
            nb.saturates ? ", keyentry with boxes fs solid 1.0 fc rgb '" COL_SAT "' title 'saturation'" : "");
    return cli_plot_finish(cmd, &p);
}

/* ---- explain-block --plot ----------------------------------------------- */

int cli_figure_block(const char *cmd, const char *file, const nvfp4_trace_block *t)
{
    const nvfp4_recipe_info *info = nvfp4_recipe_get_info(t->recipe);
    if (info->elem != NVFP4_ELEM_E2M1)
        return cli_fail(cmd, "--plot draws blocks of E2M1 elements; recipe %s stores E4M3 elements", info->name);
    cli_plot p;
    int rc = cli_plot_begin(cmd, file, 1100, 1000, &p);
    if (rc) return rc;
    FILE *gp = p.script, *d = cli_plot_data(&p, "block.dat");
    if (!d) {
        cli_plot_abort(&p);
        return cli_fail(cmd, "--plot: cannot write the data");
    }
    char a[32], b[32], c[32], e[32];
    double maxerr = 0.0, sse = 0.0;
    size_t amax_i = 0;
    for (size_t i = 0; i < t->block_len; i++) {
        const nvfp4_trace_elem *el = &t->elem[i];
        double err = (double)el->dequant - (double)el->x;
        if (isfinite(err)) {
            sse += err * err;
            if (fabs(err) > maxerr) maxerr = fabs(err);
        }
        if (fabsf(el->x) > fabsf(t->elem[amax_i].x)) amax_i = i;
        /* i x y code value dequant error "code label" "error label" */
        fprintf(d, "%zu %.9g %.9g %u %.9g %.9g %.9g \"0x%X\" \"%s\"\n", i, (double)el->x, (double)el->scaled, el->code,
                (double)el->value, (double)el->dequant, isfinite(err) ? err : 0.0, el->code,
                isfinite(err) ? nvfp4_format_f64_digits(err, 3, e, sizeof e) : "-");
    }
    fclose(d);
    double n = (double)t->block_len;
    fprintf(gp, "set multiplot layout 3,1 title \"block %zu of row %zu, recipe %s: block amax %s, %s scale 0x%02X = %s, "
                "encode factor %s\" font 'Sans,13'\n",
            t->block_index, t->row, info->name, f32(a, sizeof a, t->block_amax),
            info->scale_format == NVFP4_SCALEFMT_E4M3 ? "E4M3" : info->scale_format == NVFP4_SCALEFMT_UE5M3 ? "UE5M3" : "UE8M0", t->scale,
            f32(b, sizeof b, t->scale_value), f32(c, sizeof c, t->factor));
    fprintf(gp, "set xrange [-0.7:%g]\nset xtics 0,1,%g nomirror\nset grid ytics lc rgb '#dddddd'\n"
                "set key top right font 'Sans,9' box opaque\nset style fill solid 0.8\n",
            n - 0.3, n - 1);
    /* 1: the inputs */
    fprintf(gp, "set title \"1. the %zu inputs x (the largest |x|, element %zu, sets the block scale)\"\n"
                "set ylabel 'x'\nset xlabel 'element of the block'\n"
                "plot 'block.dat' using 1:2 with impulses lw 3 lc rgb '%s' title 'x', "
                "'' using ($1 == %zu ? $1 : 1/0):2 with points pt 7 ps 2 lc rgb '%s' title 'block amax'\n",
            t->block_len, amax_i, COL_POINT, amax_i, COL_TIE);
    /* 2: scaled values on the E2M1 grid */
    fprintf(gp, "set title \"2. scaled y = x * factor (circle) on the E2M1 grid (lines): the arrow goes to the value "
                "the code stands for (dot)\"\nset ylabel 'y'\nset yrange [-6.8:6.8]\nunset grid\n"
                "set ytics ('-6' -6, '-4' -4, '-3' -3, '-2' -2, '' -1.5, '-1' -1, '' -0.5, '0' 0, '' 0.5, '1' 1, "
                "'' 1.5, '2' 2, '3' 3, '4' 4, '6' 6)\n");
    static const double grid[] = {0.5, 1, 1.5, 2, 3, 4, 6};
    for (int s = -1; s <= 1; s += 2)
        for (int k = 0; k < 7; k++)
            fprintf(gp, "set arrow from graph 0, first %g to graph 1, first %g nohead lc rgb '#bbbbbb' lw 1 back\n",
                    s * grid[k], s * grid[k]);
    fprintf(gp, "set arrow from graph 0, first 0 to graph 1, first 0 nohead lc rgb '#888888' lw 1 back\n");
    /* y left of the element, the code's value right of it, the arrow between
     * them drawn last: on top of both points, visible even where y is
     * already on the grid (a flat arrow). */
    fprintf(gp, "plot 'block.dat' using ($1-0.2):3 with points pt 6 ps 1.6 lw 2 lc rgb '#6aa84f' title 'y (scaled input)', "
                "'' using ($1+0.2):5 with points pt 7 ps 1.3 lc rgb '%s' title 'E2M1 value of the code', "
                "'' using ($1+0.34):5:8 with labels left font 'Sans,8' tc rgb '#333333' notitle, "
                "'' using ($1-0.2):3:(0.4):($5-$3) with vectors head filled size 0.12,20 lw 1.5 lc rgb '%s' "
                "title 'rounding y -> the code'\n",
            COL_POINT, "#444444");
    fprintf(gp, "unset arrow\nset yrange [*:*]\nset ytics auto\nset grid ytics lc rgb '#dddddd'\n");
    /* 3: dequantized values and errors */
    fprintf(gp, "set title \"3. dequantized = value * D (D = %s) against x; red: the error dequant - x (max |error| %s, "
                "rms %s)\"\nset ylabel 'value'\n",
            f32(a, sizeof a, t->dequant_scale), nvfp4_format_f64_digits(maxerr, 3, b, sizeof b),
            nvfp4_format_f64_digits(sqrt(sse / n), 3, c, sizeof c));
    fprintf(gp, "plot 'block.dat' using 1:2 with points pt 6 ps 1.6 lw 2 lc rgb '%s' title 'x', "
                "'' using 1:6 with points pt 7 ps 1.2 lc rgb '%s' title 'dequantized', "
                "'' using 1:2:(0):7 with vectors nohead lw 3 lc rgb '%s' title 'error', "
                "'' using 1:($2 > $6 ? $2 : $6):9 with labels offset 0,0.9 font 'Sans,8' tc rgb '%s' notitle\n"
                "unset multiplot\n",
            COL_POINT, "#6aa84f", COL_TIE, COL_TIE);
    return cli_plot_finish(cmd, &p);
}

/* ---- explain-block --rht --plot ----------------------------------------- */

int cli_figure_rht(const char *cmd, const char *file, const float *x, const float *y, const float *deq_plain,
                   const float *deq_rht, size_t n)
{
    cli_plot p;
    int rc = cli_plot_begin(cmd, file, 1100, 760, &p);
    if (rc) return rc;
    FILE *gp = p.script, *d = cli_plot_data(&p, "rht.dat");
    if (!d) {
        cli_plot_abort(&p);
        return cli_fail(cmd, "--plot: cannot write the data");
    }
    double ax = 0, ay = 0, sx = 0, sy = 0, e1 = 0, e2 = 0;
    for (size_t i = 0; i < n; i++) {
        fprintf(d, "%zu %.9g %.9g %.9g %.9g\n", i, (double)x[i], (double)y[i], (double)deq_plain[i] - x[i],
                (double)deq_rht[i] - x[i]);
        ax = fmax(ax, fabs((double)x[i]));
        ay = fmax(ay, fabs((double)y[i]));
        sx += (double)x[i] * x[i];
        sy += (double)y[i] * y[i];
        e1 += ((double)deq_plain[i] - x[i]) * ((double)deq_plain[i] - x[i]);
        e2 += ((double)deq_rht[i] - x[i]) * ((double)deq_rht[i] - x[i]);
    }
    fclose(d);
    double nn = (double)n;
    char a[32], b[32], c[32], e[32], g[32], h[32];
    fprintf(gp, "set multiplot layout 2,1 title \"the random Hadamard transform y = x H diag(s) / 4 of one block keeps the "
                "sum of squares and spreads an outlier over all %zu elements\" font 'Sans,12'\n",
            n);
    fprintf(gp, "set xrange [-0.7:%g]\nset xtics 0,1,%zu nomirror\nset grid ytics lc rgb '#dddddd'\n"
                "set key top right font 'Sans,9' box opaque\nset style fill solid 0.8\nset boxwidth 0.38\n",
            (double)n - 0.3, n - 1);
    fprintf(gp, "set title \"before: amax %s, rms %s (amax/rms %s)      after: amax %s, rms %s (amax/rms %s)\"\n"
                "set xlabel 'element'\nset ylabel 'value'\n"
                "plot 'rht.dat' using ($1-0.2):2 with boxes lc rgb '%s' title 'x (before)', "
                "'' using ($1+0.2):3 with boxes lc rgb '#e69138' title 'y = RHT(x) (after)'\n",
            nvfp4_format_f64_digits(ax, 3, a, sizeof a), nvfp4_format_f64_digits(sqrt(sx / nn), 3, b, sizeof b),
            nvfp4_format_f64_digits(ax / sqrt(sx / nn), 3, c, sizeof c), nvfp4_format_f64_digits(ay, 3, e, sizeof e),
            nvfp4_format_f64_digits(sqrt(sy / nn), 3, g, sizeof g),
            nvfp4_format_f64_digits(ay / sqrt(sy / nn), 3, h, sizeof h), COL_POINT);
    fprintf(gp, "set title \"error of each element in the original domain: quantize x (rms %s) or quantize y and "
                "transform back (rms %s)\"\nset ylabel 'dequantized - x'\n"
                "plot 'rht.dat' using ($1-0.2):4 with boxes lc rgb '%s' title 'NVFP4 of x', "
                "'' using ($1+0.2):5 with boxes lc rgb '#e69138' title 'NVFP4 of y, then the inverse RHT'\n"
                "unset multiplot\n",
            nvfp4_format_f64_digits(sqrt(e1 / nn), 3, a, sizeof a), nvfp4_format_f64_digits(sqrt(e2 / nn), 3, b, sizeof b),
            COL_POINT);
    return cli_plot_finish(cmd, &p);
}
