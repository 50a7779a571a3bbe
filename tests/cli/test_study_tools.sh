#!/usr/bin/env bash
# tests/cli/test_study_tools.sh - the scripts that read finished study runs:
# tools/gap_trend.py recovers a planted log-linear and a planted power-law
# gap trend exactly and extrapolates them to the hand-computed values;
# tools/findings_table.py prints a finding's interval, mde80 and verdict,
# marks a published effect below mde80 `underpowered`, and lists the arms.
# Bad input exits non-zero with a message naming the problem.
set -euo pipefail
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
die() { echo "FAIL: $*" >&2; exit 1; }
cd "$(dirname "$0")/../.."
HDR="arm,seed,step,tokens,lr,loss,ref_loss,eval_loss,ref_eval_loss,gap_pct,entropy,drift,diverged,heldout_loss,ref_heldout_loss"

# gap = 0.1 + 0.05 log10(D) (arm lin) and gap = 0.002 D^0.25 (arm pow), two
# seeds each at +-0.01 around it (the tool averages the seeds), D = 1000 * step
mkdir -p "$T/run"
python3 - "$T/run/runs.csv" "$HDR" <<'PY'
import math, sys
with open(sys.argv[1], "w") as f:
    f.write(sys.argv[2] + "\n")
    for arm, g in (("lin", lambda d: 0.1 + 0.05 * math.log10(d)), ("pow", lambda d: 0.002 * d ** 0.25)):
        for seed, off in ((1, 0.01), (2, -0.01)):
            for step in range(0, 41):
                d = 1000 * step
                gap = g(d) + off if d else 0.0
                f.write("%s,%d,%d,%d,0,0,0,0,0,%.12g,0,0,0,nan,nan\n" % (arm, seed, step, d, gap))
PY
out=$(python3 tools/gap_trend.py "$T/run" --arm lin --params 1000 --to 1e13) || die "gap_trend lin"
grep -q "arm lin: 40 logged steps, last at 4e+04 tokens" <<<"$out" || die "gap_trend header: $out"
grep -q "tokens per parameter: last 40.0; targets 1e+10" <<<"$out" || die "gap_trend tokens per parameter: $out"
[ "$(grep -c 'log-linear gap = 0.1 +0.05 log10(D) *0.7500' <<<"$out")" = 3 ] || die "log-linear fit not exact: $out"
out=$(python3 tools/gap_trend.py "$T/run" --arm pow --to 1e13) || die "gap_trend pow"
# 0.002 * 1e13^0.25 = 0.002 * 10^3.25 = 3.5566
[ "$(grep -c 'power law  gap = 0.002 D^0.2500 *3.5566' <<<"$out")" = 3 ] || die "power-law fit not exact: $out"
if command -v gnuplot >/dev/null 2>&1; then
    python3 tools/gap_trend.py "$T/run" --arm pow --plot "$T/trend.png" >/dev/null || die "gap_trend --plot"
    [ "$(head -c 4 "$T/trend.png" | od -An -tx1 | tr -d ' ')" = 89504e47 ] || die "gap_trend --plot wrote no PNG"
fi
if python3 tools/gap_trend.py "$T/run" --arm nope >/dev/null 2>"$T/err"; then die "gap_trend accepted a missing arm"; fi
grep -q "no rows for arm 'nope' (arms: lin, pow)" "$T/err" || die "gap_trend missing arm: $(cat "$T/err")"

# findings_table: a summary without the underpowered flag (older runs): published 0.5 below mde80
# 0.8 and inconclusive -> underpowered; published 2 above mde80 -> not; published below mde80 but
# significant -> not; a summary with the flag: the flag decides, on any verdict, beside seeds_needed
cat > "$T/run/summary.json" <<'JSON'
{"study": "demo", "steps": 40, "seeds": 2,
 "arms": [{"arm": "lin", "seeds": 2, "diverged": 0, "gap_pct_mean": 0.33, "gap_pct_ci95": 0.12,
           "eval_loss_mean": 2.5, "final_evals": 4},
          {"arm": "pow", "seeds": 2, "diverged": 1, "gap_pct_mean": null, "gap_pct_ci95": null,
           "eval_loss_mean": null, "final_evals": 0}],
 "findings": [
  {"claim": "small effect", "measured": "x", "verdict": "inconclusive", "published": 0.5,
   "stats": {"estimate": 0.25, "ci95": [-0.3, 0.8], "seeds": 10, "null": 0.0, "mde80": 0.8, "p_holm": 0.61}},
  {"claim": "large effect", "measured": "x", "verdict": "direction only", "published": 2.0,
   "stats": {"estimate": 0.9, "ci95": [0.5, 1.3], "seeds": 10, "null": 0.0, "mde80": 0.4, "p_holm": 0.003}},
  {"claim": "seen anyway", "measured": "x", "verdict": "reproduced", "published": 1.0,
   "stats": {"estimate": 1.6, "ci95": [0.8, 2.4], "seeds": 10, "null": 0.0, "mde80": 1.1, "p_holm": 0.002}},
  {"claim": "flagged", "measured": "x", "verdict": "direction only", "published": null,
   "stats": {"estimate": 0.3, "ci95": [0.02, 0.58], "seeds": 10, "null": 0.0, "mde80": 0.4, "p_holm": 0.04,
             "seeds_needed": 18, "underpowered": true}},
  {"claim": "fixed criterion", "measured": "stalls at 7.0859375", "verdict": "reproduced"}],
 "timing": [{"seconds": 10.5}, {"seconds": 30.0}]}
JSON
out=$(python3 tools/findings_table.py "$T/run") || die "findings_table"
grep -qF "| small effect | 0.5 | +0.250 [-0.300, +0.800], 10 seeds | 0.800 | — | 0.61 | inconclusive (underpowered) |" \
    <<<"$out" || die "findings_table small effect: $out"
grep -qF "| large effect | 2 | +0.900 [+0.500, +1.300], 10 seeds | 0.400 | — | 0.003 | direction only |" <<<"$out" \
    || die "findings_table large effect: $out"
grep -qF "| seen anyway | 1 | +1.600 [+0.800, +2.400], 10 seeds | 1.100 | — | 0.002 | reproduced |" <<<"$out" \
    || die "findings_table: a significant finding marked underpowered: $out"
grep -qF "| flagged | — | +0.300 [+0.020, +0.580], 10 seeds | 0.400 | 18 | 0.04 | direction only (underpowered) |" \
    <<<"$out" || die "findings_table flagged: $out"
grep -qF "| fixed criterion | — | stalls at 7.0859375 | — | — | — | reproduced |" <<<"$out" || die "fixed criterion: $out"
grep -qF "2 jobs, 40 steps, 2 seeds; job wall time: sum 40 s, longest 30 s" <<<"$out" || die "timing: $out"
grep -qF "| lin | 0.330 ± 0.120 | 2.5000 | 2 | 0 |" <<<"$out" || die "arm lin: $out"
grep -qF "| pow | — ± — | — | 2 | 1 |" <<<"$out" || die "arm pow: $out"
if python3 tools/findings_table.py "$T/none" >/dev/null 2>"$T/err"; then die "findings_table accepted a missing folder"; fi
grep -q "summary.json" "$T/err" || die "findings_table missing folder: $(cat "$T/err")"
echo "test_study_tools: ok"
