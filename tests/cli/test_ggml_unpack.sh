#!/usr/bin/env bash
# test_ggml_unpack.sh - `nvfp4 quantize --ggml-out` and `nvfp4 ggml-unpack`:
# llama.cpp's block_nvfp4 bytes written, read back and verified against the
# bundle; a changed byte is a mismatch; bad shapes, sizes and recipes are
# usage errors (exit 2) that leave nothing behind.
set -u
NVFP4=${NVFP4:-build/bin/nvfp4}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# 2 x 64 fp32, raw: row 0 = 12 -12 8 6 4 3 2 1 0 0 0.5 -0.5 1.5 3.5 5 7, the rest 0
python3 - "$tmp/x.bin" <<'PY' || exit 1
import struct, sys
row0 = [12, -12, 8, 6, 4, 3, 2, 1, 0, 0, 0.5, -0.5, 1.5, 3.5, 5, 7] + [0] * 48
open(sys.argv[1], "wb").write(struct.pack("<128f", *(row0 + [0] * 64)))
PY
"$NVFP4" quantize "$tmp/x.bin" --shape 2x64 --dtype f32 --recipe ggml -o "$tmp/b.safetensors" \
    --ggml-out "$tmp/x.ggml" || fail "quantize --ggml-out"
[ "$(wc -c <"$tmp/x.ggml")" = 72 ] || fail "2 x 64 elements are 2 blocks of 36 bytes"
# block 0: scale 0x40 (12/6 = 2), then codes 7 F 6 5 4 3 2 1 | 0 0 0 0 1 3 4 5 as j | j+8 << 4
want="40000000070f060514334251"
got=$(od -An -tx1 -N12 "$tmp/x.ggml" | tr -d ' \n')
[ "$got" = "$want" ] || fail "block 0 bytes: $got, want $want"

"$NVFP4" ggml-unpack "$tmp/x.ggml" --shape 2x64 -o "$tmp/u.safetensors" || fail "ggml-unpack"
out=$("$NVFP4" verify --expected "$tmp/b.safetensors" --actual "$tmp/u.safetensors"); rc=$?
[ $rc = 0 ] || fail "verify of the unpacked blocks: exit $rc: $out"

python3 - "$tmp/x.ggml" "$tmp/y.ggml" <<'PY' || exit 1
import sys
b = bytearray(open(sys.argv[1], "rb").read()); b[5] ^= 0x01; open(sys.argv[2], "wb").write(b)
PY
"$NVFP4" ggml-unpack "$tmp/y.ggml" --shape 2x64 -o "$tmp/v.safetensors" || fail "ggml-unpack of y"
"$NVFP4" verify --expected "$tmp/b.safetensors" --actual "$tmp/v.safetensors" >/dev/null; rc=$?
[ $rc = 1 ] || fail "a changed code byte: verify exit $rc, want 1"

expect2() { # message, args...
    local msg=$1; shift
    local err rc
    err=$("$NVFP4" "$@" 2>&1 >/dev/null); rc=$?
    [ $rc = 2 ] || fail "$*: exit $rc, want 2"
    grep -qF -- "$msg" <<<"$err" || fail "$*: message '$err' lacks '$msg'"
}
expect2 "multiple of 64" ggml-unpack "$tmp/x.ggml" --shape 2x96 -o "$tmp/w.safetensors"
# a size that overflows is said to overflow (it said "the columns must be a multiple of 64")
expect2 "--shape 18446744073709551615x64: 18446744073709551615 x 64 elements overflow: their ggml NVFP4 blocks would take 2^64 bytes or more" \
    ggml-unpack "$tmp/x.ggml" --shape 18446744073709551615x64 -o "$tmp/w.safetensors"
expect2 "elements overflow" ggml-unpack "$tmp/x.ggml" --shape 4294967296x8589934592 -o "$tmp/w.safetensors"
expect2 "72 bytes, but 4 x 64 elements take 144" ggml-unpack "$tmp/x.ggml" --shape 4x64 -o "$tmp/w.safetensors"
expect2 "file too large (72 bytes)" ggml-unpack "$tmp/x.ggml" --shape 1x64 -o "$tmp/w.safetensors"
expect2 "--shape RxC is required" ggml-unpack "$tmp/x.ggml" -o "$tmp/w.safetensors"
expect2 "no global scale" quantize "$tmp/x.bin" --shape 2x64 --dtype f32 --recipe te -o "$tmp/w.safetensors" \
    --ggml-out "$tmp/w.ggml"
[ -e "$tmp/w.safetensors" ] || [ -e "$tmp/w.ggml" ] && fail "a refused command left a file"

[ $fails = 0 ]
