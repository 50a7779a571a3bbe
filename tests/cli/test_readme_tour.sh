#!/usr/bin/env bash
# test_readme_tour.sh - README.md's "A short tour" cannot rot: its ```sh block
# is run as written, in one shell (set -e), in an empty scratch folder with
# nvfp4 on the PATH, as the README tells a new user to; a failing command
# fails the test and the output of each step is checked. Skipped where the
# README's setup is incomplete (numpy missing), as test_tutorial.sh is.
set -u
NVFP4=${NVFP4:?set NVFP4 to the nvfp4 binary}
here=$(cd "$(dirname "$0")/../.." && pwd)
doc="$here/README.md"
fails=0
fail() { echo "FAIL test_readme_tour: $*"; fails=$((fails + 1)); }
if ! python3 -c 'import numpy' >/dev/null 2>&1; then
    echo "test_readme_tour: skipped (python3 with numpy not found; the README's setup installs it)"
    exit 0
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir "$T/bin" "$T/work"
ln -s "$NVFP4" "$T/bin/nvfp4"

# the first ```sh block after the "## A short tour" heading
awk -v q='```' '
    /^## A short tour$/ { tour = 1; next }
    tour && /^## / { exit }
    tour && $0 == q "sh" { inside = 1; next }
    inside && $0 == q { exit }
    inside { print }
' "$doc" > "$T/tour.sh"
n=$(grep -c '^nvfp4 \|; nvfp4 \|&& nvfp4 \|| nvfp4 ' "$T/tour.sh")
[ "$n" -ge 14 ] || fail "only $n nvfp4 commands found in README.md's tour"
for cmd in table explain cvt quantize golden verify identify sr-test gemm gemm-check explain-block study bench; do
    grep -qE "(^|[;&|] *)nvfp4 $cmd( |$)" "$T/tour.sh" || fail "the tour no longer shows nvfp4 $cmd"
done

(cd "$T/work" && PATH="$T/bin:$PATH" bash -e -x "$T/tour.sh" > "$T/out" 2> "$T/err") ||
    fail "the tour stops at: $(grep '^+ ' "$T/err" | tail -n 1); $(grep -v '^+' "$T/err" | tail -n 3)"

# what the tour promises about its outputs
w="$T/work"
for f in x.npy w.npy golden.safetensors kernel_out.safetensors goldens/MANIFEST s0.safetensors s31.safetensors \
    d.npy out/s0/summary.json; do
    [ -s "$w/$f" ] || fail "the tour did not make $f"
done
grep -q '^verify: exit 1$' "$T/out" || fail "verify of the SR stand-in did not exit 1 (mismatch)"
grep -q 'identified: the kernel implements te sr 1x16' "$T/out" || fail "identify did not find te sr 1x16"
grep -q '^verdict: PASS$' "$T/out" || fail "sr-test of 32 seeded SR outputs did not pass"
grep -q '^verdict: WITHIN BOUND$' "$T/out" || fail "gemm-check of nvfp4 gemm's own D is not within the bound"
grep -q "^0x4$" "$T/out" || fail "cvt did not print 0x4 for 2.5 (a tie, to the even code)"

[ $fails = 0 ] && echo "test_readme_tour: ok ($n nvfp4 commands)"
exit $((fails > 0))
