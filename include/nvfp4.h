/*
 * nvfp4.h - umbrella header for nvfp4kit's CPU libraries: includes every
 * module's public header except the CUDA path's.
 *
 *   libnvfp4        (pkg-config nvfp4)        common, formats, philox, quant,
 *                                             trace, hadamard, gemm, io, verify,
 *                                             simd, bench
 *   libnvfp4_study  (pkg-config nvfp4-study)  study.h: the error-accumulation
 *                                             laboratory (links OpenBLAS)
 *
 * nvfp4/study.h is included so that one header covers the CPU side; a
 * program that calls none of its functions links libnvfp4 alone. The CUDA
 * path, libnvfp4_cuda (pkg-config nvfp4-cuda), is installed only where it
 * was built: include "nvfp4/cuda.h" for it (docs/cuda.md).
 */
#ifndef NVFP4_H
#define NVFP4_H

#include "nvfp4/common.h"
#include "nvfp4/formats.h"
#include "nvfp4/philox.h"
#include "nvfp4/quant.h"
#include "nvfp4/grouped.h"
#include "nvfp4/trace.h"
#include "nvfp4/io.h"
#include "nvfp4/ggml.h"
#include "nvfp4/hadamard.h"
#include "nvfp4/layout.h"
#include "nvfp4/options.h"
#include "nvfp4/gemm.h"
#include "nvfp4/verify.h"
#include "nvfp4/suite.h"
#include "nvfp4/simd.h"
#include "nvfp4/bench.h"
#include "nvfp4/ckpt.h"
#include "nvfp4/study.h" /* implemented by libnvfp4_study */

#endif /* NVFP4_H */
