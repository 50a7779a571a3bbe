#!/usr/bin/env bash
# test_robust_writers.sh - writers never replace a special file (issue 31):
# every output the CLI writes (quantize -o, dequantize -o, ggml-unpack -o,
# --ggml-out, verify --junit, golden --out, --plot) refuses a FIFO, a device
# node and a symbolic link to one, within seconds and with exit 2, and leaves
# it as it was; quantize's -o and --ggml-out are written together or not at
# all and never name the same file.
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
    timeout 10 "$@" 2>err.txt >/dev/null; local rc=$?
    if [ $rc -eq 2 ] && grep -qF -- "$needle" err.txt; then ok "refuses: $needle"
    else bad "expected exit 2 and '$needle', got rc=$rc: $(cat err.txt)"; fi
}
is_fifo() { [ -p "$1" ] && [ ! -L "$1" ] && ok "$1 is still a FIFO" || bad "$1 was replaced: $(ls -l "$1")"; }
is_link() { [ -L "$1" ] && [ "$(readlink "$1")" = "$2" ] && ok "$1 is still a link to $2" || bad "$1 was replaced: $(ls -l "$1")"; }
python3 -c 'import numpy as np; np.save("x.npy", np.random.default_rng(1).standard_normal((4, 64)).astype(np.float32))'
$NVFP4 quantize x.npy --recipe ggml -o b.safetensors --ggml-out b.ggml 2>err.txt || bad "setup: $(cat err.txt)"
$NVFP4 golden --suite edge --recipe te --out g 2>/dev/null || bad "setup: golden"
mkdir outs && cp g/*.safetensors outs/
ln -s /dev/null null.safetensors
ln -s /dev/null null.out

# ---- 1. a FIFO and a link to /dev/null, for each writer -----------------------------
# "LABEL|COMMAND": @ is the destination, a file (.safetensors: the name is kept
# for every writer) or, for the folder writers, a folder (.out)
writers=(
    "file|quantize x.npy -o @"
    "file|quantize x.npy --recipe ggml -o ok1.safetensors --ggml-out @"
    "file|dequantize b.safetensors -o @"
    "file|ggml-unpack b.ggml --shape 4x64 -o @"
    "file|verify --suite g --actual-dir outs --junit @"
    "folder|quantize x.npy --format npy -o @"
    "folder|ggml-unpack b.ggml --shape 4x64 --format bin -o @"
    "folder|golden --suite edge --recipe te --out @"
)
for w in "${writers[@]}"; do
    kind=${w%%|*}; cmd=${w#*|}
    if [ "$kind" = file ]; then f=fifo.safetensors l=null.safetensors; else f=fifo.out l=null.out; fi
    rm -f $f && mkfifo $f
    if [ "$kind" = file ]; then needle="$f: is a FIFO, not a regular file"; else needle="$f: is a FIFO, not a folder"; fi
    [ "$cmd" != "${cmd#golden}" ] && needle="$f: exists and is not a folder"
    expect_fail "$needle" $NVFP4 ${cmd/@/$f}
    is_fifo $f
    needle="$l: is a symbolic link to a character device"
    [ "$cmd" != "${cmd#golden}" ] && needle="$l: exists and is not a folder"
    expect_fail "$needle" $NVFP4 ${cmd/@/$l}
    is_link $l /dev/null
done
[ -e ok1.safetensors ] && bad "quantize wrote -o although --ggml-out was refused" || ok "no -o bundle beside a refused --ggml-out"
if command -v gnuplot >/dev/null; then
    rm -f fifo.png && mkfifo fifo.png && ln -s /dev/null null.png
    expect_fail "fifo.png: is a FIFO" $NVFP4 table --format e2m1 --plot fifo.png
    is_fifo fifo.png
    expect_fail "null.png: is a symbolic link to a character device" $NVFP4 table --format e2m1 --plot null.png
    is_link null.png /dev/null
else
    echo "skip --plot: no gnuplot"
fi
[ -c /dev/null ] && ok "/dev/null is still a character device" || bad "/dev/null is no longer a character device"
# a folder where a file goes: refused by name, the folder kept
mkdir dir.safetensors
expect_fail "dir.safetensors: is a directory, not a regular file" $NVFP4 quantize x.npy -o dir.safetensors
[ -d dir.safetensors ] || bad "the folder was replaced"
# a link to a regular file is replaced by the new file, the file it named is untouched
cp b.safetensors keep.safetensors && ln -s keep.safetensors link.safetensors
before=$(sha256sum < keep.safetensors)
$NVFP4 quantize x.npy --recipe te -o link.safetensors 2>err.txt || bad "link to a regular file: $(cat err.txt)"
[ -f link.safetensors ] && [ ! -L link.safetensors ] && [ "$(sha256sum < keep.safetensors)" = "$before" ] \
    && ok "a link to a regular file is replaced, its target untouched" || bad "link to a regular file"

# ---- 2. a device node (mknod needs root) ------------------------------------------------
if [ "$(id -u)" = 0 ] && mknod nulldev.npy c 1 3 2>/dev/null && mknod nulldev.safetensors c 1 3 2>/dev/null; then
    expect_fail "nulldev.safetensors: is a character device, not a regular file" $NVFP4 quantize x.npy -o nulldev.safetensors
    expect_fail "nulldev.npy: is a character device, not a regular file" $NVFP4 dequantize b.safetensors -o nulldev.npy
    expect_fail "nulldev.npy: is a character device" $NVFP4 verify --suite g --actual-dir outs --junit nulldev.npy
    ln -s nulldev.npy devlink.npy
    expect_fail "devlink.npy: is a symbolic link to a character device" $NVFP4 dequantize b.safetensors -o devlink.npy
    [ -c nulldev.npy ] && [ -c nulldev.safetensors ] && [ ! -L nulldev.npy ] && ok "the device nodes are still device nodes" \
        || bad "a device node was replaced"
else
    echo "skip device node: not root, or mknod refused"
fi

# ---- 3. quantize -o with --ggml-out: together or not at all ------------------------------
gq="$NVFP4 quantize x.npy --recipe ggml"
expect_fail "name the same file" $gq -o same.bin --ggml-out same.bin --format bin
[ -e same.bin ] && bad "same path: something was written" || ok "same path: nothing written"
mkdir sub
expect_fail "name the same file" $gq -o sub/../same.safetensors --ggml-out ./same.safetensors
cp b.safetensors old.safetensors
before=$(sha256sum < old.safetensors)
expect_fail "name the same file" $gq -o old.safetensors --ggml-out "$tmp/old.safetensors"
[ "$(sha256sum < old.safetensors)" = "$before" ] && ok "same path: the old bundle is untouched" \
    || bad "same path: the old bundle changed"
$gq -o bdir 2>/dev/null || bad "setup: folder bundle"
expect_fail "is inside the bundle folder" $gq -o bdir --ggml-out bdir/q.ggml
[ -e bdir/q.ggml ] && bad "ggml written inside the bundle folder" || ok "nothing written inside the bundle folder"
# a --ggml-out that cannot be written: no bundle left, the path said once
expect_fail "nodir/q.ggml: cannot create a temporary file" $gq -o lone.safetensors --ggml-out nodir/q.ggml
[ -e lone.safetensors ] && bad "a failing --ggml-out left the -o bundle" || ok "a failing --ggml-out leaves no -o bundle"
n=$(grep -o "nodir/q.ggml" err.txt | wc -l)
[ "$n" -eq 1 ] && ok "the message names the path once" || bad "the path appears $n times: $(cat err.txt)"
# and both written when both can be
$gq -o both.safetensors --ggml-out both.ggml 2>err.txt && cmp -s both.ggml b.ggml \
    && $NVFP4 ggml-unpack both.ggml --shape 4x64 -o back.safetensors 2>>err.txt \
    && ok "-o and --ggml-out both written" || bad "both outputs: $(cat err.txt)"
ls -a | grep -q '\.tmp-' && bad "a temporary file was left: $(ls -a)" || ok "no temporary file left"
exit $fail
