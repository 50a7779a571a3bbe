#!/usr/bin/env bash
# tests/run_parallel.sh JOBS RESULTS ITEM... - runs tests JOBS at a time (`make check-unit`, `check-cli`).
#
# A test is a Check suite binary (run as it is) or a CLI test script (*.sh, run with bash). An ITEM is
# one test, or several joined by ':' that run one after another in one slot: CLI tests that run `make`
# on the build folder go together, since two makes of one folder would race. Items
# start in the order given (the Makefile puts the longest first, so that the slots end together).
# Each test's output is held in a log and printed in one piece when the test ends, followed by
# "PASS test (N s)" or "FAIL test (N s)", so that tests running side by side do not interleave.
# RESULTS gets one line per test: PASS or FAIL, the test, its seconds. The exit status is 0.
# The environment (NVFP4, NVFP4_BIN, NVFP4_SIMD) passes through to the tests.
set -u
jobs=$1 results=$2
shift 2
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
: > "$results"

run_item() {
    local t log start secs verdict
    for t in ${1//:/ }; do
        log="$logs/$(basename "$t").log"
        start=$(date +%s)
        case "$t" in
            *.sh) bash "$t" > "$log" 2>&1 ;;
            *) "$t" > "$log" 2>&1 ;;
        esac
        if [ $? = 0 ]; then verdict=PASS; else verdict=FAIL; fi
        secs=$(($(date +%s) - start))
        # one writer at a time, so that a test's log stays in one piece
        {
            flock 9
            cat "$log"
            echo "$verdict $t ($secs s)"
            echo "$verdict $t $secs" >> "$results"
        } 9>> "$logs/.lock"
    done
}
export -f run_item
export logs results

printf '%s\n' "$@" | xargs -P "$jobs" -I{} bash -c 'run_item "$1"' _ {}
exit 0
