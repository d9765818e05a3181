/*
 * fast_avx512.c -- the per-k batches of fast_tmpl.h compiled a third time,
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
#include "fast_avx2.h"
#undef FT_TARGET
#define FT_TARGET __attribute__((target("avx512f,avx512dq,avx512vl,avx2,bmi,bmi2,popcnt")))

/* Words j0+1 .. j0+4 of the stream of `hash`, each reduced to 0..m-1 for
 * m < 2^32: stream4 of fast_avx2.h with the 64-bit multiplies native. */
FT_TARGET static inline RBF_ALWAYS_INLINE __m256i stream4q(uint64_t hash, unsigned j0, uint64_t m)
{
    const __m256i steps = _mm256_set_epi64x((long long)(4 * RBF_GOLDEN), (long long)(3 * RBF_GOLDEN),
                                            (long long)(2 * RBF_GOLDEN), (long long)RBF_GOLDEN);
    __m256i z = _mm256_add_epi64(_mm256_set1_epi64x((long long)(hash + j0 * RBF_GOLDEN)), steps);
    z = _mm256_xor_si256(z, _mm256_srli_epi64(z, 30));
    z = _mm256_mullo_epi64(z, _mm256_set1_epi64x((long long)0xbf58476d1ce4e5b9ULL));
    z = _mm256_xor_si256(z, _mm256_srli_epi64(z, 27));
    z = _mm256_mullo_epi64(z, _mm256_set1_epi64x((long long)0x94d049bb133111ebULL));
    z = _mm256_xor_si256(z, _mm256_srli_epi64(z, 31));
    const __m256i mv = _mm256_set1_epi64x((long long)m);
    __m256i lo = _mm256_mul_epu32(z, mv);
    __m256i hi = _mm256_mul_epu32(_mm256_srli_epi64(z, 32), mv);
    return _mm256_srli_epi64(_mm256_add_epi64(hi, _mm256_srli_epi64(lo, 32)), 32);
}

/* The flat positions of fast_tmpl.h four at a time (p holds 8 entries;
 * those past k are scratch). */
#define FT_VEC_POS(hash, p, k, m)                                                                  \
    do {                                                                                           \
        _mm256_storeu_si256((__m256i *)(void *)(p), stream4q((hash), 0, (m)));                     \
        if ((k) > 4)                                                                               \
            _mm256_storeu_si256((__m256i *)(void *)((p) + 4), stream4q((hash), 4, (m)));           \
    } while (0)
#define FT_FLAT_ONLY 1
#include "fast_tmpl.h"
#else
/* ISO C forbids an empty translation unit. */
typedef int rbf__no_avx512f;
#endif
