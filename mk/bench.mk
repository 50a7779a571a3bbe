# mk/bench.mk - `make bench`: the fast CPU path's throughput against memcpy
# (tools/cmd_bench.c, docs/performance.md). Included by the Makefile.
# BENCH_ARGS passes options through, e.g. make bench BENCH_ARGS="--threads 1 --json".

BENCH_ARGS ?=

.PHONY: bench

## bench: run `nvfp4 bench` (te kernels vs memcpy, 256 MiB input; BENCH_ARGS=... for options)
bench: $(CLI)
	$(CLI) bench $(BENCH_ARGS)
