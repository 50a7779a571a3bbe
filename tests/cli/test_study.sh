#!/usr/bin/env bash
# test_study.sh - `nvfp4 study`: every study runs (tiny sizes) and writes its
# CSV / JSON (and PNGs where gnuplot exists); sharded runs merged equal the
# unsharded run; thread count does not change a byte; bad input exits 2.
set -u
NVFP4=${NVFP4:?set NVFP4 to the nvfp4 binary}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }

"$NVFP4" study list > "$T/list" || die "study list"
n=$(wc -l < "$T/list")
[ "$n" -ge 8 ] || die "study list shows $n studies"
# every built-in study states its default run's measured wall time on 2 cores (docs/studies.md)
[ "$(grep -cE ' \(default run: [0-9][0-9a-z ]* on 2 cores\)$' "$T/list")" = "$n" ] || die "a study without its wall time: $(grep -v 'on 2 cores)$' "$T/list")"
grep -q '^s8-ablate .*\[config\] (default run: 6 min 41 s on 2 cores)$' "$T/list" || die "s8-ablate's wall time"
grep -q '^s8-regime .*\[config\] (default run: 2 h 59 min on 2 cores)$' "$T/list" || die "s8-regime's wall time"
grep -q '^s8-all-nvfp4 .*\[config\] (default run: 4 h 35 min on 2 cores)$' "$T/list" || die "s8-all-nvfp4's wall time"
have_gp=0; command -v gnuplot >/dev/null 2>&1 && have_gp=1

for s in $(cut -d' ' -f1 "$T/list"); do
    steps=4; [ "$s" = s0 ] && steps=3; [ "$s" = s1a ] && steps=50; [ "$s" = s6 ] && steps=40
    quick=; case "$s" in s5|s7*|s2-*|s8-*|s9-*|s1[0-2]-*) quick=--quick;; esac  # the GPT studies: their CI-sized model
    if ! "$NVFP4" study run "$s" $quick --steps $steps --seeds 2 --quiet --out "$T/$s" > "$T/$s.out" 2> "$T/$s.err"; then
        die "study run $s: $(cat "$T/$s.err")"; continue
    fi
    [ -s "$T/$s/summary.json" ] || die "$s: no summary.json"
    grep -q "\"study\": \"$s\"" "$T/$s/summary.json" || die "$s: summary.json lacks the study name"
    if [ "$s" = s0 ]; then
        [ -s "$T/s0/s0_stagnation.csv" ] || die "s0: no s0_stagnation.csv"
        grep -q '^harmonic,fp16,rn,5130,7.0859375,0,513,' "$T/s0/s0_stagnation.csv" || die "s0: fp16 harmonic constant"
        grep -q '^harmonic,bf16,rn,650,5.0625,0,65,' "$T/s0/s0_stagnation.csv" || die "s0: bf16 harmonic constant"
        [ $have_gp = 0 ] || [ -s "$T/s0/s0_harmonic.png" ] || die "s0: no s0_harmonic.png"
    elif [ "$s" = s5 ]; then  # gradient probes, no training runs: its own CSV
        [ -s "$T/s5/s5_gradfid.csv" ] || die "s5: no s5_gradfid.csv"
        [ $have_gp = 0 ] || [ -s "$T/s5/s5.png" ] || die "s5: no s5.png"
    else
        [ -s "$T/$s/runs.csv" ] || die "$s: no runs.csv"
        rows=$(($(wc -l < "$T/$s/runs.csv") - 1))
        [ "$rows" -ge 4 ] || die "$s: runs.csv has $rows rows"
        [ $have_gp = 0 ] || [ -s "$T/$s/gap.png" ] || die "$s: no gap.png"
    fi
done
[ $have_gp = 1 ] || grep -q "plots skipped" "$T/s6.out" || die "no 'plots skipped' message without gnuplot"

# a serial study's tables do not depend on --threads: s0's GEMM tables went through a 2-thread OpenBLAS
# sgemm, whose bytes differ from a 1-thread one (at the default run's 32 draws, a digit of s0_scalebias.csv)
"$NVFP4" study run s0 --threads 2 --quiet --out "$T/s0t2" >/dev/null 2>&1 || die "s0 --threads 2"
"$NVFP4" study run s0 --threads 1 --quiet --out "$T/s0t1" >/dev/null 2>&1 || die "s0 --threads 1"
for f in "$T"/s0t2/*.csv; do
    cmp -s "$f" "$T/s0t1/$(basename "$f")" || die "s0: $(basename "$f") differs between --threads 2 and 1"
done
# s5's seeds are jobs on one BLAS thread each: its CSV is the same at 1 and 2 threads (the loop above
# ran it at 2; its seeds once ran one after another on a 2-thread OpenBLAS, and step 0 already differed)
"$NVFP4" study run s5 --quick --steps 4 --seeds 2 --threads 1 --quiet --out "$T/s5t1" >/dev/null 2>&1 || die "s5 --threads 1"
cmp -s "$T/s5/s5_gradfid.csv" "$T/s5t1/s5_gradfid.csv" || die "s5: s5_gradfid.csv differs between --threads 2 and 1"
[ "$(wc -l < "$T/s5t1/s5_gradfid.csv")" = 241 ] || die "s5: $(wc -l < "$T/s5t1/s5_gradfid.csv") lines, want 241 (5 variants x 2 seeds x 3 checkpoints x 8 layers)"

# shards 0/2 and 1/2, merged, hold exactly the rows of the whole run
"$NVFP4" study run s3-2d --steps 3 --seeds 2 --quiet --shard 0/2 --out "$T/sh0" >/dev/null 2>&1 || die "shard 0/2"
"$NVFP4" study run s3-2d --steps 3 --seeds 2 --quiet --shard 1/2 --out "$T/sh1" >/dev/null 2>&1 || die "shard 1/2"
"$NVFP4" study merge --out "$T/merged" "$T/sh0" "$T/sh1" >/dev/null 2>&1 || die "merge"
"$NVFP4" study run s3-2d --steps 3 --seeds 2 --quiet --threads 2 --out "$T/whole2" >/dev/null 2>&1 || die "threads 2"
"$NVFP4" study run s3-2d --steps 3 --seeds 2 --quiet --threads 1 --out "$T/whole1" >/dev/null 2>&1 || die "threads 1"
cmp -s <(sort "$T/merged/runs.csv") <(sort "$T/whole1/runs.csv") || die "merged shards differ from the whole run"
cmp -s "$T/whole1/runs.csv" "$T/whole2/runs.csv" || die "runs.csv differs between 1 and 2 threads"
cmp -s "$T/whole1/layers.csv" "$T/whole2/layers.csv" || die "layers.csv differs between 1 and 2 threads"
grep -q '"arm": "w-1x16"' "$T/merged/summary.json" || die "merged summary lacks an arm"

# plot redraws from the CSV
rm -f "$T/whole1/gap.png" "$T/whole1/gap_agg.dat"
"$NVFP4" study plot "$T/whole1" >/dev/null 2>&1 || die "study plot"
[ -s "$T/whole1/gap_agg.dat" ] || die "plot did not rebuild gap_agg.dat"
[ $have_gp = 0 ] || [ -s "$T/whole1/gap.png" ] || die "plot did not redraw gap.png"

# the GPT's text missing: exit 2, naming the Debian package; nothing written
NVFP4_FORTUNES_DIR="$T/no-fortunes" "$NVFP4" study run s7-gpt --quick --quiet --out "$T/nofort" >/dev/null 2>"$T/err"
rc=$?; [ $rc = 2 ] || die "s7-gpt without the corpus exited $rc (want 2)"
grep -q "'fortunes'" "$T/err" || die "s7-gpt without the corpus: message does not name the package: $(cat "$T/err")"
[ ! -e "$T/nofort/runs.csv" ] || die "s7-gpt without the corpus wrote runs.csv"

# tools/ngram_baseline.py: the lab's split, interpolated Kneser-Ney. Every file
# "abab..." (100 bytes): 90 to training (1665 a, 1665 b), 10 held out; order 1
# gives p(a) = p(b) = (1665 - 0.75)/3330 + 0.75 * 2/3330/256.
mkdir -p "$T/abfort"
for f in art computers cookie definitions disclaimer drugs education ethnic food goedel humorists kids knghtbrd \
    law linux linuxcookie love magic medicine men-women miscellaneous news paradoxum people perl pets platitudes \
    politics pratchett science songs-poems sports startrek tao wisdom work zippy; do
    printf 'ab%.0s' $(seq 50) > "$T/abfort/$f"
done
want=$(python3 -c 'import math; print("%.4f" % -math.log((1665 - 0.75) / 3330 + 0.75 * 2 / 3330 / 256))')
got=$(python3 "$(dirname "$0")/../../tools/ngram_baseline.py" --order 1 --dir "$T/abfort" | sed -n 's/^order 1 .*: \([0-9.]*\) nats.*/\1/p')
[ "$got" = "$want" ] || die "ngram_baseline order 1: $got nats/byte, want $want"
python3 "$(dirname "$0")/../../tools/ngram_baseline.py" --dir "$T/no-fortunes" >/dev/null 2>"$T/err"
rc=$?; [ $rc = 2 ] && grep -q "'fortunes'" "$T/err" || die "ngram_baseline without the corpus: exit $rc, $(cat "$T/err")"

# study bench: every arm, a ratio of 1 for fp32 itself
"$NVFP4" study bench --steps 1 --threads 1 --rounds 1 --json > "$T/bench.json" 2>"$T/err" || die "study bench: $(cat "$T/err")"
for a in fp32 bf16 fp8 mxfp8 nvfp4 nvfp4-bf16; do grep -q "\"arm\": \"$a\"" "$T/bench.json" || die "bench lacks arm $a"; done
grep -q '"ratio_to_fp32": 1.0' "$T/bench.json" || die "bench: fp32 arm's ratio is not 1"
# BF16 arithmetic in the nvfp4-bf16 arm alone
python3 - "$T/bench.json" <<'PY' || die "bench: bf16_training is not on in nvfp4-bf16 alone"
import json, sys
rows = json.load(open(sys.argv[1]))["arms"]
sys.exit(0 if sorted(r["arm"] for r in rows if r["bf16_training"]) == ["nvfp4-bf16"] else 1)
PY
# --arms: the listed arms and fp32 (the ratios' base), nothing else
"$NVFP4" study bench --steps 1 --threads 1 --arms nvfp4 --json > "$T/bench1.json" 2>"$T/err" || die "study bench --arms: $(cat "$T/err")"
[ "$(grep -o '"arm": "[a-z0-9-]*"' "$T/bench1.json" | tr '\n' ' ')" = '"arm": "fp32" "arm": "nvfp4" ' ] ||
    die "bench --arms nvfp4 ran: $(grep -o '"arm": "[a-z0-9-]*"' "$T/bench1.json" | tr '\n' ' ')"
# 3 rounds by default: the median ratio lies in its range, fp32's range is [1, 1]
python3 - "$T/bench1.json" <<'PY' || die "bench: rounds or ratio ranges wrong: $(cat "$T/bench1.json")"
import json, sys
d = json.load(open(sys.argv[1]))
r = {a["arm"]: a for a in d["arms"]}
lo, hi = r["nvfp4"]["ratio_to_fp32_range"]
ok = d["rounds"] == 3 and lo <= r["nvfp4"]["ratio_to_fp32"] <= hi and r["fp32"]["ratio_to_fp32_range"] == [1.0, 1.0]
sys.exit(0 if ok else 1)
PY

# bad input: exit code 2 with a message, no crash
expect2() { "$NVFP4" "$@" >/dev/null 2>"$T/err"; rc=$?; [ $rc = 2 ] || die "'$*' exited $rc (want 2)"; [ -s "$T/err" ] || die "'$*' printed no message"; }
expect2 study
expect2 study run
expect2 study run no-such-study
expect2 study run s6 --steps 0
expect2 study run s6 --shard 2/2
expect2 study run s6 --seeds x
expect2 study run s6 --bogus 1
expect2 study bench --threads 0
expect2 study bench --bogus
expect2 study bench --arms nvfp4,fp4
expect2 study bench --arms ""
expect2 study bench --rounds 0
expect2 study bench --rounds 33
expect2 study plot "$T/does-not-exist"
expect2 study merge --out "$T/m2"
expect2 study merge --out "$T/m3" "$T/sh0" "$T/s6"
"$NVFP4" study --help >/dev/null || die "study --help"
# the plot titles promise an interval over seeds only where there are several:
# s1a above ran 2 seeds; one seed says it draws no interval
if [ $have_gp = 1 ]; then
    grep -qF "(line: mean over 2 seeds, band: 95% CI)" "$T/s1a/gap.gp" || die "s1a's 2-seed gap title: $(grep title "$T/s1a/gap.gp")"
    grep -qF "(line: mean over 2 seeds; band: 95% t interval" "$T/s1b/paired.gp" || die "s1b's 2-seed paired title: $(grep title "$T/s1b/paired.gp")"
    # every arm's mean line has its own dash type and colour (the line type k
    # the script draws it with, as the script's palette defines it): s3-rht's
    # 4 arms on one axis, s1b's 5 arms in one panel each
    for g in s3-rht/gap.gp s3-rht/paired.gp s1b/gap.gp s1b/loss.gp; do
        lts=$(grep -o 'with lines lw 2 lt [0-9]*' "$T/$g" | awk '{print $NF}')
        n=$(echo $lts | wc -w)
        defs=$(for k in $lts; do grep "^set linetype $k lc " "$T/$g"; done)
        dts=$(echo "$defs" | sed -n 's/.* dt //p' | sort -u | wc -l)
        lcs=$(echo "$defs" | sed -n "s/.* lc rgb '\([^']*\)'.*/\1/p" | sort -u | wc -l)
        [ "$n" -ge 3 ] && [ "$dts" = "$n" ] && [ "$lcs" = "$n" ] || die "$g: $n arms drawn with $dts dash types, $lcs colours"
    done
    grep -q "lc rgb 'black' t 'reference slope: 0.13/sqrt(T)'" "$T/s0/s0_sravg.gp" || die "s0_sravg: no black reference line"
    # s3-rht keeps its first and last linears (0 and 5) in high precision: their empty slots say so; s1b quantizes all
    [ "$(grep -c '^set label "high precision' "$T/s3-rht/layers.gp")" = 2 ] &&
        grep -q '^set label "high precision.* at 0, ' "$T/s3-rht/layers.gp" &&
        grep -q '^set label "high precision.* at 5, ' "$T/s3-rht/layers.gp" || die "s3-rht/layers.gp: layers 0 and 5 not labelled high precision"
    grep -q '^set label "high precision' "$T/s1b/layers.gp" && die "s1b/layers.gp labels a quantized layer high precision"
    grep -q "one panel per arm" "$T/s1b/gap.gp" || die "s1b's 5 arms are not drawn in panels"
    grep -q "one panel per arm" "$T/s3-rht/gap.gp" && die "s3-rht's 4 arms are drawn in panels"
    "$NVFP4" study run s1a --quick --seeds 1 --quiet --out "$T/one" >/dev/null 2>&1 || die "s1a --seeds 1"
    grep -qF "(one seed: no interval)" "$T/one/gap.gp" || die "1-seed gap title: $(grep title "$T/one/gap.gp")"
    grep -qF "(one seed: no interval)" "$T/one/paired.gp" || die "1-seed paired title: $(grep title "$T/one/paired.gp")"
    grep -q "CI over\|t interval" "$T/one/gap.gp" "$T/one/paired.gp" && die "a 1-seed title promises an interval"
fi
exit $fail
