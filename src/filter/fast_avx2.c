/*
 * fast_avx2.c -- the per-k fast paths (fast_tmpl.h) compiled for AVX2 and
 * BMI2 (mulx, shlx, shrx: fewer instructions a message), the positions of
 * a flat message four at a time in vectors and each word tested and set
 * by one bts (fast_avx2.h); chosen at run time on x86-64 processors that
 * have them and no AVX-512 path for the filter (path.c, rbf__simd_usable),
 * for flat filters past RBF_AVX2_SMALL_BITS (smaller ones: fast_avx2s.c).
 * Blocked filters take its test-and-insert (blocked.c, rbf__blk_ops).
 */
#include "avx512.h"

#ifdef RBF_HAVE_AVX512
#define FT(name) rbf__favx2_##name
#include "fast_avx2.h"

#define FT_VEC_POS FT_VEC_POS_4X2
#include "fast_tmpl.h"
#else
/* ISO C forbids an empty translation unit. */
typedef int rbf__no_avx2;
#endif
