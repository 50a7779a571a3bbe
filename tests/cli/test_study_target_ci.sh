#!/usr/bin/env bash
# test_study_target_ci.sh - `study run --target-ci W` (src/study/sequential.c):
# seeds added in batches until every finding's 95% interval is narrower than
# W or --max-seeds; `--first-seed K` runs a later range of seeds by hand, and
# `study merge` joins such folders; the merged rows equal those of one run of all the seeds
# byte for byte, in its job order,
# the plan is recorded in summary.json, and the verdicts multiply each p by
# the planned looks before Holm (tests/cli/verdict_recompute.py recomputes
# them). Tiny runs: s6 at 40 steps, s3-2d --quick.
set -u
NVFP4=${NVFP4:?set NVFP4 to the nvfp4 binary}
HERE=$(cd "$(dirname "$0")" && pwd)
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 0; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }

# a target out of reach: 3 + 3 + 2 seeds (the cap), 3 planned looks
"$NVFP4" study run s6 --quick --steps 40 --seeds 3 --target-ci 0.002 --max-seeds 8 --out "$T/seq" \
    > /dev/null 2> "$T/seq.err" || die "s6 --target-ci: $(cat "$T/seq.err")"
grep -q "after 3 seeds the widest 95% interval" "$T/seq.err" || die "no progress line: $(cat "$T/seq.err")"
grep -q "after 8 seeds" "$T/seq.err" || die "no third look: $(cat "$T/seq.err")"
for b in seeds-1-3 seeds-4-6 seeds-7-8; do [ -s "$T/seq/batches/$b/runs.csv" ] || die "batch $b missing"; done
"$NVFP4" study run s6 --quick --steps 40 --seeds 8 --quiet --out "$T/plain" > /dev/null 2>&1 || die "s6 plain"
cmp -s "$T/seq/runs.csv" "$T/plain/runs.csv" || die "the batches' rows differ from one 8-seed run"
# `study merge` of seed batches: any order gives the 8-seed run's rows; a gap or an overlap is refused (exit 2)
B="$T/seq/batches"
"$NVFP4" study merge --out "$T/remerged" "$B/seeds-7-8" "$B/seeds-1-3" "$B/seeds-4-6" >/dev/null 2>&1 || die "merge of the batches"
cmp -s "$T/remerged/runs.csv" "$T/plain/runs.csv" || die "merged batches differ from one 8-seed run"
"$NVFP4" study merge --out "$T/gap" "$B/seeds-1-3" "$B/seeds-7-8" >/dev/null 2>"$T/gap.err"
[ $? = 2 ] && grep -q "seeds 4..6 missing" "$T/gap.err" || die "a seed gap not refused: $(cat "$T/gap.err")"
"$NVFP4" study merge --out "$T/dup" "$B/seeds-1-3" "$B/seeds-4-6" "$B/seeds-4-6" >/dev/null 2>"$T/dup.err"
[ $? = 2 ] && grep -q "which another folder holds too" "$T/dup.err" || die "a seed overlap not refused: $(cat "$T/dup.err")"
python3 - "$T/seq/summary.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
q, bad = d.get("sequential", {}), []
want = {"first_seeds": 3, "seed_batch": 3, "max_seeds": 8, "looks_planned": 3, "looks": 3,
        "stopped": "max_seeds reached", "target_ci": 0.002}
for k, v in want.items():
    if q.get(k) != v:
        bad.append("sequential.%s = %r, want %r" % (k, q.get(k), v))
if d.get("seeds") != 8:
    bad.append("seeds %r" % d.get("seeds"))
for f in d["findings"]:
    st = f["stats"]
    if st["seeds"] != 8 or st.get("looks") != 3 or abs(st["p_looks"] - min(1.0, 3 * st["p"])) > 1e-5 * st["p_looks"]:
        bad.append("%s: %r" % (f["claim"], st))
for x in bad:
    print("FAIL:", x)
sys.exit(1 if bad else 0)
PY
python3 "$HERE/verdict_recompute.py" "$T/seq" > "$T/out" 2>&1 || die "recomputed verdicts differ: $(cat "$T/out")"

# a target met by the first batch: one look, nothing added
"$NVFP4" study run s6 --quick --steps 40 --seeds 3 --target-ci 0.05 --quiet --out "$T/once" > /dev/null 2>&1 \
    || die "s6 --target-ci 0.05"
python3 -c "
import json, sys
q = json.load(open('$T/once/summary.json'))['sequential']
sys.exit(0 if (q['looks'], q['looks_planned'], q['stopped']) == (1, 22, 'every interval narrower than target_ci') else 1)
" || die "one look: $(python3 -c "import json; print(json.load(open('$T/once/summary.json'))['sequential'])")"

# a training study through the job runner: 2 + 2 seeds equal one 4-seed run, layers too
"$NVFP4" study run s3-2d --quick --seeds 2 --target-ci 1e-9 --max-seeds 4 --quiet --out "$T/s3" > /dev/null 2>&1 \
    || die "s3-2d --target-ci"
"$NVFP4" study run s3-2d --quick --seeds 4 --quiet --out "$T/s3plain" > /dev/null 2>&1 || die "s3-2d plain"
for f in runs.csv layers.csv; do
    cmp -s "$T/s3/$f" "$T/s3plain/$f" || die "s3-2d $f differs from one 4-seed run"
done

# --first-seed: seeds 3..4 run on their own and merged with seeds 1..2 give the 4-seed run's
# bytes, in job order (s3-2d; s8-all-nvfp4 too, whose arms share one FP32 shadow per seed)
"$NVFP4" study run s3-2d --quick --seeds 2 --quiet --out "$T/fs12" > /dev/null 2>&1 || die "s3-2d seeds 1..2"
"$NVFP4" study run s3-2d --quick --seeds 2 --first-seed 3 --quiet --out "$T/fs34" > /dev/null 2>&1 \
    || die "s3-2d --first-seed 3"
python3 -c "
import json, sys
fp = json.load(open('$T/fs34/summary.json'))['fingerprint']
sys.exit(0 if (fp.get('first_seed'), fp.get('seeds')) == (3, 2) else 1)
" || die "fingerprint of --first-seed 3: $(python3 -c "import json; print(json.load(open('$T/fs34/summary.json'))['fingerprint'])")"
"$NVFP4" study merge --out "$T/fsm" "$T/fs34" "$T/fs12" > /dev/null 2>&1 || die "merge of --first-seed folders"
for f in runs.csv layers.csv; do cmp -s "$T/fsm/$f" "$T/s3plain/$f" || die "s3-2d seeds 1..2 + 3..4: $f differs from one 4-seed run"; done
"$NVFP4" study run s8-all-nvfp4 --quick --seeds 2 --quiet --out "$T/a2" > /dev/null 2>&1 || die "s8-all-nvfp4 2 seeds"
"$NVFP4" study run s8-all-nvfp4 --quick --seeds 1 --quiet --out "$T/a1" > /dev/null 2>&1 || die "s8-all-nvfp4 seed 1"
"$NVFP4" study run s8-all-nvfp4 --quick --first-seed 2 --quiet --out "$T/b1" > /dev/null 2>&1 || die "s8-all-nvfp4 seed 2"
"$NVFP4" study merge --out "$T/ab" "$T/a1" "$T/b1" > /dev/null 2>&1 || die "merge of s8-all-nvfp4 seeds 1, 2"
for f in runs.csv layers.csv; do cmp -s "$T/ab/$f" "$T/a2/$f" || die "s8-all-nvfp4 seeds 1 + 2: $f differs from one 2-seed run"; done
python3 -c "
import json, sys
a, b = (json.load(open('$T/%s/summary.json' % d)) for d in ('a2', 'ab'))
sys.exit(0 if a['findings'] == b['findings'] and a['noise_to_quant'] == b['noise_to_quant'] else 1)
" || die "s8-all-nvfp4: merged findings differ from one 2-seed run"

expect2() {
    "$NVFP4" "$@" > /dev/null 2> "$T/err"
    [ $? = 2 ] || die "exit status of '$*' is not 2"
    grep -q "$msg" "$T/err" || die "'$*': $(cat "$T/err")"
}
msg="need --target-ci" expect2 study run s6 --max-seeds 10 --out "$T/x"
msg="expected a positive width" expect2 study run s6 --target-ci 0 --out "$T/x"
msg="expected a positive width" expect2 study run s6 --target-ci -1 --out "$T/x"
msg="at least 2 seeds" expect2 study run s6 --quick --target-ci 1 --out "$T/x"
msg="at least the first batch" expect2 study run s6 --seeds 4 --max-seeds 3 --target-ci 1 --out "$T/x"
msg="expected 1..65536" expect2 study run s6 --first-seed 0 --out "$T/x"
msg="not with --target-ci" expect2 study run s6 --seeds 3 --first-seed 4 --target-ci 1 --out "$T/x"
msg="not with MPI, --shard or --resume" expect2 study run s6 --seeds 3 --shard 0/2 --target-ci 1 --out "$T/x"
exit $fail
