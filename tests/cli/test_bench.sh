#!/usr/bin/env bash
# test_bench.sh - `nvfp4 bench` (docs/performance.md): --variants lists what
# the CPU runs (scalar always first), a small --json run is one valid JSON
# object with every kernel and positive rates and the memcpy rate, every
# variant the CPU has can be forced, --kernels picks kernels, the buffers are
# advised onto huge pages unless --no-hugepages, and bad arguments exit 2 with a
# message.
set -u
: "${NVFP4:?NVFP4 must point at the nvfp4 binary}"
fail() { echo "test_bench: FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$NVFP4" bench --variants >"$tmp/v" || fail "--variants exited $?"
[ "$(head -n 1 "$tmp/v")" = scalar ] || fail "--variants must list scalar first: $(cat "$tmp/v")"
grep -qvE '^(scalar|avx2|avx512|neon)$' "$tmp/v" && fail "--variants printed an unknown name: $(cat "$tmp/v")"

for v in $(cat "$tmp/v"); do
    "$NVFP4" bench --size 1 --repeat 1 --threads 1 --no-scalar --variant "$v" --json >"$tmp/$v.json" ||
        fail "bench --variant $v exited $?"
    python3 - "$tmp/$v.json" "$v" <<'PY' || fail "bench --json for $v is not what docs/performance.md describes"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["variant"] == sys.argv[2], d["variant"]
assert d["threads"] == 1 and d["elements"] == 262144 and d["memcpy_gbps"] > 0 and d["data"] == "gauss"
assert d["clock_ghz_start"] >= 0 and d["clock_ghz_end"] >= 0
assert d["hugepages"] is True and isinstance(d["hugepages_mib"], float), (d["hugepages"], d["hugepages_mib"])
names = [k["name"] for k in d["kernels"]]
for want in ("amax_f32", "quant_1x16_rn", "quant_1x16_sr", "quant_colwise_rn", "rht16_quant_colwise",
             "mxfp4_1x32_floor", "dequant_1x16", "scale_swizzle"):
    assert want in names, want
for k in d["kernels"]:
    assert k["seconds"] > 0 and k["gelem_per_s"] > 0 and k["gbps"] > 0 and k["memcpy_ratio"] > 0, k
    # the ratio is against the memcpy measured right before the kernel
    assert abs(k["memcpy_ratio"] - k["gbps"] / k["memcpy_gbps"]) <= 1e-3 * k["memcpy_ratio"] + 1e-4, k
    assert d["memcpy_gbps_min"] <= k["memcpy_gbps"] <= d["memcpy_gbps_max"], k
    assert "speedup_vs_scalar_1t" not in k, "--no-scalar must leave out the baseline"
PY
done

"$NVFP4" bench --size 1 --repeat 1 --threads 1 >"$tmp/table" || fail "table output exited $?"
grep -q "^memcpy: " "$tmp/table" || fail "no memcpy line"
grep -q "^pages: 2 MiB transparent huge pages advised" "$tmp/table" || fail "no pages line (huge pages by default)"
"$NVFP4" bench --size 1 --repeat 1 --threads 1 --no-scalar --no-hugepages --kernels amax_f32 --json >"$tmp/nohp.json" ||
    fail "--no-hugepages exited $?"
# (with transparent_hugepage=always the kernel may still grant huge pages, so only the request is checked)
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["hugepages"] is False, d' \
    "$tmp/nohp.json" || fail "--no-hugepages must report hugepages false"
"$NVFP4" bench --size 1 --repeat 1 --threads 1 --no-scalar --no-hugepages --kernels amax_f32 >"$tmp/nohp" ||
    fail "--no-hugepages table exited $?"
grep -q "^pages: 4 KiB (--no-hugepages)" "$tmp/nohp" || fail "--no-hugepages table must say 4 KiB pages"
grep -q "speedup" "$tmp/table" || fail "no scalar baseline column"
grep -q "gauss data" "$tmp/table" || fail "table does not name the default data"
"$NVFP4" bench --size 1 --repeat 1 --threads 1 --no-scalar --data wide --json >"$tmp/wide.json" || fail "--data wide exited $?"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["data"] == "wide", d["data"]' "$tmp/wide.json" ||
    fail "--data wide not reported"

"$NVFP4" bench --size 1 --repeat 1 --threads 1 --no-scalar --kernels quant_1x16_sr,amax_f32 --json >"$tmp/sel.json" ||
    fail "--kernels exited $?"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); n=[k["name"] for k in d["kernels"]]; assert n == ["amax_f32", "quant_1x16_sr"], n' \
    "$tmp/sel.json" || fail "--kernels must run exactly the named kernels, in table order"

for bad in "--kernels" "--kernels quant_1x16" "--kernels amax_f32," "--size 0" "--size x" "--threads 0" "--repeat 0" "--variant sse9" "--data" "--data normal" "--bogus"; do
    # shellcheck disable=SC2086
    "$NVFP4" bench $bad >/dev/null 2>"$tmp/err"
    rc=$?
    [ $rc -eq 2 ] || fail "bench $bad exited $rc, expected 2"
    grep -q "nvfp4 bench" "$tmp/err" || fail "bench $bad: no message: $(cat "$tmp/err")"
done
echo "test_bench: ok"
