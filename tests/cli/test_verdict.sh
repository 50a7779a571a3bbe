#!/usr/bin/env bash
# test_verdict.sh - every statistical verdict of a --quick training-study run
# (3 seeds; s1a and s6 too, whose findings carry t intervals) follows the
# rules of docs/studies.md "How verdicts are decided":
# tests/cli/verdict_recompute.py recomputes each one from runs.csv alone
# (standard-library Python, independent of src/study/verdict.c); a summary
# with one verdict altered must be caught.
set -u
NVFP4=${NVFP4:?set NVFP4 to the nvfp4 binary}
HERE=$(cd "$(dirname "$0")" && pwd)
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 0; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }

dirs=
for s in s1a s1b s3-2d s3-format s3-rht s3-switch s6; do
    # s3-format's --quick is one seed of its default run (800 steps): 4 steps suffice here
    steps=; [ "$s" = s3-format ] && steps="--steps 4"
    # shellcheck disable=SC2086
    if ! "$NVFP4" study run "$s" --quick --seeds 3 $steps --quiet --out "$T/$s" > /dev/null 2> "$T/$s.err"; then
        die "study run $s: $(cat "$T/$s.err")"; continue
    fi
    dirs="$dirs $T/$s"
done
# shellcheck disable=SC2086
python3 "$HERE/verdict_recompute.py" $dirs > "$T/out" 2>&1 || die "recomputed verdicts differ: $(cat "$T/out")"
for want in "s3-format: 2" "s3-switch: 3" "s1a: 5" "s6: 4"; do
    grep -q "/$want statistical findings recomputed, 0 errors" "$T/out" || die "$want: $(cat "$T/out")"
done

# the recomputation can fail: flip one verdict and one interval bound
python3 - "$T/s3-switch/summary.json" <<'PY'
import json, sys
p = sys.argv[1]; d = json.load(open(p))
f = [x for x in d["findings"] if "stats" in x][0]
f["verdict"] = "reproduced" if f["verdict"] != "reproduced" else "inconclusive"
json.dump(d, open(p, "w"))
PY
python3 "$HERE/verdict_recompute.py" "$T/s3-switch" > "$T/bad" 2>&1 && die "an altered verdict was not caught"
grep -q "the rule gives" "$T/bad" || die "altered verdict: $(cat "$T/bad")"
exit $fail
