#!/usr/bin/env bash
# test_robust_io.sh - hostile or careless inputs end quickly in exit 2 with a
# message naming the file and the problem (issue 14): non-regular files (FIFO,
# /dev/zero, a directory) never make a reader wait.
set -uo pipefail
: "${NVFP4:?set NVFP4 to the nvfp4 binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
ok()   { echo "ok   $1"; }
bad()  { echo "FAIL $1"; fail=1; }
# expect_fail NEEDLE CMD...: exit 2 within 10 s and NEEDLE in stderr
expect_fail() {
    local needle=$1; shift
    timeout 10 "$@" 2>err.txt >/dev/null; local rc=$?
    if [ $rc -eq 2 ] && grep -qF -- "$needle" err.txt; then ok "rejects: $needle"
    else bad "expected exit 2 and '$needle', got rc=$rc: $(cat err.txt)"; fi
}
python3 -c 'import struct; open("x.bin","wb").write(struct.pack("<32f", *range(32)))'

# ---- 1. non-regular files -------------------------------------------------
mkfifo f.safetensors f.npy f.bin
expect_fail "f.safetensors: is a FIFO" $NVFP4 quantize f.safetensors -o q.safetensors
expect_fail "f.npy: is a FIFO" $NVFP4 quantize f.npy -o q.safetensors
expect_fail "f.bin: is a FIFO" $NVFP4 quantize f.bin --shape 2x16 --dtype f32 -o q.safetensors
expect_fail "/dev/zero: is a character device" $NVFP4 quantize /dev/zero -o q.safetensors
expect_fail "/dev/zero: is a character device" $NVFP4 quantize /dev/zero --shape 2x16 --dtype f32 -o q.safetensors
mkdir dir.safetensors
expect_fail "dir.safetensors/meta.json" $NVFP4 quantize dir.safetensors -o q.safetensors
mkdir fm && mkfifo fm/meta.json
expect_fail "fm/meta.json: is a FIFO" $NVFP4 quantize fm -o q.safetensors
# a tensor file inside a folder
$NVFP4 quantize x.bin --shape 2x16 --dtype f32 -o qd >/dev/null 2>&1 || bad "setup folder"
rm -f qd/data.npy && mkfifo qd/data.npy
expect_fail "qd/data.npy: is a FIFO" $NVFP4 dequantize qd -o dq.npy
rm -f qd/data.npy && mkdir qd/data.npy
expect_fail "qd/data.npy: is a directory" $NVFP4 dequantize qd -o dq.npy
expect_fail "f.safetensors: is a FIFO" $NVFP4 verify --expected f.safetensors --actual f.safetensors
[ -e q.safetensors ] && bad "an output was written for a refused input"

exit $fail
