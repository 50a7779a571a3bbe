#!/usr/bin/env bash
# test_verify_suite.sh - nvfp4 verify --suite: every case of a golden suite
# against a kernel's output folder; one summary, exit 0/1/2, JUnit XML that
# Python's xml.etree parses with one testcase per case, JSON, TAP.
set -uo pipefail
: "${NVFP4:?set NVFP4 to the nvfp4 binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
ok()  { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
$NVFP4 golden --suite edge --recipe te --out g 2>/dev/null || bad "golden"
ncase=$(grep -vc '^#' g/MANIFEST)
# a perfect kernel: every bundle is its own output
mkdir all && cp g/*.safetensors all/
$NVFP4 verify --suite g --actual-dir all --junit all.xml >all.txt
rc=$?
[ "$rc" -eq 0 ] && grep -q "summary: $ncase matched, 0 differing, 0 missing" all.txt && ok "all $ncase cases match (exit 0)" \
    || { bad "perfect kernel: rc $rc"; cat all.txt; }
# one case with swapped nibbles (codes only), one case missing, the rest right
mkdir outs && cp g/*.safetensors outs/ && rm outs/edge-underflow.safetensors
python3 - <<'PY' || bad "planting"
from safetensors.numpy import load_file, save_file
import numpy as np
d = load_file("g/edge-e2m1-ties.safetensors")
a = d["data"]
save_file({"data": ((a >> 4) | (a << 4)).astype(np.uint8)}, "outs/edge-e2m1-ties.safetensors")
PY
$NVFP4 verify --suite g/MANIFEST --actual-dir outs --junit j.xml >t.txt
rc=$?
[ "$rc" -eq 1 ] && grep -q "summary: $((ncase - 2)) matched, 1 differing, 1 missing" t.txt \
    && grep -q "DIFFERS  edge-e2m1-ties: rowwise: cause swapped-nibbles" t.txt && grep -q "missing  edge-underflow" t.txt \
    && ok "one differing (exit 1), one missing, named" || { bad "mixed: rc $rc"; cat t.txt; }
python3 - "$ncase" <<'PY' && ok "JUnit XML parses: one testcase per case, failure and skipped" || bad "JUnit XML"
import sys, xml.etree.ElementTree as ET
n = int(sys.argv[1])
root = ET.parse("j.xml").getroot()
cases = root.findall("./testsuite/testcase")
assert len(cases) == n, len(cases)
by = {c.get("name"): c for c in cases}
assert by["edge-e2m1-ties"].find("failure") is not None
assert "swapped-nibbles" in by["edge-e2m1-ties"].find("failure").get("message")
assert by["edge-underflow"].find("skipped") is not None
assert by["edge-zero-blocks"].find("failure") is None and by["edge-zero-blocks"].find("skipped") is None
ts = root.find("testsuite")
assert ts.get("tests") == str(n) and ts.get("failures") == "1" and ts.get("skipped") == "1"
root = ET.parse("all.xml").getroot()
assert len(root.findall("./testsuite/testcase")) == n and root.find("./testsuite").get("failures") == "0"
PY
$NVFP4 verify --suite g --actual-dir outs --require-all --junit r.xml >/dev/null; rc=$?
[ "$rc" -eq 1 ] && python3 -c 'import xml.etree.ElementTree as ET; r=ET.parse("r.xml").getroot(); assert r.find("./testsuite").get("failures")=="2"' \
    && ok "--require-all: a missing case fails" || bad "--require-all: rc $rc"
$NVFP4 verify --suite g --actual-dir outs --json >s.json; rc=$?
python3 - "$ncase" <<'PY' && [ "$rc" -eq 1 ] && ok "--json: per-case status and counts" || bad "--json (rc $rc)"
import json, sys
d = json.load(open("s.json"))
assert len(d["cases"]) == int(sys.argv[1]) and d["differing"] == 1 and d["missing"] == 1
st = {c["case"]: c["status"] for c in d["cases"]}
assert st["edge-e2m1-ties"] == "mismatch" and st["edge-underflow"] == "missing" and st["edge-zero-blocks"] == "match"
PY
$NVFP4 verify --suite g --actual-dir outs --tap >t.tap
grep -q "^1..$ncase$" t.tap && grep -q "^not ok 1 - edge-e2m1-ties" t.tap && grep -q "# SKIP" t.tap && ok "--tap" || bad "--tap"
mkdir empty
$NVFP4 verify --suite g --actual-dir empty >/dev/null 2>&1; [ $? -eq 2 ] && ok "no output at all: exit 2" || bad "empty outs"
$NVFP4 verify --suite nosuch --actual-dir outs >/dev/null 2>&1; [ $? -eq 2 ] && ok "no suite: exit 2" || bad "no suite"
$NVFP4 verify --suite g >/dev/null 2>&1; [ $? -eq 2 ] && ok "--suite without --actual-dir: exit 2" || bad "usage"
echo "garbage" >bad.txt
$NVFP4 verify --suite bad.txt --actual-dir outs >/dev/null 2>&1; [ $? -eq 2 ] && ok "a malformed MANIFEST: exit 2" || bad "bad MANIFEST"
exit $fail
