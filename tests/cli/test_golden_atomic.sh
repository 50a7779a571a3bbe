#!/usr/bin/env bash
# test_golden_atomic.sh - a golden suite is written whole or not at all
# (issue 14, item 5): after a full disk, a failed re-run into an existing
# suite, SIGKILL or SIGINT mid-run, the suite folder is the complete old suite,
# the complete new one, or absent (`sha256sum -c MANIFEST` passes and the folder
# holds nothing its MANIFEST does not list); a folder that is not a suite of
# ours is refused (exit 2) unless --force. The full-disk cases mount a small
# tmpfs and are skipped where mounting is not permitted.
set -uo pipefail
: "${NVFP4:?set NVFP4 to the nvfp4 binary}"
tmp=$(mktemp -d)
mnt=""
cleanup() {
    [ -n "$mnt" ] && umount "$mnt" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp"
fail=0
ok()   { echo "ok   $1"; }
bad()  { echo "FAIL $1"; fail=1; }
skip() { echo "skip $1"; }

# whole DIR: MANIFEST verifies and every top-level entry is listed in it
whole() {
    local d=$1
    [ -f "$d/MANIFEST" ] || return 1
    (cd "$d" && sha256sum -c --quiet --strict MANIFEST >/dev/null 2>&1) || return 1
    local e
    for e in $(ls -A "$d"); do
        [ "$e" = MANIFEST ] && continue
        grep -qE "^[0-9a-f]{64}  $e(/|\$)" "$d/MANIFEST" || return 1
    done
    return 0
}
# no hidden temporary beside or inside DIR's parent
no_temps() { [ -z "$(find "$1" -name '.*.tmp-*' 2>/dev/null | head -n 1)" ]; }

# ---- a foreign non-empty folder is refused; --force replaces it ----------------
mkdir foreign && echo keep >foreign/notes.txt
$NVFP4 golden --suite edge --recipe te --out foreign >/dev/null 2>err.txt; rc=$?
if [ $rc -eq 2 ] && grep -qF "foreign: not empty and not a golden suite" err.txt && grep -qF "notes.txt" err.txt \
    && [ "$(ls -A foreign)" = notes.txt ]; then ok "a foreign folder is refused (exit 2) and left as it was"
else bad "foreign folder: rc=$rc, holds $(ls -A foreign | tr '\n' ' '): $(cat err.txt)"; fi
$NVFP4 golden --suite edge --recipe te --out foreign --force >/dev/null 2>err.txt \
    && whole foreign && [ ! -e foreign/notes.txt ] && ok "--force replaces it with a whole suite" \
    || bad "--force: $(cat err.txt); holds $(ls -A foreign | tr '\n' ' ')"
# a suite of ours plus a stray file is no longer only ours
$NVFP4 golden --suite edge --recipe te --out g >/dev/null 2>&1 && whole g || bad "setup: suite g"
echo stray >g/stray.txt
$NVFP4 golden --suite edge --recipe te --seed 2 --out g >/dev/null 2>err.txt; rc=$?
[ $rc -eq 2 ] && grep -qF "'stray.txt' is not in a MANIFEST" err.txt && ok "a suite with a stray file is refused" \
    || bad "stray file: rc=$rc: $(cat err.txt)"
rm g/stray.txt
# an empty folder and a suite of ours are replaced
mkdir empty
$NVFP4 golden --suite edge --recipe te --out empty >/dev/null 2>err.txt && whole empty \
    && ok "an empty folder takes the suite" || bad "empty folder: $(cat err.txt)"
$NVFP4 golden --suite shapes --recipe te --seed 2 --format npy --out g >/dev/null 2>err.txt && whole g \
    && ! grep -q "edge-" g/MANIFEST && ok "a suite of ours is replaced whole (no case of the old one left)" \
    || bad "replace own suite: $(cat err.txt)"
echo f >plainfile
$NVFP4 golden --suite edge --recipe te --out plainfile --force >/dev/null 2>err.txt; rc=$?
[ $rc -eq 2 ] && grep -qF "plainfile: exists and is not a folder" err.txt && [ "$(cat plainfile)" = f ] \
    && ok "a file is never replaced, even with --force" || bad "plain file: rc=$rc: $(cat err.txt)"
no_temps . && ok "no temporary left so far" || bad "temporaries left: $(find . -name '.*.tmp-*')"

# ---- SIGKILL and SIGINT mid-run ----------------------------------------------------
# A level-2 suite takes a few tenths of a second; kill at several points.
$NVFP4 golden --suite all --level 2 --recipe te --out k >/dev/null 2>&1 && whole k || bad "setup: suite k"
cp k/MANIFEST k.old
kfail=0
for sig in KILL INT TERM; do
    for d in 0.02 0.05 0.1 0.15 0.2 0.3 0.4; do
        $NVFP4 golden --suite all --level 2 --recipe te --seed 7 --format bin --out k >/dev/null 2>&1 &
        pid=$!
        sleep $d
        kill -$sig $pid 2>/dev/null
        wait $pid 2>/dev/null
        if [ -e k ] && ! whole k; then kfail=1; bad "SIG$sig after $d s: k is not a whole suite"; fi
        if [ $sig != KILL ] && ! no_temps .; then kfail=1; bad "SIG$sig after $d s left $(find . -name '.*.tmp-*' | head -3)"; fi
        rm -rf .k.tmp-* # SIGKILL cannot be caught: its hidden temporary may stay (never k itself)
        [ -e k ] || { $NVFP4 golden --suite all --level 2 --recipe te --out k >/dev/null 2>&1 || bad "re-setup k"; }
    done
done
[ $kfail = 0 ] && ok "after SIGKILL, SIGINT or SIGTERM at 7 points each the suite is whole; SIGINT/SIGTERM leave no temporary"

# ---- a full disk: no suite, no temporary; a failed re-run keeps the old suite ------
if [ "$(id -u)" = 0 ] && mkdir -p mnt && mount -t tmpfs -o size=64k tmpfs mnt 2>/dev/null; then
    mnt=$tmp/mnt
    $NVFP4 golden --suite edge --recipe te --out mnt/full >/dev/null 2>err.txt; rc=$?
    if [ $rc -eq 2 ] && grep -qF "mnt/full/" err.txt && grep -qF "No space left on device" err.txt \
        && ! grep -q "tmp-" err.txt && [ -z "$(ls -A mnt)" ]; then
        ok "out of space: exit 2, the message names the suite's file, nothing left"
    else bad "ENOSPC: rc=$rc, left $(ls -A mnt | tr '\n' ' '): $(cat err.txt)"; fi
    # a folder output that runs out of space: the message names the destination, not the temporary
    python3 -c 'import struct; open("x64k.bin","wb").write(struct.pack("<16384f", *range(16384)))'
    $NVFP4 quantize x64k.bin --shape 128x128 --dtype f32 --format bin -o mnt/outdir >/dev/null 2>err.txt; rc=$?
    if [ $rc -eq 2 ] && grep -qF "mnt/outdir/" err.txt && grep -qF "No space left on device" err.txt \
        && ! grep -q "tmp-" err.txt && [ -z "$(ls -A mnt)" ]; then
        ok "a folder output out of space: exit 2, the message names mnt/outdir/..., nothing left"
    else bad "folder ENOSPC: rc=$rc, left $(ls -A mnt | tr '\n' ' '): $(cat err.txt)"; fi
    umount mnt; mnt=""
    # room for one edge suite (~170 KB) but not for a second one beside it
    mount -t tmpfs -o size=256k tmpfs mnt && mnt=$tmp/mnt
    $NVFP4 golden --suite edge --recipe te --out mnt/s >/dev/null 2>err.txt && whole mnt/s || bad "setup: tmpfs suite: $(cat err.txt)"
    cp mnt/s/MANIFEST s.old
    $NVFP4 golden --suite all --recipe te --seed 2 --out mnt/s >/dev/null 2>err.txt; rc=$?
    if [ $rc -eq 2 ] && whole mnt/s && cmp -s s.old mnt/s/MANIFEST && [ "$(ls -A mnt)" = s ]; then
        ok "a re-run that runs out of space leaves the old suite whole (sha256sum -c passes), no temporary"
    else bad "failed re-run: rc=$rc, mnt holds $(ls -A mnt | tr '\n' ' '): $(cat err.txt)"; fi
    umount mnt; mnt=""
else
    skip "full-disk cases: cannot mount a tmpfs here (needs root)"
fi

exit $fail
