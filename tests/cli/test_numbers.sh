#!/usr/bin/env bash
# test_numbers.sh - numbers print as people write them: no subcommand that
# shows fp32 values (table, explain, explain-block, demo, cvt --from) prints
# one between 1e-5 and 1e6 in scientific notation, and known values print
# as their shortest round-trip decimal (240, 0.0078125, 448).
set -u
NVFP4=${NVFP4:?set NVFP4 to the nvfp4 binary}
fails=0
fail() { echo "FAIL test_numbers: $*"; fails=$((fails + 1)); }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# Every token in scientific notation in file $2 must lie outside [1e-5, 1e6).
no_sci_in_range() { # name, file
    local bad
    [ -s "$2" ] || { fail "$1: no output"; return; }
    bad=$(grep -oE '[-+]?[0-9]+(\.[0-9]+)?e[-+][0-9]+' "$2" |
          awk '{ v = $1 + 0; if (v < 0) v = -v; if (v >= 1e-5 && v < 1e6) print $1 }' | sort -u | head -n 5)
    [ -z "$bad" ] || fail "$1 prints in scientific notation: $(tr '\n' ' ' <<<"$bad")"
}

for f in e2m1 e4m3 ue8m0; do
    "$NVFP4" table --format $f > "$T/table-$f" || fail "table --format $f: exit $?"
    no_sci_in_range "table --format $f" "$T/table-$f"
done
grep -qE '^0x77 .* 240$' "$T/table-e4m3" || fail "table e4m3: 0x77 is not printed as 240"
grep -qE '^0x7E .* 448$' "$T/table-e4m3" || fail "table e4m3: 0x7E is not printed as 448"
grep -qE '^0x04 .* 0.0078125$' "$T/table-e4m3" || fail "table e4m3: 0x04 is not printed as 0.0078125"
grep -qE '^0x6F .* 0.000015258789$' "$T/table-ue8m0" || fail "table ue8m0: 2^-16 is not 0.000015258789"
grep -qE '^0x93 .* 1048576$' "$T/table-ue8m0" && fail "table ue8m0: 2^20 >= 1e6 should use an exponent"

values="0 -0 0.1 0.25 0.3 1.25 1.75 2.5 5 7 -3.3 300 320 447 464 500 0.00002 0.0001 0.001 0.0009765625 123456 999999 0.00003 100000"
: > "$T/explain"
for v in $values; do
    for f in e2m1 e4m3 ue8m0; do "$NVFP4" explain --format $f -- "$v" >> "$T/explain" || fail "explain $v --format $f"; done
    "$NVFP4" explain --round sr -- "$v" >> "$T/explain" || fail "explain $v --round sr"
done
no_sci_in_range "explain" "$T/explain"
"$NVFP4" explain 300 --format e4m3 | grep -qx 'fp32 value  300 (exactly 0x1.2cp+8)' || fail "explain 300: fp32 value not 300"
"$NVFP4" explain 300 --format e4m3 | grep -q 'neighbours  288 (0x79) and 320 (0x7A)' || fail "explain 300: neighbours not 288 and 320"

for r in rn sr; do
    "$NVFP4" demo --round $r > "$T/demo-$r" || fail "demo --round $r"
    no_sci_in_range "demo --round $r" "$T/demo-$r"
done

# a block of small and large values through explain-block (raw fp32 input)
python3 - "$T/x.f32" <<'PY' || fail "writing the explain-block input"
import struct, sys
v = [0.00002, -0.00003, 0.0001, 0.001, 0.01, 0.1, 1, 10, 100, 1000, 10000, 100000, 250000, -500000, 3.14159, 0]
v += [x * 1e-3 for x in v]
open(sys.argv[1], "wb").write(struct.pack("<32f", *v))
PY
for b in 0 1; do
    for r in "--round rn" "--round sr --seed 3"; do
        "$NVFP4" explain-block --input "$T/x.f32" --shape 1x32 --dtype f32 --row 0 --block $b $r >> "$T/block" ||
            fail "explain-block --block $b $r"
    done
done
no_sci_in_range "explain-block" "$T/block"

seq 0 255 | awk '{ printf "0x%02X\n", $1 }' | "$NVFP4" cvt --from e4m3 > "$T/cvt" || fail "cvt --from e4m3"
no_sci_in_range "cvt --from e4m3" "$T/cvt"
[ "$(sed -n 120p "$T/cvt")" = 240 ] || fail "cvt --from e4m3: 0x77 is $(sed -n 120p "$T/cvt")"

[ $fails = 0 ] && echo "test_numbers: ok"
exit $((fails > 0))
