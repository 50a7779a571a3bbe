#!/usr/bin/env bash
# test_grouped.sh - `nvfp4 quantize --groups` (grouped / MoE quantization) and
# `nvfp4 verify` of a grouped bundle: hand-computed bytes of 3 experts (2, 0
# and 1 tokens), the per-expert padded scale segments, verify naming the
# expert that differs and the catalogued grouped mistakes; bad group sizes
# and refused options are usage errors (exit 2) that write nothing.
set -u
NVFP4=${NVFP4:-build/bin/nvfp4}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# 3 x 16 fp32: row 0 = 6 3 -1 0.5 0..., row 1 = 1.5 0..., row 2 = 0.75 0...
python3 - "$tmp/x.bin" <<'PY' || exit 1
import struct, sys
x = [0.0] * 48
x[0:4] = [6, 3, -1, 0.5]; x[16] = 1.5; x[32] = 0.75
open(sys.argv[1], "wb").write(struct.pack("<48f", *x))
PY
q() { "$NVFP4" quantize "$tmp/x.bin" --shape 3x16 --dtype f32 "$@"; }
q --groups 2,0,1 -o "$tmp/g" || fail "quantize --groups"
# te: expert 0 amax 6 -> S_enc 448, scales 448 (0x7E) and 112 (0x6E); expert 2 amax 0.75 -> scale 448
[ "$(od -An -tx1 "$tmp/g/scale.npy" | tr -d ' \n' | tail -c 6)" = 7e6e7e ] || fail "linear scales 7e 6e 7e"
python3 - "$tmp/g" <<'PY' || fail "grouped bundle bytes"
import json, sys, numpy as np
d = sys.argv[1]
m = json.load(open(d + "/meta.json"))["metadata"]
assert m["groups"] == "2,0,1" and m["group_scale_padding"] == "128", m
z = np.load(d + "/scale_swizzled.npy").reshape(-1)
assert z.size == 1024, z.size                      # two 512-byte segments, none for the empty expert
assert list(np.nonzero(z)[0]) == [0, 16, 512], np.nonzero(z)
assert list(z[[0, 16, 512]]) == [0x7E, 0x6E, 0x7E]
assert np.load(d + "/amax.npy").tolist() == [6.0, 0.0, 0.75]
assert np.load(d + "/m_sizes.npy").tolist() == [2, 0, 1]
assert np.load(d + "/data.npy")[0, :2].tolist() == [0x57, 0x1A]  # 6 3 -1 0.5 -> 7 5 A 1
PY

out=$("$NVFP4" verify --expected "$tmp/g" --actual "$tmp/g"); rc=$?
[ $rc = 0 ] || fail "the golden against itself: exit $rc: $out"

# the ungrouped bundle of the same x is both catalogued mistakes: one amax, one 128x4 matrix
q -o "$tmp/plain.safetensors" || fail "quantize"
out=$("$NVFP4" verify --expected "$tmp/g" --actual "$tmp/plain.safetensors"); rc=$?
[ $rc = 1 ] || fail "verify of the ungrouped bundle: exit $rc, want 1"
for want in "expert 0: rows 0..1 (2): match" "expert 1: empty" \
    "expert 2: rows 2..2 (1): scale 1 byte, scale_swizzled 1 byte, amax 6 where 0.75 was expected" \
    "experts that differ: 2 (1 of 2 with rows)" \
    "scale_swizzled  512 bytes where 1024 were expected" \
    "cause [proven]: grouped-shared-global-scale + grouped-unpadded-segments"; do
    grep -qF -- "$want" <<<"$out" || fail "verify report lacks '$want': $out"
done
# its codes and linear scales alone: a shared global scale (the unpadding cannot be seen)
python3 - "$tmp/plain.safetensors" "$tmp/ds.safetensors" <<'PY' || exit 1
import sys
from safetensors.numpy import load_file, save_file
d = load_file(sys.argv[1]); save_file({"data": d["data"], "scale": d["scale"]}, sys.argv[2])
PY
out=$("$NVFP4" verify --expected "$tmp/g" --actual "$tmp/ds.safetensors"); rc=$?
[ $rc = 1 ] || fail "codes and scales of one shared amax: exit $rc"
grep -qF "cause [consistent]: grouped-shared-global-scale: one global scale shared across experts" <<<"$out" ||
    fail "shared scale not named: $out"
# one .npy taken as --component scale; --component data compares only the codes (which match)
python3 -c 'import sys, numpy as np; from safetensors.numpy import load_file
np.save(sys.argv[2], load_file(sys.argv[1])["scale"])' "$tmp/plain.safetensors" "$tmp/scale.npy" || exit 1
out=$("$NVFP4" verify --expected "$tmp/g" --actual "$tmp/scale.npy" --component scale); rc=$?
[ $rc = 1 ] && grep -qF "expert 2: rows 2..2 (1): scale 1 byte" <<<"$out" || fail "a lone scale .npy: exit $rc: $out"
out=$("$NVFP4" verify --expected "$tmp/g" --actual "$tmp/plain.safetensors" --component data); rc=$?
[ $rc = 0 ] && grep -qF "scale           not compared (--component)" <<<"$out" || fail "--component data: exit $rc: $out"
out=$("$NVFP4" verify --expected "$tmp/g" --actual "$tmp/plain.safetensors" --json); rc=$?
python3 -c 'import json,sys; j=json.loads(sys.argv[1]); assert j["verdict"]=="mismatch" and j["experts"][2]["scale"]==1, j' \
    "$out" || fail "--json experts"

# dequantize decodes expert by expert (each amax): here exactly x
"$NVFP4" dequantize "$tmp/g" -o "$tmp/dq.npy" 2>/dev/null || fail "dequantize of a grouped bundle"
python3 -c 'import numpy as np, sys; a = np.load(sys.argv[1]); b = np.fromfile(sys.argv[2], "<f4").reshape(3, 16)
assert np.array_equal(a, b), a' "$tmp/dq.npy" "$tmp/x.bin" || fail "grouped dequantize is not x"

# the same bytes at any thread count and from the scalar reference path (the fast path's oracle):
# 300 x 256 random, experts of 7, 0, 130, 1, 162 tokens, te and mslk-stacked
python3 -c 'import numpy as np, sys; g = np.random.default_rng(5)
x = (g.standard_normal((300, 256)) * np.repeat([1, 30, 0.01, 4], 75)[:, None]).astype(np.float32); np.save(sys.argv[1], x)' \
    "$tmp/r.npy" || exit 1
for r in te mslk-stacked; do
    OMP_NUM_THREADS=1 "$NVFP4" quantize "$tmp/r.npy" --recipe $r --groups 7,0,130,1,162 -o "$tmp/r1.safetensors" 2>/dev/null
    OMP_NUM_THREADS=2 "$NVFP4" quantize "$tmp/r.npy" --recipe $r --groups 7,0,130,1,162 -o "$tmp/r2.safetensors" 2>/dev/null
    NVFP4_SIMD=scalar "$NVFP4" quantize "$tmp/r.npy" --recipe $r --groups 7,0,130,1,162 -o "$tmp/r3.safetensors" 2>/dev/null
    cmp -s "$tmp/r1.safetensors" "$tmp/r2.safetensors" || fail "$r: 1 and 2 threads differ"
    cmp -s "$tmp/r1.safetensors" "$tmp/r3.safetensors" || fail "$r: the scalar path differs"
done

# the catalogued grouped mistakes are listed with the other mutants
"$NVFP4" table --mutants | grep -q "^grouped-unpadded-segments  *grouping  *group scale segments not padded to 128 rows" ||
    fail "table --mutants lacks grouped-unpadded-segments"

expect2() { # message, args...
    local msg=$1; shift
    local err
    err=$("$NVFP4" "$@" 2>&1 >/dev/null); local rc=$?
    [ $rc = 2 ] || fail "$*: exit $rc, want 2"
    grep -qF -- "$msg" <<<"$err" || fail "$*: message '$err' lacks '$msg'"
}
x=(quantize "$tmp/x.bin" --shape 3x16 --dtype f32 -o "$tmp/w.safetensors")
expect2 "the 2 group sizes sum to 2 rows but the tensor has 3 rows" "${x[@]}" --groups 1,1
expect2 "--groups: group size 2 of '2,x' is not a row count" "${x[@]}" --groups 2,x
expect2 "a columnwise output is not supported with groups" "${x[@]}" --groups 3 --also-columnwise
expect2 "stochastic rounding is not supported with groups" "${x[@]}" --groups 3 --round sr
expect2 "a per-row (per-token) recipe is not supported with groups" "${x[@]}" --groups 3 --recipe te-rowscaled
expect2 "it takes neither --ggml-out nor --scale-layout" "${x[@]}" --groups 3 --scale-layout 8x4
# a grouped bundle whose metadata is broken is refused by name
python3 - "$tmp/plain.safetensors" "$tmp/g" "$tmp" <<'PY' || exit 1
import json, sys
import numpy as np
from safetensors.numpy import save_file
d, g, t = sys.argv[1:]
meta = json.load(open(g + "/meta.json"))["metadata"]
arrays = {k: np.load("%s/%s.npy" % (g, k)) for k in ("x", "data", "scale", "scale_swizzled", "amax", "dequant")}
save_file(arrays, t + "/bad1.safetensors", metadata=dict(meta, groups=""))
save_file(arrays, t + "/bad2.safetensors", metadata=dict(meta, groups="2,0,2"))
PY
expect2 'bad1.safetensors: metadata "groups": no group sizes' verify --expected "$tmp/bad1.safetensors" --actual "$tmp/plain.safetensors"
expect2 'bad2.safetensors: the group sizes (metadata "groups") sum to 4 rows but the bundle has 3' \
    verify --expected "$tmp/bad2.safetensors" --actual "$tmp/plain.safetensors"
[ -e "$tmp/w.safetensors" ] && fail "a refused command left a file"

[ $fails = 0 ]
