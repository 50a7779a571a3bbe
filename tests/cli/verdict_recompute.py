#!/usr/bin/env python3
"""verdict_recompute.py DIR... - recomputes every statistical finding of each
study output folder's summary.json from its runs.csv, with the rules of
docs/studies.md "How verdicts are decided", independently of the C code
(src/study/verdict.c): the paired per-seed statistic, the 95% t-interval (the
t quantile from its own incomplete-beta series), the percentile bootstrap
(the same splitmix64 stream), the ratio of mean gaps, Holm's correction, the
verdict rule with its ceiling and tie rules, seeds_needed and underpowered,
and a sequential run's division of the level over its planned looks.
Standard library only. Exit 0 when every finding agrees, 1 otherwise."""
import csv
import json
import math
import statistics
import sys

ALPHA, BAND, B, BOOT_SEED = 0.05, 0.5, 2000, 0x6E76667034766431
M64 = (1 << 64) - 1


def betacf(a, b, x):
    """Continued fraction of the regularized incomplete beta (modified Lentz)."""
    tiny, c, d = 1e-300, 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def ibeta(a, b, x):
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbt) * betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * betacf(b, a, 1.0 - x) / b


def t_sf(t, df):
    """Upper tail of Student's t, t >= 0."""
    return 0.5 * ibeta(df / 2.0, 0.5, df / (df + t * t))


def t_ppf(q, df):
    """Student's t quantile, q >= 0.5, by bisection on the tail."""
    lo, hi = 0.0, 1000.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_sf(mid, df) > 1.0 - q:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def t_ppf975(df):
    return t_ppf(0.975, df)


def mde80(method, n, lo, hi):
    """Smallest effect n seeds detect with power 0.8 at the two-sided 5% level."""
    if n < 2 or not (math.isfinite(lo) and math.isfinite(hi)):
        return math.nan
    half = 0.5 * (hi - lo)
    if method == "paired t":
        q975 = t_ppf975(n - 1)
        return (q975 + t_ppf(0.80, n - 1)) * half / q975
    z975, z80 = statistics.NormalDist().inv_cdf(0.975), statistics.NormalDist().inv_cdf(0.80)
    return (z975 + z80) * half / z975


def seeds_needed(method, n, est, lo, hi, null):
    """The n at which mde80 equals |est - null| at the measured per-seed spread."""
    if n < 2 or not (math.isfinite(lo) and math.isfinite(hi)):
        return math.nan
    delta = abs((math.inf if math.isnan(est) else est) - null)
    if math.isinf(delta):
        return 2
    if delta == 0:
        return math.inf
    half = 0.5 * (hi - lo)
    z975, z80 = statistics.NormalDist().inv_cdf(0.975), statistics.NormalDist().inv_cdf(0.80)
    if method != "paired t":
        m = math.ceil(n * ((z975 + z80) * (half / z975) / delta) ** 2)
        return math.inf if m > 1e9 else max(2, m)
    sd = half / t_ppf975(n - 1) * math.sqrt(n)
    if sd == 0:
        return 2
    m = max(2, math.ceil(((z975 + z80) * sd / delta) ** 2))
    while m <= 1e9:
        if (t_ppf975(m - 1) + t_ppf(0.80, m - 1)) * sd / math.sqrt(m) <= delta:
            return m
        m += 1
    return math.inf


def underpowered(method, n, est, lo, hi, null, pub):
    mde = mde80(method, n, lo, hi)
    target = abs(pub - null) if pub is not None else abs((math.inf if math.isnan(est) else est) - null)
    return not (mde <= target)


def est_t(d):
    n = len(d)
    m = sum(d) / n if n else math.nan
    if n < 2:
        return m, math.nan, math.nan, 1.0
    v = sum((x - m) ** 2 for x in d)
    se = math.sqrt(v / (n - 1)) / math.sqrt(n)
    h = t_ppf975(n - 1) * se
    p = min(1.0, 2.0 * t_sf(abs(m) / se, n - 1)) if se > 0 else (1.0 if m == 0 else 0.0)
    return m, m - h, m + h, p


def splitmix(state):
    state = (state + 0x9E3779B97F4A7C15) & M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return state, z ^ (z >> 31)


def est_boot(stat, n, null):
    est = stat(list(range(n)))
    if n < 2:
        return est, math.nan, math.nan, 1.0
    s, reps = BOOT_SEED, []
    for _ in range(B):
        idx = []
        for _ in range(n):
            s, z = splitmix(s)
            idx.append(z % n)
        v = stat(idx)
        reps.append(math.inf if math.isnan(v) else v)
    below = sum(1 for r in reps if r <= null)
    above = sum(1 for r in reps if r >= null)
    reps.sort()
    p = min(1.0, 2.0 * (min(below, above) + 1.0) / (B + 1.0))
    return est, reps[int(math.floor(0.025 * B))], reps[int(math.ceil(0.975 * B)) - 1], p


def holm(p):
    order = sorted(range(len(p)), key=lambda i: p[i])
    adj, run = [0.0] * len(p), 0.0
    for k, i in enumerate(order):
        run = max(run, min(1.0, (len(p) - k) * p[i]))
        adj[i] = run
    return adj


def decide(est, lo, hi, null, p_holm, sign, pub, n, ceiling=math.nan):
    if n < 2 or math.isnan(lo) or math.isnan(hi):
        return "inconclusive"
    s = -1.0 if sign < 0 else 1.0
    est = math.inf if math.isnan(est) else est
    o_lo, o_hi = sorted((s * (lo - null), s * (hi - null)))
    tie = est == null  # a tie is significant in no direction
    sig, right = not tie and p_holm < ALPHA, s * (est - null) > 0
    op = None if pub is None else s * (pub - null)
    # out of reach: the band starts beyond the largest value the statistic can take
    reachable = op is None or not math.isfinite(ceiling) or s * (ceiling - null) >= op * (1 - BAND)
    if sig and not right:
        return "not reproduced"
    if sig:
        if op is None:
            return "reproduced"
        if not reachable:
            return "direction only"
        return "reproduced" if o_hi >= op * (1 - BAND) and o_lo <= op * (1 + BAND) else "direction only"
    if op is not None and op > 0 and o_hi < op * (1 - BAND):
        return "not reproduced" if reachable else "inconclusive"
    return "inconclusive"


def final_metric(runs):
    """The row a summary reads for one (arm, seed): its last row, with eval_loss
    and ref_eval_loss the means of its held-out evaluations (rows whose
    heldout_loss is not nan) when it has them and did not diverge."""
    last = max(runs, key=lambda r: int(r["step"]))
    held = [r for r in runs if not math.isnan(float(r["heldout_loss"]))]
    out = dict(last)
    if held and last["diverged"] == "0":
        out["eval_loss"] = sum(float(r["heldout_loss"]) for r in held) / len(held)
        out["ref_eval_loss"] = sum(float(r["ref_heldout_loss"]) for r in held) / len(held)
    return out


def finals(rows, arms):
    """Per seed (ascending) that has every arm: the final metric of each arm."""
    runs = {}
    for r in rows:
        runs.setdefault((r["arm"], int(r["seed"])), []).append(r)
    seeds = sorted({int(r["seed"]) for r in rows})
    return [[final_metric(runs[(a, sd)]) for a in arms] for sd in seeds if all((a, sd) in runs for a in arms)]


def mean_qerr(rows, arm, seed):
    """The gradient probe's error of (arm, seed), averaged over its probed rows
    (grad_qerr not nan); None when it has none."""
    v = [float(r["grad_qerr"]) for r in rows
         if r["arm"] == arm and int(r["seed"]) == seed and not math.isnan(float(r["grad_qerr"]))]
    return sum(v) / len(v) if v else None


def gap(r):
    e, ref = float(r["eval_loss"]), float(r["ref_eval_loss"])
    return 100.0 * (e - ref) / ref


def tokens_to_match(per_seed, idx):
    mult = [1.0, 1.25, 1.36, 1.5]
    m = [sum(float(per_seed[i][k]["eval_loss"]) - float(per_seed[i][k]["entropy"]) for i in idx) / len(idx)
         for k in range(5)]
    if m[1] <= m[0]:
        return 1.0
    for k in range(2, 5):
        if m[k] <= m[0]:
            return mult[k - 2] + (mult[k - 1] - mult[k - 2]) * (m[k - 1] - m[0]) / (m[k - 1] - m[k])
    return math.nan


def progress(rows, arm):
    """s1a: per seed, the log10 loss reduction of arm over that of noise-free GD."""
    runs = {}
    for r in rows:
        if r["arm"] == arm:
            runs.setdefault(int(r["seed"]), []).append(r)
    out = {}
    for sd, rs in runs.items():
        first, last = min(rs, key=lambda r: int(r["step"])), max(rs, key=lambda r: int(r["step"]))
        if float(last["ref_loss"]) > 0:
            out[sd] = (math.log10(float(first["loss"]) / float(last["loss"])) /
                       math.log10(float(first["ref_loss"]) / float(last["ref_loss"])))
    return out


def shifted_t(x, null):
    """t estimate of x - null (interval and p against null), shifted back."""
    m, lo, hi, p = est_t([v - null for v in x])
    return m + null, lo + null, hi + null, p


def ratio_of_means(per, ref):
    """(mean gap(a) - mean gap(b)) / mean gap(ref) over the seeds idx; nan when not positive."""
    def stat(idx):
        m = [sum(gap(per[i][k]) for i in idx) / len(idx) for k in (0, 1)]
        return (m[0] - m[1]) / m[ref] if m[ref] > 0 else math.nan
    return stat


def jnum(v):
    if v is None:
        return math.nan
    if isinstance(v, str):
        return -math.inf if v.startswith("-") else math.inf
    return float(v)


def close(a, b):
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or math.isinf(b):
        return (math.isnan(a) and math.isnan(b)) or a == b
    return abs(a - b) <= 1e-5 * max(abs(a), abs(b), 1e-3)  # summary.json keeps 6 digits


def check_findings(d, summ, recompute, label):
    """Checks every statistical finding of summ against recompute(f), which
    returns (estimate, lo, hi, p, n) from the run's own files or None for a
    statistic it does not know, and the verdict vocabulary; prints the errors
    and a count line starting with label. Returns (count, ok)."""
    found = [f for f in summ["findings"] if "stats" in f]
    errors, recomputed = [], []
    for f in found:
        e = recompute(f)
        if e is None:
            errors.append("%s: unknown statistic %r" % (f["claim"], f["stats"]["statistic"]))
            continue
        recomputed.append((f, e[:4], e[4], e[5] if len(e) > 5 else math.nan))
    # a sequential run (--target-ci): each p times the looks its plan allows, then Holm
    looks = int(summ.get("sequential", {}).get("looks_planned", 1))
    adj = holm([min(1.0, e[3] * looks) for _, e, _, _ in recomputed])
    for (f, (est, lo, hi, p), n, ceiling), pa in zip(recomputed, adj):
        st = f["stats"]
        pub = None if f.get("published") is None else float(f["published"])
        null = float(st["null"])
        want = decide(est, lo, hi, null, pa, st["expected_sign"], pub, n, ceiling)
        got = [jnum(st["estimate"]), jnum(st["ci95"][0]), jnum(st["ci95"][1]), float(st["p"]), float(st["p_holm"]),
               jnum(st["mde80"]), jnum(st.get("ceiling")), jnum(st.get("seeds_needed"))]
        mde = mde80(st["method"], n, lo, hi)
        need = seeds_needed(st["method"], n, est, lo, hi, null)
        for name, a, b in zip(("estimate", "ci lo", "ci hi", "p", "p_holm", "mde80", "ceiling", "seeds_needed"), got,
                              (est, lo, hi, p, pa, mde, ceiling, need)):
            if not close(a, b):
                errors.append("%s: %s %r, recomputed %r" % (f["claim"], name, a, b))
        if st.get("underpowered") != underpowered(st["method"], n, est, lo, hi, null, pub):
            errors.append("%s: underpowered %r, recomputed %r" % (f["claim"], st.get("underpowered"),
                                                                 not st.get("underpowered")))
        if st["seeds"] != n:
            errors.append("%s: seeds %r, recomputed %r" % (f["claim"], st["seeds"], n))
        if f["verdict"] != want:
            errors.append("%s: verdict %r, the rule gives %r" % (f["claim"], f["verdict"], want))
        if st["holm_family"] != len(recomputed):
            errors.append("%s: Holm family %r, want %r" % (f["claim"], st["holm_family"], len(recomputed)))
    vocab = {"reproduced", "direction only", "not reproduced", "inconclusive", "measurement"}
    for f in summ["findings"]:
        if f["verdict"] not in vocab:
            errors.append("%s: verdict %r outside the vocabulary" % (f["claim"], f["verdict"]))
        if "rule" not in f and f["verdict"] != "measurement":
            errors.append("%s: no rule" % f["claim"])
    for e in errors:
        print("%s: %s" % (d, e))
    print("%s: %d statistical findings recomputed, %d errors" % (label, len(recomputed), len(errors)))
    return len(recomputed), not errors


def mean_ci(x):
    """The mean and the 95% t half-width (nan for one value)."""
    m = sum(x) / len(x)
    if len(x) < 2:
        return m, math.nan
    sd = math.sqrt(sum((v - m) ** 2 for v in x) / (len(x) - 1))
    return m, t_ppf975(len(x) - 1) * sd / math.sqrt(len(x))


def noise_errors(summ, rows):
    """summary.json's noise_to_quant recomputed from runs.csv: per arm the mean
    over seeds of grad_noise and grad_qerr at each seed's last probed row, the
    step's tokens (tokens before it / step), the noise scale B r^2/(2 - r^2)
    and the parity batch B_noise (2 - e^2)/e^2 (None where undefined)."""
    errors = []
    for o in summ.get("noise_to_quant", []):
        last = {}
        for r in rows:
            if r["arm"] == o["arm"] and not math.isnan(float(r["grad_noise"])) and not math.isnan(float(r["grad_qerr"])):
                sd = int(r["seed"])
                if sd not in last or int(r["step"]) > int(last[sd]["step"]):
                    last[sd] = r
        rs = list(last.values())
        n = len(rs)
        noise, cn = mean_ci([float(r["grad_noise"]) for r in rs])
        qerr, cq = mean_ci([float(r["grad_qerr"]) for r in rs])
        step = int(rs[-1]["step"])
        # the probe's batch (probe_tokens); a runs.csv without the column: the step's
        probe = int(rs[-1].get("probe_tokens") or 0)
        tokens = probe if probe else (int(rs[-1]["tokens"]) // step if step else 0)

        def scale_at(r):
            return tokens * r ** 2 / (2 - r ** 2) if tokens and r ** 2 < 2 else math.nan

        def parity_at(sc, e):
            # the error's absolute size held fixed: eps = e^2 (1 + s), met by the noise at s = eps / 2
            ok = 0 < e and tokens and not math.isnan(sc)
            return 2 * sc / (e ** 2 * (1 + sc / tokens)) if ok else math.nan
        scale, parity = scale_at(noise), parity_at(scale_at(noise), qerr)
        # the intervals: the noise interval's ends; the corners of both (at least 90%); none for one seed
        s_lo, s_hi = (scale_at(max(noise - cn, 0.0)), scale_at(noise + cn)) if n > 1 else (math.nan, math.nan)
        p_lo, p_hi = ((parity_at(s_lo, qerr + cq), parity_at(s_hi, max(qerr - cq, 0.0))) if n > 1
                      else (math.nan, math.nan))
        want = {"seeds": len(rs), "tokens_per_step": tokens}
        for k, v in want.items():
            if o.get(k) != v:
                errors.append("noise_to_quant %s: %s %r, recomputed %r" % (o["arm"], k, o.get(k), v))
        got = [o.get(k) for k in ("noise_mean", "qerr_mean", "noise_scale_tokens", "tokens_for_parity")]
        got += list(o.get("noise_scale_ci95", [None, None])) + list(o.get("tokens_for_parity_ci90", [None, None]))
        for k, a, v in zip(("noise_mean", "qerr_mean", "noise_scale_tokens", "tokens_for_parity", "noise_scale_ci95 lo",
                            "noise_scale_ci95 hi", "tokens_for_parity_ci90 lo", "tokens_for_parity_ci90 hi"), got,
                           (noise, qerr, scale, parity, s_lo, s_hi, p_lo, p_hi)):
            if not close(jnum(a), v):
                errors.append("noise_to_quant %s: %s %r, recomputed %r" % (o["arm"], k, a, v))
    return errors


def check_dir(d):
    summ = json.load(open(d + "/summary.json"))
    with open(d + "/runs.csv") as f:
        rows = list(csv.DictReader(f))
    noise = noise_errors(summ, rows)
    for e in noise:
        print("%s: %s" % (d, e))

    def recompute(f):
        st = f["stats"]
        per = finals(rows, st["arms"])
        if st["statistic"] == "gap difference" and f.get("published") is not None:
            # ceiling: the upper 95% bound of gap(worse)'s mean
            g = est_t([gap(a) for a, _ in per])
            return est_t([gap(a) - gap(b) for a, b in per]) + (len(per), g[2] if len(per) >= 2 else g[0])
        if st["statistic"] == "gap difference":
            return est_t([gap(a) - gap(b) for a, b in per]) + (len(per),)
        if st["statistic"] in ("fraction of gap recovered", "fraction of the NVFP4 gap"):
            ref = st["arms"].index(st.get("denominator", st["arms"][0]))
            ceiling = 1.0 if ref == 0 else math.nan
            return est_boot(ratio_of_means(per, ref), len(per), 0.0) + (len(per), ceiling)
        if st["statistic"] == "progress":
            x = list(progress(rows, st["arms"][0]).values())
            return shifted_t(x, float(st["null"])) + (len(x),)
        if st["statistic"] == "progress difference":
            a, b = progress(rows, st["arms"][0]), progress(rows, st["arms"][1])
            d = [a[k] - b[k] for k in sorted(a) if k in b]
            return est_t(d) + (len(d),)
        if st["statistic"] == "log10 risk ratio":
            x = [math.log10(float(a["eval_loss"]) / float(b["eval_loss"])) for a, b in per]
            return shifted_t(x, float(st["null"])) + (len(x),)
        if st["statistic"] == "log10 risk ratio to fp32":
            x = [math.log10(float(a["eval_loss"]) / float(a["ref_eval_loss"])) for (a,) in per]
            return shifted_t(x, float(st["null"])) + (len(x),)
        if st["statistic"] == "gradient error difference":
            a, b = st["arms"]
            d = [(mean_qerr(rows, a, int(x["seed"])), mean_qerr(rows, b, int(x["seed"]))) for x, _ in per]
            d = [x - y for x, y in d if x is not None and y is not None]
            return est_t(d) + (len(d),)
        if st["statistic"] == "share of gap":
            def share(idx):
                den = sum(gap(per[i][1]) for i in idx)
                return sum(gap(per[i][0]) for i in idx) / den if den > 0 else math.nan
            return est_boot(share, len(per), 0.5) + (len(per),)
        if st["statistic"] == "tokens-to-match":
            return est_boot(lambda idx: tokens_to_match(per, idx), len(per), 1.0) + (len(per),)
        return None

    n, ok = check_findings(d, summ, recompute, d)
    return n, ok and not noise


def main():
    ok, total = True, 0
    for d in sys.argv[1:]:
        n, good = check_dir(d)
        total += n
        ok = ok and good
    return 0 if ok and total else 1


if __name__ == "__main__":
    sys.exit(main())
