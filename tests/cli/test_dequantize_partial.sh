#!/usr/bin/env bash
# test_dequantize_partial.sh - nvfp4 dequantize on a kernel's partial file
# (codes, scales, amax, no metadata): the metadata from --expected GOLDEN or
# from --recipe/--shape, the result bit-identical to the golden's dequant;
# torch dtypes (F4 codes, F8_E4M3 scales); usage errors.
set -uo pipefail
: "${NVFP4:?set NVFP4 to the nvfp4 binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
ok()  { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
$NVFP4 golden --suite edge --recipe te --out g 2>/dev/null || bad "golden"
G=g/edge-e2m1-ties.safetensors
python3 - <<'PY' || bad "partial files"
import json, struct
from safetensors.numpy import load_file, save_file
d = load_file("g/edge-e2m1-ties.safetensors")
save_file({"data": d["data"], "scale": d["scale"], "amax": d["amax"]}, "part.safetensors")
save_file({"data_t": d["data_t"], "scale_t": d["scale_t"], "amax_t": d["amax_t"]}, "part_t.safetensors")
# F4 codes (shape in elements) and F8_E4M3 scales, header written by hand
t = {"data": ("F4", [d["data"].shape[0], 2 * d["data"].shape[1]], d["data"].tobytes()),
     "scale": ("F8_E4M3", list(d["scale"].shape), d["scale"].tobytes()),
     "amax": ("F32", list(d["amax"].shape), d["amax"].tobytes())}
hdr, off, blob = {}, 0, b""
for k, (dt, sh, b) in t.items():
    hdr[k] = {"dtype": dt, "shape": sh, "data_offsets": [off, off + len(b)]}
    off += len(b)
    blob += b
h = json.dumps(hdr).encode()
h += b" " * ((8 - len(h) % 8) % 8)
open("part_f4.safetensors", "wb").write(struct.pack("<Q", len(h)) + h + blob)
PY
same() { python3 - "$1" "$2" <<'PY'
import sys, numpy as np
from safetensors.numpy import load_file
a = np.load(sys.argv[1]); b = load_file("g/edge-e2m1-ties.safetensors")[sys.argv[2]]
sys.exit(0 if a.shape == b.shape and (a.view(np.uint32) == b.view(np.uint32)).all() else 1)
PY
}
$NVFP4 dequantize part.safetensors -o a.npy 2>err.txt; [ $? -eq 2 ] && grep -q "not a golden bundle" err.txt \
    && ok "no metadata and no option: exit 2" || bad "no metadata"
$NVFP4 dequantize part.safetensors -o a.npy --expected $G && same a.npy dequant && ok "--expected: bit-identical dequant" || bad "--expected"
$NVFP4 dequantize part.safetensors -o b.npy --recipe te --shape 16x48 && same b.npy dequant && ok "--recipe/--shape: bit-identical dequant" \
    || bad "--recipe/--shape"
$NVFP4 dequantize part_t.safetensors -o c.npy --columnwise --expected $G && same c.npy dequant_t && ok "columnwise partial" \
    || bad "columnwise partial"
$NVFP4 dequantize part_f4.safetensors -o d.npy --recipe te --shape 16x48 && same d.npy dequant && ok "F4 codes and F8_E4M3 scales" \
    || bad "torch dtypes"
$NVFP4 dequantize part.safetensors -o e.npy --recipe te 2>/dev/null; [ $? -eq 2 ] && ok "--recipe without --shape: exit 2" || bad "--recipe alone"
$NVFP4 dequantize part.safetensors -o e.npy --recipe nope --shape 16x48 2>/dev/null; [ $? -eq 2 ] && ok "unknown recipe: exit 2" || bad "unknown recipe"
$NVFP4 dequantize part.safetensors -o e.npy --recipe te --shape 16x40 2>/dev/null; [ $? -eq 2 ] && ok "a shape that does not fit the codes: exit 2" || bad "wrong shape"
[ ! -e e.npy ] && ok "nothing written on errors" || bad "e.npy written"
exit $fail
