#!/usr/bin/env bash
# tests/cli/test_study_shadow.sh - the FP32 shadow shared by the arms of a
# seed (docs/studies.md, "The baseline"): the shared run writes the bytes of
# the run where every job trains its own shadow (--own-shadows), at 1 and 2
# threads (2: two shadows trained side by side, then their jobs), for
# shards merged, for a run SIGKILLed and resumed (with the shared shadow,
# and with --own-shadows, where the resumed job retrains the trace its
# checkpoint needs), and under mpirun -np 2. And it is FP32: s8's bf16 arm
# (hp_format bf16) is not its shadow.
set -euo pipefail
NVFP4=${NVFP4:-build/bin/nvfp4}
NVFP4_MPI=${NVFP4_MPI:-$(dirname "$NVFP4")/nvfp4-mpi}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
die() { echo "FAIL: $*" >&2; exit 1; }
same_csv() {
    cmp -s "$1/runs.csv" "$2/runs.csv" || die "$3: runs.csv differs"
    cmp -s "$1/layers.csv" "$2/layers.csv" || die "$3: layers.csv differs"
}

S="s8-ablate --quick --seeds 2"
"$NVFP4" study run $S --threads 1 --own-shadows --quiet --out "$T/own" >/dev/null 2>&1 || die "--own-shadows"
"$NVFP4" study run $S --threads 1 --out "$T/one" >/dev/null 2>"$T/log1" || die "shared, 1 thread"
same_csv "$T/own" "$T/one" "shared shadow, 1 thread"
[ "$(grep -c 'fp32-shadow .*shared by 8 jobs' "$T/log1")" = 2 ] || die "not one shadow per seed: $(cat "$T/log1")"
"$NVFP4" study run $S --threads 2 --quiet --out "$T/two" >/dev/null 2>&1 || die "shared, 2 threads"
same_csv "$T/own" "$T/two" "shared shadow, 2 threads"

# the shadow is FP32: the bf16 arm's final eval loss is not its shadow's
awk -F, 'NR > 1 && $1 == "bf16" { q = $8; r = $9 } END { exit !(q != "" && q != r) }' "$T/one/runs.csv" \
    || die "s8's bf16 arm equals its shadow"

# shards (one job each: each trains its own shadow) merged = the shared run
for i in 0 1 2; do
    "$NVFP4" study run $S --threads 1 --quiet --shard $i/3 --out "$T/sh$i" >/dev/null 2>&1 || die "shard $i/3"
done
"$NVFP4" study merge --out "$T/merged" "$T/sh0" "$T/sh1" "$T/sh2" >/dev/null 2>&1 || die "merge"
same_csv "$T/merged" "$T/own" "merged shards"

# --resume after SIGKILL, a checkpoint every step: the killed jobs read the
# shared shadow; resumed shared, and resumed with --own-shadows (the job
# with a checkpoint then retrains the trace it needs)
R="s8-ablate --quick --steps 16 --seeds 1 --threads 1 --checkpoint-every 1"
"$NVFP4" study run $R --own-shadows --quiet --out "$T/rwhole" >/dev/null 2>&1 || die "resume reference run"
for mode in shared own; do
    "$NVFP4" study run $R --quiet --out "$T/rk$mode" >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 1 3000); do
        ls "$T/rk$mode"/.resume/*.done >/dev/null 2>&1 && ls "$T/rk$mode"/.resume/*.ckpt >/dev/null 2>&1 && break
        sleep 0.02
    done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    [ ! -e "$T/rk$mode/runs.csv" ] || die "the run finished before the kill (no resume tested)"
    ls "$T/rk$mode"/.resume/*.ckpt >/dev/null 2>&1 || die "no checkpoint left by the killed run"
    extra=""
    [ $mode = own ] && extra=--own-shadows
    if [ $mode = shared ]; then
        # the trace was kept (--checkpoint-every): a changed byte is refused, naming the file
        tr=$(ls "$T/rkshared"/.resume/shadow-1-*.trace 2>/dev/null) || die "the killed run kept no shadow trace"
        cp -r "$T/rkshared" "$T/rkbad"
        printf '\x01' | dd of="$T/rkbad/.resume/$(basename "$tr")" bs=1 seek=200 conv=notrunc 2>/dev/null
        set +e
        "$NVFP4" study run $R --out "$T/rkbad" --resume >/dev/null 2>"$T/rlog"
        rc=$?
        set -e
        [ $rc = 2 ] || die "--resume with a damaged shadow trace exited $rc (want 2)"
        grep -q "shadow-1-.*trace: not a sound shadow trace" "$T/rlog" || die "damaged trace: $(cat "$T/rlog")"
    fi
    "$NVFP4" study run $R $extra --out "$T/rk$mode" --resume 2>"$T/rlog" >/dev/null || die "--resume ($mode)"
    grep -q "finished before, skipped" "$T/rlog" || die "--resume did not skip the finished job"
    if [ $mode = shared ]; then
        grep -q "fp32-shadow .*seed 1: trace read from" "$T/rlog" || die "--resume trained the kept shadow again"
    fi
    same_csv "$T/rk$mode" "$T/rwhole" "resumed run ($mode)"
    [ ! -e "$T/rk$mode/.resume" ] || die "--resume ($mode) left its .resume folder: $(ls "$T/rk$mode/.resume")"
done

if [ -x "$NVFP4_MPI" ] && command -v mpirun >/dev/null 2>&1; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    mpirun -np 2 --oversubscribe "$NVFP4_MPI" study run $S --threads 1 --quiet --out "$T/mpi" >/dev/null \
        2>"$T/mpierr" || die "mpirun -np 2: $(tail -5 "$T/mpierr")"
    same_csv "$T/mpi" "$T/own" "mpirun -np 2"
else
    echo "test_study_shadow: MPI part skipped (no nvfp4-mpi or mpirun)"
fi
echo "test_study_shadow: ok"
