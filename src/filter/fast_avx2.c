/*
 * fast_avx2.c -- the per-k fast paths (fast_tmpl.h) compiled for AVX2 and
 * BMI2 (mulx, shlx, shrx: fewer instructions a message), chosen at run
 * time on x86-64 processors that have them and no AVX-512 path for the
 * filter (positions.c, rbf__simd_usable).
 */
#include "avx512.h"

#ifdef RBF_HAVE_AVX512
#define FT(name) rbf__favx2_##name
#define FT_TARGET __attribute__((target("avx2,bmi,bmi2,popcnt")))
/* blocked filters take the mask path of blocked.c on AVX2 */
#define FT_FLAT_ONLY 1
#include "fast_tmpl.h"
#else
/* ISO C forbids an empty translation unit. */
typedef int rbf__no_avx2;
#endif
