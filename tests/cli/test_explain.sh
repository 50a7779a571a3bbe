#!/usr/bin/env bash
# test_explain.sh - `nvfp4 explain`: fields, neighbours, chosen code, rule,
# SR odds; bad input gives exit 2 with a message naming the problem.
set -u
NVFP4=${NVFP4:?set NVFP4 to the nvfp4 binary}
fails=0
fail() { echo "FAIL test_explain: $*"; fails=$((fails + 1)); }
expect() { # args..., then the expected line as last argument
    local want="${!#}" out
    out=$("$NVFP4" explain "${@:1:$#-1}") || fail "explain ${*:1:$#-1} exited $?"
    grep -qF -- "$want" <<<"$out" || fail "explain ${*:1:$#-1}: missing '$want'"
}
expect_error() { # message fragment, args...
    local want="$1" err rc
    shift
    err=$("$NVFP4" explain "$@" 2>&1 >/dev/null); rc=$?
    [ $rc = 2 ] || fail "explain $*: exit $rc, want 2"
    grep -qF -- "$want" <<<"$err" || fail "explain $*: message '$err' lacks '$want'"
}

# fp32 fields
expect 1.75 "fp32 bits   0x3FE00000: sign 0, exponent 0x7F (2^0), mantissa 0x600000"
expect 0x00000001 "exponent 0x00 (subnormal, 2^-126 scale), mantissa 0x000001"
expect -- -nan "(NaN payload, quiet)"
# E2M1 RN: ties to even, nearest, sign of zero, saturation, NaN policy
expect 1.75 "neighbours  1.5 (0x3) and 2 (0x4); |x| is 0.5 of the way from 1.5 to 2"
expect 1.75 "result      0x4 = 2"
expect 1.75 "RN picks the code"
expect 1.25 "result      0x2 = 1"
expect 1.3 "why         nearest: |x| is closer to 1.5 than to 1"
expect -- -0.1 "result      0x8 = -0"
expect -- -0.1 "keeps the sign of x: 0x8 = -0"
expect 7 "why         saturation: |x| > 6 gives 6"
expect -- -inf "result      0xF = -6"
expect nan "result      0x7 = 6"
expect nan "for every NaN"
expect 6 "why         exact: |x| = 6 is the largest E2M1 value"
# E2M1 RZ
expect --round rz -- -1.75 "result      0xB = -1.5"
expect --round rz -- -1.75 "why         toward zero"
# E2M1 SR: 0.3 is 0.600000024 of the way from 0 to 0.5: floor(256*0.6000..) = 153
expect 0.3 --round sr "result      0x0 = 0 for r in [0, 102], 0x1 = 0.5 for r in [103, 255]"
expect 0.3 --round sr "probability P(away from zero) = 153/256 = 0.59765625"
expect 1.75 --round sr "result      0x3 = 1.5 for r in [0, 127], 0x4 = 2 for r in [128, 255]"
expect 0x3b000000 --round=sr "result      0x0 = 0 for r in [0, 254], 0x1 = 0.5 for r in [255, 255]"
# E4M3
expect 464 --format e4m3 "result      0x7E = 448"
expect 464 --format e4m3 "why         tie: 464 is halfway between 448 and 480"
expect 465 --format e4m3 "why         saturation: |x| > 464 clamps to +-448"
expect 465 --format e4m3 --nosat "result      0x7F = NaN"
expect -inf --format e4m3 "result      0xFE = -448"
expect 0x3a800000 --format e4m3 "2^-10 itself is a tie, going to the even 0"
expect 1.0625 --format e4m3 "neighbours  1 (0x38) and 1.125 (0x39)"
expect 1.0625 --format e4m3 "result      0x38 = 1"
expect --format e4m3 -0.0068359375 "result      0x84 = -0.0078125"
expect nan --format e4m3 "result      0x7F = NaN"
# UE8M0
expect 3 --format ue8m0 "result      0x80 = 2^1 (mode floor)"
expect 3 --format ue8m0 --mode rceil "result      0x81 = 2^2 (mode rceil)"
expect 1.5 --format ue8m0 --mode even "result      0x80 = 2^1 (mode even)"
expect 0 --format ue8m0 "every mode gives 0x00 = 2^-127"
expect inf --format ue8m0 "result      0xFE = 2^127 (mode floor)"
expect nan --format ue8m0 "result      0xFF = NaN (mode floor)"
# help and errors
"$NVFP4" explain --help | grep -qF 'usage: nvfp4 explain [--] VALUE' || fail "--help has no usage line"
expect_error "missing VALUE"
expect_error "cannot read 'abc' as an fp32 value" abc
expect_error "cannot read '0x3f80zz' as an fp32 value" 0x3f80zz
expect_error "cannot read '0x3f80000' as an fp32 value" 0x3f80000
expect 0x1.8p1 "fp32 value  3 (exactly 0x1.8p+1)"
expect -1.5 "result      0xB = -1.5"
expect_error "only one VALUE" 1 2
expect_error "unknown option '--bogus'" 1 --bogus
expect_error "unknown format 'e3m2'" 1 --format e3m2
expect_error "unknown rounding 'rd'" 1 --round rd
expect_error "e4m3 is converted with rn only" 1 --format e4m3 --round sr
expect_error "--round does not apply to ue8m0" 1 --format ue8m0 --round rn
expect_error "--nosat applies to e4m3 only" 1 --nosat
expect_error "--mode applies to ue8m0 only" 1 --mode floor
expect_error "unknown ue8m0 mode 'up'" 1 --format ue8m0 --mode up
expect_error "--format needs a value" 1 --format

[ $fails = 0 ]
