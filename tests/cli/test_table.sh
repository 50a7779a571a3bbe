#!/usr/bin/env bash
# test_table.sh - `nvfp4 table`: code points, bits and values; bad input.
set -u
NVFP4=${NVFP4:?set NVFP4 to the nvfp4 binary}
fails=0
fail() { echo "FAIL test_table: $*"; fails=$((fails + 1)); }
expect_line() { # output, exact line
    grep -qxF -- "$2" <<<"$1" || fail "missing line '$2'"
}

out=$("$NVFP4" table --format e2m1) || fail "table --format e2m1 exited $?"
[ "$(grep -c '^0x' <<<"$out")" = 16 ] || fail "e2m1 table does not have 16 code lines"
expect_line "$out" "0x1   0 00 1  subnormal  0.5"
expect_line "$out" "0x7   0 11 1  max        6"
expect_line "$out" "0x8   1 00 0  zero       -0"
expect_line "$out" "0xB   1 01 1  normal     -1.5"

out=$("$NVFP4" table --format=e4m3) || fail "table --format=e4m3 exited $?"
[ "$(grep -c '^0x' <<<"$out")" = 256 ] || fail "e4m3 table does not have 256 code lines"
expect_line "$out" "0x01  0 0000 001  subnormal  0.001953125"
expect_line "$out" "0x08  0 0001 000  normal     0.015625"
expect_line "$out" "0x38  0 0111 000  normal     1"
expect_line "$out" "0x7E  0 1111 110  max        448"
expect_line "$out" "0x7F  0 1111 111  NaN        NaN"
expect_line "$out" "0xFE  1 1111 110  max        -448"

out=$("$NVFP4" table --format ue8m0) || fail "table --format ue8m0 exited $?"
[ "$(grep -c '^0x' <<<"$out")" = 256 ] || fail "ue8m0 table does not have 256 code lines"
expect_line "$out" "0x7F  01111111  2^0       1"
expect_line "$out" "0x00  00000000  2^-127    5.877472e-39"
expect_line "$out" "0xFE  11111110  2^127     1.7014118e+38"
expect_line "$out" "0xFF  11111111  NaN       NaN"

out=$("$NVFP4" table) || fail "table exited $?"
[ "$(grep -c '^0x' <<<"$out")" = $((16 + 256 + 256)) ] || fail "table without --format does not list all three formats"

"$NVFP4" table --help | grep -q 'usage: nvfp4 table' || fail "--help has no usage line"

err=$("$NVFP4" table --format e5m2 2>&1 >/dev/null); rc=$?
[ $rc = 2 ] || fail "unknown format: exit $rc, want 2"
grep -q "unknown format 'e5m2'" <<<"$err" || fail "unknown format message: $err"
err=$("$NVFP4" table --format 2>&1 >/dev/null); rc=$?
[ $rc = 2 ] || fail "--format without value: exit $rc, want 2"
grep -q "needs a value" <<<"$err" || fail "missing value message: $err"
err=$("$NVFP4" table extra 2>&1 >/dev/null); rc=$?
[ $rc = 2 ] || fail "extra argument: exit $rc, want 2"
grep -q "unexpected argument 'extra'" <<<"$err" || fail "extra argument message: $err"

out=$("$NVFP4" table --recipes) || fail "table --recipes failed"
for r in te te-pyref torchao torchao-0.13-0.16 modelopt exact mxfp4-floor mxfp4-rceil mxfp8; do
    grep -q "^$r " <<<"$out" || fail "table --recipes does not list $r"
done
grep -qE '^mxfp8 +e4m3  ue8m0  1x32   no    no' <<<"$out" || fail "mxfp8 row: $(grep '^mxfp8' <<<"$out")"
for r in torchao-1level mxfp4-ceil mxfp4-even mxfp8-floor ggml; do
    grep -q "^$r " <<<"$out" || fail "table --recipes does not list $r"
done
grep -qE '^ggml +e2m1  e4m3   1x16   no    no' <<<"$out" || fail "ggml row: $(grep '^ggml' <<<"$out")"

[ $fails = 0 ]
