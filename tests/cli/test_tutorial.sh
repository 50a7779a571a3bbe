#!/usr/bin/env bash
# test_tutorial.sh - docs/tutorial.md cannot rot: every ```sh block in it is
# run, in order, in one shell (set -e) in a scratch folder with nvfp4 on the
# PATH; a failing command fails the test and names its block. Skipped where
# the README's setup is incomplete (numpy or gnuplot missing).
set -u
NVFP4=${NVFP4:?set NVFP4 to the nvfp4 binary}
here=$(cd "$(dirname "$0")/../.." && pwd)
doc="$here/docs/tutorial.md"
fails=0
fail() { echo "FAIL test_tutorial: $*"; fails=$((fails + 1)); }
for need in "python3 -c 'import numpy'" "command -v gnuplot" "command -v sha256sum"; do
    if ! eval "$need" >/dev/null 2>&1; then
        echo "test_tutorial: skipped ($need failed; the README's setup installs it)"
        exit 0
    fi
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir "$T/bin"
ln -s "$NVFP4" "$T/bin/nvfp4"

# the blocks, each preceded by a line that says which one it is
awk -v q='```' '
    $0 == q "sh" { inside = 1; n++; printf "echo \"== block %d (line %d)\" >> \"$TUTORIAL_LOG\"\n", n, NR; next }
    inside && $0 == q { inside = 0; next }
    inside { print }
' "$doc" > "$T/tutorial.sh"
blocks=$(grep -c '^== block\|^echo "== block' "$T/tutorial.sh")
[ "$blocks" -ge 10 ] || fail "only $blocks sh blocks found in docs/tutorial.md"
# every command the tutorial runs is an nvfp4 command or a plain tool
grep -qE '^nvfp4 explain-block .*--rht' "$T/tutorial.sh" || fail "the tutorial does not show --rht"

(
    cd "$T" && mkdir work && cd work &&
    PATH="$T/bin:$PATH" TUTORIAL_LOG="$T/log" bash -e "$T/tutorial.sh" > "$T/out" 2> "$T/err"
) || fail "the tutorial stops in $(tail -n 1 "$T/log"): $(tail -n 5 "$T/err")"

# what the tutorial promises about its own outputs
w="$T/work/nvfp4-tutorial"
for f in e2m1-grid.png e4m3-grid.png block.png rht.png explain-sr.png x.npy golden.safetensors kernel.safetensors \
    goldens/MANIFEST s0/summary.json; do
    [ -s "$w/$f" ] || fail "the tutorial did not make $f"
done
grep -qx '2' "$T/out" || fail "the RN average of 1.8 is not printed as 2"
sr=$(grep -E '^1\.7[0-9]*$|^1\.8[0-9]*$' "$T/out" | head -n 1)
[ -n "$sr" ] || fail "no SR average near 1.8 in the output"
# section 3: the 16x16 tile is shown on a row without the outlier, where it changes the scale
grep -q '^tensor 64 x 128; block 2 of row 0 covers columns 32..47 of the 16-row tile$' "$T/out" ||
    fail "the 16x16 example is not row 0, block 2"
tile_amax=$(awk '/^tensor 64 x 128; block 2 of row 0 .*16-row tile$/ { t = 1 } t && /^block amax/ { print $3; exit }' "$T/out")
[ "$tile_amax" = 30 ] || fail "row 0's 16x16 tile has block amax '$tile_amax', not the outlier's 30"
grep -q -- '--tile 16x16' "$T/tutorial.sh" && ! grep -q -- '--row 3 .*--tile' "$T/tutorial.sh" ||
    fail "the 16x16 example is on row 3, which holds the outlier either way"
grep -q 'verify: exit 1 (mismatch)' "$T/out" || fail "verify of the SR kernel did not exit 1"
grep -q 'identified: the kernel implements te sr 1x16' "$T/out" || fail "identify did not find te sr"
# every picture the page embeds exists in docs/img
for img in $(grep -oE '\(img/[a-z0-9-]+\.png\)' "$doc" | tr -d '()'); do
    [ -s "$here/docs/$img" ] || fail "docs/tutorial.md embeds $img, which is missing"
done

[ $fails = 0 ] && echo "test_tutorial: ok ($blocks blocks)"
exit $((fails > 0))
