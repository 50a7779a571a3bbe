# nvfp4kit - GNU Makefile.  `make help` lists the targets.
#
# Sources are discovered by folder, so a new module file, recipe, CLI
# subcommand (tools/cmd_NAME.c) or Check suite (tests/check_NAME.c) needs no
# edit here.  Golden-path code is compiled with -ffp-contract=off and never
# with -ffast-math; FTZ/DAZ are never enabled.
#
# Two libraries, each static and shared: libnvfp4 (codecs, quantizer, RHT,
# GEMM, files, verifier, SIMD kernels; links GSL, jansson, libcrypto, no
# BLAS) and libnvfp4_study (src/study/, the error-accumulation laboratory,
# on top of libnvfp4; links OpenBLAS). Everything is compiled with
# -fvisibility=hidden: a shared library exports exactly what its installed
# headers declare between NVFP4_BEGIN_DECLS and NVFP4_END_DECLS
# (include/nvfp4/common.h), and mk/exports.map keeps any other global name
# local. tests/cli/test_install.sh checks both against an install. The CLI
# and the tests link the static libraries, so they may call internal
# functions too.

CC       ?= cc
OPT      ?= -O2
BUILD    ?= build
PREFIX   ?= /usr/local
DESTDIR  ?=
NVCC     ?= nvcc
PYTHON   ?= python3

PKGS       := gsl jansson
BLAS_CFLAGS := $(shell pkg-config --cflags openblas 2>/dev/null)
BLAS_LIBS   := $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas)
PKG_CFLAGS  := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# gsl's own cblas is not linked: OpenBLAS provides the cblas symbols.
# libcrypto (Debian libssl-dev): SHA-256 for golden MANIFEST files.
PKG_LIBS    := -lgsl -ljansson -lcrypto
CHECK_LIBS  := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lm)

WARN     := -Wall -Wextra -Wshadow -Wconversion -Wstrict-prototypes -Wmissing-prototypes
FPFLAGS  := -ffp-contract=off -fno-fast-math -fno-unsafe-math-optimizations
CFLAGS_ALL = -std=c11 -D_GNU_SOURCE $(OPT) -g $(WARN) $(FPFLAGS) -fopenmp -fPIC -fvisibility=hidden \
             -Iinclude -Isrc -I$(BUILD)/gen $(BLAS_CFLAGS) $(PKG_CFLAGS) $(SAN) $(CFLAGS)
# libnvfp4 links no BLAS; libnvfp4_study, the CLI and the tests add OpenBLAS
# (before GSL, so that its cblas, not GSL's own, serves the study GEMMs).
LIB_LDLIBS = $(PKG_LIBS) -fopenmp -lm $(SAN) $(LDFLAGS)
LDLIBS_ALL = $(BLAS_LIBS) $(PKG_LIBS) -fopenmp -lm $(SAN) $(LDFLAGS)

# CUDA toolkit (optional): headers give the independent oracles in tests
# (cuda_fp4.hpp, cuda_fp8.hpp, cuRAND's host generator); nvcc builds the GPU path.
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(shell command -v $(NVCC) 2>/dev/null))
HAVE_CUDA := $(if $(and $(CUDA_HOME),$(wildcard $(CUDA_HOME)/include/cuda_fp4.h)),1,)

LIB_SRC   := $(wildcard src/*.c src/quant/*.c src/recipes/*.c src/io/*.c src/verify/*.c src/simd/*.c src/ckpt/*.c)
LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
STUDY_SRC := $(wildcard src/study/*.c src/study/*/*.c)
STUDY_OBJ := $(STUDY_SRC:%.c=$(BUILD)/obj/%.o)
CLI_SRC   := $(wildcard tools/*.c)
CLI_OBJ   := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
CLI_CMDS  := $(sort $(patsubst tools/cmd_%.c,%,$(wildcard tools/cmd_*.c)))
TEST_SUPPORT_SRC := $(wildcard tests/support/*.c)
TEST_SUPPORT_OBJ := $(TEST_SUPPORT_SRC:%.c=$(BUILD)/obj/%.o)
CHECK_SRC := $(wildcard tests/check_*.c)
CHECK_BIN := $(CHECK_SRC:tests/%.c=$(BUILD)/tests/%)
LONG_SRC  := $(wildcard tests/long_*.c)
LONG_BIN  := $(LONG_SRC:tests/%.c=$(BUILD)/tests/%)
CLI_TESTS := $(sort $(wildcard tests/cli/test_*.sh))
# C++ oracle shims that include NVIDIA's headers (built only with the toolkit)
ORACLE_SRC := $(wildcard tests/oracles/*.cpp)
ORACLE_OBJ := $(if $(HAVE_CUDA),$(ORACLE_SRC:%.cpp=$(BUILD)/obj/%.o),)
comma := ,
ORACLE_LIBS := $(if $(HAVE_CUDA),-L$(CUDA_HOME)/lib64 -Wl$(comma)-rpath$(comma)$(CUDA_HOME)/lib64 -lcurand -lstdc++,)
ORACLE_DEF := $(if $(HAVE_CUDA),-DNVFP4_HAVE_CUDA_ORACLES=1,)

LIB_A    := $(BUILD)/lib/libnvfp4.a
LIB_SO   := $(BUILD)/lib/libnvfp4.so
STUDY_A  := $(BUILD)/lib/libnvfp4_study.a
STUDY_SO := $(BUILD)/lib/libnvfp4_study.so
CUDA_LIB_SO := $(BUILD)/lib/libnvfp4_cuda.so
CLI      := $(BUILD)/bin/nvfp4
# soname major version of every shared library (libnvfp4.so.0, libnvfp4_study.so.0, libnvfp4_cuda.so.0)
SO_MAJOR := 0
VERSION  := $(shell sed -n 's/.*NVFP4_VERSION_STRING "\(.*\)"/\1/p' include/nvfp4/common.h)

.PHONY: all check check-quick check-cli-smoke check-long check-mutants-full check-unit check-cli check-py sanitize install uninstall help clean \
        determinism

## all: build libnvfp4 and libnvfp4_study (static and shared) and the nvfp4 command
all: $(LIB_A) $(LIB_SO) $(STUDY_A) $(STUDY_SO) $(CLI)

$(BUILD)/obj/%.o: %.c | $(BUILD)/gen/cli_commands.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(ORACLE_DEF) -MMD -MP -c $< -o $@

$(BUILD)/obj/tests/oracles/%.o: tests/oracles/%.cpp
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O1 -g -ffp-contract=off -Iinclude -Isrc -I$(CUDA_HOME)/include -MMD -MP -c $< -o $@

$(LIB_A): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# The shared libraries are built under their link names with the versioned
# soname; the soname links next to them let programs and libraries linked in
# the build tree load them from there.
$(LIB_SO): $(LIB_OBJ) mk/exports.map
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libnvfp4.so.$(SO_MAJOR),--no-undefined,--version-script=mk/exports.map -o $@ \
	    $(LIB_OBJ) $(LIB_LDLIBS)
	ln -sf libnvfp4.so $@.$(SO_MAJOR)

$(STUDY_A): $(STUDY_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^

# libnvfp4_study.so needs libnvfp4.so.0: found next to it ($ORIGIN), in the
# build tree and where both are installed.
$(STUDY_SO): $(STUDY_OBJ) $(LIB_SO) mk/exports.map
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libnvfp4_study.so.$(SO_MAJOR),--no-undefined,--version-script=mk/exports.map \
	    -Wl,-rpath,'$$ORIGIN' -o $@ \
	    $(STUDY_OBJ) $(LIB_SO) $(LDLIBS_ALL)
	ln -sf libnvfp4_study.so $@.$(SO_MAJOR)

# The dispatch table of the CLI, generated from the tools/cmd_*.c file names.
$(BUILD)/gen/cli_commands.h: $(wildcard tools/cmd_*.c) Makefile
	@mkdir -p $(dir $@)
	@{ echo '/* generated by the Makefile from tools/cmd_*.c */'; \
	   for c in $(CLI_CMDS); do echo "extern const nvfp4_cli_command nvfp4_cmd_$$c;"; done; \
	   printf '#define NVFP4_CLI_COMMANDS'; \
	   for c in $(CLI_CMDS); do printf ' &nvfp4_cmd_%s,' $$c; done; echo; } > $@.tmp && mv $@.tmp $@

$(CLI): $(CLI_OBJ) $(STUDY_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $(CLI_OBJ) $(STUDY_A) $(LIB_A) $(LDLIBS_ALL)

$(BUILD)/tests/%: tests/%.c $(STUDY_A) $(LIB_A) $(TEST_SUPPORT_OBJ) $(ORACLE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(ORACLE_DEF) -Itests -o $@ $< $(TEST_SUPPORT_OBJ) $(ORACLE_OBJ) $(STUDY_A) $(LIB_A) \
	    $(CHECK_LIBS) $(ORACLE_LIBS) $(LDLIBS_ALL)

## check: build everything and run the unit suites, CLI tests and Python checks; one summary line per group and a total
# Every group runs even when an earlier one fails, so that the summary at the
# end covers all of them; the exit status is 1 if any group failed.
CHECK_GROUPS := check-unit check-cli check-py check-python
check: all
	@$(call run_check_groups,check,$(CHECK_GROUPS))

## check-quick: the Check suites and the CLI smoke tests (about 1 1/2 minutes on 2 cores; `make check` runs everything)
# The smoke tests are CLI tests of a second or two each (tests/cli/test_NAME.sh
# for each NAME below): every codec, quantize/dequantize, the plots, the help
# texts, verify's verdicts. The suite generation, the install, the mutant
# and witness searches, the studies, the tour and the tutorial, the Python
# checks are left to `make check`.
CLI_SMOKE := cvt demo dequantize_partial explain explain_block gemm_check ggml_unpack help numbers plot quantize \
    table verdict
check-quick: all
	@$(call run_check_groups,check-quick,check-unit check-cli-smoke)

check-cli-smoke: all
	@$(MAKE) --no-print-directory check-cli CLI_TESTS="$(CLI_SMOKE:%=tests/cli/test_%.sh)" CLI_GROUP="cli smoke tests"

# $(call run_check_groups,NAME,GROUPS): runs each make target of GROUPS with
# CHECK_SUMMARY_FILE set (passed down to nested makes), so that each appends
# its one-line summary; then prints the summaries again and the total.
run_check_groups = sum=$(CURDIR)/$(BUILD)/$(1)-summary.txt; rm -f "$$sum"; start=$$(date +%s); fail=0; \
    for g in $(2); do $(MAKE) --no-print-directory $$g CHECK_SUMMARY_FILE="$$sum" || fail=1; done; \
    echo "== $(1) summary"; cat "$$sum" 2>/dev/null; \
    t=$$(( $$(date +%s) - start )); \
    echo "$(1): $$([ $$fail = 0 ] && echo passed || echo FAILED), $$(printf '%dm%02ds' $$((t / 60)) $$((t % 60))) in all"; \
    test $$fail = 0

# $(call check_summary,GROUP): the group's one-line summary from the shell
# variables pass, fail and start (date +%s), printed and appended to
# CHECK_SUMMARY_FILE when set; then the group's exit status.
check_summary = t=$$(( $$(date +%s) - start )); \
    line="$(1): $$pass passed, $$fail failed, $$(printf '%dm%02ds' $$((t / 60)) $$((t % 60)))"; \
    echo "$$line"; if [ -n "$(CHECK_SUMMARY_FILE)" ]; then echo "$$line" >> "$(CHECK_SUMMARY_FILE)"; fi; \
    test $$fail = 0

# The Check suites and the CLI tests run TEST_JOBS at a time (tests/run_parallel.sh; each test's
# output is printed in one piece when it ends, then PASS or FAIL and its seconds), the longest first
# so that the slots end together: UNIT_LONGEST and CLI_LONGEST list them by the seconds they took
# with two running at a time on 2 cores (`make check`), the rest follow in name order. The CLI tests that
# run `make` on the build folder (CLI_MAKES, together as long as the longest but one) share one slot and
# run one after another, since two makes of one folder would race; they start first.
TEST_JOBS ?= 2
UNIT_LONGEST := mutants gpt libpath simd
CLI_LONGEST := study_quick mutants study_reliab verdict study golden_atomic study_lab study_shadow study_lab3 reference
CLI_MAKES := cuda_build install wheel
space := $(subst ,, )
in_order = $(foreach n,$(1),$(filter $(2)$(n)$(3),$(4)))
unit_items = $(call in_order,$(UNIT_LONGEST),$(BUILD)/tests/check_,,$(CHECK_BIN)) \
    $(filter-out $(UNIT_LONGEST:%=$(BUILD)/tests/check_%),$(CHECK_BIN))
cli_makes = $(subst $(space),:,$(strip $(call in_order,$(CLI_MAKES),tests/cli/test_,.sh,$(CLI_TESTS))))
cli_items = $(cli_makes) $(call in_order,$(CLI_LONGEST),tests/cli/test_,.sh,$(CLI_TESTS)) \
    $(filter-out $(CLI_LONGEST:%=tests/cli/test_%.sh) $(CLI_MAKES:%=tests/cli/test_%.sh),$(CLI_TESTS))

# $(call run_parallel,GROUP,RESULTS,N,ITEMS): runs ITEMS (N tests) through tests/run_parallel.sh,
# names the failed ones again and prints the group's summary line.
run_parallel = start=$$(date +%s); res=$(CURDIR)/$(BUILD)/$(2); \
    bash tests/run_parallel.sh $(TEST_JOBS) "$$res" $(4); \
    pass=$$(grep -c '^PASS' "$$res"); ran=$$(wc -l < "$$res"); fail=$$(( $(3) - pass )); \
    [ "$$ran" = $(3) ] || echo "$(1): $$(( $(3) - ran )) tests did not report"; \
    grep '^FAIL' "$$res" | sed 's/^FAIL \(.*\) \([0-9]*\)$$/failed: \1 (\2 s)/'; \
    $(call check_summary,$(1))

## check-unit: run the Check suites (tests/check_*.c), TEST_JOBS (2) at a time
check-unit: all $(CHECK_BIN)
	@NVFP4_BIN=$(CURDIR)/$(CLI); export NVFP4_BIN; \
	    $(call run_parallel,check suites,check-unit-results.txt,$(words $(CHECK_BIN)),$(unit_items))

CLI_GROUP ?= cli tests
## check-cli: run the command-line tests (tests/cli/test_*.sh, incl. the install test) against build/bin/nvfp4, TEST_JOBS (2) at a time
check-cli: all
	@NVFP4=$(CURDIR)/$(CLI); export NVFP4; \
	    $(call run_parallel,$(CLI_GROUP),check-cli-results.txt,$(words $(CLI_TESTS)),$(cli_items))

## check-py: run the Python cross-checks in tests/py (skipped if numpy is missing), PY_JOBS (2) modules at a time
# Each module is its own unittest run (tests/run_py.py), PY_LONGEST first (by the seconds they took,
# two at a time on 2 cores) so that the slots end together.
PY_JOBS ?= 2
PY_LONGEST := test_ckpt.py test_fbgemm_verify.py test_real_verify.py test_grouped_oracle.py test_kv_layout_suite.py \
    test_ct_triton_oracle.py test_triton_oracles.py test_production_oracles.py
# The summary comes from unittest's last lines: "Ran N tests", then "OK" or
# "FAILED (failures=F, errors=E)"; skipped tests count as passed, as there.
check-py: $(CLI)
	@if $(PYTHON) -c 'import numpy' 2>/dev/null; then \
	    start=$$(date +%s); log=$(CURDIR)/$(BUILD)/check-py.log; \
	    { NVFP4=$(CURDIR)/$(CLI) $(PYTHON) tests/run_py.py $(PY_JOBS) tests/py $(PY_LONGEST); \
	      echo $$? > "$$log.rc"; } 2>&1 | tee "$$log"; \
	    rc=$$(cat "$$log.rc"); n=$$(sed -n 's/^Ran \([0-9]*\) tests* in .*/\1/p' "$$log" | tail -n 1); \
	    fail=$$(tail -n 3 "$$log" | grep -oE '(failures|errors|unexpected successes)=[0-9]+' | \
	        awk -F= '{ s += $$2 } END { print s + 0 }'); \
	    pass=$$(( $${n:-0} - fail )); if [ $$rc != 0 ] && [ $$fail = 0 ]; then fail=1; fi; \
	    $(call check_summary,python cross-checks); \
	else line="python cross-checks: skipped (python3 with numpy not found; run: pip install -r tests/py/requirements.txt)"; \
	    echo "check-py: $$line"; if [ -n "$(CHECK_SUMMARY_FILE)" ]; then echo "$$line" >> "$(CHECK_SUMMARY_FILE)"; fi; fi

## check-mutants-full: the mutant test with the `mutants` suite alone for every recipe too (make check: te only)
check-mutants-full: all
	@NVFP4_MUTANTS_FULL=1 NVFP4=$(CURDIR)/$(CLI) bash tests/cli/test_mutants.sh

## check-long: run the exhaustive suites (all 2^32 fp32 inputs per encoder; tens of minutes)
check-long: all $(LONG_BIN)
	@fail=0; for t in $(LONG_BIN); do echo "== $$t"; $$t || fail=1; done; test $$fail = 0

## sanitize: build in build/asan with ASan+UBSan and run the unit and CLI suites (Check's timeouts x10)
sanitize:
	NVFP4_SANITIZE=1 CK_TIMEOUT_MULTIPLIER=10 $(MAKE) BUILD=build/asan OPT=-O1 SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" check-unit check-cli

## determinism: build the codec digest tool with gcc and clang at -O0 and -O3 and compare
determinism:
	@bash tests/determinism.sh

## install: headers, libnvfp4 + libnvfp4_study (.a, .so), libnvfp4_cuda.so if built, .pc files, nvfp4 (and nvfp4-mpi where built) into $(DESTDIR)$(PREFIX)
# nvfp4/cuda.h and nvfp4-cuda.pc go with libnvfp4_cuda.so, so an install
# never holds a header whose library it lacks.
install: all
	install -d $(DESTDIR)$(PREFIX)/include/nvfp4 $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 644 include/nvfp4.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(filter-out include/nvfp4/cuda.h,$(wildcard include/nvfp4/*.h)) $(DESTDIR)$(PREFIX)/include/nvfp4/
	install -m 644 $(LIB_A) $(STUDY_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIB_SO) $(DESTDIR)$(PREFIX)/lib/libnvfp4.so.$(SO_MAJOR)
	ln -sf libnvfp4.so.$(SO_MAJOR) $(DESTDIR)$(PREFIX)/lib/libnvfp4.so
	install -m 755 $(STUDY_SO) $(DESTDIR)$(PREFIX)/lib/libnvfp4_study.so.$(SO_MAJOR)
	ln -sf libnvfp4_study.so.$(SO_MAJOR) $(DESTDIR)$(PREFIX)/lib/libnvfp4_study.so
	$(PC_SUBST) nvfp4.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/nvfp4.pc
	$(PC_SUBST) nvfp4-study.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/nvfp4-study.pc
	@if [ -f $(CUDA_LIB_SO) ]; then \
	    echo "install: $(CUDA_LIB_SO), nvfp4/cuda.h, nvfp4-cuda.pc"; \
	    install -m 644 include/nvfp4/cuda.h $(DESTDIR)$(PREFIX)/include/nvfp4/ && \
	    install -m 755 $(CUDA_LIB_SO) $(DESTDIR)$(PREFIX)/lib/libnvfp4_cuda.so.$(SO_MAJOR) && \
	    ln -sf libnvfp4_cuda.so.$(SO_MAJOR) $(DESTDIR)$(PREFIX)/lib/libnvfp4_cuda.so && \
	    $(PC_SUBST) nvfp4-cuda.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/nvfp4-cuda.pc; \
	else echo "install: $(CUDA_LIB_SO) not built (make cuda): the CUDA library is not installed"; fi
	install -m 755 $(CLI) $(DESTDIR)$(PREFIX)/bin/
	@if [ -n "$(CLI_MPI)" ] && [ -f "$(CLI_MPI)" ]; then \
	    echo "install: $(CLI_MPI)"; install -m 755 $(CLI_MPI) $(DESTDIR)$(PREFIX)/bin/; \
	else echo "install: nvfp4-mpi not built (no mpicc): not installed"; fi
	@# a real install (no DESTDIR) by root: refresh the loader's cache, so that
	@# programs find the new libraries under $(PREFIX)/lib (Debian's default
	@# /usr/local/lib is in /etc/ld.so.conf.d) right away
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null 2>&1; then ldconfig; fi

PC_SUBST = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g'

## uninstall: remove what install put under $(DESTDIR)$(PREFIX)
uninstall:
	rm -rf $(DESTDIR)$(PREFIX)/include/nvfp4 $(DESTDIR)$(PREFIX)/include/nvfp4.h
	rm -f $(foreach l,libnvfp4 libnvfp4_study,$(DESTDIR)$(PREFIX)/lib/$(l).a) \
	    $(foreach l,libnvfp4 libnvfp4_study libnvfp4_cuda,\
	        $(DESTDIR)$(PREFIX)/lib/$(l).so $(DESTDIR)$(PREFIX)/lib/$(l).so.$(SO_MAJOR))
	rm -f $(foreach p,nvfp4 nvfp4-study nvfp4-cuda,$(DESTDIR)$(PREFIX)/lib/pkgconfig/$(p).pc)
	rm -f $(DESTDIR)$(PREFIX)/bin/nvfp4 $(DESTDIR)$(PREFIX)/bin/nvfp4-mpi

## clean: remove build/
clean:
	rm -rf build

## help: list the targets
help:
	@grep -hE '^## ' $(MAKEFILE_LIST) | sed -e 's/^## /  /' -e 's/: /\t/' | expand -t 16

-include $(wildcard mk/*.mk)
-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
