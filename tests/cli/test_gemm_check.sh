#!/usr/bin/env bash
# test_gemm_check.sh - nvfp4 gemm-check: the te order is within the bound and
# bit-identical to te; the exactly rounded result (another order) is within
# the bound but not te; a perturbed element is outside (exit 1) and listed;
# a bare .npy works; bad input exits 2. Fake kernels get their cause named
# (bf16 output, missing global scales, D transposed, a power-of-two ratio, a
# transposed operand, the exact order); correct ones get none.
set -uo pipefail
: "${NVFP4:?set NVFP4 to the nvfp4 binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
ok()  { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
run_g() {
    local name=$1 want=$2 needle=$3; shift 3
    "$NVFP4" gemm-check "$@" >out.txt 2>err.txt; local rc=$?
    if [ "$rc" -eq "$want" ] && grep -qF -- "$needle" out.txt err.txt; then ok "$name"
    else bad "$name: rc=$rc (want $want), '$needle' not found"; cat out.txt err.txt; fi
}
python3 - <<'PY'
import random, struct
random.seed(21)
# every 16-element block at its own power-of-two magnitude, so that the fp32
# sum of the K/16 exact partials rounds (and the order matters)
for name, rows in (("a", 24), ("b", 20)):
    x = []
    for r in range(rows):
        for b in range(32):
            s = 2.0 ** random.randrange(-12, 12)
            x += [random.gauss(0, 1) * s for _ in range(16)]
    open(name + ".f32", "wb").write(struct.pack("<%df" % len(x), *x))
PY
$NVFP4 quantize a.f32 --shape 24x512 --dtype f32 -o A.safetensors >/dev/null || bad "quantize A"
$NVFP4 quantize b.f32 --shape 20x512 --dtype f32 -o B.safetensors >/dev/null || bad "quantize B"
$NVFP4 gemm --a A.safetensors --b B.safetensors -o te.safetensors >/dev/null || bad "gemm te"
$NVFP4 gemm --a A.safetensors --b B.safetensors -o ex.safetensors --order exact >/dev/null || bad "gemm exact"
G="--a A.safetensors --b B.safetensors"
run_g "te order within the bound" 0 "within the rigorous any-order fp32 bound: 480 of 480" $G --actual te.safetensors
grep -q "bit-identical to the te order (sequential fp32 over K): 480 of 480 (the kernel reproduces the te order exactly)" out.txt \
    && ok "te order recognized" || bad "te order recognized"
run_g "another order within the bound" 0 "verdict: WITHIN BOUND" $G --actual ex.safetensors
n=$(sed -n 's/.*bit-identical to the te order (sequential fp32 over K): \([0-9]*\) of 480.*/\1/p' out.txt)
[ -n "$n" ] && [ "$n" -lt 480 ] && ok "exact rounding differs from te in $((480 - n)) of 480" || bad "te count for exact order ($n)"
python3 - <<'PY'
import json, struct
b = open("te.safetensors", "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n])
o = h["d"]["data_offsets"]; d = bytearray(b[8 + n + o[0]: 8 + n + o[1]])
v = struct.unpack_from("<f", d, 4 * 7)[0]
struct.pack_into("<f", d, 4 * 7, v * 1.001 + 1e-3)
hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (24, 20), }"
hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
open("bad.npy", "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + bytes(d))
hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (24, 19), }"
hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
open("short.npy", "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + bytes(d[:24 * 19 * 4]))
PY
run_g "a perturbed element is outside the bound" 1 "within the rigorous any-order fp32 bound: 479 of 480  <-- outside" $G --actual bad.npy
grep -q "^  (0, 7): actual" out.txt && ok "the element is listed at (0, 7)" || bad "listing"
grep -q "verdict: OUTSIDE BOUND" out.txt && ok "verdict outside" || bad "verdict outside"
# fake kernels (numpy, from the te result and the two amaxes) whose cause must be named
cat > fake.py <<'PY'
# fake GEMM kernels from the te result and the amaxes: python3 fake.py KIND
import json, struct, sys
import numpy as np
def read(path, name):
    b = open(path, "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n])
    o = h[name]["data_offsets"]
    return np.frombuffer(b[8 + n + o[0]: 8 + n + o[1]], dtype=np.float32).reshape(h[name]["shape"]) if h[name]["dtype"] == "F32" else None
def npy(path, d):
    np.save(path, np.ascontiguousarray(d, dtype=np.float32))
kind = sys.argv[1]
d = read("te.safetensors", "d").astype(np.float32)
amax_a = float(read("A.safetensors", "amax").reshape(-1)[0]); amax_b = float(read("B.safetensors", "amax").reshape(-1)[0])
if kind == "bf16":        # fp32 result rounded to bf16 (RNE)
    u = d.view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    npy("bf16.npy", u.astype(np.uint32).view(np.float32))
elif kind == "noglobal":  # no global scales: alpha = 1 instead of amax_A amax_B / 2688^2
    npy("noglobal.npy", (d.astype(np.float64) * (2688.0 / amax_a) * (2688.0 / amax_b)).astype(np.float32))
elif kind == "noglobal_a":
    npy("noglobal_a.npy", (d.astype(np.float64) * (2688.0 / amax_a)).astype(np.float32))
elif kind == "transposed":  # D written column-major
    npy("transposed.npy", np.ascontiguousarray(d.T).reshape(d.shape))
elif kind == "pow2":
    npy("pow2.npy", d * np.float32(4.0))
PY
for k in bf16 noglobal noglobal_a transposed pow2; do python3 fake.py $k || bad "fake $k"; done
run_g "a bf16 output is named" 1 "cause bf16-output: gemm: all 480 finite nonzero outputs are bf16-representable (low 16 bits zero) where 480 of the te order's are not" $G --actual bf16.npy
grep -q "480 of 480 equal bf16-RN of the te result, and 0 lie outside the any-order bound widened by one bf16 rounding" out.txt \
    && ok "bf16: RN of a result within the bound" || bad "bf16 detail"
grep -c "^cause" out.txt | grep -qx 1 && ok "bf16 is the only cause" || bad "bf16 alone"
run_g "no global scales: the ratio names both" 1 "x exact on every output: proven (no other candidate fits): both global scales missing (ratio (2688/amax_A)(2688/amax_B))" $G --actual noglobal.npy
run_g "A's global scale missing" 1 "proven (no other candidate fits): A's global scale missing (ratio 2688/amax_A)" $G --actual noglobal_a.npy
run_g "D written column-major" 1 "cause transposed: gemm: D is written transposed (column-major)" $G --actual transposed.npy
run_g "a power-of-two ratio" 1 "D = 4 x exact on every output (2^2: a scale exponent off); no global scale or alpha" $G --actual pow2.npy
run_g "a correct kernel in the te order gets no cause" 0 "verdict: WITHIN BOUND" $G --actual te.safetensors
grep -q "^cause" out.txt && bad "te: no cause" || ok "te: no cause"
run_g "the exact order is named" 0 "cause accumulation-order: gemm: an accumulation order: every output lies within the any-order fp32 bound" $G --actual ex.safetensors
grep -q "differ from the te order (sequential over K); bit-identical on every output to the order: correctly rounded (exact sum)" out.txt \
    && ok "exact order reproduced bit for bit" || bad "exact order named"
run_g "one perturbed element gets no false cause" 1 "verdict: OUTSIDE BOUND" $G --actual bad.npy
grep -q "^cause" out.txt && bad "perturbed: no cause" || ok "perturbed: no cause"
# a transposed operand: the kernel uses A's columnwise output (A^T quantized) where the rowwise one is given
python3 -c "
import numpy as np; rng = np.random.default_rng(3)
(rng.standard_normal((32, 32)) * 3).astype(np.float32).tofile('sq.f32'); rng.standard_normal((16, 32)).astype(np.float32).tofile('sb.f32')"
$NVFP4 quantize sq.f32 --shape 32x32 --dtype f32 --rowwise --columnwise -o SQ.safetensors >/dev/null || bad "quantize SQ"
$NVFP4 quantize sb.f32 --shape 16x32 --dtype f32 -o SB.safetensors >/dev/null || bad "quantize SB"
$NVFP4 gemm --a SQ.safetensors --a-columnwise --b SB.safetensors -o kc.safetensors >/dev/null || bad "gemm A^T"
run_g "a transposed operand is named" 1 "uses A's columnwise output (A^T quantized) in place of the rowwise one given" \
    --a SQ.safetensors --b SB.safetensors --actual kc.safetensors
run_g "the same GEMM checked with --a-columnwise has no cause" 0 "verdict: WITHIN BOUND" --a SQ.safetensors --a-columnwise \
    --b SB.safetensors --actual kc.safetensors
grep -q "^cause" out.txt && bad "A^T: no cause" || ok "A^T checked as such: no cause"
run_g "wrong shape" 2 "holds 456 values; D is 24 x 20" $G --actual short.npy
run_g "missing operand" 2 "--a BUNDLE, --b BUNDLE and --actual D are required" --a A.safetensors --actual te.safetensors
run_g "K mismatch" 2 "" --a A.safetensors --b A.f32 --actual te.safetensors
exit $fail
