#!/usr/bin/env bash
# test_demo.sh - `nvfp4 demo`: the built-in block through recipe te, step
# values and per-element codes, SR variant, bad options.
set -u
NVFP4=${NVFP4:?set NVFP4 to the nvfp4 binary}
fails=0
fail() { echo "FAIL test_demo: $*"; fails=$((fails + 1)); }
has() { grep -qF -- "$2" <<<"$1" || fail "missing '$2'"; }

out=$("$NVFP4" demo) || fail "demo exited $?"
has "$out" "amax  = max |x| = 12"
has "$out" "S_enc = fminf(2688/amax, FLT_MAX) = 224"
has "$out" "= 0x7E = 448"
has "$out" "inv   = fminf(1/(s * S_dec), FLT_MAX) = 0.5"
has "$out" "packed codes (element 2j in the low nibble of byte j): 91 24 78 B0 62 48 D2 31"
# element rows: index, x, y, code, fp4, dequant
check_row() {
    local got
    got=$(awk -v i="$1" '$1 == i && $4 ~ /^0x/ {print $2, $3, $4, $5, $6}' <<<"$out")
    [ "$got" = "$2" ] || fail "element $1: got '$got', want '$2'"
}
check_row 2 "5 2.5 0x4 2 4"          # tie 2.5 -> even 2
check_row 4 "-0 -0 0x8 -0 -0"        # negative zero kept
check_row 5 "12 6 0x7 6 12"          # the outlier sets amax
check_row 8 "1.5 0.75 0x2 1 2"       # tie 0.75 -> even 1
check_row 9 "7 3.5 0x6 4 8"          # tie 3.5 -> even 4
check_row 10 "-0.3 -0.15 0x8 -0 -0"  # small negative -> -0
has "$out" "tie between 2 and 3: goes to the even code"
has "$out" "negative zero keeps its sign: 0x8"
has "$out" "error: max |dequant - x| = 1,"

# SR with the default seed 0, offset 0: element i uses byte i of the
# Random123 zero-key KAT (d5 e8 27 66 ...). Element 2 (y = 2.5, up iff
# r >= 128) has r = 0x27 = 39: down to 2; element 1 (y = -0.65, up iff r >=
# 180) has r = 0xe8 = 232: up to -1.
out=$("$NVFP4" demo --round sr) || fail "demo --round sr exited $?"
has "$out" "rounding sr, seed 0, offset 0"
out_rows() { awk -v i="$1" '$1 == i && $4 ~ /^0x/ {print $4}' <<<"$out"; }
[ "$(out_rows 2)" = 0x4 ] || fail "sr element 2: got $(out_rows 2), want 0x4"
[ "$(out_rows 1)" = 0xA ] || fail "sr element 1: got $(out_rows 1), want 0xA"
has "$out" "r=232: P(|y| -> 1) = 76/256, iff r >= 180"
a=$("$NVFP4" demo --round sr --seed 9 --offset 1); b=$("$NVFP4" demo --round=sr --seed=9 --offset=1)
[ "$a" = "$b" ] || fail "sr demo not reproducible"

"$NVFP4" demo --help | grep -q 'usage: nvfp4 demo' || fail "--help has no usage line"
expect_error() {
    local want="$1" err rc
    shift
    err=$("$NVFP4" demo "$@" 2>&1 >/dev/null); rc=$?
    [ $rc = 2 ] || fail "demo $*: exit $rc, want 2"
    grep -qF -- "$want" <<<"$err" || fail "demo $*: message '$err' lacks '$want'"
}
expect_error "unexpected argument '--bogus'" --bogus
expect_error "unknown rounding 'rz'" --round rz
expect_error "--seed and --offset apply only with --round sr" --seed 4
expect_error "--seed 'x' is not an unsigned 64-bit integer" --round sr --seed x
expect_error "--round needs a value" --round

[ $fails = 0 ]
