#!/usr/bin/env bash
# test_cuda_build.sh - the CUDA path where nvcc exists (docs/cuda.md):
#  - `make cuda` builds libnvfp4_cuda.so and nvfp4-gpu (sm_90, sm_100a, sm_103a);
#  - the docs example compiles against the .so with -Werror and finds its
#    planted mismatch;
#  - the golden-path PTX has no fma / approximate division for either target,
#    and the native cvt instructions appear only in the Blackwell builds
#    (cvt.rs only for sm_103a, whose random-byte order is known);
#  - `nvfp4-gpu selftest --cpu-only` and `--emulate` pass (the kernel bodies
#    on the CPU against libnvfp4), and a GPU-less `selftest` exits 77 with a
#    "no CUDA device" message, which counts as skipped here;
#  - tools/gpu-check.sh turns a (mock) GPU run into its summary.
# Without nvcc: checks that `make cuda` says the CUDA path is skipped.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
BUILD=${NVFP4:+$(dirname "$(dirname "$NVFP4")")}
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$root/$BUILD ;; esac
fail() { echo "test_cuda_build: FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ -n "${NVFP4_SANITIZE:-}" ]; then
    # nvcc's link of libnvfp4_cuda.so does not carry the sanitizer runtime of
    # an ASan/UBSan libnvfp4.a; the CUDA build is tested by `make check`.
    echo "test_cuda_build: skipped under make sanitize (the CUDA link does not take ASan objects)"
    exit 0
fi

if ! command -v "${NVCC:-nvcc}" >/dev/null 2>&1; then
    out=$(make -s BUILD="$BUILD" cuda 2>&1) || fail "make cuda without nvcc must succeed: $out"
    echo "$out" | grep -q "CUDA path is skipped" || fail "make cuda without nvcc must say it is skipped: $out"
    echo "test_cuda_build: nvcc not found, CUDA path skipped (checked the message)"
    exit 0
fi

make -s BUILD="$BUILD" cuda >"$tmp/build.log" 2>&1 || { tail -n 30 "$tmp/build.log"; fail "make cuda failed"; }
gpu=$BUILD/bin/nvfp4-gpu
so=$BUILD/lib/libnvfp4_cuda.so
[ -x "$gpu" ] || fail "$gpu missing"
[ -f "$so" ] || fail "$so missing"
for sym in nvfp4_cuda_quantize nvfp4_cuda_compare nvfp4_cuda_dequantize nvfp4_cuda_gemm_te nvfp4_cuda_amax \
    nvfp4_cuda_scale_swizzle nvfp4_cuda_check_quantized nvfp4_quantize; do
    nm -D --defined-only "$so" | grep -qw "$sym" || fail "$so does not export $sym"
done

# The example of docs/cuda.md, verbatim.
sed -n '/<!-- example:begin -->/,/<!-- example:end -->/p' docs/cuda.md | sed '1,2d;$d' | sed '$d' >"$tmp/cuda_example.c"
grep -q "nvfp4_cuda_compare" "$tmp/cuda_example.c" || fail "could not extract the example from docs/cuda.md"
${CC:-cc} -std=c11 -Wall -Wextra -Wshadow -Wconversion -Werror "$tmp/cuda_example.c" -Iinclude -L"$BUILD/lib" -lnvfp4_cuda \
    -Wl,-rpath,"$BUILD/lib" -o "$tmp/cuda_example" || fail "the docs/cuda.md example does not compile"
"$tmp/cuda_example" >"$tmp/example.out" 2>&1 || { cat "$tmp/example.out"; fail "the example did not find exactly its 1 mismatch"; }
grep -q "^1 mismatching code(s)" "$tmp/example.out" || fail "example output: $(cat "$tmp/example.out")"
grep -q "element 1001: expected 0x" "$tmp/example.out" || fail "example did not report element 1001"

# Correctly rounded golden path: no contraction, no approximate division.
for arch in 90 100a 103a; do
    nvcc -std=c++17 -O3 -ptx -arch=compute_$arch -fmad=false -prec-div=true -prec-sqrt=true -ftz=false \
        -DNVFP4_CUDA_NATIVE_CVT=1 -Iinclude -Isrc src/cuda/nvfp4_cuda.cu -o "$tmp/k$arch.ptx" || fail "ptx for $arch"
    n=$(grep -cE 'fma\.rn\.f32|div\.approx|div\.full|rcp\.approx|\.ftz\.' "$tmp/k$arch.ptx")
    [ "$n" = 0 ] || fail "sm_$arch PTX has $n contracted or approximate operations"
done
for arch in 100a 103a; do
    grep -q 'cvt.rn.satfinite.e2m1x2.f32' "$tmp/k$arch.ptx" || fail "sm_$arch PTX lacks the native RN cvt"
done
grep -q 'cvt.rs.satfinite.e2m1x4.f32' "$tmp/k103a.ptx" || fail "sm_103a PTX lacks the native SR cvt"
! grep -q 'cvt.rs.satfinite.e2m1x4.f32' "$tmp/k100a.ptx" || fail "sm_100a PTX must keep SR in software (byte order unprobed)"
! grep -q 'e2m1x' "$tmp/k90.ptx" || fail "sm_90 PTX must not use FP4 cvt instructions"

# The self-test without a GPU.
"$gpu" selftest --cpu-only >"$tmp/cpu.out" 2>&1 || { tail -n 20 "$tmp/cpu.out"; fail "selftest --cpu-only"; }
total=$(sed -n 's/^| \*\*total\*\* | \([0-9]*\) |.*/\1/p' "$tmp/cpu.out")
[ "${total:-0}" -ge 200 ] || fail "selftest has ${total:-0} cases, want >= 200"
"$gpu" selftest --emulate >"$tmp/emu.out" 2>&1 || { grep DIFF "$tmp/emu.out" | head; fail "selftest --emulate found differences"; }
grep -q "selftest: PASSED ($total cases, all identical" "$tmp/emu.out" || fail "emulated selftest: $(tail -n 1 "$tmp/emu.out")"
"$gpu" selftest >"$tmp/gpu.out" 2>&1
rc=$?
if [ $rc = 77 ]; then
    grep -q "no CUDA device" "$tmp/gpu.out" || fail "exit 77 without the 'no CUDA device' message"
    NVFP4_GPU="$gpu" bash tools/gpu-check.sh "$tmp/gc0" >/dev/null 2>&1
    [ $? = 77 ] || fail "gpu-check.sh without a device must exit 77"
    grep -q ": not run" "$tmp/gc0/gpu-check.md" || fail "gpu-check.sh without a device must say 'not run'"
    "$gpu" probe >"$tmp/probe.out" 2>&1
    [ $? = 77 ] || fail "nvfp4-gpu probe without a device must exit 77"
    grep -q "^cvt.rs probe: skipped: no CUDA device" "$tmp/probe.out" || fail "probe without a device: $(cat "$tmp/probe.out")"
    echo "test_cuda_build: no CUDA device: GPU selftest skipped (exit 77), emulated selftest passed ($total cases)"
elif [ $rc != 0 ]; then
    tail -n 30 "$tmp/gpu.out"
    fail "GPU selftest exit $rc"
fi
"$gpu" selftest --bogus >/dev/null 2>&1
[ $? = 2 ] || fail "unknown option must exit 2"

# The cvt.rs probe's deduction, with the host model playing the device
# (docs/cuda.md, "nvfp4-gpu probe"): sm_103a as quack measured it passes;
# a straight order on sm_103a contradicts the compiled layout; on sm_100a,
# where no layout is compiled in, the measured one is reported.
"$gpu" probe --emulate 2,0r,3,1r --sm 103 >"$tmp/p1.out" 2>&1 || { cat "$tmp/p1.out"; fail "probe, emulated sm_103a"; }
grep -q "^element 1 (e, d\[7:4\]): byte 0 (rbits\[7:0\]), bit-reversed" "$tmp/p1.out" || fail "probe element 1: $(cat "$tmp/p1.out")"
grep -q "^element 2 (b, d\[11:8\]): byte 3 (rbits\[31:24\]), straight bit order" "$tmp/p1.out" || fail "probe element 2"
grep -q "measured layout 0 differ" "$tmp/p1.out" || fail "probe random check: $(cat "$tmp/p1.out")"
grep -q "^cvt.rs probe: PASSED: sm_103" "$tmp/p1.out" || fail "probe verdict: $(tail -n 1 "$tmp/p1.out")"
"$gpu" probe --emulate 0,1,2,3 --sm 103 >"$tmp/p2.out" 2>&1
[ $? = 1 ] || fail "probe: a straight sm_103a must exit 1"
grep -q "^cvt.rs probe: FAILED: the device differs from the compiled-in layout" "$tmp/p2.out" || fail "probe p2: $(tail -n 1 "$tmp/p2.out")"
"$gpu" probe --emulate 1r,3,0,2r --sm 100 >"$tmp/p3.out" 2>&1 || { cat "$tmp/p3.out"; fail "probe, emulated sm_100a"; }
grep -q "^measured layout: bytes {1r, 3, 0, 2r}" "$tmp/p3.out" || fail "probe p3 layout: $(cat "$tmp/p3.out")"
grep -q "^cvt.rs probe: MEASURED: sm_100" "$tmp/p3.out" || fail "probe p3 verdict: $(tail -n 1 "$tmp/p3.out")"
"$gpu" probe --emulate 0,0,1,2 --sm 103 >/dev/null 2>&1
[ $? = 2 ] || fail "probe: an invalid layout must exit 2"

# tools/gpu-check.sh on a mock GPU: summary and goal verdicts.
cat >"$tmp/mock-gpu" <<'EOF'
#!/usr/bin/env bash
case "$1 ${2:-}" in
"info "*) echo "MockGPU H200 (sm_90, 132 SMs, 139 GiB), CUDA driver 13.0, runtime 13.0" ;;
"selftest "*) printf '| group | cases |\n| **total** | 335 |\nselftest: PASSED (335 cases, all identical to the CPU library)\n' ;;
"probe "*) echo "cvt.rs probe: skipped: sm_90 has no cvt.rs (only sm_100a and sm_103a)"; exit 77 ;;
"bench "*) printf '| operation | median ms | GB/s | %% of copy |\n|---|---:|---:|---:|\n| d2d copy (reference) | 0.6 | 4000 | 100%% |\n| quantize 1x16 RN rowwise | 0.5 | 3000 | 75%% |\n| quantize 1x16 SR rowwise | 0.9 | 1800 | 45%% |\n' ;;
esac
EOF
chmod +x "$tmp/mock-gpu"
NVFP4_GPU="$tmp/mock-gpu" bash tools/gpu-check.sh "$tmp/gc" >/dev/null 2>&1 || fail "gpu-check.sh on the mock"
grep -q "GPU: MockGPU H200" "$tmp/gc/gpu-check.md" || fail "gpu-check.md lacks the GPU"
grep -q "1x16 RN >= 70% of copy: met (75% >= 70%)" "$tmp/gc/gpu-check.md" || fail "RN goal verdict"
grep -q "1x16 SR >= 50% of copy: NOT met (45% < 50%)" "$tmp/gc/gpu-check.md" || fail "SR goal verdict"
grep -q "cvt.rs rbits probe: skipped (sm_90 has no cvt.rs" "$tmp/gc/gpu-check.md" || fail "probe verdict"
echo "test_cuda_build: ok (make cuda, example, PTX, selftest --cpu-only/--emulate: $total cases, gpu-check.sh)"
