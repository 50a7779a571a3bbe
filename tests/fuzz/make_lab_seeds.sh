#!/usr/bin/env bash
# tests/fuzz/make_lab_seeds.sh - writes the seed corpus of the lab's fuzz
# targets (tests/fuzz/corpus/{labconfig,checkpoint,labdir}/) from a built
# tree: the shipped study configs and small hand-made ones; the checkpoint
# of a tiny MLP run after 3 steps (first byte 1: the target appends its
# checksum; 0: the file as saved); one study output folder as
# summary.json NUL runs.csv NUL layers.csv. Run from the repository root
# after `make`.
set -euo pipefail
NVFP4=${NVFP4:-build/bin/nvfp4}
C=tests/fuzz/corpus
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p $C/labconfig $C/checkpoint $C/labdir
for f in studies/*.json; do cp "$f" "$C/labconfig/seed-$(basename "$f")"; done
printf '{"name": "x", "steps": 4, "model": {"preset": "tinylm"}, "arms": [{"name": "a"}]}' > $C/labconfig/seed-min.json
printf '{"name": "g", "steps": 2, "model": {"preset": "gpt", "d_model": 32, "n_heads": 2}, "train": {"beta1": 0.9, "adam_eps": 1e-8},
 "quick": {"train": {"batch": 2}}, "arms": [{"name": "a", "recipe": {"layers": [{"match": "*", "hp": true}]}},
 {"name": "b", "steps_mult": 1.5, "switch_fwd": "80%%"}]}' > $C/labconfig/seed-gpt.json
cat > "$T/ck.c" <<'C'
#include <stdio.h>
#include <string.h>
#include "nvfp4/study.h"
int main(int argc, char **argv)
{
    nvfp4_train_cfg c;
    nvfp4_train_cfg_init(&c);
    c.model.d_in = 16, c.model.d_model = 16, c.model.d_out = 16, c.model.n_blocks = 1;
    c.batch = 16, c.steps = 6, c.log_every = 1;
    nvfp4_run *r;
    nvfp4_error e;
    if (nvfp4_run_create(&c, &r, &e) || nvfp4_run_advance(r, 3, &e) || nvfp4_run_save(r, argv[1], &e)) {
        fprintf(stderr, "%s\n", e.message);
        return 1;
    }
    nvfp4_run_free(r);
    return argc < 2;
}
C
cc -std=c11 -D_GNU_SOURCE -Iinclude "$T/ck.c" -o "$T/ck" build/lib/libnvfp4_study.a build/lib/libnvfp4.a \
    $(pkg-config --libs openblas 2>/dev/null || echo -lopenblas) -lgsl -ljansson -lcrypto -fopenmp -lm
"$T/ck" "$T/run.ckpt"
size=$(stat -c %s "$T/run.ckpt")
{ printf '\001'; head -c $((size - 65)) "$T/run.ckpt"; } > $C/checkpoint/seed-body
{ printf '\000'; cat "$T/run.ckpt"; } > $C/checkpoint/seed-whole
"$NVFP4" study run s3-2d --steps 2 --seeds 1 --quiet --out "$T/out" >/dev/null
{ cat "$T/out/summary.json"; printf '\000'; cat "$T/out/runs.csv"; printf '\000'; head -c 3000 "$T/out/layers.csv"; } \
    > $C/labdir/seed-s3-2d
ls -l $C/labconfig $C/checkpoint $C/labdir | grep -c seed-
