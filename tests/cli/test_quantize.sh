#!/usr/bin/env bash
# test_quantize.sh - nvfp4 quantize / dequantize / rht / gemm over every input
# and output format: round trips, specific bytes, bad input (exit 2 with a
# message naming the file and problem) and no file left behind on failure.
set -uo pipefail
: "${NVFP4:?set NVFP4 to the nvfp4 binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
ok()   { echo "ok   $1"; }
bad()  { echo "FAIL $1"; fail=1; }
# expect_fail NEEDLE CMD...: exit 2 and NEEDLE in stderr
expect_fail() {
    local needle=$1; shift
    "$@" 2>err.txt >/dev/null; local rc=$?
    if [ $rc -eq 2 ] && grep -qF -- "$needle" err.txt; then ok "rejects: $needle"
    else bad "expected exit 2 and '$needle', got rc=$rc: $(cat err.txt)"; fi
}
# 2 x 16 fp32: row 0 = 6 * (0, .5, 1, 1.5, 2, 3, 4, 6, -0, -.5, ...)/6, row 1 = ties.
python3 - <<'PY'
import struct
r0 = [0, .5, 1, 1.5, 2, 3, 4, 6, -0.0, -.5, -1, -1.5, -2, -3, -4, -6]
r1 = [6, .25, .75, 1.25, 1.75, 2.5, 3.5, 5, -6, -.25, -.75, -1.25, -1.75, -2.5, -3.5, -5]
open("x.bin", "wb").write(struct.pack("<32f", *(r0 + r1)))
# bf16 bits of the same values (exact in bf16)
open("xb.bin", "wb").write(b"".join(struct.pack("<f", v)[2:] for v in r0 + r1))
PY
$NVFP4 quantize x.bin --shape 2x16 --dtype f32 -o a.safetensors || bad "quantize raw f32"
$NVFP4 quantize xb.bin --shape 2x16 --dtype bf16 -o b.safetensors || bad "quantize raw bf16"
# With amax 6 the codes are the E2M1 grid itself: 0x10 0x32 0x54 0x76 ...;
# row 1 ties to even: .25->0, .75->2(1.0), 1.25->2(1.0), 1.75->4(2.0), 2.5->4, 3.5->6(4.0), 5->6.
$NVFP4 dequantize a.safetensors -o dq.npy || bad "dequantize"
python3 - <<'PY' || { echo "FAIL byte check"; exit 1; }
import json, struct
b = open("a.safetensors", "rb").read()
n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n]); base = 8 + n
def t(name):
    o = h[name]["data_offsets"]; return b[base + o[0]: base + o[1]]
data = t("data").hex()
assert data == "1032547698badcfe" + "072244668faaccee", data
assert struct.unpack("<f", t("amax"))[0] == 6.0
assert h["__metadata__"]["recipe"] == "te" and h["__metadata__"]["rounding"] == "rn"
d = open("dq.npy", "rb").read()
assert d[:6] == b"\x93NUMPY" and b"'shape': (2, 16)" in d
vals = struct.unpack("<32f", d[-128:])
assert vals[16:24] == (6, 0, 1, 1, 2, 2, 4, 4), vals[16:24]
print("ok   codes, amax, metadata and dequant values")
PY
# The bf16 input gives the same codes and scales.
python3 - <<'PY' || fail=1
import json, struct
def comp(f, name):
    b = open(f, "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n])
    o = h[name]["data_offsets"]; return b[8 + n + o[0]: 8 + n + o[1]], h
for c in ("data", "scale", "scale_swizzled", "amax", "dequant"):
    assert comp("a.safetensors", c)[0] == comp("b.safetensors", c)[0], c
assert comp("b.safetensors", "x")[1]["x"]["dtype"] == "BF16"
print("ok   bf16 input matches fp32 input")
PY
# Every output format holds the same bytes; every input format gives the same bundle.
$NVFP4 quantize a.safetensors -o npyd --rowwise --columnwise --pad || bad "quantize to npy folder"
$NVFP4 quantize a.safetensors:x -o bind --format bin --rowwise --columnwise --pad || bad "quantize to bin folder"
[ -f npyd/meta.json ] && [ -f npyd/data_t.npy ] && [ -f bind/scale_t_swizzled.bin ] && ok "folder outputs" || bad "folder outputs"
cmp -s bind/data.bin <(python3 -c "import sys; sys.stdout.buffer.write(bytes.fromhex('1032547698badcfe072244668faaccee'))") \
    && ok "bin data bytes" || bad "bin data bytes"
$NVFP4 quantize npyd:x -o c.safetensors || bad "quantize from npy folder"
$NVFP4 quantize bind -o d.safetensors || bad "quantize from bin folder (x)"
python3 - <<'PY'
import struct
b = open("x.bin","rb").read()
d = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 16), }"
d += " " * (-(10 + len(d) + 1) % 64) + "\n"
open("x.npy","wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d.encode() + b)
PY
$NVFP4 quantize x.npy -o e.safetensors || bad "quantize from .npy"
cmp -s a.safetensors c.safetensors && cmp -s a.safetensors d.safetensors && cmp -s a.safetensors e.safetensors \
    && ok "same bundle from raw, npy folder, bin folder and .npy" || bad "bundles differ by input format"
# SR is reproducible from seed and offset, and changes with them.
$NVFP4 quantize x.bin --shape 2x16 --dtype f32 --round sr --seed 7 --offset 3 -o s1.safetensors
$NVFP4 quantize x.bin --shape 2x16 --dtype f32 --round sr --seed 7 --offset 3 -o s2.safetensors
cmp -s s1.safetensors s2.safetensors && ok "SR reproducible" || bad "SR not reproducible"
grep -q '"seed":"7"' s1.safetensors && grep -q '"offset":"3"' s1.safetensors && ok "SR seed/offset recorded" || bad "SR metadata"
# RHT, gemm
python3 -c "
import struct
open('m.bin','wb').write(struct.pack('<%df' % (32*32), *[((i*7)%19-9)*0.3 for i in range(32*32)]))"
$NVFP4 quantize m.bin --shape 32x32 --dtype f32 --columnwise --rht -o r.safetensors || bad "quantize --rht"
grep -q '"rht":"true"' r.safetensors && ok "rht recorded" || bad "rht metadata"
$NVFP4 rht m.bin --shape 32x32 --dtype f32 -o y.npy && $NVFP4 rht y.npy --inverse --fp32 -o z.npy && ok "rht forward/inverse" || bad "rht"
# One-hot rows: y = row i of diag(s) H16 / 4; with TE's mask 0xD7E8 bit 0 is clear, so
# e_0 -> +0.25 everywhere, and e_1 (bit 1 clear too) -> +-0.25 in the pattern of H16 row 1.
python3 -c "
import struct
r = [0.0] * 32; r[0] = 1.0; r[16 + 1] = 1.0
open('e.bin', 'wb').write(struct.pack('<32f', *r))"
$NVFP4 rht e.bin --shape 1x32 --dtype f32 -o ey.npy || bad "rht one-hot"
python3 - <<'PY' && ok "rht of one-hot rows" || bad "rht values"
import struct
y = struct.unpack("<32f", open("ey.npy", "rb").read()[-128:])
assert y[:16] == (0.25,) * 16, y[:16]
assert y[16:] == tuple(0.25 if k % 2 == 0 else -0.25 for k in range(16)), y[16:]
PY
$NVFP4 quantize m.bin --shape 32x32 --dtype f32 -o A.safetensors
$NVFP4 gemm --a A.safetensors --b A.safetensors -o D.npy && grep -q "'shape': (32, 32)" D.npy && ok "gemm 32x32" || bad "gemm"
# Errors: exit 2, a message naming the file and problem, no file left.
expect_fail "no such file" $NVFP4 quantize nope.npy -o out.safetensors
expect_fail "truncated" $NVFP4 quantize x.bin --shape 2x17 --dtype f32 -o out.safetensors
expect_fail "--shape 4294967296x4294967296 overflows" $NVFP4 quantize x.bin --shape 4294967296x4294967296 --dtype f32 -o out.safetensors
expect_fail "not a multiple of the block" $NVFP4 quantize x.bin --shape 4x8 --dtype f32 -o out.safetensors
expect_fail "unknown recipe 'nope'" $NVFP4 quantize x.bin --shape 2x16 --dtype f32 --recipe nope -o out.safetensors
expect_fail "bad --block" $NVFP4 quantize x.bin --shape 2x16 --dtype f32 --block 2x2 -o out.safetensors
expect_fail "add --columnwise" $NVFP4 quantize x.bin --shape 2x16 --dtype f32 --rht -o out.safetensors
expect_fail "missing -o" $NVFP4 quantize x.bin --shape 2x16 --dtype f32
expect_fail "no tensor named 'q'" $NVFP4 quantize a.safetensors:q -o out.safetensors
printf 'garbage' > bad.npy
expect_fail "bad.npy: not a .npy file (bad magic)" $NVFP4 quantize bad.npy -o out.safetensors
head -c 100 a.safetensors > cut.safetensors
expect_fail "cut.safetensors: truncated" $NVFP4 dequantize cut.safetensors -o out.npy
expect_fail "x.bin: header length" $NVFP4 dequantize x.bin -o out.npy
[ ! -e out.safetensors ] && [ ! -e out.npy ] && ! ls -a | grep -q '\.tmp-' && ok "no file left behind" || bad "file left behind"
# the orientation options: --columnwise-only and --also-columnwise say which; the old spellings
# keep their meaning (--columnwise alone: columnwise only; with --rowwise: both)
names() { python3 -c 'import json, struct, sys; b = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", b[:8])[0]; print(" ".join(sorted(k for k in json.loads(b[8:8 + n]) if k.startswith("data"))))' "$1"; }
q2() { $NVFP4 quantize x.bin --shape 2x16 --dtype f32 --pad "$@"; }
q2 --columnwise-only -o co.safetensors && q2 --columnwise -o c.safetensors &&
    q2 --also-columnwise -o ac.safetensors && q2 --rowwise --columnwise -o rc.safetensors || bad "orientation options"
[ "$(names co.safetensors)" = "data_t" ] && ok "--columnwise-only writes data_t only" || bad "--columnwise-only: $(names co.safetensors)"
[ "$(names ac.safetensors)" = "data data_t" ] && ok "--also-columnwise writes data and data_t" ||
    bad "--also-columnwise: $(names ac.safetensors)"
cmp -s co.safetensors c.safetensors && ok "--columnwise alone = --columnwise-only" || bad "--columnwise alone differs"
cmp -s ac.safetensors rc.safetensors && ok "--rowwise --columnwise = --also-columnwise" || bad "--rowwise --columnwise differs"
expect_fail "--columnwise-only excludes --rowwise" q2 --columnwise-only --rowwise -o out.safetensors
expect_fail "--columnwise-only excludes --rowwise" q2 --columnwise-only --also-columnwise -o out.safetensors
# --help on each
for c in quantize dequantize rht gemm golden; do
    # into a file first: grep -q stops reading at the match, and a help text over the pipe buffer then dies of SIGPIPE
    $NVFP4 $c --help > help.txt && grep -q "^usage: nvfp4 $c" help.txt && ok "$c --help" || bad "$c --help"
done
exit $fail
