/* simd_avx2.c - placeholder: AVX2 kernels (in progress) use the scalar ones. */
#include "simd/simd_kernels.h"
const nvfp4_simd_kernels nvfp4_simd_kernels_avx2 = {"avx2", 0, 0, 0, 0, 0, 0, 0, 0};
