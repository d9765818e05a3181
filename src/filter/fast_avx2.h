/*
 * fast_avx2.h -- what the two AVX2 copies of the per-k fast paths share
 * (fast_avx2.c, fast_avx2s.c; internal, x86-64 with GCC or clang only):
 * the splitmix64 stream four lanes at a time and the word-level
 * test-and-set by bts.  Included once by each, before fast_tmpl.h.
 */
#ifndef RBF_FILTER_FAST_AVX2_H
#define RBF_FILTER_FAST_AVX2_H

#include "avx512.h"
#include "positions.h"

/* The includer may compile these for more (fast_avx512.c: AVX-512 VL). */
#ifndef FT_TARGET
#define FT_TARGET __attribute__((target("avx2,bmi,bmi2,popcnt")))
#endif

/* 64-bit products modulo 2^64 by a constant, four lanes: AVX2 multiplies
 * 32 x 32 bits only, so x c = xl cl + ((xh cl + xl ch) << 32). */
FT_TARGET static inline RBF_ALWAYS_INLINE __m256i mul64c(__m256i x, uint64_t c)
{
    const __m256i cl = _mm256_set1_epi64x((long long)(c & 0xffffffffu));
    const __m256i ch = _mm256_set1_epi64x((long long)(c >> 32));
    __m256i lo = _mm256_mul_epu32(x, cl);
    __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(x, 32), cl),
                                     _mm256_mul_epu32(x, ch));
    return _mm256_add_epi64(lo, _mm256_slli_epi64(cross, 32));
}

/* The four-lane 64-bit multiply by a constant stream4 uses: mul64c, or
 * the includer's (fast_avx512.c: the native vpmullq of AVX-512 VL). */
#ifndef FT_MUL64C
#define FT_MUL64C mul64c
#endif

/* Words j0+1 .. j0+4 of the stream of `hash`, each reduced to 0..m-1 for
 * m < 2^32 (the split multiply-shift of avx512.h), as rbf__positions. */
FT_TARGET static inline RBF_ALWAYS_INLINE __m256i stream4(uint64_t hash, unsigned j0, uint64_t m)
{
    const __m256i steps = _mm256_set_epi64x((long long)(4 * RBF_GOLDEN), (long long)(3 * RBF_GOLDEN),
                                            (long long)(2 * RBF_GOLDEN), (long long)RBF_GOLDEN);
    __m256i z = _mm256_add_epi64(_mm256_set1_epi64x((long long)(hash + j0 * RBF_GOLDEN)), steps);
    z = _mm256_xor_si256(z, _mm256_srli_epi64(z, 30));
    z = FT_MUL64C(z, 0xbf58476d1ce4e5b9ULL);
    z = _mm256_xor_si256(z, _mm256_srli_epi64(z, 27));
    z = FT_MUL64C(z, 0x94d049bb133111ebULL);
    z = _mm256_xor_si256(z, _mm256_srli_epi64(z, 31));
    const __m256i mv = _mm256_set1_epi64x((long long)m);
    __m256i lo = _mm256_mul_epu32(z, mv);
    __m256i hi = _mm256_mul_epu32(_mm256_srli_epi64(z, 32), mv);
    return _mm256_srli_epi64(_mm256_add_epi64(hi, _mm256_srli_epi64(lo, 32)), 32);
}

/* The flat positions of fast_tmpl.h (its FT_VEC_POS) four at a time in
 * two vectors (p holds 8 entries; those past k are scratch). */
#define FT_VEC_POS_4X2(hash, p, k, m)                                                              \
    do {                                                                                           \
        _mm256_storeu_si256((__m256i *)(void *)(p), stream4((hash), 0, (m)));                      \
        if ((k) > 4)                                                                               \
            _mm256_storeu_si256((__m256i *)(void *)((p) + 4), stream4((hash), 4, (m)));            \
    } while (0)

/* set_count of bits.h with one instruction for the test and the set: bts
 * sets bit p mod 64 of the word and leaves its old value in the carry,
 * which adc counts; d = k - (bits found set).  A position repeated in one
 * message finds its own bit set on the second visit, as set_count counts
 * it. */
FT_TARGET static inline RBF_ALWAYS_INLINE unsigned set_count_bts(uint64_t *w, const uint64_t *pos,
                                                                unsigned k)
{
    uint64_t seen = 0;
#pragma GCC unroll 8
    for (unsigned i = 0; i < k; i++) {
        const uint64_t p = pos[i];
        uint64_t *wp = w + (p >> 6);
        uint64_t v = *wp;
        __asm__("btsq %[p], %[v]\n\tadcq $0, %[s]" : [v] "+r"(v), [s] "+r"(seen) : [p] "r"(p) : "cc");
        *wp = v;
    }
    return k - (unsigned)seen;
}
#define FT_SET set_count_bts
/* the blocked layout's test-and-set (fast_tmpl.h), by bts and adc too */
#define FT_TAS(seen, wp, sh)                                                                       \
    do {                                                                                           \
        uint64_t *ft_w = (wp), ft_v = *ft_w;                                                       \
        __asm__("btsq %[p], %[v]\n\tadcq $0, %[s]"                                                \
                : [v] "+r"(ft_v), [s] "+r"(seen)                                                   \
                : [p] "r"((uint64_t)(sh))                                                          \
                : "cc");                                                                           \
        *ft_w = ft_v;                                                                              \
    } while (0)

#endif
