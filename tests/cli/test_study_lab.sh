#!/usr/bin/env bash
# tests/cli/test_study_lab.sh - the lab's study configs, per-layer overrides,
# sharding, --resume and MPI: a config run equals the built-in study byte for
# byte; a config with every layer kept in high precision has no gap; bad
# configs exit 2 naming the file, the JSON path and the problem; --shard
# 0/2 + 1/2 merged equals the whole run; a SIGKILLed run resumed equals the
# whole run; mpirun -np 2 equals one process, and refuses ranks on different
# OpenBLAS kernels.
set -euo pipefail
NVFP4=${NVFP4:-build/bin/nvfp4}
NVFP4_MPI=${NVFP4_MPI:-$(dirname "$NVFP4")/nvfp4-mpi}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
die() { echo "FAIL: $*" >&2; exit 1; }
same_json() { # summary.json equal but for the wall-clock timing values ($3 = nofindings: and findings)
    python3 - "$1" "$2" "${3:-}" <<'PY' || die "summary.json differs: $1 $2"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
if sys.argv[3] == "nofindings":  # a config run from a file has no C findings
    a.pop("findings"), b.pop("findings")
assert sorted(a) == sorted(b), (sorted(a), sorted(b))
ta, tb = a.pop("timing"), b.pop("timing")
assert [(x["arm"], x["seed"], x["steps"]) for x in ta] == [(x["arm"], x["seed"], x["steps"]) for x in tb]
assert a == b
PY
}
same_run() {
    cmp -s "$1/runs.csv" "$2/runs.csv" || die "$3: runs.csv differs"
    cmp -s "$1/layers.csv" "$2/layers.csv" || die "$3: layers.csv differs"
    same_json "$1/summary.json" "$2/summary.json" "${4:-}"
}

# the shipped config, run as a file, is the built-in study
# the list is read whole first: under pipefail, grep -q quitting at its first match could end the
# writer with SIGPIPE and fail the pipeline
list=$("$NVFP4" study list)
grep -q '^s3-2d .*\[config\]' <<< "$list" || die "study list does not mark s3-2d as a config study"
"$NVFP4" study show s3-2d > "$T/s3-2d.json" || die "study show"
cmp -s "$T/s3-2d.json" studies/s3-2d.json || die "study show s3-2d is not studies/s3-2d.json"
"$NVFP4" study run s3-2d --quick --quiet --out "$T/builtin" >/dev/null 2>&1 || die "s3-2d --quick"
"$NVFP4" study run --config studies/s3-2d.json --quick --quiet --out "$T/cfg" >/dev/null 2>&1 || die "--config s3-2d"
same_run "$T/builtin" "$T/cfg" "config vs built-in" nofindings

# per-layer overrides: every layer high precision = the FP32 shadow (gap 0);
# the first block in BF16 changes the run
cat > "$T/layers.json" <<'JSON'
{"name": "layers", "steps": 4, "model": {"preset": "tinylm"},
 "arms": [{"name": "paper"},
          {"name": "all-hp", "recipe": {"layers": [{"match": "*", "hp": true}]}},
          {"name": "block0-bf16", "recipe": {"layers": [{"match": "block0.*", "all": "bf16"}]}}]}
JSON
"$NVFP4" study run "$T/layers.json" --quiet --out "$T/lay" >/dev/null 2>&1 || die "layers config"
awk -F, 'NR > 1 && $1 == "all-hp" && $8 != $9 { bad = 1 } END { exit bad }' "$T/lay/runs.csv" \
    || die "all-hp: eval loss differs from the FP32 shadow's"
p=$(awk -F, 'NR > 1 && $1 == "paper" { v = $8 } END { print v }' "$T/lay/runs.csv")
b=$(awk -F, 'NR > 1 && $1 == "block0-bf16" { v = $8 } END { print v }' "$T/lay/runs.csv")
[ -n "$p" ] && [ "$p" != "$b" ] || die "block0-bf16 override changed nothing ($p vs $b)"

# bad configs: exit 2, the file, the JSON path and the problem
bad() { # $1: JSON text, $2: expected message fragment
    printf '%s\n' "$1" > "$T/bad.json"
    set +e
    "$NVFP4" study run "$T/bad.json" --quiet --out "$T/bad" >/dev/null 2>"$T/err"
    rc=$?
    set -e
    [ "$rc" = 2 ] || die "bad config exits $rc: $1"
    grep -qF "$T/bad.json" "$T/err" || die "error does not name the file: $(cat "$T/err")"
    grep -qF -- "$2" "$T/err" || die "expected '$2' in: $(cat "$T/err")"
    [ ! -e "$T/bad/runs.csv" ] || die "a bad config wrote runs.csv"
}
base='"name": "x", "steps": 4, "model": {"preset": "tinylm"}'
bad "{$base, \"arms\": [{\"name\": \"a\", \"recipe\": {\"fprop\": {\"a\": {\"roundng\": \"sr\"}}}}]}" \
    "\$.arms[0].recipe.fprop.a: unknown key 'roundng' (did you mean 'rounding'?)"
bad "{$base, \"arms\": [{\"name\": \"a\", \"recipe\": {\"wgrad\": {\"b\": {\"rht\": 12}}}}]}" \
    "\$.arms[0].recipe.wgrad.b.rht: expected 0 (off) or a power of two"
bad "{$base, \"arms\": [{\"name\": \"a\", \"switch_fwd\": \"80\"}]}" "\$.arms[0].switch_fwd: expected a step number"
bad "{$base, \"arms\": [{\"name\": \"a\"}, {\"name\": \"a\"}]}" "\$.arms[1].name: arm name \"a\" used twice"
bad "{$base, \"arms\": []}" "\$.arms: expected an array of 1..32 arms"
bad "{\"name\": \"x\", \"steps\": 4, \"model\": {\"preset\": \"lstm\"}, \"arms\": [{\"name\": \"a\"}]}" \
    "\$.model.preset: expected one of \"mlp\", \"tinylm\", \"gpt\", got \"lstm\""
bad "{$base, \"arms\": [{\"name\": \"a\", \"recipe\": {\"layers\": [{\"hp\": true}]}}]}" "\$.arms[0].recipe.layers[0].match"
bad "{$base, \"arms\": [{\"name\": \"a\"}]" "line"
gpt='"name": "x", "steps": 4, "model": {"preset": "gpt"}'
bad "{$gpt, \"train\": {\"probe_every\": 0, \"probe_scale\": 4}, \"arms\": [{\"name\": \"a\"}]}" \
    "\$.train.probe_scale: scales the gradient probe's batches: set probe_every too"
bad "{$gpt, \"arms\": [{\"name\": \"a\", \"train\": {\"probe_scale\": 0}}]}" \
    "\$.arms[0].train.probe_scale: expected an integer in 1..64"

# probe_scale: the probe's batches are 4x the step's, the run is not changed
# (the same losses), runs.csv's probe_tokens and the summary's
# tokens_per_step say the probe's batch; a runs.csv written before the
# probe_tokens column still reads (study plot)
cat > "$T/ps.json" <<'EOF'
{"name": "ps", "steps": 3,
 "model": {"preset": "gpt", "d_model": 32, "n_heads": 2, "d_hidden": 128, "seq_len": 32},
 "train": {"batch": 4, "probe_every": 1, "heldout_tokens": 4096},
 "arms": [{"name": "x1"}, {"name": "x4", "train": {"probe_scale": 4}}]}
EOF
"$NVFP4" study run "$T/ps.json" --quiet --out "$T/ps" >/dev/null 2>"$T/err" || die "probe_scale run: $(cat "$T/err")"
python3 - "$T/ps" > "$T/out" 2>&1 <<'PY' || die "probe_scale: $(cat "$T/out")"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1] + "/runs.csv")))
x1 = [r for r in rows if r["arm"] == "x1"]
x4 = [r for r in rows if r["arm"] == "x4"]
assert len(x1) == len(x4) == 3, rows
for a, b in zip(x1, x4):
    assert a["loss"] == b["loss"] and a["eval_loss"] == b["eval_loss"], (a, b)
    assert (a["probe_tokens"], b["probe_tokens"]) == ("128", "512"), (a, b)
    assert a["grad_noise"] != b["grad_noise"], (a, b)
nq = {o["arm"]: o["tokens_per_step"] for o in json.load(open(sys.argv[1] + "/summary.json"))["noise_to_quant"]}
assert nq == {"x1": 128, "x4": 512}, nq
PY
cp -r "$T/ps" "$T/psv1"
cut -d, -f1-17 "$T/ps/runs.csv" > "$T/psv1/runs.csv"
"$NVFP4" study plot "$T/psv1" >/dev/null 2>"$T/err" || die "study plot of a runs.csv without probe_tokens: $(cat "$T/err")"

# --shard 0/2 + 1/2 merged = the whole run, every summary field kept
A="s3-2d --steps 3 --seeds 3 --quiet"
"$NVFP4" study run $A --out "$T/whole" >/dev/null 2>&1 || die "whole run"
"$NVFP4" study run $A --shard 0/2 --out "$T/sh0" >/dev/null 2>&1 || die "shard 0/2"
"$NVFP4" study run $A --shard 1/2 --out "$T/sh1" >/dev/null 2>&1 || die "shard 1/2"
"$NVFP4" study merge --out "$T/merged" "$T/sh1" "$T/sh0" >/dev/null 2>&1 || die "merge"
same_run "$T/merged" "$T/whole" "merged shards"

# a study run from a file leaves its config.json, so its shards merge and
# its folder plots again without the file
L="$T/layers.json --seeds 2 --quiet"
"$NVFP4" study run $L --out "$T/lwhole" >/dev/null 2>&1 || die "file study, whole run"
python3 -c 'import json, sys; assert json.load(open(sys.argv[1])) == json.load(open(sys.argv[2]))' \
    "$T/lwhole/config.json" "$T/layers.json" || die "config.json of a file study is not its config"
"$NVFP4" study run $L --shard 0/2 --out "$T/lsh0" >/dev/null 2>&1 || die "file study, shard 0/2"
"$NVFP4" study run $L --shard 1/2 --out "$T/lsh1" >/dev/null 2>&1 || die "file study, shard 1/2"
mv "$T/layers.json" "$T/layers.moved"
"$NVFP4" study merge --out "$T/lmerged" "$T/lsh0" "$T/lsh1" >/dev/null 2>"$T/lerr" || die "merge of a file study: $(cat "$T/lerr")"
same_run "$T/lmerged" "$T/lwhole" "merged shards of a file study" nofindings
cmp -s "$T/lmerged/config.json" "$T/lwhole/config.json" || die "merge did not keep config.json"
"$NVFP4" study plot "$T/lmerged" >/dev/null 2>&1 || die "plot of a merged file study"
mv "$T/layers.moved" "$T/layers.json"
rm "$T/lsh0/config.json"
set +e
"$NVFP4" study merge --out "$T/lnone" "$T/lsh0" "$T/lsh1" >/dev/null 2>"$T/lerr"
rc=$?
set -e
[ "$rc" = 2 ] || die "merge of a file study without config.json exits $rc"
grep -q "unknown study layers (not built in, and $T/lsh0 has no config.json)" "$T/lerr" \
    || die "merge without config.json: $(cat "$T/lerr")"

# --resume: SIGKILL once a job finished and another has a checkpoint, rerun
R="s3-2d --steps 60 --seeds 2 --threads 1 --checkpoint-every 5"
"$NVFP4" study run $R --quiet --out "$T/rwhole" >/dev/null 2>&1 || die "resume reference run"
"$NVFP4" study run $R --quiet --out "$T/rk" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 2000); do
    ls "$T"/rk/.resume/*.done >/dev/null 2>&1 && ls "$T"/rk/.resume/*.ckpt >/dev/null 2>&1 && break
    sleep 0.02
done
kill -9 "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
[ ! -e "$T/rk/runs.csv" ] || die "the run finished before the kill (no resume tested)"
ls "$T"/rk/.resume/*.ckpt >/dev/null 2>&1 || die "no checkpoint left by the killed run"
"$NVFP4" study run $R --out "$T/rk" --resume 2>"$T/rlog" >/dev/null || die "--resume"
grep -q "finished before, skipped" "$T/rlog" || die "--resume did not skip the finished job"
same_run "$T/rk" "$T/rwhole" "resumed run"
[ ! -e "$T/rk/.resume" ] || die "--resume left its .resume folder"

# MPI: 2 ranks = 1 process
if [ -x "$NVFP4_MPI" ] && command -v mpirun >/dev/null 2>&1; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    mpirun -np 2 --oversubscribe "$NVFP4_MPI" study run $A --out "$T/mpi" >/dev/null 2>"$T/mpierr" \
        || die "mpirun -np 2: $(tail -5 "$T/mpierr")"
    same_run "$T/mpi" "$T/whole" "mpirun -np 2"
    mpirun -np 2 --oversubscribe "$NVFP4_MPI" study run s3-2d --quick --quiet --out "$T/mpiq" >/dev/null 2>&1 \
        || die "mpirun --quick"
    same_run "$T/mpiq" "$T/builtin" "mpirun -np 2 --quick"
    # s5's own jobs (its seeds): rank 1's rows reach rank 0, the file is one process's
    "$NVFP4" study run s5 --quick --seeds 3 --quiet --out "$T/s5one" >/dev/null 2>&1 || die "s5 --seeds 3"
    mpirun -np 2 --oversubscribe "$NVFP4_MPI" study run s5 --quick --seeds 3 --threads 1 --quiet --out "$T/s5mpi" \
        >/dev/null 2>"$T/mpierr" || die "mpirun -np 2 s5: $(tail -5 "$T/mpierr")"
    cmp -s "$T/s5one/s5_gradfid.csv" "$T/s5mpi/s5_gradfid.csv" || die "s5 under mpirun -np 2 differs from one process"
    # a rank that cannot start (rank 1's folder lies under a regular file)
    # stops both ranks with an error naming it; none waits for the other
    cat >"$T/rank1bad.sh" <<EOS
#!/bin/sh
if [ "\$OMPI_COMM_WORLD_RANK" = 1 ]; then out=/etc/passwd/x; else out="$T/mpibad"; fi
exec "$NVFP4_MPI" study run s3-2d --quick --quiet --out "\$out"
EOS
    chmod +x "$T/rank1bad.sh"
    rc=0
    timeout 120 mpirun -np 2 --oversubscribe "$T/rank1bad.sh" >/dev/null 2>"$T/mpibaderr" || rc=$?
    [ "$rc" != 124 ] || die "mpirun with a rank that cannot start hung"
    [ "$rc" != 0 ] || die "mpirun with a rank that cannot start exited 0"
    grep -q "/etc/passwd/x" "$T/mpibaderr" || die "the failing rank's error does not name its folder: $(tail -3 "$T/mpibaderr")"
    [ ! -e "$T/mpibad/runs.csv" ] || die "rank 0 wrote runs.csv although rank 1 could not start"
    # ranks on different OpenBLAS kernels (the files depend on the kernel):
    # refused at the gate, the odd rank naming both kernels, nothing written
    cat >"$T/rankkernel.sh" <<EOS
#!/bin/sh
if [ "\$OMPI_COMM_WORLD_RANK" = 1 ]; then export OPENBLAS_CORETYPE=Prescott; else export OPENBLAS_CORETYPE=Nehalem; fi
exec "$NVFP4_MPI" study run s3-2d --quick --quiet --out "$T/mpikern"
EOS
    chmod +x "$T/rankkernel.sh"
    rc=0
    timeout 120 mpirun -np 2 --oversubscribe "$T/rankkernel.sh" >/dev/null 2>"$T/mpikernerr" || rc=$?
    [ "$rc" = 2 ] || die "mpirun with ranks on different OpenBLAS kernels: exit $rc, expected 2"
    grep -q "rank 1 runs OpenBLAS's Prescott kernel and rank 0 Nehalem" "$T/mpikernerr" \
        || die "the kernel refusal does not name the ranks' kernels: $(tail -3 "$T/mpikernerr")"
    [ ! -e "$T/mpikern/runs.csv" ] || die "rank 0 wrote runs.csv although the ranks' kernels differ"
else
    echo "test_study_lab: MPI part skipped (no nvfp4-mpi or mpirun: apt-get install openmpi-bin libopenmpi-dev)"
fi
echo "test_study_lab: ok"
