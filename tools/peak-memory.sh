#!/usr/bin/env bash
# tools/peak-memory.sh - peak resident memory of quantize, dequantize and verify against the goal
# "input files + output files + 64 MiB" (docs/performance.md, Peak memory), measured with
# /usr/bin/time -v in the same run as the file sizes the goal is computed from.
#
# Usage: tools/peak-memory.sh [NVFP4]   (default build/bin/nvfp4; make bench-memory runs it)
# Inputs: fp32 .npy of standard normal values, 4096 x 4096 and 1 x 2^24 (64 MiB each), te recipe;
# each bundle is quantized rowwise, and with --columnwise (1 x 2^24 also --pad: one 16-element
# block per stored row). verify compares a bundle with itself (both files are its input; it writes
# nothing). Prints one row per case (MiB) and the ratio peak / goal; exit 1 if any case misses it.
# Needs about 2 GiB of free disk in TMPDIR and 2 GiB of memory; a few minutes on 2 cores.
set -u
NVFP4=${1:-build/bin/nvfp4}
[ -x /usr/bin/time ] || { echo "peak-memory: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
[ -x "$NVFP4" ] || { echo "peak-memory: $NVFP4 is not an executable" >&2; exit 2; }
NVFP4=$(cd "$(dirname "$NVFP4")" && pwd)/$(basename "$NVFP4")
dir=$(mktemp -d "${TMPDIR:-/tmp}/nvfp4-peak.XXXXXX") || exit 2
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 2

python3 -c '
import numpy as np
g = np.random.default_rng(14)
np.save("sq.npy", g.standard_normal((4096, 4096)).astype(np.float32))
np.save("row.npy", g.standard_normal((1, 1 << 24)).astype(np.float32))' || exit 2

fail=0
kib() { local s=0 f; for f in "$@"; do s=$((s + $(du -k --apparent-size -s "$f" | cut -f1))); done; echo $s; }
printf '%-48s %8s %8s %8s %8s %6s\n' case "in MiB" "out MiB" "peak" goal ratio
measure() { # label "inputs" "outputs" cmd...: peak RSS against inputs + outputs + 64 MiB
    local label=$1 ins=$2 outs=$3; shift 3
    /usr/bin/time -v "$@" >/dev/null 2>time.txt
    local rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then echo "$label: exit $rc: $(tail -n 3 time.txt)"; fail=1; return; fi
    local peak in_k out_k=0 goal verdict=""
    peak=$(awk '/Maximum resident/ {print $6}' time.txt)
    # shellcheck disable=SC2086 # ins and outs are lists of file names (without spaces)
    in_k=$(kib $ins)
    # shellcheck disable=SC2086
    [ -n "$outs" ] && out_k=$(kib $outs)
    goal=$((in_k + out_k + 65536))
    [ "$peak" -le "$goal" ] || { verdict=" MISSED"; fail=1; }
    printf '%-48s %8d %8d %8d %8d %6s%s\n' "$label" $((in_k / 1024)) $((out_k / 1024)) $((peak / 1024)) \
        $((goal / 1024)) "$(awk -v p="$peak" -v g="$goal" 'BEGIN {printf "%.2f", p / g}')" "$verdict"
}
for shape in sq row; do
    for orient in rowwise columnwise; do
        opts=""
        [ $orient = columnwise ] && opts="--columnwise"
        [ $orient = columnwise ] && [ $shape = row ] && opts="--columnwise --pad"
        b=$shape-$orient.safetensors
        name=$([ $shape = sq ] && echo "4096x4096" || echo "1x2^24")
        # shellcheck disable=SC2086
        measure "quantize $name $orient" $shape.npy $b "$NVFP4" quantize $shape.npy $opts -o $b
        deq=""
        [ $orient = columnwise ] && deq="--columnwise"
        # shellcheck disable=SC2086
        measure "dequantize $name $orient" $b $shape-dq.npy "$NVFP4" dequantize $b $deq -o $shape-dq.npy
        measure "verify $name $orient (bundle vs itself)" "$b $b" "" "$NVFP4" verify --expected $b --actual $b
        rm -f $shape-dq.npy
    done
done
exit $fail
