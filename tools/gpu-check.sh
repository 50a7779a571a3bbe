#!/usr/bin/env bash
# tools/gpu-check.sh - the one prepared script a session with a GPU runs,
# unchanged, from the repository root (docs/cuda.md, "Running on a GPU"):
#
#     tools/gpu-check.sh [OUTDIR]          (default: $OUT if set, else ./gpu-results)
#
# 1. Finds nvfp4-gpu: $NVFP4_GPU if set; else builds it with `make cuda`
#    (BUILD=build/gpu) where nvcc and the C library's build dependencies
#    exist; else takes a prebuilt build/*/bin/nvfp4-gpu (build it on another
#    machine with `make BUILD=build/gpu cuda` and carry build/gpu/bin: the
#    binary links the CUDA runtime, libgomp and libstdc++ statically).
# 2. Records the GPU (nvidia-smi, nvfp4-gpu info).
# 3. Runs `nvfp4-gpu selftest` (and, on sm_100 or newer, `selftest --native`
#    and `nvfp4-gpu probe`: the random-byte order of cvt.rs e2m1x4).
# 4. Runs `nvfp4-gpu bench` once (1 GiB bf16 input): a table and bench.json.
# 5. Writes OUTDIR/gpu-check.md: date, GPU, driver, both tables, verdicts
#    against the goals (self-test 100% identical; 1x16 RN >= 70% and SR >=
#    50% of the copy bandwidth), ready to paste into docs/cuda.md.
#
# Exit code: the self-test's (0 identical, 1 a difference), 2 if nothing
# could be built or found, 77 if there is no CUDA device.
set -u
OUTDIR=${1:-${OUT:-./gpu-results}}
mkdir -p "$OUTDIR"
BUILD=${BUILD:-build/gpu}
log() { echo "gpu-check: $*" >&2; }

bin=${NVFP4_GPU:-}
if [ -z "$bin" ] && command -v "${NVCC:-nvcc}" >/dev/null 2>&1 && command -v make >/dev/null 2>&1; then
    log "building with make BUILD=$BUILD cuda (log: $OUTDIR/build.log)"
    if make BUILD="$BUILD" -j"$(nproc 2>/dev/null || echo 4)" cuda >"$OUTDIR/build.log" 2>&1; then
        bin=$BUILD/bin/nvfp4-gpu
    else
        log "make cuda failed here (see build.log); looking for a prebuilt binary"
    fi
fi
if [ -z "$bin" ]; then
    for b in "$BUILD/bin/nvfp4-gpu" build/*/bin/nvfp4-gpu build/bin/nvfp4-gpu; do
        if [ -x "$b" ]; then bin=$b; break; fi
    done
fi
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
    log "no nvfp4-gpu binary: build one with 'make BUILD=build/gpu cuda' and carry build/gpu/bin"
    exit 2
fi
log "using $bin"

(nvidia-smi 2>&1 || echo "nvidia-smi not available") >"$OUTDIR/nvidia-smi.txt"
"$bin" info >"$OUTDIR/info.txt" 2>&1
info_rc=$?
if [ $info_rc -ne 0 ]; then
    # 77: no usable device, which includes a driver too old for the toolkit
    # the binary was built with (CUDA 13 needs driver >= 580).
    {
        echo "## CUDA path on a GPU: $(date -u +%Y-%m-%d): not run"
        echo
        echo "- nvfp4-gpu info exit $info_rc: $(cat "$OUTDIR/info.txt")"
        echo "- nvidia-smi: $(head -n 12 "$OUTDIR/nvidia-smi.txt" | tr '\n' ' ')"
    } >"$OUTDIR/gpu-check.md"
    log "no usable CUDA device: $(cat "$OUTDIR/info.txt")"
    [ $info_rc -eq 77 ] && exit 77
    exit 2
fi
device=$(head -n1 "$OUTDIR/info.txt")
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n1)

log "selftest"
timeout 240 "$bin" selftest >"$OUTDIR/selftest.txt" 2>&1
st_rc=$?
native_rc=skipped
if grep -q "(sm_1[0-9][0-9]" "$OUTDIR/info.txt"; then
    log "selftest --native (Blackwell cvt instructions)"
    timeout 240 "$bin" selftest --native >"$OUTDIR/selftest-native.txt" 2>&1
    native_rc=$?
fi
log "probe (cvt.rs random-byte order; skipped with exit 77 off Blackwell)"
timeout 60 "$bin" probe >"$OUTDIR/probe.txt" 2>&1
probe_rc=$?
case $probe_rc in
77) probe_verdict="skipped ($(grep -m1 'skipped' "$OUTDIR/probe.txt" | sed 's/^cvt.rs probe: skipped: //'))" ;;
*) probe_verdict="exit $probe_rc ($(grep -m1 '^cvt.rs probe:' "$OUTDIR/probe.txt" | sed 's/^cvt.rs probe: //'))" ;;
esac

log "bench"
timeout 300 "$bin" bench --json-out "$OUTDIR/bench.json" >"$OUTDIR/bench.txt" 2>&1
bench_rc=$?

pct() { grep -F "| $1 |" "$OUTDIR/bench.txt" | awk -F'|' '{gsub(/[ %]/, "", $5); print $5}'; }
goal() { # name, minimum percent
    local p
    p=$(pct "$1")
    if [ -z "$p" ]; then echo "not measured"; elif [ "$p" -ge "$2" ]; then echo "met ($p% >= $2%)"; else echo "NOT met ($p% < $2%)"; fi
}
{
    echo "## CUDA path on a GPU: $(date -u +%Y-%m-%d)"
    echo
    echo "- GPU: $device"
    echo "- driver: ${driver:-unknown}; binary: \`$bin\`"
    echo "- self-test: exit $st_rc ($(tail -n1 "$OUTDIR/selftest.txt"))"
    echo "- native cvt self-test: $native_rc"
    echo "- cvt.rs rbits probe: $probe_verdict"
    echo "- goal 1x16 RN >= 70% of copy: $(goal "quantize 1x16 RN rowwise" 70)"
    echo "- goal 1x16 SR >= 50% of copy: $(goal "quantize 1x16 SR rowwise" 50)"
    echo
    echo "### Self-test"
    echo
    grep -E '^\|' "$OUTDIR/selftest.txt"
    grep -E '^DIFF' "$OUTDIR/selftest.txt" | head -n 20 | sed 's/^/    /'
    echo
    if [ $probe_rc != 77 ]; then
        echo "### cvt.rs rbits probe"
        echo
        sed 's/^/    /' "$OUTDIR/probe.txt"
        echo
    fi
    echo "### Benchmark (exit $bench_rc)"
    echo
    grep -v '^nvfp4-gpu bench on' "$OUTDIR/bench.txt"
} >"$OUTDIR/gpu-check.md"
cat "$OUTDIR/gpu-check.md"
exit $st_rc
