#!/usr/bin/env bash
# test_reference.sh - the committed golden suite reference/ is exactly what
# the current tool generates (tools/golden-reference.sh into a temporary
# folder, then a byte-for-byte comparison), and every MANIFEST checks.
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${NVFP4:?set NVFP4 to the nvfp4 binary}"
if [ ! -d reference ]; then echo "test_reference: no reference/ folder"; exit 1; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bash tools/golden-reference.sh "$NVFP4" "$tmp/ref"
if ! diff -r reference "$tmp/ref" --exclude=README.md >"$tmp/diff.txt"; then
    echo "test_reference: reference/ differs from a fresh \`make golden\`:"; head -20 "$tmp/diff.txt"; exit 1
fi
n=0
for m in reference/*/MANIFEST; do
    (cd "$(dirname "$m")" && sha256sum --quiet -c MANIFEST) || { echo "test_reference: $m does not check"; exit 1; }
    n=$((n + 1))
done
[ "$n" -ge 6 ] || { echo "test_reference: expected at least 6 suites, found $n"; exit 1; }
echo "test_reference: $n suites regenerate byte for byte"
