#!/usr/bin/env python3
"""gap_trend.py - fit the trend of a study's loss gap against tokens and
extrapolate it, on paper, to larger token counts (docs/studies.md,
"Extrapolating to 10^13 tokens").

    python3 tools/gap_trend.py RUN_DIR [--arm NAME] [--params N] [--to 1e9,1e11,1e13] [--plot OUT.png]

Reads RUN_DIR/runs.csv (any study of `nvfp4 study run`), takes one arm's gap
to its FP32 shadow (gap_pct, the mean over seeds at each logged step), and
fits two models on the last half, third and quarter of the logged steps
(step 0 left out):

  log-linear  gap = a + b * log10(tokens)      (a drift that keeps growing or shrinking)
  power law   gap = c * tokens^alpha            (only where every gap is > 0)

It prints each fit and its value at the target token counts, and, with
--params (the model's non-embedding parameters), the tokens per parameter.
The spread over the three windows is the honest error bar: the logged gaps
of one run are autocorrelated, so a regression interval would be too narrow.
--plot draws the logged gaps and every fit, extended to the largest target,
on a log token axis (needs gnuplot). Needs only the standard library.
"""
import argparse
import csv
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict


def read_gap(path, arm):
    per_step = defaultdict(list)
    tokens = {}
    arms = []
    try:
        f = open(path)
    except OSError as e:
        sys.exit("gap_trend: %s" % e)
    with f:
        for r in csv.DictReader(f):
            if r["arm"] not in arms:
                arms.append(r["arm"])
            if arm is not None and r["arm"] != arm:
                continue
            if arm is None and r["arm"] != arms[0]:
                continue
            step = int(r["step"])
            per_step[step].append(float(r["gap_pct"]))
            tokens[step] = int(r["tokens"])
    if not per_step:
        sys.exit("gap_trend: %s: no rows for arm %r (arms: %s)" % (path, arm, ", ".join(arms)))
    steps = sorted(s for s in per_step if tokens[s] > 0)
    return [(tokens[s], sum(per_step[s]) / len(per_step[s])) for s in steps], arm or arms[0]


def least_squares(x, y):
    n = len(x)
    mx, my = sum(x) / n, sum(y) / n
    sxx = sum((a - mx) ** 2 for a in x)
    if sxx == 0:
        return my, 0.0
    b = sum((a - mx) * (c - my) for a, c in zip(x, y)) / sxx
    return my - b * mx, b


def fits(points):
    """(window, model, value_at(tokens)) for every window and model."""
    out = []
    for name, frac in (("last 1/2", 2), ("last 1/3", 3), ("last 1/4", 4)):
        w = points[len(points) - max(3, len(points) // frac):]
        lx = [math.log10(t) for t, _ in w]
        a, b = least_squares(lx, [g for _, g in w])
        out.append((name, "log-linear", "gap = %.4g %+.4g log10(D)" % (a, b),
                    lambda d, a=a, b=b: a + b * math.log10(d)))
        if all(g > 0 for _, g in w):
            c, alpha = least_squares(lx, [math.log10(g) for _, g in w])
            out.append((name, "power law", "gap = %.4g D^%.4f" % (10 ** c, alpha),
                        lambda d, c=c, alpha=alpha: 10 ** (c + alpha * math.log10(d))))
    return out


def plot(points, fitted, arm, last_target, out):
    """gnuplot PNG: the logged gaps as points, each fit as a line out to last_target."""
    if not shutil.which("gnuplot"):
        sys.exit("gap_trend: --plot needs gnuplot (Debian: gnuplot-nox)")
    lo = math.log10(points[0][0])
    gaps = [g for _, g in points]
    # every gap positive: a log axis, on which power laws are lines; otherwise
    # a linear one from the logged range to 3x its top (fits past it are cut)
    logy = min(gaps) > 0
    if logy:
        yaxis = "set logscale y\nset format y '%g'\n"
    else:
        top = max(gaps) if max(gaps) > 0 else 1.0
        yaxis = "set yrange [%g:%g]\n" % (min(min(gaps), 0.0) - 0.1 * top, 3.0 * top)
    xs = [10 ** (lo + (math.log10(last_target) - lo) * i / 200.0) for i in range(201)]
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "pts.dat"), "w") as f:
            f.writelines("%.6g %.6g\n" % p for p in points)
        with open(os.path.join(tmp, "fits.dat"), "w") as f:
            for _, _, _, fn in fitted:
                f.writelines("%.6g %.6g\n" % (x, fn(x)) for x in xs)
                f.write("\n\n")
        lines = ["'%s' index %d using 1:2 with lines lw 2 dt %d title '%s, %s'" %
                 (os.path.join(tmp, "fits.dat"), i, 1 if m == "log-linear" else 2, w, m)
                 for i, (w, m, _, _) in enumerate(fitted)]
        gp = ("set terminal pngcairo size 900,560 noenhanced\nset output '%s'\n"
              "set title 'gap of arm %s to its FP32 shadow: logged values and fits, extrapolated'\n"
              "set logscale x\nset format x '1e%%L'\nset xlabel 'tokens'\nset ylabel 'gap (%%)%s'\n"
              "set grid\nset key outside right\n%s"
              "plot '%s' using 1:2 with points pt 7 ps 0.6 lc rgb 'black' title 'logged', %s\n" %
              (os.path.abspath(out), arm, ", log scale" if logy else "", yaxis, os.path.join(tmp, "pts.dat"),
               ", ".join(lines)))
        subprocess.run(["gnuplot"], input=gp.encode(), check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir")
    ap.add_argument("--arm")
    ap.add_argument("--params", type=float, help="non-embedding parameters (prints tokens per parameter)")
    ap.add_argument("--to", default="1e9,1e11,1e13", help="token counts to extrapolate to (comma-separated)")
    ap.add_argument("--plot", metavar="PNG", help="draw the logged gaps and the fits (gnuplot)")
    a = ap.parse_args()
    points, arm = read_gap(a.run_dir.rstrip("/") + "/runs.csv", a.arm)
    if len(points) < 6:
        sys.exit("gap_trend: %s: %d logged steps; a trend needs 6 or more" % (a.run_dir, len(points)))
    targets = [float(x) for x in a.to.split(",")]
    last_t, last_g = points[-1]
    print("arm %s: %d logged steps, last at %.4g tokens, gap %.4f %%" % (arm, len(points), last_t, last_g))
    if a.params:
        print("tokens per parameter: last %.1f; targets %s" %
              (last_t / a.params, ", ".join("%.3g" % (t / a.params) for t in targets)))
    print("%-9s %-10s %-32s %s" % ("window", "model", "fit", "  ".join("gap@%.0e" % t for t in targets)))
    fitted = fits(points)
    for window, model, text, f in fitted:
        print("%-9s %-10s %-32s %s" % (window, model, text, "  ".join("%9.4f" % f(t) for t in targets)))
    if a.plot:
        plot(points, fitted, arm, max(targets), a.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
