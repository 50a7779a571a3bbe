#!/usr/bin/env bash
# test_verify_suite.sh - nvfp4 verify --suite: every case of a golden suite
# against a kernel's output folder; one summary, exit 0/1/2, JUnit XML that
# Python's xml.etree parses with one testcase per case, JSON, TAP; reports
# written also when a case is unreadable; causes tallied over all cases; a
# kernel with a per-row amax still analysed case by case.
set -uo pipefail
: "${NVFP4:?set NVFP4 to the nvfp4 binary}"
here=$(cd "$(dirname "$0")" && pwd)
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
    && grep -q "DIFFERS  edge-e2m1-ties: rowwise: cause known-bug: layout-nibble-swap: .* (+1 more cause)$" t.txt \
    && grep -q "missing  edge-underflow" t.txt \
    && ok "one differing (exit 1), one missing, named" || { bad "mixed: rc $rc"; cat t.txt; }
python3 - "$ncase" <<'PY' && ok "JUnit XML parses: one testcase per case, failure and skipped" || bad "JUnit XML"
import sys, xml.etree.ElementTree as ET
n = int(sys.argv[1])
root = ET.parse("j.xml").getroot()
cases = root.findall("./testsuite/testcase")
assert len(cases) == n, len(cases)
by = {c.get("name"): c for c in cases}
assert by["edge-e2m1-ties"].find("failure") is not None
assert "layout-nibble-swap" in by["edge-e2m1-ties"].find("failure").get("message")
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
$NVFP4 verify --suite g --actual-dir empty --junit e.xml >/dev/null 2>&1; rc=$?
[ "$rc" -eq 2 ] && python3 -c 'import xml.etree.ElementTree as ET; t=ET.parse("e.xml").getroot().find("testsuite"); assert t.get("skipped")=="'"$ncase"'", t.attrib' \
    && ok "no output at all: exit 2, JUnit still written (every case skipped)" || bad "empty outs (rc $rc)"

# Three cases of one kernel bug: one story with counts, not three first causes.
mkdir three && cp g/*.safetensors three/
for c in edge-e2m1-ties edge-outliers edge-zero-blocks; do python3 "$here/vkernel.py" "g/$c.safetensors" "three/$c.safetensors" --bug swap-nibbles; done
$NVFP4 verify --suite g --actual-dir three >three.txt; rc=$?
[ "$rc" -eq 1 ] && grep -q "^causes over the 3 differing of $ncase cases (most specific first):$" three.txt \
    && [ "$(grep -c '^  3 of 3 cases (rowwise 3) ' three.txt)" -eq 2 ] \
    && grep -A1 "^causes over" three.txt | grep -q "^  3 of 3 cases (rowwise 3) proven known-bug: layout-nibble-swap: " \
    && grep -q "^  3 of 3 cases (rowwise 3) swapped-nibbles: " three.txt \
    && ok "3 cases, one bug: each cause tallied once with its count, the catalogued formula first" \
    || { bad "suite tally (rc $rc)"; cat three.txt; }

# A kernel that writes a per-row amax (te-rowscaled's outputs for a te suite):
# every case is analysed (DIFFERS, never ERROR), the size finding is tallied.
$NVFP4 golden --suite edge --recipe te-rowscaled --out rowamax 2>/dev/null || bad "golden te-rowscaled"
$NVFP4 verify --suite g --actual-dir rowamax --junit ra.xml >ra.txt; rc=$?
[ "$rc" -eq 1 ] && grep -q "summary: 0 matched, $ncase differing, 0 missing (of $ncase cases)" ra.txt && ! grep -q "ERROR" ra.txt \
    && grep -q "^  $ncase of $ncase cases (rowwise $ncase, columnwise $ncase) size: component 'amax' holds 16 values where 1 was expected \[edge-e2m1-ties\]$" ra.txt \
    && grep -q "DIFFERS  edge-amax-zero: rowwise: component 'amax' holds 16 values where 1 was expected$" ra.txt \
    && grep -q "^  [0-9]* of $ncase cases (.*) different-recipe: recipe: the output matches te-rowscaled rn 1x16 and [0-9] other candidates\{0,1\} exactly (indistinguishable on this input), not te" ra.txt \
    && ok "per-row amax: every case analysed (exit 1), 'amax holds 16 values where 1 was expected' tallied" \
    || { bad "per-row amax suite (rc $rc)"; cat ra.txt; }
python3 - "$ncase" <<'PY' && ok "per-row amax: JUnit has a failure per case, no error" || bad "per-row amax JUnit"
import sys, xml.etree.ElementTree as ET
n = sys.argv[1]
t = ET.parse("ra.xml").getroot().find("testsuite")
assert t.get("failures") == n and t.get("errors") == "0", t.attrib
assert "size: component 'amax' holds 16 values where 1 was expected" in t.find("system-out").text
PY
$NVFP4 verify --suite g --actual-dir rowamax --json >ra.json
python3 - "$ncase" <<'PY' && ok "per-row amax --json: causes tallied over the suite" || bad "per-row amax --json"
import json, sys
n = int(sys.argv[1])
d = json.load(open("ra.json"))
size = [c for c in d["causes"] if c["key"] == "size: amax"]
assert len(size) == 1 and size[0]["cases"] == n and size[0]["rowwise"] == n and size[0]["columnwise"] == n, d["causes"]
assert d["reasons"]["size"] == 2 * n and d["errors"] == 0 and d["differing"] == n
comp = d["cases"][0]["outputs"][0]["components"]
assert comp["amax"]["size_finding"] == "component 'amax' holds 16 values where 1 was expected"
assert comp["scale"]["compared"] == 48 and comp["scale"]["status"] == "mismatch", comp["scale"]
PY

# An unreadable kernel file: that case is an ERROR entry, every report is still written.
mkdir broken && cp g/*.safetensors broken/ && echo junk >broken/edge-outliers.safetensors
$NVFP4 verify --suite g --actual-dir broken --junit b.xml >b.txt 2>b.err; rc=$?
[ "$rc" -eq 2 ] && grep -q "^  ERROR    edge-outliers: broken/edge-outliers.safetensors: too short" b.txt \
    && grep -q "summary: $((ncase - 1)) matched, 0 differing, 0 missing, 1 unreadable (of $ncase cases)" b.txt \
    && grep -q "1 of $ncase cases could not be read" b.err \
    && ok "unreadable case: exit 2, named with its reader's message" || { bad "unreadable case (rc $rc)"; cat b.txt b.err; }
python3 - "$ncase" <<'PY' && ok "unreadable case: JUnit written, <error> for it" || bad "unreadable JUnit"
import sys, xml.etree.ElementTree as ET
root = ET.parse("b.xml").getroot()
t = root.find("testsuite")
assert t.get("errors") == "1" and t.get("failures") == "0" and t.get("tests") == sys.argv[1], t.attrib
by = {c.get("name"): c for c in t.findall("testcase")}
assert "too short" in by["edge-outliers"].find("error").get("message")
assert by["edge-zero-blocks"].find("error") is None
PY
$NVFP4 verify --suite g --actual-dir broken --json >b.json 2>/dev/null; rc=$?
python3 -c '
import json; d = json.load(open("b.json")); c = {x["case"]: x for x in d["cases"]}
assert d["errors"] == 1 and c["edge-outliers"]["status"] == "error" and "too short" in c["edge-outliers"]["error"]' \
    && [ "$rc" -eq 2 ] && ok "unreadable case: --json error entry" || bad "unreadable --json (rc $rc)"
$NVFP4 verify --suite g --actual-dir broken --tap >b.tap 2>/dev/null
grep -q "^not ok 5 - edge-outliers # ERROR broken/edge-outliers.safetensors: too short" b.tap && grep -q "^1..$ncase$" b.tap \
    && ok "unreadable case: --tap not ok with the message" || { bad "unreadable --tap"; cat b.tap; }
$NVFP4 verify --suite nosuch --actual-dir outs >/dev/null 2>&1; [ $? -eq 2 ] && ok "no suite: exit 2" || bad "no suite"
$NVFP4 verify --suite g >/dev/null 2>&1; [ $? -eq 2 ] && ok "--suite without --actual-dir: exit 2" || bad "usage"
echo "garbage" >bad.txt
$NVFP4 verify --suite bad.txt --actual-dir outs >/dev/null 2>&1; [ $? -eq 2 ] && ok "a malformed MANIFEST: exit 2" || bad "bad MANIFEST"
exit $fail
