/*
 * parallel.h - an OpenMP loop that enters the runtime only when it runs in
 * parallel.
 *
 * `#pragma omp parallel for if (c)` with c false still calls into libgomp: a
 * team of one is set up and torn down, with a malloc, a free and a futex
 * wake, about 0.4 us on the project's 2-core machine (0.001 us for the loop
 * it guards when that is a 64-element amax). A small tensor crosses a
 * dozen such regions per quantization, and `nvfp4 golden --mutants`, which
 * quantizes small cases over and over, spent 40% of its time there (11.7
 * million futex calls for recipe te at one thread).
 *
 * NVFP4_PAR_FOR_IF(cond, "omp parallel for CLAUSES", for-statement) runs the
 * for statement (its closing semicolon left out) under the directive when
 * cond holds and as plain C when it does not. The statement is expanded twice, so it must not hold a
 * directive of its own; loops with one call a function from both branches
 * instead. Reductions need nothing: the plain loop updates the variable
 * directly, and every reduction in this library is exact and order-free
 * (max, |, +, on integers), so both branches give the same value.
 * Host-only (no CUDA code includes it).
 */
#ifndef NVFP4_CORE_PARALLEL_H
#define NVFP4_CORE_PARALLEL_H

#define NVFP4_PAR_FOR_IF(cond, directive, ...) \
    do {                                       \
        if (cond) {                            \
            _Pragma(directive) __VA_ARGS__;    \
        } else {                               \
            __VA_ARGS__;                       \
        }                                      \
    } while (0)

#endif
