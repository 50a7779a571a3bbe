#!/usr/bin/env python3
"""verdict_recompute_lab2.py DIR... - recomputes the statistical findings of
the s1c and s5 output folders from their own CSV files (s1c_bands.csv,
s5_gradfid.csv) with the rules of docs/studies.md "How verdicts are decided",
independently of the C code; s4's findings are gap differences read from
runs.csv, which verdict_recompute.py checks. Reuses that script's t-interval
and its checks of each finding (estimate, interval, p, Holm, mde80, seeds,
verdict). Standard library only. Exit 0 when every finding agrees."""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from verdict_recompute import check_findings, est_t  # noqa: E402


def s1c_eff(d, band):
    """Per seed (ascending): realized / noise-free decrease of the band, arms pooled."""
    sums = {}
    with open(d + "/s1c_bands.csv") as f:
        for r in csv.DictReader(f):
            if r["band"] != band:
                continue
            s = sums.setdefault(int(r["seed"]), [0, 0.0, 0.0])
            s[0] += int(r["steps"])
            s[1] += float(r["decrease"])
            s[2] += float(r["noise_free_decrease"])
    return {sd: s[1] / s[2] for sd, s in sorted(sums.items()) if s[0] and s[2] > 0}


def s5_units(d, var, col):
    """Per (seed, checkpoint): mean over layers of col, or of rel_bias / rel_bias_quarter."""
    acc = {}
    with open(d + "/s5_gradfid.csv") as f:
        for r in csv.DictReader(f):
            if r["variant"] != var:
                continue
            v = float(r["rel_bias"]) / float(r["rel_bias_quarter"]) if col is None else float(r[col])
            acc.setdefault((int(r["seed"]), int(r["step"])), []).append(v)
    return {k: sum(v) / len(v) for k, v in acc.items()}


def with_null(x, null):
    """t estimate of x with the p-value against null (the interval is of x), and n."""
    m, lo, hi, _ = est_t(x)
    return m, lo, hi, est_t([v - null for v in x])[3], len(x)


def paired(a, b):
    d = [a[k] - b[k] for k in sorted(a) if k in b]
    return est_t(d) + (len(d),)


def check_dir(d):
    summ = json.load(open(d + "/summary.json"))

    def recompute(f):
        st = f["stats"]
        name = st["statistic"]
        if name == "efficiency below sqrt(3)":
            return with_null(list(s1c_eff(d, "below").values()), 1.0)
        if name == "efficiency drop across sqrt(3)":
            return paired(s1c_eff(d, "above"), s1c_eff(d, "below"))
        if name == "error shrink K/4 to K":
            return with_null(list(s5_units(d, st["arms"][0], None).values()), 1.0)
        if name == "single-draw error difference":
            return paired(s5_units(d, st["arms"][0], "rel_mse1"), s5_units(d, st["arms"][1], "rel_mse1"))
        return None

    return check_findings(d, summ, recompute, summ["study"])


def main():
    ok, total = True, 0
    for d in sys.argv[1:]:
        n, good = check_dir(d)
        total += n
        ok = ok and good
    return 0 if ok and total else 1


if __name__ == "__main__":
    sys.exit(main())
