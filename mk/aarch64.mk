# mk/aarch64.mk - the aarch64 (Grace: GB200/GB300 hosts) build of libnvfp4 and
# its Check suites, cross-compiled with Debian's aarch64-linux-gnu-gcc into
# build-aarch64/ and run under qemu-aarch64 (user-mode emulation). Included by
# the Makefile. The study library, OpenBLAS and the CLI are not built: the
# suites below link libnvfp4 only.
#
# Debian packages: gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user, and
# after `dpkg --add-architecture arm64`: check:arm64 libsubunit-dev:arm64
# libjansson-dev:arm64 libssl-dev:arm64 libgsl27:arm64 libgslcblas0:arm64 libgomp1:arm64
# (.ci/run installs them). libgsl-dev is not co-installable across
# architectures (installing its :arm64 removes the native one the x86 build
# needs), so GSL is linked by the file name of its :arm64 runtime library;
# its headers are the native package's (they do not depend on the target).

AARCH64_CC     ?= aarch64-linux-gnu-gcc
AARCH64_AR     ?= aarch64-linux-gnu-ar
AARCH64_QEMU   ?= qemu-aarch64
AARCH64_BUILD  ?= build-aarch64
# Where qemu finds the target's dynamic loader: the host's root, i.e. the
# multiarch libc6:arm64 (/lib/ld-linux-aarch64.so.1) that the :arm64
# libraries pull in, so that loader and libc come from one package. The
# cross libc (/usr/aarch64-linux-gnu, libc6-arm64-cross) is only linked
# against: Debian 12 ships it at another revision than libc6:arm64, and its
# loader with the multiarch libc.so.6 hangs in the first pthread_create.
AARCH64_SYSROOT ?= /
AARCH64_PKGS := gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user check:arm64 libsubunit-dev:arm64 \
    libjansson-dev:arm64 libssl-dev:arm64 libgsl27:arm64 libgslcblas0:arm64 libgomp1:arm64
AARCH64_LIBDIR ?= /usr/lib/aarch64-linux-gnu
AARCH64_GSL := $(firstword $(wildcard $(AARCH64_LIBDIR)/libgsl.so.[0-9]*)) \
    $(firstword $(wildcard $(AARCH64_LIBDIR)/libgslcblas.so.[0-9]*))
# The suites of the codecs, the quantizer, files and the verifier (those
# that need neither the study library nor the CUDA toolkit), run once per
# variant in AARCH64_VARIANTS; the build uses the Makefile's flags
# (-ffp-contract=off, the warnings) with -Werror. check_reference compares
# the committed reference/ bundles (written on x86-64) byte for byte: their
# dequantized NaNs are the canonical 0x7FC00000 on every platform.
AARCH64_SUITES ?= formats quant reference swizzle swizzle_fast io verify recipes recipes_mx recipes_te recipes_ue5m3 \
    recipes_production hadamard philox sr_rbits layout rht_amax_skip separate
# The differential suites compare every variant the CPU has with the scalar
# reference by themselves: run once, with NEON active.
AARCH64_DIFF_SUITES ?= simd libpath ckpt_scan
AARCH64_VARIANTS ?= scalar neon
# Under qemu: the suites' minutes-long tests (Check tag "large") are left out
# and Check's per-test timeouts are stretched.
AARCH64_CK_ENV ?= CK_EXCLUDE_TAGS=large CK_TIMEOUT_MULTIPLIER=10

AARCH64_MAKE = $(MAKE) --no-print-directory BUILD=$(AARCH64_BUILD) CC=$(AARCH64_CC) AR=$(AARCH64_AR) \
    HAVE_CUDA= BLAS_CFLAGS= BLAS_LIBS= PKG_CFLAGS= STUDY_A= "PKG_LIBS=$(AARCH64_GSL) -ljansson -lcrypto" "CHECK_LIBS=-lcheck -lsubunit -lrt -lm -pthread" \
    "CFLAGS=-Werror $(CFLAGS)"

.PHONY: check-aarch64 aarch64-tools aarch64-build

aarch64-tools:
	@for t in $(AARCH64_CC) $(AARCH64_AR) $(AARCH64_QEMU); do command -v $$t >/dev/null 2>&1 || { \
	    echo "make check-aarch64: $$t not found; install the Debian packages: $(AARCH64_PKGS)" \
	         "(the :arm64 ones after dpkg --add-architecture arm64)" >&2; exit 1; }; done
	@test -n "$(word 2,$(AARCH64_GSL))" || { \
	    echo "make check-aarch64: no libgsl.so.N in $(AARCH64_LIBDIR); install libgsl27:arm64 libgslcblas0:arm64" >&2; exit 1; }
	@test -e $(AARCH64_LIBDIR)/libgomp.so.1 || { \
	    echo "make check-aarch64: no $(AARCH64_LIBDIR)/libgomp.so.1 (OpenMP's runtime, which the suites load under" \
	         "qemu); install libgomp1:arm64" >&2; exit 1; }
	@test -e $(AARCH64_SYSROOT)/lib/ld-linux-aarch64.so.1 || { \
	    echo "make check-aarch64: no $(AARCH64_SYSROOT)/lib/ld-linux-aarch64.so.1; install the Debian packages:" \
	         "$(AARCH64_PKGS) (the :arm64 ones after dpkg --add-architecture arm64)" >&2; exit 1; }

## aarch64-build: cross-compile libnvfp4 and the check-aarch64 suites into build-aarch64/ (aarch64-linux-gnu-gcc)
aarch64-build: aarch64-tools
	+@$(AARCH64_MAKE) $(AARCH64_BUILD)/lib/libnvfp4.a \
	    $(patsubst %,$(AARCH64_BUILD)/tests/check_%,$(sort $(AARCH64_SUITES) $(AARCH64_DIFF_SUITES)))

## check-aarch64: cross-build for aarch64 and run the codec, quantizer, SIMD, io and verify suites under qemu-aarch64, with NVFP4_SIMD=scalar and =neon
check-aarch64: aarch64-build
	@start=$$(date +%s); pass=0; fail=0; \
	for vs in $(foreach v,$(AARCH64_VARIANTS),$(AARCH64_SUITES:%=$(v):%)) $(AARCH64_DIFF_SUITES:%=neon:%); do \
	    v=$${vs%%:*}; s=$${vs#*:}; t0=$$(date +%s); \
	    if env NVFP4_SIMD=$$v QEMU_LD_PREFIX=$(AARCH64_SYSROOT) $(AARCH64_CK_ENV) $(AARCH64_QEMU) \
	        $(AARCH64_BUILD)/tests/check_$$s > $(AARCH64_BUILD)/tests/check_$$s.$$v.log 2>&1; then \
	        pass=$$((pass + 1)); r=ok; \
	    else fail=$$((fail + 1)); r=FAIL; cat $(AARCH64_BUILD)/tests/check_$$s.$$v.log; fi; \
	    echo "aarch64 NVFP4_SIMD=$$v check_$$s: $$r, $$(tail -n 1 $(AARCH64_BUILD)/tests/check_$$s.$$v.log) ($$(( $$(date +%s) - t0 )) s)"; \
	done; \
	echo "check-aarch64: $$pass passed, $$fail failed, $$(( $$(date +%s) - start )) s under qemu"; test $$fail = 0

.PHONY: clean-aarch64
## clean-aarch64: remove build-aarch64/ (make clean does too)
clean-aarch64:
	rm -rf $(AARCH64_BUILD)
clean: clean-aarch64
