#!/usr/bin/env bash
# test_progress.sh - every command that writes a file says which on stderr
# ("nvfp4 CMD: wrote PATH"), and the long ones (bench, verify --suite) draw
# progress on stderr only when stderr is a terminal: in pipes, logs and tests
# their output stays byte for byte what it was (no \r, no escape), and stdout
# never changes. NVFP4_PROGRESS=1 forces the progress on, which shows that the
# checks below can fail; `script` (util-linux), where present, gives a real
# terminal.
set -uo pipefail
: "${NVFP4:?set NVFP4 to the nvfp4 binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
ok()  { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
# says CMD FILE ARGS...: the command succeeds and its stderr holds exactly the line "nvfp4 CMD: wrote FILE"
says() {
    local cmd=$1 file=$2; shift 2
    if "$NVFP4" "$cmd" "$@" >out.txt 2>err.txt && grep -qxF "nvfp4 $cmd: wrote $file" err.txt && [ -s "$file" ]; then
        ok "$cmd says it wrote $file"
    else bad "$cmd $*: no line 'nvfp4 $cmd: wrote $file' (rc $?): $(cat err.txt)"; fi
}
python3 - <<'PY'
import struct
open("x.bin", "wb").write(struct.pack("<512f", *[((i * 37) % 29 - 14) / 3.0 for i in range(512)]))
PY
says quantize q.safetensors x.bin --shape 16x32 --dtype f32 -o q.safetensors --also-columnwise
says quantize qdir x.bin --shape 16x32 --dtype f32 -o qdir
says dequantize d.npy q.safetensors -o d.npy
says rht r.npy x.bin --shape 16x32 --dtype f32 -o r.npy
says gemm g.safetensors --a q.safetensors --b q.safetensors -o g.safetensors
"$NVFP4" quantize x.bin --shape 8x64 --dtype f32 --recipe ggml -o gg.safetensors --ggml-out gg.bin 2>err.txt
grep -qxF "nvfp4 quantize: wrote gg.safetensors" err.txt && grep -qxF "nvfp4 quantize: wrote gg.bin" err.txt &&
    ok "quantize --ggml-out says both files" || bad "quantize --ggml-out: $(cat err.txt)"
if command -v gnuplot >/dev/null 2>&1; then
    says table e2m1.png --format e2m1 --plot e2m1.png
    says explain sr.png 1.8 --round sr --plot sr.png
else echo "skip the --plot lines (no gnuplot)"; fi
# a failed write says nothing of the kind
"$NVFP4" quantize x.bin --shape 16x32 --dtype f32 -o nodir/q.safetensors 2>err.txt
grep -q "wrote" err.txt && bad "a failed write says 'wrote': $(cat err.txt)" || ok "a failed write does not say 'wrote'"

# verify --suite: progress per case on a terminal only; stdout the same either way
"$NVFP4" golden --suite edge --recipe te --out suite 2>/dev/null || bad "golden"
mkdir outs && for f in suite/*.safetensors; do cp "$f" outs/; done
"$NVFP4" verify --suite suite --actual-dir outs --junit j.xml >plain.out 2>plain.err; rc=$?
[ $rc = 0 ] || bad "verify --suite of the goldens themselves: rc $rc"
grep -qxF "nvfp4 verify: wrote j.xml" plain.err && ok "verify --junit says it wrote j.xml" || bad "junit: $(cat plain.err)"
if LC_ALL=C grep -q $'[\r\033]' plain.err plain.out; then bad "verify --suite draws progress into a pipe"
else ok "no progress in a pipe (no \\r, no escape)"; fi
NVFP4_PROGRESS=1 "$NVFP4" verify --suite suite --actual-dir outs >forced.out 2>forced.err
n=$(ls suite/*.safetensors | wc -l)
grep -qF "nvfp4 verify: [0/$n] " forced.err && ok "NVFP4_PROGRESS=1 draws [0/$n]" || bad "no forced progress: $(head -c 300 forced.err)"
cmp -s plain.out forced.out && ok "stdout is the same with progress" || bad "progress changed stdout"
if command -v script >/dev/null 2>&1; then
    script -qec "$NVFP4 verify --suite suite --actual-dir outs >tty.out" /dev/null >tty.err 2>&1
    grep -qF "[0/$n]" tty.err && ok "a terminal gets the progress" || bad "no progress on a terminal: $(head -c 300 tty.err)"
    cmp -s plain.out tty.out && ok "stdout is the same on a terminal" || bad "the terminal run changed stdout"
fi

# bench: nothing on stderr in a pipe; progress per kernel when forced
"$NVFP4" bench --size 1 --repeat 1 --no-scalar --kernels amax_f32,quant_1x16_rn >b.out 2>b.err ||
    bad "bench --size 1"
[ ! -s b.err ] && ok "bench writes nothing on stderr in a pipe" || bad "bench stderr in a pipe: $(cat -v b.err)"
NVFP4_PROGRESS=1 "$NVFP4" bench --size 1 --repeat 1 --no-scalar --kernels amax_f32,quant_1x16_rn >/dev/null 2>b.err
grep -qF "nvfp4 bench: [1/2] quant_1x16_rn" b.err && ok "bench progress names the kernel" || bad "bench progress: $(cat -v b.err)"
exit $fail
