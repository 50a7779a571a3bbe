#!/usr/bin/env bash
# test_install.sh - `make install` into a temporary DESTDIR, then use the
# install as a user would (README.md "The library", docs/cuda.md):
#  - the README's library example, extracted from README.md, compiles with
#    `pkg-config --cflags --libs nvfp4` (and with -Wall -Wextra -Werror) and
#    prints what it should; a C++ file that includes <nvfp4.h> links too;
#  - every installed shared library exports only names that an installed
#    header declares, and every function its headers declare; libnvfp4 and
#    libnvfp4_study export disjoint sets; nvfp4.pc and libnvfp4.so carry no
#    OpenBLAS; nvfp4-study links a study call;
#  - where libnvfp4_cuda.so is built (nvcc exists: `make cuda`), docs/cuda.md's
#    example compiles with `pkg-config --cflags --libs nvfp4-cuda` and runs
#    (on the GPU, or in host emulation without one);
#  - `make uninstall` leaves nothing behind.
# Uses the build dir of the nvfp4 under test ($NVFP4 = BUILD/bin/nvfp4).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
BUILD=${NVFP4:+$(dirname "$(dirname "$NVFP4")")}
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$root/$BUILD ;; esac
NVFP4=${NVFP4:-$BUILD/bin/nvfp4}
fail() { echo "test_install: FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ -n "${NVFP4_SANITIZE:-}" ]; then
    # The example would need the sanitizer runtime of an ASan/UBSan libnvfp4.
    echo "test_install: skipped under make sanitize (an installed ASan library is not what users get)"
    exit 0
fi
command -v pkg-config >/dev/null 2>&1 || fail "pkg-config not found (Debian package pkg-config)"

dest=$tmp/root
prefix=/opt/nvfp4kit
inst=$dest$prefix
if command -v "${NVCC:-nvcc}" >/dev/null 2>&1; then
    # the CUDA library is installed where it is built (test_cuda_build.sh builds it first)
    make -s BUILD="$BUILD" cuda >"$tmp/cuda.log" 2>&1 || { tail -n 20 "$tmp/cuda.log"; fail "make cuda failed"; }
    [ -f "$BUILD/lib/libnvfp4_cuda.so" ] || fail "make cuda did not build $BUILD/lib/libnvfp4_cuda.so"
fi
make -s BUILD="$BUILD" DESTDIR="$dest" PREFIX="$prefix" install >"$tmp/install.log" 2>&1 ||
    { tail -n 20 "$tmp/install.log"; fail "make install failed"; }
for f in include/nvfp4.h include/nvfp4/quant.h include/nvfp4/study.h lib/libnvfp4.a lib/libnvfp4_study.a \
    lib/libnvfp4.so.0 lib/libnvfp4_study.so.0 lib/pkgconfig/nvfp4.pc lib/pkgconfig/nvfp4-study.pc bin/nvfp4; do
    [ -f "$inst/$f" ] || fail "make install did not install $prefix/$f"
done
# nvfp4-mpi goes with the rest where it is built (mpicc present)
if [ -x "$BUILD/bin/nvfp4-mpi" ]; then
    [ -x "$inst/bin/nvfp4-mpi" ] || fail "make install did not install $prefix/bin/nvfp4-mpi"
fi
for l in libnvfp4 libnvfp4_study; do
    [ "$(readlink "$inst/lib/$l.so")" = "$l.so.0" ] || fail "$prefix/lib/$l.so is not a link to $l.so.0"
    soname=$(readelf -d "$inst/lib/$l.so.0" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    [ "$soname" = "$l.so.0" ] || fail "$l.so.0 has soname '$soname'"
done

# pkg-config as a user runs it, against the staged install (the sysroot maps
# $prefix in the .pc files to $dest$prefix).
pc() { PKG_CONFIG_PATH="$inst/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest" pkg-config "$@"; }
flags=$(pc --cflags --libs nvfp4) || fail "pkg-config nvfp4"
echo "$flags" | grep -q -- "-I$inst/include" || fail "pkg-config --cflags nvfp4: $flags"
echo "$flags" | grep -q -- "-lnvfp4" || fail "pkg-config --libs nvfp4: $flags"
[ "$(pc --modversion nvfp4)" = "$("$NVFP4" version 2>/dev/null | grep -o '[0-9]*\.[0-9]*\.[0-9]*' | head -n 1)" ] ||
    fail "nvfp4.pc version $(pc --modversion nvfp4) differs from the library's"
! grep -qi openblas "$inst/lib/pkgconfig/nvfp4.pc" || fail "nvfp4.pc mentions OpenBLAS"
! pc --static --libs nvfp4 | grep -qi openblas || fail "pkg-config --static --libs nvfp4 pulls OpenBLAS"
pc --libs nvfp4-study | grep -q -- "-lnvfp4_study" || fail "pkg-config --libs nvfp4-study: $(pc --libs nvfp4-study)"
pc --libs nvfp4-study | grep -q -- "-lnvfp4\b" || fail "nvfp4-study does not require nvfp4"
pc --static --libs nvfp4-study | grep -q -- "-lopenblas" || fail "nvfp4-study does not name OpenBLAS"

# No OpenBLAS behind libnvfp4.so, directly or through a dependency (GSL brings
# its own small libgslcblas).
ldd "$inst/lib/libnvfp4.so.0" >"$tmp/ldd.txt" 2>&1 || fail "ldd libnvfp4.so.0: $(cat "$tmp/ldd.txt")"
! grep -qi openblas "$tmp/ldd.txt" || fail "libnvfp4.so links OpenBLAS: $(grep -i openblas "$tmp/ldd.txt")"
LD_LIBRARY_PATH="$inst/lib" ldd "$inst/lib/libnvfp4_study.so.0" >"$tmp/ldd_study.txt" 2>&1
grep -q "libnvfp4.so.0 => $inst/lib/libnvfp4.so.0" "$tmp/ldd_study.txt" ||
    fail "libnvfp4_study.so.0 does not load the installed libnvfp4.so.0: $(cat "$tmp/ldd_study.txt")"

# Exports: every defined dynamic symbol of every installed shared library is
# a word of the installed headers.
cat "$inst/include/nvfp4.h" "$inst"/include/nvfp4/*.h | grep -oE '[A-Za-z_][A-Za-z0-9_]*' | sort -u >"$tmp/words"
summary=
for so in "$inst"/lib/*.so.0; do
    name=$(basename "$so")
    nm -D --defined-only "$so" | awk 'NF >= 3 { print $3 }' | sed 's/@.*//' | sort -u >"$tmp/$name.syms"
    n=$(wc -l <"$tmp/$name.syms")
    [ "$n" -gt 0 ] || fail "$name exports nothing"
    comm -23 "$tmp/$name.syms" "$tmp/words" >"$tmp/$name.extra"
    [ -s "$tmp/$name.extra" ] && fail "$name exports $(wc -l <"$tmp/$name.extra") name(s) no installed header declares: $(head -n 20 "$tmp/$name.extra" | tr '\n' ' ')"
    summary="$summary $name: $n"
done
must() { grep -qx "$2" "$tmp/$1.syms" || fail "$1 does not export $2"; }
# ... and the other way round: every function an installed header declares
# (outside comments, not static inline) is exported by its library, so no
# header lacks its NVFP4_BEGIN_DECLS and no declaration its definition.
declared() {
    grep -hvE '^[[:space:]]*(\*|/\*|//)|^[[:space:]]*static|typedef' "$@" | grep -oE '\bnvfp4_[a-z0-9_]+ *\(' |
        tr -d ' (' | sort -u
}
exports_all() { # library, headers...
    local so=$1 missing
    shift
    missing=$(declared "$@" | comm -23 - "$tmp/$so.syms" | head -n 20 | tr '\n' ' ')
    [ -z "$missing" ] || fail "$so does not export these functions of its headers: $missing"
}
cpu_headers=$(ls "$inst/include/nvfp4.h" "$inst"/include/nvfp4/*.h | grep -v -e '/study\.h$' -e '/cuda\.h$')
exports_all libnvfp4.so.0 $cpu_headers
exports_all libnvfp4_study.so.0 "$inst/include/nvfp4/study.h"
for s in nvfp4_version nvfp4_quantize nvfp4_quantized_free nvfp4_quant_opts_init nvfp4_dequantize \
    nvfp4_e2m1_from_f32 nvfp4_e2m1_to_f32 nvfp4_e4m3_from_f32 nvfp4_e4m3_to_f32 nvfp4_philox4x32_10 nvfp4_simd_set; do
    must libnvfp4.so.0 "$s"
done
# The lab is in libnvfp4_study alone.
both=$(comm -12 "$tmp/libnvfp4.so.0.syms" "$tmp/libnvfp4_study.so.0.syms" | head -n 5 | tr '\n' ' ')
[ -z "$both" ] || fail "libnvfp4.so.0 and libnvfp4_study.so.0 both export: $both"

# The README's library example, verbatim, compiled as its first line says.
sed -n '/<!-- example:begin -->/,/<!-- example:end -->/p' README.md | sed '1,2d;$d' | sed '$d' >"$tmp/prog.c"
grep -q "nvfp4_quantize" "$tmp/prog.c" || fail "could not extract the library example from README.md"
grep -q 'cc prog.c $(pkg-config --cflags --libs nvfp4)' "$tmp/prog.c" || fail "the README example lost its compile line"
(cd "$tmp" && ${CC:-cc} prog.c $(pc --cflags --libs nvfp4) -o prog) || fail "the README example does not compile against the install"
${CC:-cc} -std=c11 -Wall -Wextra -Wshadow -Wconversion -Wstrict-prototypes -Werror "$tmp/prog.c" $(pc --cflags --libs nvfp4) \
    -o "$tmp/prog_strict" || fail "the README example is not warning-free"
LD_LIBRARY_PATH="$inst/lib" ldd "$tmp/prog" | grep -q "libnvfp4.so.0 => $inst/lib/libnvfp4.so.0" ||
    fail "the example does not load the installed libnvfp4.so.0"
LD_LIBRARY_PATH="$inst/lib" "$tmp/prog" >"$tmp/prog.out" 2>&1 || fail "the README example exits $?: $(cat "$tmp/prog.out")"
cat >"$tmp/prog.want" <<'EOF'
rowwise: 256 code bytes, 16 x 2 scales, amax 1.5, code byte 0 0xEF, scale 0 0x7E
columnwise: 32 x 16, amax after the RHT 2.5625
x[1] = -1.25 -> -1, x[2] = -1 -> -1
EOF
diff "$tmp/prog.want" "$tmp/prog.out" >"$tmp/prog.diff" || fail "README example output differs: $(cat "$tmp/prog.diff")"

# The static library links the same program (pkg-config --static for its dependencies).
${CC:-cc} "$tmp/prog.c" -o "$tmp/prog_static" $(pc --cflags nvfp4) "$inst/lib/libnvfp4.a" \
    $(pc --static --libs nvfp4 | sed -E 's/(^| )-lnvfp4( |$)/ /') ||
    fail "the README example does not link against libnvfp4.a with pkg-config --static"
"$tmp/prog_static" | diff "$tmp/prog.want" - >/dev/null || fail "the statically linked example prints otherwise"

# C++: the headers give C linkage.
if command -v "${CXX:-g++}" >/dev/null 2>&1; then
    printf '#include <nvfp4.h>\nint main() { nvfp4_quant_opts o; nvfp4_quant_opts_init(&o); return nvfp4_e2m1_from_f32(1.5f, NVFP4_RN, 0) == 3 ? 0 : 1; }\n' >"$tmp/cxx.cpp"
    ${CXX:-g++} -Wall -Wextra -Werror "$tmp/cxx.cpp" $(pc --cflags --libs nvfp4) -o "$tmp/cxx" ||
        fail "a C++ program including <nvfp4.h> does not compile and link"
    LD_LIBRARY_PATH="$inst/lib" "$tmp/cxx" || fail "the C++ program failed"
fi

# A program that uses a function of nvfp4/study.h (the first the library
# exports) and one of libnvfp4 links with pkg-config nvfp4-study and loads.
sfn=$(nm -D --defined-only "$inst/lib/libnvfp4_study.so.0" | awk '$2 == "T" { print $3; exit }')
[ -n "$sfn" ] || fail "libnvfp4_study.so.0 exports no function"
printf '#include <stdio.h>\n#include <nvfp4.h>\nint main(void) { void (*volatile f)(void) = (void (*)(void))%s;\n  printf("%%s %%d\\n", nvfp4_version(), f != NULL); return 0; }\n' "$sfn" >"$tmp/study.c"
${CC:-cc} -Wall "$tmp/study.c" $(pc --cflags --libs nvfp4-study) -o "$tmp/study" ||
    fail "a program using $sfn does not link with pkg-config nvfp4-study"
LD_LIBRARY_PATH="$inst/lib" "$tmp/study" >"$tmp/study.out" 2>&1 || fail "the nvfp4-study program failed: $(cat "$tmp/study.out")"

# The CUDA library and docs/cuda.md's example, where it was built.
cuda_note="no CUDA library (nvcc not found): nvfp4-cuda skipped"
if [ -f "$BUILD/lib/libnvfp4_cuda.so" ]; then
    for f in include/nvfp4/cuda.h lib/libnvfp4_cuda.so.0 lib/pkgconfig/nvfp4-cuda.pc; do
        [ -f "$inst/$f" ] || fail "make install did not install $prefix/$f next to the CUDA library"
    done
    [ "$(readlink "$inst/lib/libnvfp4_cuda.so")" = "libnvfp4_cuda.so.0" ] || fail "libnvfp4_cuda.so is not a link to .so.0"
    soname=$(readelf -d "$inst/lib/libnvfp4_cuda.so.0" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    [ "$soname" = "libnvfp4_cuda.so.0" ] || fail "libnvfp4_cuda.so.0 has soname '$soname'"
    exports_all libnvfp4_cuda.so.0 "$inst/include/nvfp4/cuda.h" $cpu_headers
    both=$(comm -12 "$tmp/libnvfp4_cuda.so.0.syms" "$tmp/libnvfp4_study.so.0.syms" | head -n 5 | tr '\n' ' ')
    [ -z "$both" ] || fail "libnvfp4_cuda.so.0 exports names of the study lab: $both"
    sed -n '/<!-- example:begin -->/,/<!-- example:end -->/p' docs/cuda.md | sed '1,2d;$d' | sed '$d' >"$tmp/cuda_example.c"
    grep -q "nvfp4_cuda_compare" "$tmp/cuda_example.c" || fail "could not extract the example from docs/cuda.md"
    grep -q 'pkg-config --cflags --libs nvfp4-cuda' "$tmp/cuda_example.c" || fail "the docs/cuda.md example lost its compile line"
    (cd "$tmp" && ${CC:-cc} cuda_example.c $(pc --cflags --libs nvfp4-cuda) -o cuda_example) ||
        fail "the docs/cuda.md example does not compile against the install"
    LD_LIBRARY_PATH="$inst/lib" ldd "$tmp/cuda_example" | grep -q "libnvfp4_cuda.so.0 => $inst/lib/libnvfp4_cuda.so.0" ||
        fail "the CUDA example does not load the installed libnvfp4_cuda.so.0"
    LD_LIBRARY_PATH="$inst/lib" "$tmp/cuda_example" >"$tmp/cuda.out" 2>&1 ||
        fail "the docs/cuda.md example exits $?: $(cat "$tmp/cuda.out")"
    grep -q "^1 mismatching code(s)" "$tmp/cuda.out" || fail "CUDA example output: $(cat "$tmp/cuda.out")"
    if grep -q "^no GPU" "$tmp/cuda.out"; then
        cuda_note="docs/cuda.md example linked and ran in host emulation (no GPU: the GPU run is skipped)"
    else
        cuda_note="docs/cuda.md example linked and ran on the GPU"
    fi
fi

# uninstall removes everything install put there.
make -s BUILD="$BUILD" DESTDIR="$dest" PREFIX="$prefix" uninstall >"$tmp/uninstall.log" 2>&1 ||
    { tail -n 20 "$tmp/uninstall.log"; fail "make uninstall failed"; }
left=$(find "$dest" ! -type d | sed "s|^$dest||")
[ -z "$left" ] || fail "make uninstall left: $left"
echo "test_install: ok (exports:$summary; no OpenBLAS behind libnvfp4.so; README example; $cuda_note)"
