/*
 * fast_avx512.c -- the per-k batches of fast_tmpl.h compiled a fourth time,
 * for AVX-512 (F, DQ and VL) with BMI2: the positions of a flat message
 * four at a time by 256-bit vectors with the native 64-bit multiply
 * (vpmullq, where the AVX2 copy builds each from three 32-bit ones), each
 * word tested and set by one bts (fast_avx2.h).  The gather path's batches
 * take it (path.c): one-phase colliding flat filters with k <= 8, 4096 bits
 * to 2^32, on a processor with AVX-512 VL.  Its single-key functions are
 * not used: the gather path has its own (insert_avx512.c).
 *
 * Why 256-bit vectors and not one 512-bit one for all eight positions: on
 * an Intel Xeon with AVX-512 FP16 (rbf bench filter, k = 7, batches of 256,
 * two runs each) the 512-bit form gave 17.2-17.6 ns at 128 KiB, 26.1-27.1
 * at 4 MiB and 64.2-66.6 at 128 MiB, the 256-bit form 16.2-16.8, 21.7-22.0
 * and 60.8-61.5, and the generic pipeline it replaces (batch.c) 24.0-26.1,
 * 30.5-31.4 and 65.6-68.2.  The same values as every other path
 * (tests/test_flat_avx512.c runs it in lock-step with the reference).
 */
#include "avx512.h"

#ifdef RBF_HAVE_AVX512
#define FT(name) rbf__favx512_##name
#define FT_TARGET __attribute__((target("avx512f,avx512dq,avx512vl,avx2,bmi,bmi2,popcnt")))
/* stream4 of fast_avx2.h with the 64-bit multiplies native */
#define FT_MUL64C(x, c) _mm256_mullo_epi64((x), _mm256_set1_epi64x((long long)(c)))
#include "fast_avx2.h"

#define FT_VEC_POS FT_VEC_POS_4X2
#define FT_FLAT_ONLY 1
#include "fast_tmpl.h"
#else
/* ISO C forbids an empty translation unit. */
typedef int rbf__no_avx512f;
#endif
