#!/usr/bin/env bash
# tests/cli/test_study_reliab.sh - the lab refuses to mix runs (docs/studies.md,
# "Fingerprints, locks and checksums"): `study merge` exits 2 naming the folder
# or file and what differs for a shard given twice, a missing shard, shards of
# another --steps, --seeds, --quick, shard count or config, and CSV files
# truncated or changed after the run; `--resume` refuses a folder left by
# another configuration; a checkpoint or .done with one byte changed is
# refused; a FIFO or /dev/zero in place of a checkpoint, .done, fingerprint,
# runs.csv, summary.json or config is refused without waiting; a second run
# on the same --out exits 2 while the first holds its lock, and a lock left by
# a killed run is taken over; configs that cannot train are refused at load
# with the file and the JSON path; a study with every layer in high precision
# runs to the end; plots work in a folder whose name holds a quote, and
# SIGTERM during a plot leaves no temporary file and no half PNG.
set -uo pipefail
NVFP4=${NVFP4:-build/bin/nvfp4}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
die() { echo "FAIL: $*" >&2; fail=1; }
# $1: expected message fragment, the rest: the nvfp4 arguments; exit 2 within 60 s
refused() {
    local want=$1
    shift
    timeout 60 "$NVFP4" "$@" >/dev/null 2>"$T/err"
    local rc=$?
    [ "$rc" = 2 ] || { die "'$*' exited $rc (want 2): $(cat "$T/err")"; return; }
    grep -qF -- "$want" "$T/err" || die "'$*': expected '$want' in: $(cat "$T/err")"
}

# ---- merge --------------------------------------------------------------------
A="s3-2d --steps 3 --seeds 3 --quiet"
run() { "$NVFP4" study run "$@" >/dev/null 2>"$T/err" || die "study run $*: $(cat "$T/err")"; }
run $A --shard 0/2 --out "$T/sh0"
run $A --shard 1/2 --out "$T/sh1"
run s3-2d --steps 4 --seeds 3 --quiet --shard 1/2 --out "$T/steps4"
run s3-2d --steps 3 --seeds 2 --quiet --shard 1/2 --out "$T/seeds2"
run $A --shard 1/3 --out "$T/of3"
run $A --quick --shard 1/2 --out "$T/quick"
"$NVFP4" study merge --out "$T/m" "$T/sh1" "$T/sh0" >/dev/null 2>"$T/err" || die "merge of two good shards: $(cat "$T/err")"
python3 - "$T/m/summary.json" <<'PY' || die "merged summary.json: no fingerprint without a shard, or no files"
import json, sys
d = json.load(open(sys.argv[1]))
fp = d["fingerprint"]
assert fp["steps"] == 3 and fp["seeds"] == 3 and fp["quick"] is False and "shard" not in fp, fp
assert set(d["files"]) == {"runs.csv", "layers.csv"}, d["files"]
PY
refused "$T/sh0 and $T/sh0 are both shard 0/2" study merge --out "$T/m1" "$T/sh0" "$T/sh0"
refused "shard 1/2 missing (1 of the run's 2 shards given)" study merge --out "$T/m2" "$T/sh0"
refused "$T/steps4 is of another run than $T/sh0: --steps 4, not 3" study merge --out "$T/m3" "$T/sh0" "$T/steps4"
refused "$T/seeds2 is of another run than $T/sh0: --seeds 2, not 3" study merge --out "$T/m4" "$T/sh0" "$T/seeds2"
refused "$T/of3 is shard 1/3, but $T/sh0 is shard 0/2: another --shard count" study merge --out "$T/m5" "$T/sh0" "$T/of3"
refused "$T/quick is of another run than $T/sh0: --quick true, not false" study merge --out "$T/m6" "$T/sh0" "$T/quick"
refused "$T/sh1 and $T/sh1 are both shard 1/2" study merge --out "$T/m7" "$T/sh0" "$T/sh1" "$T/sh1"
cp -r "$T/sh1" "$T/trunc"
truncate -s -10 "$T/trunc/runs.csv"
refused "$T/trunc/runs.csv: $(stat -c %s "$T/trunc/runs.csv") bytes, but its summary.json records" \
    study merge --out "$T/m8" "$T/sh0" "$T/trunc"
cp -r "$T/sh1" "$T/changed"
python3 - "$T/changed/layers.csv" <<'PY'
import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read()); i = b.rindex(b",0.") + 3
b[i] = ord("1") if b[i] != ord("1") else ord("2"); open(p, "wb").write(b)
PY
refused "$T/changed/layers.csv: its sha256 differs from the one its summary.json records" \
    study merge --out "$T/m9" "$T/sh0" "$T/changed"
[ ! -e "$T/m9/runs.csv" ] && [ ! -e "$T/m3/runs.csv" ] || die "a refused merge wrote runs.csv"
# shards of two configs that differ in one value (lr)
cfg() { printf '{"name": "lab", "steps": 3, "model": {"preset": "tinylm"}, "train": {"lr": %s},
 "arms": [{"name": "a"}, {"name": "b", "recipe": {"preset": "mxfp4"}}]}\n' "$1" > "$2"; }
cfg 0.003 "$T/lab.json"
cfg 0.004 "$T/lab2.json"
run "$T/lab.json" --seeds 2 --quiet --shard 0/2 --out "$T/c0"
run "$T/lab2.json" --seeds 2 --quiet --shard 1/2 --out "$T/c1"
refused "$T/c1 is of another run than $T/c0: config (sha256 of its JSON)" study merge --out "$T/m10" "$T/c0" "$T/c1"
# shards made with another OpenBLAS kernel (its GEMMs sum in another order): the fingerprint names it
kern=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fingerprint"].get("blas_kernel", ""))' "$T/sh0/summary.json")
[ -n "$kern" ] || die "summary.json records no OpenBLAS kernel"
alt=Prescott; [ "$kern" = Prescott ] && alt=Core2
OPENBLAS_CORETYPE=$alt "$NVFP4" study run $A --shard 1/2 --out "$T/kern" >/dev/null 2>"$T/err" || die "study run with OPENBLAS_CORETYPE=$alt: $(cat "$T/err")"
refused "$T/kern is of another run than $T/sh0: OpenBLAS kernel (set OPENBLAS_CORETYPE alike) \"$alt\", not \"$kern\"" \
    study merge --out "$T/m11" "$T/sh0" "$T/kern"
# a shard from before the kernel was recorded merges
cp -r "$T/sh1" "$T/nokern"
python3 - "$T/nokern/summary.json" <<'PY'
import json, sys
p = sys.argv[1]; d = json.load(open(p)); del d["fingerprint"]["blas_kernel"]; json.dump(d, open(p, "w"), indent=2)
PY
"$NVFP4" study merge --out "$T/m12" "$T/sh0" "$T/nokern" >/dev/null 2>"$T/err" || die "merge with a shard without blas_kernel: $(cat "$T/err")"
cmp -s "$T/m12/runs.csv" "$T/m/runs.csv" || die "merge with a shard without blas_kernel: other runs.csv"

# ---- --resume -------------------------------------------------------------------
# a killed run leaves a finished job (.done) and a checkpoint
R="s3-2d --steps 60 --seeds 2 --threads 1 --checkpoint-every 5"
"$NVFP4" study run $R --quiet --out "$T/rk" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 3000); do
    ls "$T"/rk/.resume/*.done >/dev/null 2>&1 && ls "$T"/rk/.resume/*.ckpt >/dev/null 2>&1 && break
    sleep 0.02
done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
ck=$(ls "$T"/rk/.resume/*.ckpt 2>/dev/null | head -1)
dn=$(ls "$T"/rk/.resume/*.done 2>/dev/null | head -1)
if [ -z "$ck" ] || [ -z "$dn" ] || [ -e "$T/rk/runs.csv" ]; then
    die "the killed run left no checkpoint and .done (resume cases not tested)"
else
    cp -r "$T/rk" "$T/rk.orig"
    fresh() { rm -rf "$T/rk"; cp -r "$T/rk.orig" "$T/rk"; }
    refused "--resume: $T/rk/.resume/fingerprint.json holds an unfinished run of another configuration (now --steps 61, not 60)" \
        study run s3-2d --steps 61 --seeds 2 --threads 1 --checkpoint-every 5 --quiet --out "$T/rk" --resume
    refused "--seeds 3, not 2" study run s3-2d --steps 60 --seeds 3 --threads 1 --quiet --out "$T/rk" --resume
    # resumed on another OpenBLAS kernel, the run would continue with other arithmetic
    OPENBLAS_CORETYPE=$alt refused "OpenBLAS kernel (set OPENBLAS_CORETYPE alike)" \
        study run $R --quiet --out "$T/rk" --resume
    # one byte changed at several places of the checkpoint, and of the .done
    size=$(stat -c %s "$T/rk.orig/.resume/${ck##*/}")
    for off in 0 9 200 $((size / 2)) $((size - 70)) $((size - 2)); do
        fresh
        python3 -c 'import sys; p, o = sys.argv[1], int(sys.argv[2]); b = bytearray(open(p, "rb").read()); b[o] ^= 0x10; open(p, "wb").write(b)' \
            "$T/rk/.resume/${ck##*/}" "$off"
        timeout 120 "$NVFP4" study run $R --quiet --out "$T/rk" --resume >/dev/null 2>"$T/err"
        rc=$?
        [ "$rc" = 2 ] && grep -qE "${ck##*/}(: checksum mismatch| is not an nvfp4 run checkpoint)" "$T/err" \
            || die "checkpoint with byte $off of $size flipped: exit $rc: $(cat "$T/err")"
    done
    fresh
    python3 -c 'import sys; p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[40] ^= 1; open(p, "wb").write(b)' \
        "$T/rk/.resume/${dn##*/}"
    refused "${dn##*/} is damaged or not job" study run $R --quiet --out "$T/rk" --resume
    # a FIFO or /dev/zero in place of each bookkeeping file
    for f in "${ck##*/}" "${dn##*/}" fingerprint.json; do
        fresh
        rm "$T/rk/.resume/$f" && mkfifo "$T/rk/.resume/$f"
        refused "$f: is a FIFO, not a regular file" study run $R --quiet --out "$T/rk" --resume
        fresh
        rm "$T/rk/.resume/$f" && ln -s /dev/zero "$T/rk/.resume/$f"
        refused "$f: is a character device, not a regular file" study run $R --quiet --out "$T/rk" --resume
    done
    # the same configuration resumes; a run without --resume starts over
    fresh
    "$NVFP4" study run $R --quiet --out "$T/rk" --resume >/dev/null 2>"$T/err" || die "--resume: $(cat "$T/err")"
    [ ! -e "$T/rk/.resume" ] || die "--resume left .resume"
    fresh
    "$NVFP4" study run s3-2d --steps 61 --seeds 2 --threads 1 --quiet --out "$T/rk" >/dev/null 2>"$T/err" \
        || die "a run without --resume over another run's .resume: $(cat "$T/err")"
fi
# a fresh run clears only what a run keeps in .resume (and a killed write's temporaries)
mkdir -p "$T/cl/.resume"
touch "$T/cl/.resume/job-1.ckpt" "$T/cl/.resume/.job-1.ckpt.tmp-abc123" "$T/cl/.resume/keep.txt" "$T/cl/.resume/job-1.ckptx"
run s3-2d --steps 2 --quiet --out "$T/cl"
[ "$(ls -A "$T/cl/.resume" | tr '\n' ' ')" = "job-1.ckptx keep.txt " ] || die ".resume after a fresh run: $(ls -A "$T/cl/.resume")"
# a config file changed between the kill and --resume
cfg 0.003 "$T/long.json"
sed -i 's/"steps": 3/"steps": 400/' "$T/long.json"
"$NVFP4" study run "$T/long.json" --threads 1 --checkpoint-every 2 --quiet --out "$T/lk" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 3000); do ls "$T"/lk/.resume/*.ckpt >/dev/null 2>&1 && break; sleep 0.02; done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
sed -i 's/"lr": 0.003/"lr": 0.002/' "$T/long.json"
refused "holds an unfinished run of another configuration (now config (sha256 of its JSON)" \
    study run "$T/long.json" --threads 1 --quiet --out "$T/lk" --resume

# ---- the lock on --out ------------------------------------------------------------
"$NVFP4" study run s3-2d --steps 100000 --seeds 1 --threads 1 --quiet --out "$T/lock" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 3000); do [ -s "$T/lock/.lock" ] && break; sleep 0.02; done
refused "$T/lock is in use by another nvfp4 study run or merge (pid $pid)" study run s3-2d --steps 2 --quiet --out "$T/lock"
refused "$T/lock is in use by another nvfp4 study run or merge" study merge --out "$T/lock" "$T/sh0" "$T/sh1"
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
[ -e "$T/lock/.lock" ] || die "the killed run left no lock file (stale-lock case not tested)"
"$NVFP4" study run s3-2d --steps 2 --quiet --out "$T/lock" >/dev/null 2>"$T/err" || die "a lock left by a killed run: $(cat "$T/err")"
[ ! -e "$T/lock/.lock" ] || die "a finished run left its lock file"

# ---- study plot and configs: special files ---------------------------------------
for f in runs.csv summary.json layers.csv; do
    rm -rf "$T/pf" && cp -r "$T/sh0" "$T/pf" && rm "$T/pf/$f" && mkfifo "$T/pf/$f"
    refused "$T/pf/$f: is a FIFO, not a regular file" study plot "$T/pf"
    rm "$T/pf/$f" && ln -s /dev/zero "$T/pf/$f"
    refused "$T/pf/$f: is a character device, not a regular file" study plot "$T/pf"
done
# a count out of range in runs.csv (found by fuzz_labdir: converting it was undefined)
rm -rf "$T/pf" && cp -r "$T/sh0" "$T/pf"
sed -i '2s/^\([^,]*\),[0-9]*,/\1,1e30,/' "$T/pf/runs.csv"
refused "$T/pf/runs.csv:2: malformed row" study plot "$T/pf"
rm -rf "$T/pf" && cp -r "$T/c0" "$T/pf" && rm "$T/pf/config.json" && mkfifo "$T/pf/config.json"
refused "$T/pf/config.json: is a FIFO, not a regular file" study plot "$T/pf"
mkfifo "$T/fifo.json"
refused "$T/fifo.json: is a FIFO, not a regular file" study run "$T/fifo.json" --out "$T/x"
refused "/dev/zero: is a character device, not a regular file" study run --config /dev/zero --out "$T/x"

# ---- configs that cannot train: the file, the JSON path, at load ----------------------
bad() { # $1: JSON text, $2: expected message fragment
    printf '%s\n' "$1" > "$T/bad.json"
    refused "$T/bad.json: $2" study run "$T/bad.json" --quiet --out "$T/bad"
    [ ! -e "$T/bad/runs.csv" ] || die "a bad config wrote runs.csv"
}
tl='"name": "x", "steps": 4, "model": {"preset": "tinylm"'
gp='"name": "x", "steps": 4, "model": {"preset": "gpt"'
arm='"arms": [{"name": "a"}]'
bad "{$gp, \"d_model\": 0}, $arm}" '$.model.d_model: must be > 0'
bad "{$gp}, \"arms\": [{\"name\": \"a\", \"model\": {\"n_heads\": 0}}]}" '$.arms[0].model.n_heads: must be > 0 in a GPT'
bad "{$gp, \"vocab\": 0}, $arm}" '$.model.vocab: must be > 0 in a GPT'
bad "{$gp, \"seq_len\": 0}, $arm}" '$.model.seq_len: must be > 0 in a GPT'
bad "{$gp, \"n_heads\": 7}, $arm}" '$.model.n_heads: 7 does not divide d_model'
bad "{$tl, \"ctx\": 0}, $arm}" '$.model.ctx: a language model needs a context of at least 2 tokens, got 0'
bad "{$tl, \"d_model\": 0}, $arm}" '$.model.d_model: must be > 0'
bad "{$tl, \"emb_dim\": 0}, $arm}" '$.model.emb_dim: must be > 0 in a language model'
bad "{$tl, \"vocab\": 1}, $arm}" '$.model.vocab: expected 2..256'
bad "{$tl, \"ctx\": 8}, $arm}" '$.model.d_in (the "tinylm" preset'"'"'s value): must be ctx * emb_dim = 256, got 128'
bad "{$tl}, \"train\": {\"beta1\": 1}, $arm}" '$.train.beta1: must be in [0, 1)'
bad "{$tl}, \"train\": {\"beta2\": 1}, $arm}" '$.train.beta2: must be in [0, 1)'
bad "{$tl}, \"train\": {\"adam_eps\": 0}, $arm}" '$.train.adam_eps: must be > 0'
bad "{$tl}, \"quick\": {\"train\": {\"adam_eps\": 0}}, $arm}" '$.quick.train.adam_eps: must be > 0'
bad "{$tl}, \"train\": {\"lr\": 0}, $arm}" '$.train.lr: must be > 0'
bad "{$tl}, \"train\": {\"optimizer\": \"sgd\", \"momentum\": 1}, $arm}" '$.train.momentum: must be in [0, 1)'
bad "{$tl}, \"train\": {\"init_scale\": 0}, $arm}" '$.train.init_scale: must be > 0'
bad "{$tl}, \"train\": {\"diverge_factor\": 0}, $arm}" '$.train.diverge_factor: must be > 1'
bad "{\"name\": \"x\", \"steps\": 4, \"model\": {\"preset\": \"mlp\", \"d_in\": 0}, $arm}" '$.model.d_in: must be > 0'

# ---- every layer in high precision: runs, plots and keeps its config -------------------
printf '{"name": "allhp", "steps": 4, "model": {"preset": "tinylm"},
 "arms": [{"name": "a", "recipe": {"layers": [{"match": "*", "hp": true}]}}]}\n' > "$T/allhp.json"
"$NVFP4" study run "$T/allhp.json" --quiet --out "$T/allhp" >/dev/null 2>"$T/err" || die "all-hp study: $(cat "$T/err")"
[ -s "$T/allhp/config.json" ] && [ -s "$T/allhp/summary.json" ] || die "all-hp study: no config.json or summary.json"
"$NVFP4" study plot "$T/allhp" >/dev/null 2>"$T/err" || die "plot of the all-hp study: $(cat "$T/err")"

# ---- plots: a quote in the folder name, SIGTERM ------------------------------------
if command -v gnuplot >/dev/null 2>&1; then
    Q="$T/it's here"
    mkdir -p "$Q"
    cp -r "$T/sh0" "$Q/run"
    rm -f "$Q"/run/*.png
    "$NVFP4" study plot "$Q/run" >/dev/null 2>"$T/err" || die "plot in a folder with a quote: $(cat "$T/err")"
    [ -s "$Q/run/gap.png" ] || die "plot in a folder with a quote drew no gap.png"
    TMPDIR="$Q" "$NVFP4" study run s3-2d --steps 2 --quiet --out "$Q/tmprun" >/dev/null 2>"$T/err" \
        || die "study run with a quote in TMPDIR: $(cat "$T/err")"
    [ -s "$Q/tmprun/gap.png" ] || die "a quote in TMPDIR: no gap.png"
    rm -rf "$T/kp" && cp -r "$T/sh0" "$T/kp"
    for d in 0.01 0.03 0.06 0.1 0.15 0.2 0.3 0.5; do
        rm -f "$T"/kp/*.png
        "$NVFP4" study plot "$T/kp" >/dev/null 2>&1 &
        pid=$!
        sleep "$d"
        kill -TERM "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        sleep 0.3 # a gnuplot left running would still be writing
        left=$(find "$T/kp" -name '.*' -newer "$T/kp/runs.csv" | head -3)
        [ -z "$left" ] || die "SIGTERM after ${d} s of a plot left $left"
        for png in "$T"/kp/*.png; do
            [ -e "$png" ] || continue
            python3 -c 'import sys; b = open(sys.argv[1], "rb").read(); sys.exit(0 if b[-8:-4] == b"IEND" else 1)' "$png" \
                || die "SIGTERM after ${d} s of a plot left a half PNG: $png"
        done
    done
else
    echo "test_study_reliab: plot cases skipped (no gnuplot)"
fi
[ $fail = 0 ] && echo "test_study_reliab: ok"
exit $fail
