#!/usr/bin/env python3
"""findings_table.py - the findings of study runs as a Markdown table, the
form docs/studies.md reports them in.

    python3 tools/findings_table.py RUN_DIR [RUN_DIR...]

For each statistical finding of RUN_DIR/summary.json: the claim, the
published value, our estimate with its 95% interval and seed count, the
power statement mde80, the seeds the finding would need to detect its own
estimate (seeds_needed), the Holm-adjusted p and the verdict; `underpowered`
where the summary flags it (mde80 above the published effect, or above the
estimate where no size is published; older summaries: an inconclusive verdict
whose published effect lies below mde80) (docs/studies.md, "How verdicts are
decided"). Findings without statistics (fixed criteria) are
listed with their verdict. Then the wall time of the run (the sum and the
longest of its jobs' timing) and its arms' final gaps. Needs only the
standard library.
"""
import json
import math
import sys


def num(v, fmt="%+.3f"):
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else fmt % v


def finding_row(f):
    st = f.get("stats")
    if not st:
        return "| %s | — | %s | — | — | — | %s |" % (f["claim"], f.get("measured", ""), f["verdict"])
    lo, hi = st["ci95"]
    est = "%s [%s, %s], %d seeds" % (num(st["estimate"]), num(lo), num(hi), st["seeds"])
    pub, mde = f.get("published"), st.get("mde80")
    verdict = f["verdict"]
    if "underpowered" in st:
        under = st["underpowered"]
    else:  # a summary written before the flag: the old rule
        under = verdict == "inconclusive" and pub is not None and mde is not None and abs(pub - st["null"]) < mde
    if under:
        verdict += " (underpowered)"
    need = st.get("seeds_needed")
    need = "—" if need is None else str(need)
    return "| %s | %s | %s | %s | %s | %s | %s |" % (f["claim"], num(pub, "%.3g"), est, num(mde, "%.3f"), need,
                                                    num(st.get("p_holm"), "%.2g"), verdict)


def table(d):
    path = d.rstrip("/") + "/summary.json"
    try:
        with open(path) as f:
            s = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("findings_table: %s: %s" % (path, e))
    print("### %s (%s)\n" % (s["study"], d))
    print("| claim | published | ours (95% CI) | mde80 | seeds needed | p (Holm) | verdict |")
    print("|---|---|---|---|---|---|---|")
    for f in s.get("findings", []):
        print(finding_row(f))
    jobs = s.get("timing", [])
    if jobs:
        secs = [j.get("seconds") or 0.0 for j in jobs]
        print("\n%d jobs, %d steps, %s seeds; job wall time: sum %.0f s, longest %.0f s" %
              (len(jobs), s.get("steps", 0), s.get("seeds", "?"), sum(secs), max(secs)))
    print("\n| arm | final gap % (95% CI) | final eval loss | seeds | diverged |")
    print("|---|---|---|---|---|")
    for a in s.get("arms", []):
        print("| %s | %s ± %s | %s | %d | %d |" % (a["arm"], num(a.get("gap_pct_mean"), "%.3f"),
                                                 num(a.get("gap_pct_ci95"), "%.3f"),
                                                 num(a.get("eval_loss_mean"), "%.4f"), a["seeds"], a["diverged"]))
    print()


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.split("\n\n")[1])
    for d in sys.argv[1:]:
        table(d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
