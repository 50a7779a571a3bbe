#!/usr/bin/env bash
# determinism.sh - `make determinism`: builds tests/tools/codec_digest.c and
# the scalar codec sources with gcc and clang at -O0 and -O3 (golden-path
# flags: -ffp-contract=off, no fast-math) and demands that every build prints
# the same hash for every codec function. A compiler that is not installed is
# skipped with a message; fewer than two builds is a failure (nothing was
# compared). Exit 0 on PASS, 1 on differences, 2 on a build error.
set -u
cd "$(dirname "$0")/.."
out="${BUILD:-build}/determinism"
mkdir -p "$out"
srcs="tests/tools/codec_digest.c src/formats.c src/philox.c src/common.c"
flags="-std=c11 -D_GNU_SOURCE -ffp-contract=off -fno-fast-math -Iinclude -Isrc -Itests"
ref=""
builds=0
status=0
for cc in gcc clang; do
    if ! command -v "$cc" >/dev/null 2>&1; then
        echo "determinism: SKIP $cc (not installed)"
        continue
    fi
    for opt in -O0 -O3; do
        name="$cc$opt"
        if ! $cc $flags $opt -o "$out/codec_digest_$name" $srcs -lm; then
            echo "determinism: FAIL: $name does not build"
            exit 2
        fi
        "$out/codec_digest_$name" > "$out/digest_$name.txt" || { echo "determinism: FAIL: $name digest crashed"; exit 2; }
        builds=$((builds + 1))
        if [ -z "$ref" ]; then
            ref="$name"
            echo "determinism: reference $name:"
            sed 's/^/    /' "$out/digest_$name.txt"
        elif cmp -s "$out/digest_$ref.txt" "$out/digest_$name.txt"; then
            echo "determinism: $name identical to $ref"
        else
            echo "determinism: $name DIFFERS from $ref:"
            diff "$out/digest_$ref.txt" "$out/digest_$name.txt" | sed 's/^/    /'
            status=1
        fi
    done
done
if [ "$builds" -lt 2 ]; then
    echo "determinism: FAIL (only $builds build(s): nothing to compare)"
    exit 1
fi
if [ "$status" = 0 ]; then
    echo "determinism: PASS ($builds builds, $(wc -l < "$out/digest_$ref.txt") codec hashes identical)"
else
    echo "determinism: FAIL (codec outputs differ between builds)"
fi
exit "$status"
