#!/usr/bin/env bash
# test_study_quick.sh - a study's --quick preset (one seed, seconds) shows the
# direction of every finding its default run decides (docs/studies.md, "What
# --quick shows"): for each finding below, the sign of the quick run's
# estimate minus the finding's null value equals that of the 10-seed default
# run (its verdict reproduced, not reproduced or direction only; s8-regime and
# s8-all-nvfp4: their 4-seed default runs). Quick runs
# are deterministic, so a preset change, a rounding change that moves a
# quick run, or a finding that loses its estimate at one seed shows here.
# s2-layers, s3-format and s7-gpt (fractions of NVFP4's gap, which a tiny
# preset leaves too small to divide by), s3-switch and s6 run one seed of
# their default run as --quick (about 35-50 s each for the first three).
set -u
NVFP4=${NVFP4:?set NVFP4 to the nvfp4 binary}
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 0; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }

# study, finding index in summary.json, sign of (estimate - null) in the default run
cat > "$T/expect" <<'EOF'
s1a 0 +   k = 0.5 tracks noise-free GD (reproduced)
s1a 1 +   k = 1 slows progress against k = 0.5 (reproduced)
s1a 2 +   k = 2 slows progress against k = 1 (reproduced)
s1a 3 +   k = 2 stalls (not reproduced: above the 0.5 threshold)
s1a 4 -   a deterministic bias leaves a loss floor (reproduced)
s1b 0 +   the gap is forward-dominated (reproduced)
s1c 0 -   progress stalls below sqrt(3) (direction only)
s1c 1 +   progress drops as the ratio crosses sqrt(3) (reproduced)
s2-layers 3 +   keeping fc2 in BF16 recovers part of the all-NVFP4 gap (reproduced)
s2-layers 4 +   keeping the head in BF16 recovers part of the gap (reproduced)
s2-layers 5 +   keeping block 0 in BF16 recovers part of the gap (reproduced)
s3-format 0 +   MXFP4 trails NVFP4 by about 2/3 of NVFP4's gap (reproduced)
s3-format 2 +   MXFP4 needs more tokens than NVFP4 (direction only)
s3-switch 0 +   a late forward switch recovers part of the gap (reproduced)
s3-switch 1 +   switching both passes recovers part of the gap (reproduced)
s3-switch 2 +   a forward switch beats a backward-only one (reproduced)
s5 0 -   all-SR backward: the K-draw error shrinks as 1/sqrt(K) (reproduced)
s5 1 -   the paper recipe's backward: the same (direction only)
s5 3 +   one SR gradient is noisier than one RTN gradient (reproduced)
s6 0 +   RN bf16 updates stagnate far above fp32 (reproduced)
s6 1 +   RN bf16 updates stagnate above SR (reproduced)
s6 2 +   SR bf16 updates are not within 5x of fp32 (not reproduced)
s6 3 +   with E4M3 storage SR beats RN (reproduced)
s7-gpt 0 +   NVFP4 trails FP8 by all of NVFP4's gap (reproduced)
s8-ablate 8 +   FP8 trails BF16 operands (reproduced)
s8-all-nvfp4 6 +   quantizing the paper's BF16 blocks too raises the loss (reproduced, 4 seeds)
s8-all-nvfp4 7 +   quantizing the paper's BF16 blocks too raises the gradient error (reproduced, 4 seeds)
s9-sr-rht 1 +   SR on every operand is worse than on dY only (reproduced)
s11-format 1 +   MXFP4 needs more tokens than NVFP4 (not reproduced: below 1.36x)
s12-switch 0 +   a forward switch at 80% recovers part of the gap (reproduced)
s12-switch 1 +   switching both passes at 80% recovers part of the gap (reproduced)
s12-switch 2 +   a forward switch beats a backward-only one (reproduced)
s12-switch 3 +   a switch at 50% recovers more than one at 80% (reproduced)
EOF

for s in $(cut -d' ' -f1 "$T/expect" | uniq); do
    "$NVFP4" study run "$s" --quick --quiet --out "$T/$s" > /dev/null 2> "$T/$s.err" ||
        die "study run $s --quick: $(cat "$T/$s.err")"
done
python3 - "$T" > "$T/out" 2>&1 <<'PY' || die "$(cat "$T/out")"
import json, sys
T = sys.argv[1]
bad = 0
for line in open(T + "/expect"):
    study, k, sign = line.split()[:3]
    f = json.load(open("%s/%s/summary.json" % (T, study)))["findings"][int(k)]
    st = f.get("stats") or {}
    est = st.get("estimate")
    d = None if est is None else est - (st.get("null") or 0.0)
    if d is None or d == 0 or (d > 0) != (sign == "+"):
        print("%s finding %s (%s): --quick gives %s, the default run's direction is %s" % (study, k, f["claim"], d, sign))
        bad += 1
sys.exit(1 if bad else 0)
PY
exit $fail
