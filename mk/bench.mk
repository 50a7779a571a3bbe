# mk/bench.mk - the fast CPU path's targets (tools/cmd_bench.c,
# docs/performance.md). Included by the Makefile.
# BENCH_ARGS passes options through, e.g. make bench BENCH_ARGS="--threads 1 --json".

BENCH_ARGS ?=

.PHONY: bench bench-memory check-variants

## bench: run `nvfp4 bench` (te kernels vs memcpy, 256 MiB input; BENCH_ARGS=... for options)
bench: $(CLI)
	$(CLI) bench $(BENCH_ARGS)

## bench-memory: peak RSS of quantize, dequantize and verify (4096x4096 and 1x2^24, rowwise and columnwise) against input + outputs + 64 MiB
bench-memory: $(CLI)
	bash tools/peak-memory.sh $(CLI)

## check-variants: run the unit suites and the quantizer's CLI tests once per SIMD variant this CPU has (NVFP4_SIMD=scalar, avx2, avx512)
# CLI tests that never reach a SIMD kernel (builds, installs, help texts,
# pictures, file-system robustness, MANIFEST parsing, verdict arithmetic) run once, in `make check`;
# so do the catalog's kill search and the witness search (test_mutants, test_witness: minutes of
# mutant chains on the reference path, whose library quantizations check_libpath and check_simd
# compare with every SIMD variant in each variant's unit suites), and the suite generation
# (test_golden, test_reference: check_reference reproduces every reference/ bundle from its x in
# each variant). The lab's CLI tests (test_study*: minutes of training runs) run once too: the
# lab quantizes through the library calls whose bytes check_libpath and check_simd compare across
# the variants, and check_study / check_gpt run in every variant. test_bench forces each variant
# itself; test_progress checks what reaches a terminal.
VARIANT_SKIP_CLI := cuda_build install help man numbers plot tutorial readme_tour wheel verdict golden_atomic robust_io robust_writers \
    verify_suite_manifest mutants witness golden reference study study_lab study_lab2 study_lab3 study_shadow \
    study_target_ci study_tools study_reliab study_quick deps bench progress
VARIANT_CLI_TESTS := $(filter-out $(VARIANT_SKIP_CLI:%=tests/cli/test_%.sh),$(CLI_TESTS))
# AFTER_CHECK=1 (CI, right after `make check` with NVFP4_SIMD unset) leaves out the variant the
# dispatcher picks by itself, the best this CPU has (the last one `bench --variants` lists): make
# check has just run those suites in it.
check-variants: all $(CHECK_BIN)
	@fail=0; vs=$$($(CLI) bench --variants); \
	if [ "$(AFTER_CHECK)" = 1 ] && [ -z "$${NVFP4_SIMD:-}" ]; then \
	    echo "== NVFP4_SIMD=$$(echo "$$vs" | tail -n 1): left out (AFTER_CHECK=1: the variant make check ran)"; \
	    vs=$$(echo "$$vs" | sed '$$d'); fi; \
	for v in $$vs; do \
	    echo "== NVFP4_SIMD=$$v"; \
	    NVFP4_SIMD=$$v $(MAKE) --no-print-directory check-unit check-cli CLI_TESTS="$(VARIANT_CLI_TESTS)" || fail=1; done; \
	    test $$fail = 0
