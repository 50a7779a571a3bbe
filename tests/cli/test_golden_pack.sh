#!/usr/bin/env bash
# test_golden_pack.sh - `nvfp4 golden --pack DIR` (issue 32, item 5): the pack
# is written whole (MANIFEST checks, under 5 MB, the same bytes twice), its
# JSON holds specific library values (E2M1 ties to even, E4M3 0x7E = 448,
# saturation, UE5M3 max, SR steps), `verify --suite` reads it back (the pack
# against itself matches; a planted one-byte error in a vector file and in a
# kernel's suite output is found and named; an altered pack is refused), and
# bad use gets a clear message with exit 2; pack_recompute.py reads the pack
# with json, numpy and ml_dtypes only (no nvfp4kit) and recomputes cases.
set -uo pipefail
: "${NVFP4:?set NVFP4 to the nvfp4 binary}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
ok()  { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

# ---- writing -------------------------------------------------------------------
"$NVFP4" golden --pack P 2>err.txt
check "golden --pack exits 0" "[ $? = 0 ]"
check "README, index, vectors and suites written" \
    "[ -f P/README.md ] && [ -f P/pack.json ] && [ -f P/e2m1.json ] && [ -f P/e4m3.json ] && [ -f P/ue8m0.json ] && [ -f P/ue5m3.json ] && [ -f P/sr.json ] && [ -f P/suite-te-shapes-rn-flashinfer-8x4/MANIFEST ]"
check "sha256sum -c MANIFEST passes in the pack and in each suite" \
    "(cd P && sha256sum -c --quiet --strict MANIFEST) && for d in P/suite-*/; do (cd \$d && sha256sum -c --quiet --strict MANIFEST) || exit 1; done"
size=$(du -sb --apparent-size P | cut -f1)
check "the pack is under 5 MB ($size bytes)" "[ $size -lt 5000000 ]"
check "every suite layout is present (128x4, linear, 8x4)" \
    "[ -d P/suite-te-shapes-rn-cublas-128x4 ] && [ -d P/suite-te-shapes-rn-linear ] && [ -d P/suite-te-shapes-rn-flashinfer-8x4 ]"
check "no temporary folder left" "[ -z \"\$(ls -A | grep '^\\.')\" ]"
NVFP4_SIMD=scalar OMP_NUM_THREADS=1 "$NVFP4" golden --pack P2 2>/dev/null
check "a second pack (scalar path, one thread) has the same bytes" "diff -r P P2 >/dev/null"
"$NVFP4" golden --pack P 2>/dev/null
check "a pack of ours is replaced without --force" "[ $? = 0 ]"

# ---- specific values (json only) ---------------------------------------------------
cat >values.py <<'EOF'
import json, struct, sys
P = sys.argv[1]
def table(f, name):
    return [t for t in json.load(open("%s/%s" % (P, f)))["tables"] if t["name"] == name][0]
def bits(x): return struct.unpack("<I", struct.pack("<f", x))[0]
def enc(f, x, rule):
    t = table(f, "encode")
    return t["outputs"][rule][t["inputs"]["x_bits"].index(bits(x))]
fails = []
def want(what, got, exp):
    if got != exp: fails.append("%s: %r, want %r" % (what, got, exp))
# E2M1 RN ties to even: 0.25 -> 0 (0.0), 0.75 -> 2 (1.0), 1.25 -> 2, 2.5 -> 4 (2.0), 5 -> 6 (4.0); -0.75 -> 0xA
for x, c in [(0.25, 0), (0.75, 2), (1.25, 2), (1.75, 4), (2.5, 4), (3.5, 6), (5.0, 6), (-0.75, 10), (7.0, 7), (-0.0, 8)]:
    want("e2m1 rn %g" % x, enc("e2m1.json", x, "rn"), c)
want("e2m1 rz 0.75", enc("e2m1.json", 0.75, "rz"), 1)
want("e2m1 rn nan", enc("e2m1.json", float("nan"), "rn"), 7)
want("e2m1 rn just above 0.25", table("e2m1.json", "encode")["outputs"]["rn"][1], 1)
d = table("e2m1.json", "decode")
want("e2m1 decode 7 = 6.0", d["outputs"]["value_bits"][7], bits(6.0))
want("e2m1 decode 0xF = -6.0", d["outputs"]["value_bits"][15], bits(-6.0))
sr = table("e2m1.json", "encode_sr")
rows = [(x, r, c) for x, r, c in zip(sr["inputs"]["x"], sr["inputs"]["rbits"], sr["outputs"]["code"]) if x == "0.75"]
want("e2m1 sr 0.75 (frac 1/2): rbits 127 -> 1, 128 -> 2", sorted(rows), [("0.75", 0, 1), ("0.75", 127, 1), ("0.75", 128, 2), ("0.75", 255, 2)])
d = table("e4m3.json", "decode")
want("e4m3 0x7E decodes to 448", d["outputs"]["value_bits"][0x7E], bits(448.0))
want("e4m3 0x01 decodes to 2^-9", d["outputs"]["value_bits"][1], bits(2.0 ** -9))
want("e4m3 0x7F is NaN", d["outputs"]["value_bits"][0x7F] & 0x7FFFFFFF > 0x7F800000, True)
want("e4m3 satfinite 464 -> 0x7E", enc("e4m3.json", 464.0, "satfinite"), 0x7E)
want("e4m3 nonsat 464 (a tie to the even 448) -> 0x7E", enc("e4m3.json", 464.0, "nonsat"), 0x7E)
want("e4m3 nonsat just above 464 -> 0x7F", enc("e4m3.json", 464.00003, "nonsat"), 0x7F)
want("e4m3 satfinite -inf -> 0xFE", enc("e4m3.json", float("-inf"), "satfinite"), 0xFE)
want("e4m3 2^-10 (tie) -> 0", enc("e4m3.json", 2.0 ** -10, "satfinite"), 0)
want("ue8m0 floor 1.5 -> 127", enc("ue8m0.json", 1.5, "floor"), 127)
want("ue8m0 rceil 1.5 -> 128", enc("ue8m0.json", 1.5, "rceil"), 128)
want("ue8m0 even 3.0 (tie) -> 128 (even)", enc("ue8m0.json", 3.0, "even"), 128)
want("ue8m0 even 6.0 (tie) -> 130 (even)", enc("ue8m0.json", 6.0, "even"), 130)
want("ue5m3 0xFE decodes to 114688", table("ue5m3.json", "decode")["outputs"]["value_bits"][0xFE], bits(114688.0))
want("ue5m3 satfinite 118784 -> 0xFE", enc("ue5m3.json", 118784.0, "satfinite"), 0xFE)
want("ue5m3 2^-18 (tie) -> 0", enc("ue5m3.json", 2.0 ** -18, "satfinite"), 0)
t = json.load(open(P + "/sr.json"))["tables"][0]
want("sr case 0 shape", (t["name"], t["rows"], t["cols"], len(t["inputs"]["rbits"]), len(t["outputs"]["scale"])),
     ("edge-e2m1-ties", 16, 48, 768, 48))
want("sr case 0 amax 2688", t["outputs"]["amax_bits"], [bits(2688.0)])
idx = json.load(open(P + "/pack.json"))
want("index lists 5 vector files and 10 suites", (len(idx["vectors"]), len(idx["suites"])), (5, 10))
print("\n".join(fails))
sys.exit(1 if fails else 0)
EOF
out=$(python3 values.py P)
check "JSON values are the library's (E2M1 ties, E4M3 448/464, UE8M0, UE5M3, SR)" "[ -z \"\$out\" ]"
[ -n "$out" ] && echo "$out"

# ---- read with json, numpy and ml_dtypes alone, recomputed independently ---------------
python3 "$here/pack_recompute.py" P >rc.txt 2>&1
rc=$?
if [ $rc = 2 ] && grep -q '^skip' rc.txt; then echo "skip the numpy-only reading (no ml_dtypes)"
else
    check "numpy-only reading: every recomputed case agrees (codecs vs ml_dtypes, SR bytes vs Philox, layouts, dequant)" \
        "[ $rc = 0 ] && grep -q '^pack_recompute: 0 failed' rc.txt && [ \$(grep -c '^ok' rc.txt) = 24 ]"
fi

# ---- verifying ---------------------------------------------------------------------
"$NVFP4" verify --suite P --actual-dir P >self.txt 2>&1
check "the pack verifies against itself (exit 0)" "[ $? = 0 ]"
check "  every part matches" "grep -q '^pack: 15 parts match, 0 differ, 0 missing, 0 unreadable' self.txt && grep -q '^verdict: MATCH' self.txt"
"$NVFP4" verify --suite P/MANIFEST --actual-dir P >self2.txt 2>&1
check "  --suite PACK/MANIFEST reads the pack too" "[ $? = 0 ] && cmp -s <(sed 1d self.txt) <(sed 1d self2.txt)"

cp -r P O1
python3 - O1 <<'EOF'
import json, struct, sys
p = sys.argv[1] + "/e2m1.json"
d = json.load(open(p))
t = [t for t in d["tables"] if t["name"] == "encode"][0]
i = t["inputs"]["x_bits"].index(struct.unpack("<I", struct.pack("<f", 0.75))[0])
t["outputs"]["rn"][i] = 3
json.dump(d, open(p, "w"))
EOF
"$NVFP4" verify --suite P --actual-dir O1 >o1.txt 2>&1
check "a planted error in a vector file: exit 1" "[ $? = 1 ]"
check "  the row is named with its input" "grep -q 'e2m1.json encode.rn\\[[0-9]*\\]: expected 2 (0x2), got 3 (0x3); x_bits=1061158912 x=0.75' o1.txt"
check "  the file is counted as differing" "grep -q '^e2m1.json: MISMATCH: 1 of 352 values differ' o1.txt"

# a kernel's rowwise codes for one suite case, one byte flipped (a lone .npy is taken as data)
mkdir -p O2/suite-te-edge-rn-cublas-128x4
cp P/suite-te-edge-rn-cublas-128x4/edge-e2m1-ties/data.npy O2/suite-te-edge-rn-cublas-128x4/edge-e2m1-ties.npy
f=O2/suite-te-edge-rn-cublas-128x4/edge-e2m1-ties.npy
last=$(( $(stat -c %s $f) - 1 ))
printf '\x11' | dd of=$f bs=1 seek=$last conv=notrunc 2>/dev/null
"$NVFP4" verify --suite P --actual-dir O2 >o2.txt 2>&1
check "a planted byte in a kernel's suite output: exit 1" "[ $? = 1 ]"
check "  the case is named" "grep -q 'suite-te-edge-rn-cublas-128x4 edge-e2m1-ties: MISMATCH' o2.txt"
check "  the other parts are missing, not failed" "grep -q '^pack: 0 parts match, 1 differ, 14 missing, 0 unreadable' o2.txt"
"$NVFP4" verify --suite P --actual-dir O2 --require-all >/dev/null 2>&1
check "  --require-all still exits 1" "[ $? = 1 ]"
rm -f $f
cp P/suite-te-edge-rn-cublas-128x4/edge-e2m1-ties/data.npy $f
"$NVFP4" verify --suite P --actual-dir O2 >/dev/null 2>&1
check "the unflipped output matches (exit 0, the rest skipped)" "[ $? = 0 ]"
"$NVFP4" verify --suite P --actual-dir O2 --require-all >/dev/null 2>&1
check "  with --require-all the missing parts fail (exit 1)" "[ $? = 1 ]"

cp -r P A
sed -i '0,/"codec": "e4m3"/s//"codec": "e4m4"/' A/e4m3.json
"$NVFP4" verify --suite A --actual-dir P >a.txt 2>&1
check "an altered pack: exit 2" "[ $? = 2 ]"
check "  the altered file is named" "grep -q \"^e4m3.json: sha256 differs from the pack's MANIFEST\" a.txt"

mkdir O3 && echo '{"tables": [' >O3/e4m3.json
"$NVFP4" verify --suite P --actual-dir O3 >o3.txt 2>&1
check "malformed output JSON: exit 2" "[ $? = 2 ]"
check "  the file and line are named" "grep -q '^e4m3.json: ERROR: O3/e4m3.json: line' o3.txt"
echo '{"tables": [{"name": "decode", "outputs": {"value_bits": [1, 2]}}]}' >O3/e4m3.json
"$NVFP4" verify --suite P --actual-dir O3 >o3.txt 2>&1
check "an output column of the wrong length: exit 2, named" \
    "[ $? = 2 ] && grep -q \"table 'decode' output 'value_bits': wrong length (expected an array of 256 integers)\" o3.txt"
mkdir O4
"$NVFP4" verify --suite P --actual-dir O4 >o4.txt 2>&1
check "an empty OUTS: exit 2, said" "[ $? = 2 ] && grep -q 'O4 holds none of the pack' o4.txt"

# ---- one recipe's pack ----------------------------------------------------------------
"$NVFP4" golden --pack R --recipe mxfp4-floor 2>/dev/null
check "golden --pack --recipe mxfp4-floor exits 0" "[ $? = 0 ]"
check "  its suites are the recipe's: edge RN and SR, shapes in each layout" \
    "[ \"\$(ls -d R/suite-* | tr '\n' ' ')\" = 'R/suite-mxfp4-floor-edge-rn-cublas-128x4 R/suite-mxfp4-floor-edge-sr-cublas-128x4 R/suite-mxfp4-floor-shapes-rn-cublas-128x4 R/suite-mxfp4-floor-shapes-rn-flashinfer-8x4 R/suite-mxfp4-floor-shapes-rn-linear ' ]"
check "  pack.json and the MANIFEST name the command" \
    "grep -q '\"generator\": \"nvfp4 golden --pack --recipe mxfp4-floor\"' R/pack.json && grep -q '^# command: nvfp4 golden --pack --recipe mxfp4-floor\$' R/MANIFEST"
"$NVFP4" verify --suite R --actual-dir R >r.txt 2>&1
check "  it verifies against itself" "[ $? = 0 ] && grep -q '^pack: 10 parts match, 0 differ' r.txt"
"$NVFP4" golden --pack X --recipe nope 2>e.txt
check "  an unknown recipe: exit 2, nothing written" "[ $? = 2 ] && grep -q \"unknown recipe 'nope'\" e.txt && [ ! -e X ]"

# ---- bad use -----------------------------------------------------------------------
"$NVFP4" golden --pack X --round sr 2>e.txt
check "--pack with other options: exit 2" "[ $? = 2 ] && grep -q 'takes only --recipe and --force' e.txt && [ ! -e X ]"
"$NVFP4" verify --suite P --actual-dir P --json 2>e.txt >/dev/null
check "--json on a pack: exit 2, said" "[ $? = 2 ] && grep -q 'is a golden pack: its report is text only' e.txt"
mkdir F && echo keep >F/notes.txt
"$NVFP4" golden --pack F 2>e.txt
check "a foreign folder is refused (exit 2)" "[ $? = 2 ] && grep -q 'not overwriting' e.txt && [ -f F/notes.txt ]"
"$NVFP4" golden --pack F --force 2>/dev/null
check "  --force replaces it" "[ $? = 0 ] && [ ! -e F/notes.txt ] && [ -f F/pack.json ]"
echo x >afile
"$NVFP4" golden --pack afile 2>e.txt
check "a regular file as DIR: exit 2, kept" "[ $? = 2 ] && grep -q 'afile: exists and is not a folder' e.txt && [ \"\$(cat afile)\" = x ]"
"$NVFP4" golden --pack afile/P 2>e.txt
check "a DIR that cannot be made: exit 2, said, nothing left" "[ $? = 2 ] && grep -q 'afile' e.txt && [ -z \"\$(ls -A | grep '^\\.')\" ]"
"$NVFP4" golden --help >h.txt
check "golden --help documents --pack" "grep -q -- '--pack DIR writes a golden pack' h.txt"
"$NVFP4" verify --help >h.txt
check "verify --help documents a pack" "grep -q -- '--suite PACK' h.txt"

exit $fail
