#!/usr/bin/env bash
# test_verify_dtypes.sh - verify reads torch's / safetensors' dtypes where
# they mean the same bytes: F8_E4M3 and F8_E8M0 scales, F4 codes (two per
# byte, shape in elements), BF16 / F16 dequant (compared with the golden
# dequant rounded to nearest-even); hand-built files always, real
# torch-saved files where torch is installed (skipped cleanly otherwise).
set -uo pipefail
: "${NVFP4:?set NVFP4 to the nvfp4 binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
ok()  { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
run_v() { # name want needle args...
    local name=$1 want=$2 needle=$3; shift 3
    "$NVFP4" verify "$@" >out.txt 2>err.txt; local rc=$?
    if [ "$rc" -eq "$want" ] && grep -qF -- "$needle" out.txt err.txt; then ok "$name"
    else bad "$name: rc=$rc (want $want), '$needle' not found"; cat out.txt err.txt; fi
}
$NVFP4 golden --suite edge --recipe te --out g 2>/dev/null || bad "golden te"
$NVFP4 golden --suite edge --recipe mxfp4-rceil --out gm 2>/dev/null || bad "golden mxfp4"
G=g/edge-e2m1-ties.safetensors
M=gm/edge-e2m1-ties.safetensors
# hand-built safetensors (no torch): header written byte by byte
python3 - <<'PY' || bad "hand-built files"
import json, struct
import numpy as np
from safetensors.numpy import load_file

def write(path, tensors, meta=None):  # tensors: name -> (dtype string, shape, bytes)
    hdr, off, blob = {}, 0, b""
    for name, (dt, shape, b) in tensors.items():
        hdr[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [off, off + len(b)]}
        off += len(b)
        blob += b
    if meta: hdr["__metadata__"] = meta
    h = json.dumps(hdr).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    open(path, "wb").write(struct.pack("<Q", len(h)) + h + blob)

def bf16(a):  # round to nearest even
    u = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)

d = load_file("g/edge-e2m1-ties.safetensors")
r, c = d["data"].shape
write("hand.safetensors", {
    "data": ("F4", (r, 2 * c), d["data"].tobytes()),
    "scale": ("F8_E4M3", d["scale"].shape, d["scale"].tobytes()),
    "dequant": ("BF16", d["dequant"].shape, bf16(d["dequant"]).tobytes()),
    "dequant_t": ("F16", d["dequant_t"].shape, d["dequant_t"].astype(np.float16).tobytes())})
bad = bf16(d["dequant"])
bad.reshape(-1)[5] ^= 1  # one bf16 ulp off
sc = d["scale"].copy()
sc.reshape(-1)[2] ^= 1
write("hand_bad.safetensors", {"scale": ("F8_E4M3", sc.shape, sc.tobytes()),
                               "dequant": ("BF16", d["dequant"].shape, bad.tobytes())})
write("hand_odd.safetensors", {"data": ("F4", (r, 2 * c - 1), d["data"].tobytes()[:-1])})
m = load_file("gm/edge-e2m1-ties.safetensors")
write("hand_mx.safetensors", {"scale": ("F8_E8M0", m["scale"].shape, m["scale"].tobytes()),
                              "data": ("F4", (m["data"].shape[0], 2 * m["data"].shape[1]), m["data"].tobytes())})
PY
run_v "F4 codes, F8_E4M3 scales, BF16 / F16 dequant (hand-built)" 0 "verdict: MATCH" --expected $G --actual hand.safetensors
grep -q "dequant            0 of" out.txt && grep -q "dequant_t          0 of" out.txt && ok "both dequants compared" || bad "dequant compared"
run_v "a BF16 dequant one ulp off and a scale byte differ" 1 "dequant            1 of" --expected $G --actual hand_bad.safetensors
grep -q "scale              1 of" out.txt && ok "F8_E4M3 scale difference found" || bad "scale difference"
run_v "an F4 shape with an odd element count is refused" 2 "hand_odd.safetensors" --expected $G --actual hand_odd.safetensors
run_v "F8_E8M0 scales and F4 codes of an MXFP4 kernel" 0 "verdict: MATCH" --expected $M --actual hand_mx.safetensors
# real torch-saved files
if python3 -c 'import torch, safetensors.torch; torch.float4_e2m1fn_x2; torch.float8_e8m0fnu' 2>/dev/null; then
    python3 - <<'PY' || bad "torch-saved files"
import torch
from safetensors.numpy import load_file
from safetensors.torch import save_file
d = load_file("g/edge-e2m1-ties.safetensors")
t = lambda k: torch.from_numpy(d[k].copy())
save_file({"data": t("data").view(torch.float4_e2m1fn_x2), "scale": t("scale").view(torch.float8_e4m3fn),
           "dequant": t("dequant").to(torch.bfloat16), "data_t": t("data_t").view(torch.float4_e2m1fn_x2),
           "scale_t": t("scale_t").view(torch.float8_e4m3fn), "dequant_t": t("dequant_t").to(torch.float16)},
          "torch.safetensors")
q = t("scale").view(torch.float8_e4m3fn).float()
i = int(((q > 0) & (q < 200)).reshape(-1).nonzero()[0])
q.view(-1)[i] = q.view(-1)[i] * 2  # one scale doubled: a different byte
save_file({"scale": q.to(torch.float8_e4m3fn)}, "torch_bad.safetensors")
m = load_file("gm/edge-e2m1-ties.safetensors")
save_file({"scale": torch.from_numpy(m["scale"].copy()).view(torch.float8_e8m0fnu),
           "data": torch.from_numpy(m["data"].copy()).view(torch.float4_e2m1fn_x2)}, "torch_mx.safetensors")
# a whole golden bundle re-saved with torch dtypes (metadata kept) is a valid expected bundle
import json, struct
raw = open("g/edge-e2m1-ties.safetensors", "rb").read()
meta = json.loads(raw[8:8 + struct.unpack("<Q", raw[:8])[0]])["__metadata__"]
full = {k: t(k) for k in d}
for k in ("data", "data_t"): full[k] = full[k].view(torch.float4_e2m1fn_x2)
for k in ("scale", "scale_t", "scale_swizzled", "scale_t_swizzled"):
    if k in full: full[k] = full[k].view(torch.float8_e4m3fn)
save_file(full, "torch_golden.safetensors", metadata=meta)
PY
    run_v "torch-saved float4_e2m1fn_x2 / float8_e4m3fn / bf16 / f16 output" 0 "verdict: MATCH" --expected $G --actual torch.safetensors
    run_v "torch-saved scale with one byte changed" 1 "scale              1 of" --expected $G --actual torch_bad.safetensors
    run_v "torch-saved float8_e8m0fnu scales" 0 "verdict: MATCH" --expected $M --actual torch_mx.safetensors
    run_v "a golden bundle saved by torch is a valid expected bundle" 0 "verdict: MATCH" \
        --expected torch_golden.safetensors --actual torch.safetensors
else
    echo "skip torch-saved files: torch with float4_e2m1fn_x2 and float8_e8m0fnu is not installed"
fi
exit $fail
