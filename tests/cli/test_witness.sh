#!/usr/bin/env bash
# test_witness.sh - verify --witness / identify --witness (docs/verify.md, "Witnesses"). A stand-in
# kernel written here in Python (stdlib only), te's chain with S_enc computed as torch computes
# 2688.0 / amax on a tensor, fl(fl(1/amax) * 2688), is run on a near-tie input with amax 0.0123, where
# that S_enc equals torchao's fl(1/fl(amax/2688)): verify says consistent with global-recip-of-div,
# vllm and flashinfer (both compute S_enc as torch does; FlashInfer differs from this kernel only where
# a NaN element makes every scale 0x7F or amax is 0, vLLM in its block-scale product order and in
# underflowing blocks). --witness writes a bundle that separates all four from each other and from te
# (one amax where te's, torch's and torchao's S_enc all differ, a NaN element); the SAME kernel run on
# its x is then proven global-torch-rdiv.
set -uo pipefail
: "${NVFP4:?set NVFP4 to the nvfp4 binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
ok()  { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
has() { if grep -qF -- "$2" "$3"; then ok "$1"; else bad "$1: '$2' not in $3"; cat "$3"; fi; }

cat > kern.py <<'PY'
#!/usr/bin/env python3
"""A stand-in kernel: te's chain (1x16, RN, rowwise) with S_enc computed as torch computes 2688.0 / amax on a
tensor, fl(fl(1/amax) * 2688). Reads x from a bundle or safetensors (tensor 'x'), writes data, scale, amax."""
import json, struct, sys
from fractions import Fraction as F

def f32(v): return struct.unpack("<f", struct.pack("<f", v))[0]

def read_st(path):
    b = open(path, "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n]); h.pop("__metadata__", None)
    t = h["x"]; o = t["data_offsets"]; raw = b[8 + n + o[0]: 8 + n + o[1]]
    return list(struct.unpack("<%df" % (len(raw) // 4), raw)), t["shape"]

def write_st(path, tensors):
    h, off, blobs = {}, 0, []
    for k in sorted(tensors):
        dt, shape, data = tensors[k]
        h[k] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + len(data)]}; off += len(data); blobs.append(bytes(data))
    hj = json.dumps(h).encode(); hj += b" " * ((8 - len(hj) % 8) % 8)
    open(path, "wb").write(struct.pack("<Q", len(hj)) + hj + b"".join(blobs))

E4M3 = [F(m, 512) if e == 0 else (1 + F(m, 8)) * F(2) ** (e - 7) for e in range(16) for m in range(8)][:127]
E2M1 = [F(0), F(1, 2), F(1), F(3, 2), F(2), F(3), F(4), F(6)]

def nearest(table, v):  # round to nearest, ties to the even code; saturate at the top
    v = F(v)
    if v >= table[-1]: return len(table) - 1
    for c in range(len(table) - 1):
        lo, hi = table[c], table[c + 1]
        if v < hi:
            mid = (lo + hi) / 2
            return c if v < mid or (v == mid and c % 2 == 0) else c + 1
    return len(table) - 1

def e4m3(v): return 126 if v >= 464 else nearest(E4M3, v)
def e2m1(y):
    if y != y: return 7                          # NaN -> +6
    sign = 8 if y < 0 or (y == 0 and str(y).startswith("-")) else 0
    return sign | (7 if abs(y) == float("inf") else nearest(E2M1, abs(y)))

def amax_of(v): return max([abs(e) for e in v if e == e] or [0.0])  # fmaxf: NaN ignored

def te_input(A, R, C):
    """Rows of blocks whose te scaled values sit on the E2M1 midpoints, nudged by -3..3 ulps (where a one-ulp
    change of S_enc decides the rounding); element 0 is the tensor amax A."""
    import math
    senc = f32(2688.0 / A); sdec = f32(1.0 / senc); m = f32(senc * f32(1.0 / 6.0))
    mids = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0]
    x = []
    for b in range(R * C // 16):
        bamax = f32(A * (b + 1) / 32.0) if b else A
        inv = f32(1.0 / f32(float(E4M3[e4m3(f32(bamax * m))]) * sdec))
        x.append(bamax)
        for k in range(1, 16):
            v = f32(mids[(k + b) % 7] / inv)
            n = (k * 3 + b) % 7 - 3
            for _ in range(abs(n)): v = math.nextafter(v, math.inf if n > 0 else 0.0)
            x.append(f32(-v if (k + b) & 2 else v))
    return x

if sys.argv[1] == "--input":  # --input A RxC OUT.f32: an input for the test
    R, C = map(int, sys.argv[3].split("x"))
    x = te_input(f32(float(sys.argv[2])), R, C)
    open(sys.argv[4], "wb").write(struct.pack("<%df" % len(x), *x))
    sys.exit(0)
x, (R, C) = read_st(sys.argv[1])
amax = amax_of(x)
senc = f32(f32(1.0 / amax) * 2688.0)       # the deviation: torch's rdiv
sdec = f32(1.0 / senc)
m = f32(senc * f32(1.0 / 6.0))
codes, scales = [], []
for r in range(R):
    for b in range(C // 16):
        blk = x[r * C + b * 16: r * C + b * 16 + 16]
        s = e4m3(f32(amax_of(blk) * m)); scales.append(s)
        sv = float(E4M3[s]); inv = f32(1.0 / f32(sv * sdec)) if sv else 3.4028234663852886e38
        codes += [e2m1(f32(v * inv)) for v in blk]
data = bytes(codes[2 * j] | (codes[2 * j + 1] << 4) for j in range(len(codes) // 2))
write_st(sys.argv[2], {"data": ["U8", [R, C // 2], data], "scale": ["U8", [R, C // 16], bytes(scales)],
                       "amax": ["F32", [1], struct.pack("<f", amax)]})
PY

python3 kern.py --input 0.0123 4x64 x.f32 || bad "input"
$NVFP4 quantize x.f32 --shape 4x64 --dtype f32 -o ref.safetensors >/dev/null || bad "quantize"
python3 kern.py ref.safetensors k1.safetensors || bad "kernel on the input"

# 1. the input leaves two candidates: consistent, and the witness separates them
$NVFP4 verify --expected ref.safetensors --actual k1.safetensors --witness w.safetensors >v1.txt 2>e1.txt
rc=$?
[ "$rc" -eq 1 ] && ok "verify --witness keeps verify's exit code (1)" || { bad "exit $rc"; cat e1.txt; }
# the S_enc read back from the kernel's scale bytes (docs/verify.md, "The global scale a kernel used"): 3 of its
# 16 scale bytes are one code above te's, which only S_enc values from torch's fl(fl(1/amax)*2688) up allow
has "global scale read back" "cause global-scale: scale: under te's block-scale rule your scales need S_enc in [218536.609, 220938.062] (153694 fp32 values" v1.txt
has "te's S_enc is outside" "its rule gives 218536.594 for amax 0.0122999996, outside; inside: 218536.609 (compressed-tensors, vllm, flashinfer, mslk, fbgemm, global-torch-rdiv, global-recip-of-div, global-convention-swapped)" v1.txt
has "proven by a block" "  step global-scale: proven: block 2 (row 0, block column 2, block amax 0.00115312496): your byte 0x63 needs S_enc in [218536.609, 239349.578], 218536.594 gives 0x62" v1.txt
if grep -q "cause scale-off-by-one" v1.txt; then bad "the off-by-one pattern is dropped once the S_enc is proven"; else ok "no scale-off-by-one"; fi
has "the cause is consistent" "  step global-scale: consistent with global-recip-of-div, vllm rn 1x16, flashinfer rn 1x16 (same bytes on this input)" v1.txt
has "the candidates left" "witness: 4 candidates give the kernel's bytes on this input (rowwise output): vllm rn 1x16, flashinfer rn 1x16, global-torch-rdiv, global-recip-of-div" v1.txt
has "the expected recipe is kept apart" "  kept apart from them too: te rn 1x16" v1.txt
if grep -q "NOT written\|WARNING: on it" v1.txt; then bad "the witness leaves a candidate with te's bytes"; cat v1.txt; else ok "no candidate gives te's bytes on the witness"; fi
# what it leaves is between candidates kept apart, never a remaining one against te or another remaining one
if grep "NOT separated" v1.txt | grep -qE "(global-torch-rdiv|vllm rn 1x16|flashinfer rn 1x16|global-recip-of-div) = (te rn 1x16|global-torch-rdiv|vllm rn 1x16|flashinfer rn 1x16|global-recip-of-div)( |;|$)"; then
    bad "a pair of the four (or one of them and te) is left"; grep "NOT separated" v1.txt
else ok "every pair among the four and te is separated"; fi
has "the file is written" "witness: wrote w.safetensors" v1.txt
[ -f w.safetensors ] && ok "witness bundle exists" || bad "no witness bundle"

# its size, its tensors, and what it separates (from the bundle itself)
python3 - <<'PY' || fail=1
import json, struct
b = open("w.safetensors", "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n])
meta = h["__metadata__"]
def t(name):
    o = h[name]["data_offsets"]; return b[8 + n + o[0]: 8 + n + o[1]]
rows, cols = h["x"]["shape"]
assert rows == 1 and cols % 16 == 0 and cols <= 128, (rows, cols)
four = ["vllm rn 1x16", "flashinfer rn 1x16", "global-torch-rdiv", "global-recip-of-div"]
assert meta["recipe"] == "te" and meta["witness_candidates"].startswith("; ".join(four + ["te rn 1x16"])), meta
def safe(c): return c.replace(" ", "_").replace(".", "_")
outs = {}
for c in four:
    for k in ("data", "scale", "scale_swizzled"):
        assert "cand.%s.%s" % (safe(c), k) in h, (c, k)
    outs[c] = t("cand.%s.data" % safe(c)) + t("cand.%s.scale" % safe(c))
outs["te"] = t("data") + t("scale")
assert len(set(outs.values())) == 5, "two of the four candidates and te give the same bytes"
# one amax for all: the input's finite amax is the bundle's
x = struct.unpack("<%df" % (rows * cols), t("x"))
assert struct.unpack("<f", t("amax"))[0] == max(abs(v) for v in x if v == v), "amax"
assert any(v != v for v in x), "no NaN element (FlashInfer is told from te + torch's S_enc only by one)"
print("ok   witness bundle: 1 x %d, the four candidates' bytes and te's pairwise different" % cols)
PY

# 2. the same kernel on the witness: verify proves the cause
python3 kern.py w.safetensors k2.safetensors || bad "kernel on the witness"
$NVFP4 verify --expected w.safetensors --actual k2.safetensors >v2.txt 2>e2.txt
rc=$?
[ "$rc" -eq 1 ] && ok "the witness shows the mismatch (exit 1)" || { bad "exit $rc"; cat e2.txt; }
has "known-bug on the witness" "cause known-bug: global-torch-rdiv: your kernel computes S_enc = fl(fl(1/amax) * 2688)" v2.txt
has "now proven" "  step global-scale: proven: " v2.txt
has "the deciding element names recip-of-div" "global-recip-of-div gives" v2.txt
if grep -q "consistent with" v2.txt; then bad "a consistent cause remains"; cat v2.txt; else ok "no consistent cause left"; fi

# 3. --json carries the witness
$NVFP4 verify --expected ref.safetensors --actual k1.safetensors --witness wj.safetensors --json >j.txt 2>/dev/null
python3 - <<'PY' || fail=1
import json
w = json.load(open("j.txt"))["witness"]
assert w["candidates"] == ["vllm rn 1x16", "flashinfer rn 1x16", "global-torch-rdiv", "global-recip-of-div"], w
assert w["same_as_expected"] == [] and not w["useless"], w
assert w["never_separated"] == [], w
assert w["needed"] and w["found"] and w["rows"] == 1 and w["file"] == "wj.safetensors", w
assert "te rn 1x16" in w["kept_apart"], w
assert all("global-torch-rdiv" not in u for u in w["unseparated"]), w["unseparated"]
print("ok   --json witness: candidates, size, file, nothing unseparated for global-torch-rdiv")
PY

# 4. a kernel that matches te: the candidates that agree with te on this input are listed
$NVFP4 verify --expected ref.safetensors --actual ref.safetensors --witness wm.safetensors >v3.txt 2>&1
has "a matching kernel: te among the candidates" "candidates give the kernel's bytes on this input (rowwise output): te rn 1x16, " v3.txt

# 5. identify --witness: the kernel ties two variants
$NVFP4 identify --expected-input ref.safetensors --actual k1.safetensors --witness wi.safetensors >i1.txt 2>&1
rc=$?
[ "$rc" -eq 0 ] && ok "identify exit 0 (variants tie)" || { bad "identify exit $rc"; cat i1.txt; }
has "identify lists the tie" "witness: 8 candidates give the kernel's bytes on this input (rowwise output): te rn 1x16 [mutant global-torch-rdiv], te rn 1x16 [mutant global-recip-of-div], te-pyref rn 1x16 [mutant global-torch-rdiv], te-pyref rn 1x16 [mutant global-recip-of-div], vllm rn 1x16, flashinfer rn 1x16, flashinfer rn 1x16 [mutant global-convention-swapped], mslk rn 1x16 [mutant encode-no-flt-max-clamp]" i1.txt
# te's, torch's, torchao's and the re-inverted S_enc (global-convention-swapped) are pairwise distinct at
# about 1.5e-5 of amaxes, so no one input separates all 140 pairs: identify's witness keeps every
# candidate apart from the excluded ones first and leaves one pair of the remaining, neither the kernel
has "identify's witness leaves one pair, not the kernel's" "separates 139 of 140 pairs; NOT separated: flashinfer rn 1x16 = flashinfer rn 1x16 [mutant global-convention-swapped]" i1.txt
python3 kern.py wi.safetensors k4.safetensors || bad "kernel on the identify witness"
$NVFP4 identify --expected-input wi.safetensors --actual k4.safetensors >i2.txt 2>&1
has "identify on the witness is proven" "identified: the kernel implements te rn 1x16 [mutant global-torch-rdiv]" i2.txt
has "identify proven line" "  proven: the only one of the" i2.txt

# 6. errors
$NVFP4 verify --suite x --actual-dir y --witness w >/dev/null 2>e.txt; [ $? -eq 2 ] && ok "--witness with --suite is a usage error" || bad "--suite --witness"

exit $fail
