#!/usr/bin/env bash
# golden-reference.sh NVFP4 OUTDIR - generate the committed golden suite
# (reference/) into OUTDIR: `nvfp4 golden --suite all --level 1 --seed 1` for
# each recipe below, with RN and with SR, one folder per recipe and rounding.
# `make golden` runs it into reference/; tests/cli/test_reference.sh runs it
# into a temporary folder and demands identical bytes.
set -euo pipefail
nvfp4=${1:?usage: golden-reference.sh NVFP4 OUTDIR}
out=${2:?usage: golden-reference.sh NVFP4 OUTDIR}
recipes="te torchao mxfp4-rceil"
mkdir -p "$out"
for r in $recipes; do
    for m in rn sr; do
        rm -rf "${out:?}/$r-$m"  # no stale cases from an older generator
        "$nvfp4" golden --suite all --recipe "$r" --round "$m" --level 1 --seed 1 --out "$out/$r-$m" 2>/dev/null
    done
done
