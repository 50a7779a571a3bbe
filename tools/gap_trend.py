#!/usr/bin/env python3
"""gap_trend.py - fit the trend of a study's loss gap against tokens and
extrapolate it, on paper, to larger token counts (docs/studies.md,
"Extrapolating to 10^13 tokens").

    python3 tools/gap_trend.py RUN_DIR [--arm NAME] [--params N] [--to 1e9,1e11,1e13]

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
Needs only the standard library.
"""
import argparse
import csv
import math
import sys
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir")
    ap.add_argument("--arm")
    ap.add_argument("--params", type=float, help="non-embedding parameters (prints tokens per parameter)")
    ap.add_argument("--to", default="1e9,1e11,1e13", help="token counts to extrapolate to (comma-separated)")
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
    for window, model, text, f in fits(points):
        print("%-9s %-10s %-32s %s" % (window, model, text, "  ".join("%9.4f" % f(t) for t in targets)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
