/*
 * nvfp4.h - umbrella header for nvfp4kit: includes every module's public
 * header. Link with -lnvfp4 (pkg-config nvfp4).
 */
#ifndef NVFP4_H
#define NVFP4_H

#include "nvfp4/common.h"
#include "nvfp4/formats.h"
#include "nvfp4/philox.h"
#include "nvfp4/quant.h"
#include "nvfp4/io.h"
#include "nvfp4/hadamard.h"
#include "nvfp4/gemm.h"
#include "nvfp4/verify.h"
#include "nvfp4/study.h"
#include "nvfp4/simd.h"
#include "nvfp4/cuda.h" /* implemented by libnvfp4_cuda.so (make cuda) */

#endif /* NVFP4_H */
