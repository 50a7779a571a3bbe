#!/usr/bin/env bash
# test_robust_io.sh - hostile or careless inputs end quickly in exit 2 with a
# message naming the file and the problem (issue 14): non-regular files (FIFO,
# /dev/zero, a directory) never make a reader wait; long paths are never cut;
# a header of many entries loads in O(n log n); every uint64 a writer accepts
# reads back; integer options are decimal; usage errors are exit 2.
set -uo pipefail
: "${NVFP4:?set NVFP4 to the nvfp4 binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
ok()   { echo "ok   $1"; }
bad()  { echo "FAIL $1"; fail=1; }
# expect_fail NEEDLE CMD...: exit 2 within $LIMIT (10) s and NEEDLE in stderr
expect_fail() {
    local needle=$1; shift
    timeout "${LIMIT:-10}" "$@" 2>err.txt >/dev/null; local rc=$?
    if [ $rc -eq 2 ] && grep -qF -- "$needle" err.txt; then ok "rejects: $needle"
    else bad "expected exit 2 and '$needle', got rc=$rc: $(cat err.txt)"; fi
}
python3 -c 'import struct; open("x.bin","wb").write(struct.pack("<32f", *range(32)))'

# ---- 1. non-regular files -------------------------------------------------
mkfifo f.safetensors f.npy f.bin
expect_fail "f.safetensors: is a FIFO" $NVFP4 quantize f.safetensors -o q.safetensors
expect_fail "f.npy: is a FIFO" $NVFP4 quantize f.npy -o q.safetensors
expect_fail "f.bin: is a FIFO" $NVFP4 quantize f.bin --shape 2x16 --dtype f32 -o q.safetensors
expect_fail "/dev/zero: is a character device" $NVFP4 quantize /dev/zero -o q.safetensors
expect_fail "/dev/zero: is a character device" $NVFP4 quantize /dev/zero --shape 2x16 --dtype f32 -o q.safetensors
mkdir dir.safetensors
expect_fail "dir.safetensors/meta.json" $NVFP4 quantize dir.safetensors -o q.safetensors
mkdir fm && mkfifo fm/meta.json
expect_fail "fm/meta.json: is a FIFO" $NVFP4 quantize fm -o q.safetensors
# a tensor file inside a folder
$NVFP4 quantize x.bin --shape 2x16 --dtype f32 -o qd >/dev/null 2>&1 || bad "setup folder"
rm -f qd/data.npy && mkfifo qd/data.npy
expect_fail "qd/data.npy: is a FIFO" $NVFP4 dequantize qd -o dq.npy
rm -f qd/data.npy && mkdir qd/data.npy
expect_fail "qd/data.npy: is a directory" $NVFP4 dequantize qd -o dq.npy
expect_fail "f.safetensors: is a FIFO" $NVFP4 verify --expected f.safetensors --actual f.safetensors
# ---- 2. long paths: never cut, the problem stays visible --------------------
# 1,087 characters (nested folders) to an output folder: written under its own
# name (it used to be cut at 1,023 bytes), read back, replaced.
mid=$(python3 -c 'print("/".join(["m" * 99] * 10) + "/" + "m" * 80)')
mkdir -p "$mid"
out1="$mid/outdir"
[ ${#out1} -eq 1087 ] || bad "setup: output path is ${#out1} characters"
$NVFP4 quantize x.bin --shape 2x16 --dtype f32 -o "$out1" 2>err.txt || bad "long output folder: $(cat err.txt)"
[ -f "$out1/meta.json" ] && ok "a 1,087-character output folder is written under its own name" \
    || bad "no $out1/meta.json"
$NVFP4 quantize x.bin --shape 2x16 --dtype f32 -o "$out1" 2>err.txt || bad "replace long output folder: $(cat err.txt)"
$NVFP4 dequantize "$out1" -o dq.npy 2>err.txt && ok "the long-path folder reads back" || bad "read back: $(cat err.txt)"
[ "$(ls "$mid")" = outdir ] && ok "nothing else is left beside it" || bad "left beside the output: $(ls -a "$mid")"
# a 5,000-character path: refused (exit 2), the message keeps the problem and the file's name
deep=$(python3 -c 'print("/".join(["d" * 99] * 50))')
mkdir -p "$deep"
expect_fail "x.npy: File name too long" $NVFP4 quantize "$deep/x.npy" -o q.safetensors
expect_fail "q.safetensors: cannot create a temporary file: File name too long" \
    $NVFP4 quantize x.bin --shape 2x16 --dtype f32 -o "$deep/q.safetensors"
expect_fail "outdir: cannot create a temporary folder: File name too long" $NVFP4 quantize x.bin --shape 2x16 --dtype f32 -o "$deep/outdir"
expect_fail "at most 1500" $NVFP4 golden --suite edge --recipe te --out "$deep/g"

# ---- 3. large headers load in O(n log n) --------------------------------------
# 200,000 tensors (then 200,000 metadata keys) in one safetensors header: the
# duplicate checks were linear searches (80,000 took 16 s and 12.7 s, so these
# would take about 100 s); now 1-2 s. The 20 s bound is loose on purpose.
python3 - <<'PY'
import json, struct
def write(path, n_tensors, n_meta):
    h = {"t%d" % i: {"dtype": "U8", "shape": [1], "data_offsets": [i, i + 1]} for i in range(n_tensors)}
    if n_meta:
        h["__metadata__"] = {"k%d" % i: "v" for i in range(n_meta)}
    b = json.dumps(h, separators=(",", ":")).encode()
    b += b" " * (-len(b) % 8)
    open(path, "wb").write(struct.pack("<Q", len(b)) + b + bytes(n_tensors))
write("many.safetensors", 200000, 0)
write("manymeta.safetensors", 1, 200000)
PY
for f in many.safetensors manymeta.safetensors; do
    t0=$(date +%s.%N)
    LIMIT=20 expect_fail "$f: not a golden bundle" $NVFP4 verify --expected "$f" --actual "$f"
    t1=$(date +%s.%N)
    python3 -c "import sys; t = $t1 - $t0; print('info %s loaded in %.2f s' % ('$f', t)); sys.exit(t > 20)" \
        || bad "$f: loading took over 20 s"
done

# A header of more than 2^20 key/value pairs (here 1.5 M small metadata
# entries, 26 MB; 100 MB of them took 10 s and 1.9 GB to parse) is refused
# before it is parsed; ':' inside strings are not pairs (a value holding 2 M
# of them still loads).
python3 - <<'PY'
import json, struct
def write(path, meta):
    h = {"x": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}, "__metadata__": meta}
    b = json.dumps(h, separators=(",", ":")).encode()
    open(path, "wb").write(struct.pack("<Q", len(b)) + b + b"\0")
write("pairs.safetensors", {"k%07d" % i: "v" for i in range(1500000)})
write("colons.safetensors", {"cfg": ":" * 2000000})
PY
t0=$(date +%s.%N)
LIMIT=10 expect_fail "pairs.safetensors: header has 1500005 JSON key/value pairs, more than the 1048576" \
    $NVFP4 dequantize pairs.safetensors -o pairs.npy
t1=$(date +%s.%N)
python3 -c "import sys; t = $t1 - $t0; print('info pairs.safetensors refused in %.2f s' % t); sys.exit(t > 5)" \
    || bad "refusing a header of 1.5 M pairs took over 5 s"
LIMIT=20 expect_fail "colons.safetensors: not a golden bundle" $NVFP4 dequantize colons.safetensors -o colons.npy

# ---- 4. every value a writer accepts reads back: 2^64-1 ------------------------
max=18446744073709551615
python3 -c 'import struct; open("x16.bin","wb").write(struct.pack("<256f", *[i * 0.37 - 40 for i in range(256)]))'
q="$NVFP4 quantize x16.bin --shape 16x16 --dtype f32 --round sr --seed $max --offset $max --columnwise --rht --rht-signs seed:$max"
$q -o m.safetensors 2>err.txt || bad "quantize at 2^64-1: $(cat err.txt)"
$q --format bin -o mdir 2>err.txt || bad "quantize to a folder at 2^64-1: $(cat err.txt)"
$NVFP4 verify --expected m.safetensors --actual m.safetensors >/dev/null 2>err.txt \
    && ok "a bundle with seed, offset and sign seed 2^64-1 reads back" || bad "verify 2^64-1: $(cat err.txt)"
$NVFP4 verify --expected mdir --actual m.safetensors >/dev/null 2>err.txt \
    && ok "the same from a folder" || bad "verify folder 2^64-1: $(cat err.txt)"
$NVFP4 dequantize m.safetensors --columnwise -o mdq.npy 2>err.txt || bad "dequantize 2^64-1: $(cat err.txt)"
$NVFP4 gemm --a m.safetensors --b m.safetensors --a-columnwise --b-columnwise -o mg.npy 2>err.txt \
    || bad "gemm 2^64-1: $(cat err.txt)"
$NVFP4 golden --suite edge --recipe te --round sr --seed $max --out gsuite >/dev/null 2>err.txt || bad "golden 2^64-1: $(cat err.txt)"
gfail=0
for f in gsuite/*.safetensors; do
    $NVFP4 verify --expected "$f" --actual "$f" >/dev/null 2>err.txt || { gfail=1; bad "golden bundle $f: $(cat err.txt)"; }
done
[ $gfail = 0 ] && ok "golden --seed 2^64-1 bundles read back"
# one past the range is refused by the writer
expect_fail "--seed" $NVFP4 quantize x16.bin --shape 16x16 --dtype f32 --round sr --seed 18446744073709551616 -o n.safetensors

# ---- 6. replacing a folder output never deletes what the tool did not write -------
$NVFP4 quantize x.bin --shape 2x16 --dtype f32 -o od >/dev/null 2>&1 || bad "setup od"
echo mine >od/notes.txt
expect_fail "od: holds 'notes.txt', which its meta.json does not list" $NVFP4 quantize x.bin --shape 2x16 --dtype f32 -o od
[ "$(cat od/notes.txt)" = mine ] && ok "the user's file is kept" || bad "od/notes.txt was deleted"
rm od/notes.txt && mkdir od/sub && echo s >od/sub/f
expect_fail "od: holds 'sub'" $NVFP4 quantize x.bin --shape 2x16 --dtype f32 -o od
[ -f od/sub/f ] && ok "a subfolder is kept" || bad "od/sub was deleted"
[ -z "$(ls -A | grep '^\.od\.tmp-')" ] && ok "no hidden temporary folder left beside it" || bad "left: $(ls -A | grep tmp-)"
rm -r od/sub
$NVFP4 quantize x.bin --shape 2x16 --dtype f32 --format bin -o od 2>err.txt && [ -f od/data.bin ] && [ ! -e od/data.npy ] \
    && ok "a folder holding only what its meta.json lists is replaced" || bad "replace od: $(cat err.txt)"

# ---- 7. a bundle without format "nvfp4kit-golden-bundle" is rejected by every reader --
$NVFP4 quantize x16.bin --shape 16x16 --dtype f32 --format bin -o fb 2>/dev/null || bad "setup fb"
for v in other missing; do
    cp -r fb fb_$v
    python3 - "$v" <<'PY'
import json, sys
m = json.load(open("fb_%s/meta.json" % sys.argv[1]))
if sys.argv[1] == "missing": del m["metadata"]["format"]
else: m["metadata"]["format"] = "other"
json.dump(m, open("fb_%s/meta.json" % sys.argv[1], "w"))
PY
    expect_fail "fb_$v: not a golden bundle" $NVFP4 dequantize fb_$v -o fbd.npy
    expect_fail "fb_$v: not a golden bundle" $NVFP4 gemm --a fb_$v --b fb -o fbg.npy
    expect_fail "fb_$v: not a golden bundle" $NVFP4 gemm --a fb --b fb_$v -o fbg.npy
    expect_fail "fb_$v: not a golden bundle" $NVFP4 verify --expected fb_$v --actual fb
done
[ -e fbd.npy ] || [ -e fbg.npy ] && bad "an output was written for a bundle that is not one"
$NVFP4 dequantize fb -o fbd.npy 2>err.txt && ok "the untouched bundle still reads" || bad "fb: $(cat err.txt)"

# ---- 8. integer options are decimal ---------------------------------------------
# "010" is ten (it was octal 8), "08" is eight (it was refused), 0x and blanks are refused.
$NVFP4 quantize x.bin --shape 2x16 --dtype f32 --round sr --seed 010 -o s010.safetensors 2>err.txt || bad "--seed 010: $(cat err.txt)"
$NVFP4 quantize x.bin --shape 2x16 --dtype f32 --round sr --seed 10 -o s10.safetensors 2>err.txt || bad "--seed 10: $(cat err.txt)"
$NVFP4 quantize x.bin --shape 2x16 --dtype f32 --round sr --seed 08 -o s08.safetensors 2>err.txt || bad "--seed 08: $(cat err.txt)"
$NVFP4 quantize x.bin --shape 2x16 --dtype f32 --round sr --seed 8 -o s8.safetensors 2>err.txt || bad "--seed 8: $(cat err.txt)"
cmp -s s010.safetensors s10.safetensors && ok "--seed 010 is ten" || bad "--seed 010 differs from --seed 10"
cmp -s s08.safetensors s8.safetensors && ok "--seed 08 is eight" || bad "--seed 08 differs from --seed 8"
for v in 0x10 " 8" "8 " +8 -8 "" 1e3 8a; do
    expect_fail "bad --seed '$v'" $NVFP4 quantize x.bin --shape 2x16 --dtype f32 --round sr --seed "$v" -o n.safetensors
done
expect_fail "bad --offset '0x10'" $NVFP4 quantize x.bin --shape 2x16 --dtype f32 --round sr --offset 0x10 -o n.safetensors
expect_fail "bad --rht-signs 'seed:0x5'" $NVFP4 quantize x16.bin --shape 16x16 --dtype f32 --columnwise --rht --rht-signs seed:0x5 -o n.safetensors
# --shape 010x16 is 10 x 16 (the file has 32 values: truncated), not 8 x 16
expect_fail "x.bin: truncated: --shape 010x16" $NVFP4 quantize x.bin --shape 010x16 --dtype f32 -o n.safetensors
expect_fail "bad --shape '0x2x16'" $NVFP4 quantize x.bin --shape 0x2x16 --dtype f32 -o n.safetensors
expect_fail "bad --shape ' 2x16'" $NVFP4 quantize x.bin --shape " 2x16" --dtype f32 -o n.safetensors
$NVFP4 quantize x.bin --shape 02x016 --dtype f32 -o n.safetensors 2>err.txt && ok "--shape 02x016 is 2 x 16" \
    || bad "--shape 02x016: $(cat err.txt)"
rm -f n.safetensors
expect_fail "bad --row '0x1'" $NVFP4 explain-block --input x16.bin --shape 16x16 --dtype f32 --block 0 --row 0x1
$NVFP4 explain-block --input x16.bin --shape 16x16 --dtype f32 --block 0 --row 010 >row010.txt 2>err.txt || bad "--row 010: $(cat err.txt)"
$NVFP4 explain-block --input x16.bin --shape 16x16 --dtype f32 --block 0 --row 10 >row10.txt 2>err.txt || bad "--row 10: $(cat err.txt)"
cmp -s row010.txt row10.txt && ok "--row 010 is row ten" || bad "--row 010 differs from --row 10"

# ---- 9. usage errors are exit 2 --------------------------------------------------
expect_fail "unexpected argument '--bogus'" $NVFP4 version --bogus
expect_fail "--version takes no arguments" $NVFP4 --version --bogus
$NVFP4 version >/dev/null && ok "version alone exits 0" || bad "version alone"
for a in nan inf -inf; do
    expect_fail "bad --alpha '$a' (must be finite)" $NVFP4 gemm-check --a m.safetensors --b m.safetensors \
        --a-columnwise --b-columnwise --actual mg.npy --alpha "$a"
done
$NVFP4 gemm-check --a m.safetensors --b m.safetensors --a-columnwise --b-columnwise --actual mg.npy >/dev/null 2>err.txt \
    && ok "gemm-check of nvfp4 gemm's own result passes" || bad "gemm-check: $(cat err.txt)"

# meta.json's sha256: either case of hex digits is accepted; a non-string is refused
$NVFP4 quantize x.bin --shape 2x16 --dtype f32 -o shadir >/dev/null 2>&1 || bad "setup shadir"
python3 - <<'PY'
import json
m = json.load(open("shadir/meta.json"))
for t in m["tensors"]: t["sha256"] = t["sha256"].upper()
json.dump(m, open("shadir/meta.json", "w"))
PY
$NVFP4 dequantize shadir -o shadq.npy 2>err.txt && ok "an upper-case sha256 is accepted" || bad "upper-case sha256: $(cat err.txt)"
python3 - <<'PY'
import json
m = json.load(open("shadir/meta.json"))
m["tensors"][0]["sha256"] = 5
json.dump(m, open("shadir/meta.json", "w"))
PY
expect_fail '"sha256" is not a string' $NVFP4 dequantize shadir -o shadq.npy

# bench --size beyond the available memory is refused up front (it was OOM-killed)
expect_fail "only" $NVFP4 bench --size 100000
expect_fail "MiB is available (MemAvailable)" $NVFP4 bench --size 1048576
# a runtime library that gives up (libgomp cannot create its threads with a
# 4000 GB stack and calls exit(1)) is exit 2 with a message, never 1 (mismatch)
python3 -c '
import numpy as np
for n, s in (("ra", 1), ("rb", 2)): np.save(n + ".npy", np.random.default_rng(s).standard_normal((512, 512)).astype(np.float32))'
$NVFP4 quantize ra.npy -o ra.safetensors 2>/dev/null && $NVFP4 quantize rb.npy -o rb.safetensors 2>/dev/null \
    && $NVFP4 gemm --a ra.safetensors --b ra.safetensors -o rg.npy 2>/dev/null || bad "setup ra/rb"
expect_fail "a runtime library (OpenMP or BLAS" env OMP_STACKSIZE=4000G OMP_NUM_THREADS=2 \
    $NVFP4 verify --expected ra.safetensors --actual rb.safetensors
expect_fail "a runtime library (OpenMP or BLAS" env OMP_STACKSIZE=4000G OMP_NUM_THREADS=2 \
    $NVFP4 gemm-check --a ra.safetensors --b ra.safetensors --actual rg.npy
$NVFP4 verify --expected ra.safetensors --actual rb.safetensors >/dev/null 2>&1; rc=$?
[ $rc = 1 ] && ok "without the failure the same verify is a mismatch (exit 1)" || bad "verify ra/rb: rc=$rc"

# SIGINT/SIGTERM during a write: no hidden temporary file stays
python3 -c 'import numpy as np; np.save("big.npy", np.random.default_rng(3).standard_normal((2048, 2048)).astype(np.float32))'
sfail=0
for sig in INT TERM; do
    for d in 0.05 0.1 0.2 0.3 0.4 0.6; do
        $NVFP4 quantize big.npy --columnwise -o big.safetensors 2>/dev/null &
        pid=$!; sleep $d; kill -$sig $pid 2>/dev/null; wait $pid 2>/dev/null
        $NVFP4 quantize big.npy --format bin -o bigdir 2>/dev/null &
        pid=$!; sleep $d; kill -$sig $pid 2>/dev/null; wait $pid 2>/dev/null
        left=$(ls -A | grep '\.tmp-')
        [ -n "$left" ] && { sfail=1; bad "SIG$sig after $d s left $left"; rm -rf .big*.tmp-*; }
    done
done
[ $sfail = 0 ] && ok "SIGINT/SIGTERM at 6 points during file and folder writes leave no temporary"
[ ! -e big.safetensors ] || $NVFP4 verify --expected big.safetensors --actual big.safetensors >/dev/null 2>&1 \
    || bad "big.safetensors exists but does not read"
# the signal at the instant the temporary is created (strace delivers it as the creating openat or
# mkdir returns; the sleeps above hit that instant once in a few hundred runs): the name was
# registered before the file or folder existed, so the handler removes it. It used to be
# registered after, and a signal in between left it.
if command -v strace >/dev/null && strace -o /dev/null true 2>/dev/null; then
    strace -o otrace.txt -e trace=openat $NVFP4 quantize big.npy --columnwise -o sig0.safetensors 2>/dev/null
    n=$(grep -n '\.sig0\.safetensors\.tmp-' otrace.txt | head -1 | cut -d: -f1)
    # (the exit status through a group whose stderr takes bash's "Terminated")
    rc1=$( { strace -o /dev/null -e trace=openat -e inject=openat:signal=TERM:when=${n:-1} \
        $NVFP4 quantize big.npy --columnwise -o sig.safetensors >/dev/null; echo $?; } 2>/dev/null)
    rc2=$( { strace -o /dev/null -f -e trace=mkdir -e inject=mkdir:signal=TERM \
        $NVFP4 quantize big.npy --format bin -o sigdir >/dev/null; echo $?; } 2>/dev/null)
    left=$(ls -A | grep '\.tmp-')
    [ -n "$n" ] && [ $rc1 = 143 ] && [ $rc2 = 143 ] && [ -z "$left" ] && [ ! -e sig.safetensors ] && [ ! -e sigdir ] \
        && ok "SIGTERM as the temporary file or folder is created leaves nothing" \
        || bad "SIGTERM at creation: openat $n, rc $rc1 $rc2, left '$left'"
    rm -rf .sig*.tmp-*
else
    echo "skip SIGTERM at creation (strace cannot trace here)"
fi

# ---- 10. peak memory: at most the input plus the outputs plus 64 MiB ---------------
# (quantize 4096 x 4096 with --columnwise --rht peaked at 365 MB for a 64 MB input
# and a 145 MB bundle; the goal is 276 MB; dequantize of it at 290 MB, goal 279)
if [ -x /usr/bin/time ]; then
    python3 -c 'import numpy as np; np.save("m4k.npy", np.random.default_rng(4).standard_normal((4096, 4096)).astype(np.float32))'
    peak_ok() { # label input output cmd...: peak RSS <= input + output + 64 MiB
        local label=$1 inp=$2 outp=$3; shift 3
        /usr/bin/time -v "$@" 2>time.txt >/dev/null || { bad "$label: $(tail -n 3 time.txt)"; return; }
        local kb=$(awk '/Maximum resident/ {print $6}' time.txt)
        local goal=$(( ($(stat -c %s $inp) + $(stat -c %s $outp)) / 1024 + 65536 ))
        [ "$kb" -le "$goal" ] && ok "$label: peak $((kb / 1024)) MiB <= goal $((goal / 1024)) MiB" \
            || bad "$label: peak $((kb / 1024)) MiB > goal $((goal / 1024)) MiB"
    }
    peak_ok "quantize 4096x4096 --columnwise --rht" m4k.npy m4k.safetensors \
        $NVFP4 quantize m4k.npy --columnwise --rht -o m4k.safetensors
    peak_ok "dequantize of it" m4k.safetensors m4k_dq.npy $NVFP4 dequantize m4k.safetensors --columnwise -o m4k_dq.npy
    rm -f m4k.npy m4k.safetensors m4k_dq.npy
else
    echo "skip peak memory: no /usr/bin/time"
fi

[ -e q.safetensors ] && bad "an output was written for a refused input"

exit $fail
