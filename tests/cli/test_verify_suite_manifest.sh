#!/usr/bin/env bash
# test_verify_suite_manifest.sh - verify --suite trusts nothing in a MANIFEST
# (issue 31): each golden's sha256 is checked before it is used (an altered
# golden is an ERROR for its case, all-zero sums match nothing); every line
# the format does not describe is refused with the file and line; a FIFO or
# a device as the MANIFEST is refused at once; 200,000 lines group in
# seconds; a suite path that is not UTF-8 leaves JUnit and JSON well-formed.
set -uo pipefail
: "${NVFP4:?set NVFP4 to the nvfp4 binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
ok()  { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
# expect_fail NEEDLE CMD...: exit 2 within 10 s and NEEDLE in stderr
expect_fail() {
    local needle=$1; shift
    timeout 10 "$@" 2>err.txt >out.txt; local rc=$?
    if [ $rc -eq 2 ] && grep -qF -- "$needle" err.txt; then ok "refuses: $needle"
    else bad "expected exit 2 and '$needle', got rc=$rc: $(head -c 600 err.txt)"; fi
}
$NVFP4 golden --suite edge --recipe te --out g 2>/dev/null || bad "setup: golden"
ncase=$(grep -vc '^#' g/MANIFEST)
mkdir outs && cp g/*.safetensors outs/   # a correct kernel
$NVFP4 verify --suite g --actual-dir outs >/dev/null || bad "setup: the untouched suite does not match"
fresh() { rm -rf s && cp -r g s; }          # a copy of the suite to damage

# ---- 1. the goldens' sha256 --------------------------------------------------------
fresh
python3 - <<'PY'
p = "s/edge-outliers.safetensors"
b = bytearray(open(p, "rb").read()); b[-3] ^= 0x01; open(p, "wb").write(b)   # one bit of the dequant
PY
timeout 60 $NVFP4 verify --suite s --actual-dir outs --junit j.xml --json >j.json 2>err.txt; rc=$?
python3 - "$ncase" <<'PY' && [ $rc -eq 2 ] && ok "an altered golden: ERROR for its case only (exit 2), JUnit and JSON say why" \
    || bad "altered golden: rc=$rc $(cat err.txt)"
import json, sys, xml.etree.ElementTree as ET
d = json.load(open("j.json"))
st = {c["case"]: c for c in d["cases"]}
assert len(st) == int(sys.argv[1]), len(st)
bad = st["edge-outliers"]
assert bad["status"] == "error" and "golden altered after generation" in bad["error"], bad
assert "line 12 of s/MANIFEST" in bad["error"], bad["error"]
assert all(c["status"] == "match" for n, c in st.items() if n != "edge-outliers")
t = ET.parse("j.xml").getroot().find("testsuite")
assert t.get("errors") == "1", t.attrib
e = [c for c in t.findall("testcase") if c.get("name") == "edge-outliers"][0].find("error")
assert "golden altered after generation" in e.get("message")
PY
fresh
sed -i -E 's/^[0-9a-f]{64}/0000000000000000000000000000000000000000000000000000000000000000/' s/MANIFEST
timeout 60 $NVFP4 verify --suite s --actual-dir outs >t.txt 2>err.txt; rc=$?
[ $rc -eq 2 ] && [ "$(grep -c 'golden altered after generation' t.txt)" -eq "$ncase" ] && ! grep -q '^verdict: MATCH' t.txt \
    && ok "all-zero sums: every case an ERROR, no MATCH" || bad "all-zero sums: rc=$rc $(tail -3 t.txt)"
# a folder case: every file checked, and nothing unlisted in the folder
$NVFP4 golden --suite shapes --recipe te --format npy --out gn 2>/dev/null || bad "setup: npy suite"
mkdir outn && cp -r gn/shapes-1x16-1x16 outn/
$NVFP4 verify --suite gn --actual-dir outn >/dev/null 2>&1 || bad "setup: the npy suite does not match itself"
echo extra > gn/shapes-1x16-1x16/notes.txt
timeout 60 $NVFP4 verify --suite gn --actual-dir outn >t.txt 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "ERROR    shapes-1x16-1x16: gn/shapes-1x16-1x16/notes.txt: not listed in gn/MANIFEST" t.txt \
    && ok "a file the MANIFEST does not describe in a folder case: ERROR" || bad "unlisted file: rc=$rc $(cat t.txt)"
rm gn/shapes-1x16-1x16/notes.txt
python3 -c '
p = "gn/shapes-1x16-1x16/data.npy"; b = bytearray(open(p, "rb").read()); b[-1] ^= 0x10; open(p, "wb").write(b)'
timeout 60 $NVFP4 verify --suite gn --actual-dir outn >t.txt 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "ERROR    shapes-1x16-1x16: gn/shapes-1x16-1x16/data.npy: golden altered after generation" t.txt \
    && ok "an altered file of a folder case: ERROR" || bad "altered folder file: rc=$rc $(cat t.txt)"

# ---- 2. lines the format does not describe: the file and line named ---------------------
nl=$(($(wc -l < g/MANIFEST) + 1))
sum=$(head -c 64 <<< "$(grep -v '^#' g/MANIFEST | head -1)")
line_case() { # NEEDLE LINE: the suite with LINE appended is refused, naming s/MANIFEST:$nl
    fresh; printf '%s\n' "$2" >> s/MANIFEST
    expect_fail "s/MANIFEST:$nl: $1" $NVFP4 verify --suite s --actual-dir outs --junit lj.xml
    [ -e lj.xml ] && bad "a JUnit report was written for a refused MANIFEST" && rm -f lj.xml
}
line_case "an absolute path" "$sum  /etc/passwd"
line_case "a '.' or '..' component" "$sum  ../outs/edge-outliers.safetensors"
line_case "a path more than two levels deep" "$sum  a/b/c"
line_case "an empty path component" "$sum  a//b"
line_case "not a MANIFEST line" "this is not a line of ours"
line_case "not a MANIFEST line" "$sum *edge-outliers.safetensors"
line_case "line of 1100 characters (at most 1023)" "$sum  $(head -c 1034 /dev/zero | tr '\0' x)"
line_case "'edge-e2m1-ties.safetensors' is listed twice (also on line 8)" "$(sed -n 8p g/MANIFEST)"
line_case "a path that is not UTF-8" "$sum  $(printf 'case-\xff\xfe.safetensors')"
line_case "a control character in the path" "$sum  $(printf 'case\033[2J.safetensors')"
fresh; printf '%s  edge-outliers.safetensors/x\n' "$sum" >> s/MANIFEST
expect_fail "is listed as a file and as a folder (line 12)" $NVFP4 verify --suite s --actual-dir outs
fresh; grep '^#' g/MANIFEST > s/MANIFEST
expect_fail "s/MANIFEST: the MANIFEST lists no case" $NVFP4 verify --suite s --actual-dir outs

# ---- 3. a MANIFEST that is not a regular file: refused at once -------------------------
expect_fail "/dev/zero: is a character device" $NVFP4 verify --suite /dev/zero --actual-dir outs
fresh; rm s/MANIFEST && mkfifo s/MANIFEST
expect_fail "s/MANIFEST: is a FIFO" $NVFP4 verify --suite s --actual-dir outs
expect_fail "s/MANIFEST: is a FIFO" $NVFP4 verify --suite s/MANIFEST --actual-dir outs
rm s/MANIFEST && ln -s /dev/zero s/MANIFEST
expect_fail "s/MANIFEST: is a character device" $NVFP4 verify --suite s --actual-dir outs
# golden replacing a folder whose MANIFEST is a FIFO: refused, not waited on
mkdir gf && mkfifo gf/MANIFEST
expect_fail "gf: not empty and not a golden suite of this tool" $NVFP4 golden --suite edge --recipe te --out gf
[ -p gf/MANIFEST ] && ok "the FIFO is left" || bad "gf/MANIFEST was replaced"

# ---- 4. 200,000 lines: grouped by sorting, not by search ---------------------------------
mkdir big
python3 - <<'PY'
with open("big/MANIFEST", "w") as f:
    f.write("# nvfp4kit golden suite (docs/file-formats.md); check with: sha256sum -c MANIFEST\n")
    for i in range(200000):
        f.write("%064x  case-%06d.safetensors\n" % (i, i))
PY
start=$(date +%s.%N)
timeout 120 $NVFP4 verify --suite big --actual-dir outs --json >big.json 2>err.txt; rc=$?
secs=$(python3 -c "import time; print('%.1f' % (time.time() - $start))")
python3 -c 'import json; d = json.load(open("big.json")); assert len(d["cases"]) == 200000 and d["missing"] == 200000' \
    && [ $rc -eq 2 ] && python3 -c "import sys; sys.exit(0 if $secs < 30 else 1)" \
    && ok "200,000 cases listed in ${secs} s (was 84 s)" || bad "200,000 lines: rc=$rc, ${secs} s $(head -c 300 err.txt)"

# ---- 5. text that is not UTF-8: JUnit and JSON stay well-formed ----------------------------
odd=$(printf 'suite-\xff\xc0')
cp -r g "$odd" && cp -r outs "outs-$odd"
rm "outs-$odd/edge-outliers.safetensors"
timeout 60 $NVFP4 verify --suite "$odd" --actual-dir "outs-$odd" --junit u.xml --json >u.json 2>err.txt; rc=$?
python3 - "$ncase" <<'PY' && [ $rc -eq 0 ] && ok "a suite path that is not UTF-8: JUnit parses, every JSON case keeps its name" \
    || bad "not UTF-8: rc=$rc $(cat err.txt)"
import json, sys, xml.etree.ElementTree as ET
t = ET.parse("u.xml").getroot().find("testsuite")
assert "\ufffd" in t.get("name") and len(t.findall("testcase")) == int(sys.argv[1])
d = json.load(open("u.json"))
assert all("case" in c for c in d["cases"]) and len(d["cases"]) == int(sys.argv[1])
assert "\ufffd" in d["suite"] and d["missing"] == 1
PY
exit $fail
