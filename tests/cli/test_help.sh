#!/usr/bin/env bash
# test_help.sh - the CLI helps people who mistype: `nvfp4 help CMD` is
# `nvfp4 CMD --help`; "did you mean" for commands, options, recipe and study
# names; case-insensitive names; `cvt --from` decodes; study run names the
# files it wrote; a MANIFEST or .npy given as a bundle is recognised.
set -u
NVFP4=${NVFP4:?set NVFP4 to the nvfp4 binary}
fails=0
fail() { echo "FAIL test_help: $*"; fails=$((fails + 1)); }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# runs nvfp4 ARGS; wants exit RC and stderr containing TEXT
expect_err() { # rc, text, args...
    local rc="$1" want="$2" got err
    shift 2
    err=$("$NVFP4" "$@" 2>&1 >/dev/null); got=$?
    [ "$got" = "$rc" ] || fail "nvfp4 $*: exit $got, want $rc"
    grep -qF -- "$want" <<<"$err" || fail "nvfp4 $*: stderr lacks '$want': $err"
}

# help CMD = CMD --help, for every command
for c in $("$NVFP4" help | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 && $1 != "commands:" {print $1}'); do
    a=$("$NVFP4" help "$c") || fail "help $c: exit $?"
    b=$("$NVFP4" "$c" --help) || fail "$c --help: exit $?"
    [ -n "$a" ] && [ "$a" = "$b" ] || fail "nvfp4 help $c differs from nvfp4 $c --help"
    n=$((${n:-0} + 1))
done
[ "${n:-0}" -ge 15 ] || fail "only ${n:-0} commands listed by nvfp4 help"
"$NVFP4" help verify | head -n 1 | grep -q '^usage: nvfp4 verify' || fail "help verify is not verify's help"
expect_err 2 "did you mean 'nvfp4 verify'?" help verfy
expect_err 2 "expected one command name" help verify table

# commands
expect_err 2 "did you mean 'nvfp4 verify'?" verfy
expect_err 2 "did you mean 'nvfp4 explain'?" explian 1.5
expect_err 2 "did you mean 'nvfp4 table'?" tabel
expect_err 2 "unknown command 'zzzzzz'" zzzzzz
"$NVFP4" TABLE --format e2m1 | grep -q '^0x7 ' || fail "TABLE (case-insensitive) does not run table"
[ "$("$NVFP4" table --format E4M3)" = "$("$NVFP4" table --format e4m3)" ] || fail "--format E4M3 is not e4m3"
[ "$("$NVFP4" explain 1.8 --round=SR)" = "$("$NVFP4" explain 1.8 --round sr)" ] || fail "--round=SR is not sr"

# options, read from each command's --help
expect_err 2 "did you mean '--columnwise' (not '--colwise')?" quantize "$T/none.npy" -o "$T/q.safetensors" --colwise
expect_err 2 "did you mean '--format' (not '--fromat')?" table --fromat e4m3
expect_err 2 "did you mean '--expected' (not '--expcted')?" verify --expcted a --actual b
# a correct option gets no suggestion
err=$("$NVFP4" table --format e9m9 2>&1 >/dev/null)
grep -q "did you mean '--" <<<"$err" && fail "table --format e9m9 suggests an option: $err"

# recipe names: a suggestion, and case-insensitive where unambiguous
python3 -c 'import numpy' 2>/dev/null && have_numpy=1 || have_numpy=0
printf '%s\n' 0.5 1 1.5 2 3 4 6 -0.5 -1 -2 -3 -6 0 0.25 5 2.5 > "$T/x.txt"
expect_err 2 "did you mean --recipe te (not 'tee')?" quantize "$T/x.txt" -o "$T/q.safetensors" --recipe tee
expect_err 2 "did you mean --recipe torchao (not 'torchoa')?" quantize "$T/x.txt" -o "$T/q.safetensors" --recipe=torchoa
if [ $have_numpy = 1 ]; then
    python3 -c "import numpy as np; np.save('$T/x.npy', np.linspace(-6, 6, 32, dtype=np.float32).reshape(2, 16))"
    "$NVFP4" quantize "$T/x.npy" -o "$T/te.safetensors" --recipe te >/dev/null || fail "quantize --recipe te"
    "$NVFP4" quantize "$T/x.npy" -o "$T/TE.safetensors" --recipe TE >/dev/null || fail "quantize --recipe TE"
    cmp -s "$T/te.safetensors" "$T/TE.safetensors" || fail "--recipe TE differs from --recipe te"
    # a .npy or a MANIFEST where a bundle is expected
    expect_err 2 "is a .npy array, not a golden bundle" verify --expected "$T/x.npy" --actual "$T/te.safetensors"
    "$NVFP4" golden --suite edge --recipe te --out "$T/g" >/dev/null 2>&1 || fail "golden --suite edge"
    expect_err 2 "is a golden MANIFEST" verify --expected "$T/g/MANIFEST" --actual "$T/te.safetensors"
    expect_err 2 "is a golden MANIFEST" verify --expected="$T/g/MANIFEST" --actual "$T/te.safetensors"
else
    echo "test_help: numpy not found, skipping the recipe-case and bundle-kind checks"
fi

# study names and subcommands
expect_err 2 "did you mean 'nvfp4 study run s0'?" study run s00
expect_err 2 "did you mean 'nvfp4 study run'?" study rn s0
out=$("$NVFP4" study run S0 --steps 2 --seeds 1 --quiet --out "$T/s0") || fail "study run S0: exit $?"
grep -q "^s0: results in $T/s0 (" <<<"$out" || fail "study run S0: $out"
# the message counts what is in the folder (s0 writes no runs.csv)
ncsv=$(ls "$T/s0" | grep -c '\.csv$'); npng=$(ls "$T/s0" | grep -c '\.png$')
grep -q "runs.csv" <<<"$out" && fail "study run s0 names runs.csv: $out"
grep -q "summary.json, $ncsv CSV files" <<<"$out" || fail "study run s0 does not say it wrote $ncsv CSV files: $out"
if command -v gnuplot >/dev/null 2>&1; then
    grep -q "$npng PNG plots)" <<<"$out" || fail "study run s0 does not say it drew $npng plots: $out"
fi

# cvt --from decodes codes (hand-checked values)
got=$(printf '0x0\n0x1\n5\n0x7\n0x8\n0xF\n' | "$NVFP4" cvt --from e2m1 | tr '\n' ' ')
[ "$got" = "0 0.5 3 6 -0 -6 " ] || fail "cvt --from e2m1: $got"
got=$(printf '0x01\n0x08\n0x7E\nFE\n0x7F\n0x38\n' | "$NVFP4" cvt --from e4m3 | tr '\n' ' ')
[ "$got" = "0.001953125 0.015625 448 -448 nan 1 " ] || fail "cvt --from e4m3: $got"
got=$(printf '0x7F\n0x80\n0x76\n0xFF\n' | "$NVFP4" cvt --from ue8m0 | tr '\n' ' ')
[ "$got" = "1 2 0.001953125 nan " ] || fail "cvt --from ue8m0: $got"
got=$(printf '0x3F80\n0xC040\n0x7F80\n0x3DCD\n' | "$NVFP4" cvt --from=bf16 | tr '\n' ' ')
[ "$got" = "1 -3 inf 0.100097656 " ] || fail "cvt --from bf16: $got"
# encode then decode is the identity on the E4M3 grid
got=$(printf '0.001953125\n240\n448\n-0.0078125\n' | "$NVFP4" cvt --to e4m3 | "$NVFP4" cvt --from e4m3 | tr '\n' ' ')
[ "$got" = "0.001953125 240 448 -0.0078125 " ] || fail "cvt --to e4m3 | cvt --from e4m3: $got"
printf '0x10\n' | "$NVFP4" cvt --from e2m1 >/dev/null 2>"$T/err"; rc=$?
[ $rc = 2 ] && grep -q "line 1: '0x10' is not a code of e2m1" "$T/err" || fail "cvt --from e2m1 0x10: exit $rc, $(cat "$T/err")"
expect_err 2 "unknown format 'e3m3'" cvt --from e3m3
expect_err 2 "takes no other option" cvt --from e2m1 --round sr

[ $fails = 0 ] && echo "test_help: ok"
exit $((fails > 0))
