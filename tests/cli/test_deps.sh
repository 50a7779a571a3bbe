#!/usr/bin/env bash
# tests/cli/test_deps.sh - no call or include cycle between any two files
# (tools/deps-cycles.py over the built objects: file A depends on file B
# when A calls a function or reads a variable B defines, or includes B's own
# header): within each folder of src/ (with the includes of its own
# headers) and over every object of src/ and tools/ together (calls: a
# cycle that crosses folders). And the script finds a cycle when there is
# one: two objects made to call each other must be reported.
set -euo pipefail
NVFP4=${NVFP4:-build/bin/nvfp4}
BUILD=$(cd "$(dirname "$NVFP4")/.." && pwd)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
die() { echo "FAIL: $*" >&2; exit 1; }

[ -d "$BUILD/obj/src/study" ] || die "$BUILD/obj/src/study: no objects (build first)"
folders=0
for d in "$BUILD"/obj/src/*/; do
    name=$(basename "$d")
    ls "$d"*.o >/dev/null 2>&1 || continue
    "$ROOT/tools/deps-cycles.py" "$d" "$ROOT/src/$name" >"$T/out" || die "cycles in src/$name: $(cat "$T/out")"
    grep -q ' 0 cycle groups, 0 two-file cycles$' "$T/out" || die "src/$name: unexpected report: $(cat "$T/out")"
    folders=$((folders + 1))
done
# every object at once, named by its path (src_io_tset, tools_cli, ...): cycles across folders
mkdir "$T/all"
n=0
for f in $(find "$BUILD/obj/src" "$BUILD/obj/tools" -name '*.o'); do
    rel=${f#"$BUILD"/obj/}
    ln -s "$f" "$T/all/$(echo "$rel" | tr '/' '_')"
    n=$((n + 1))
done
"$ROOT/tools/deps-cycles.py" "$T/all" >"$T/out" || die "cycles across folders: $(cat "$T/out")"
grep -q ' 0 cycle groups, 0 two-file cycles$' "$T/out" || die "unexpected report: $(cat "$T/out")"

# the detector itself: a.c calls b(), b.c calls a()
mkdir "$T/obj"
printf 'void b(void);\nvoid a(void) { b(); }\n' >"$T/a.c"
printf 'void a(void);\nvoid b(void) { a(); }\nvoid c(void) {}\n' >"$T/b.c"
printf 'void c(void);\nvoid d(void) { c(); }\n' >"$T/d.c"
for f in a b d; do ${CC:-cc} -c -o "$T/obj/$f.o" "$T/$f.c"; done
if "$ROOT/tools/deps-cycles.py" "$T/obj" >"$T/out2"; then die "a <-> b not found: $(cat "$T/out2")"; fi
grep -q '1 cycle groups, 1 two-file cycles: a<->b$' "$T/out2" || die "wrong report: $(cat "$T/out2")"
echo "deps: no cycle within $folders folders of src/ nor among all $n objects of src/ and tools/; a planted a<->b cycle found"
