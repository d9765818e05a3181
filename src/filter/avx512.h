/*
 * avx512.h -- positions eight at a time on AVX-512 (internal).
 */
#ifndef RBF_FILTER_AVX512_H
#define RBF_FILTER_AVX512_H

#include "filter_internal.h"
#include "rbf_base.h"

/*
 * On x86-64 processors with AVX-512 (F and DQ) the stream is computed in
 * eight 64-bit lanes: two vector multiplies for the finaliser of eight
 * words instead of sixteen scalar ones.  The multiply-shift has no 64x64
 * high-half vector multiply, so for m < 2^32 it is split exactly in two
 * 32x32 products: with x = xh 2^32 + xl,
 *     floor(x m / 2^64) = floor((xh m + floor(xl m / 2^32)) / 2^32),
 * where xh m + floor(xl m / 2^32) < 2^64.  The values are those of
 * rbf__positions, bit for bit (tests/test_batch.c checks it); filters of
 * 2^32 bits or more, other processors and other compilers use the scalar
 * code.  The choice is made once per filter, from the CPU, in rbf__alloc. */

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(RBF_NO_SIMD)
#define RBF_HAVE_AVX512 1
#include <immintrin.h>
#define RBF_AVX512 __attribute__((target("avx512f,avx512dq")))
#define RBF_AVX512CD __attribute__((target("avx512f,avx512dq,avx512cd")))

/* Words j0+1 .. j0+8 of the stream of `hash`, each reduced to 0..m-1. */
RBF_AVX512 static inline __m512i stream8(uint64_t hash, uint64_t j0, uint64_t m)
{
    const __m512i steps = _mm512_set_epi64(
        (long long)(8 * RBF_GOLDEN), (long long)(7 * RBF_GOLDEN), (long long)(6 * RBF_GOLDEN),
        (long long)(5 * RBF_GOLDEN), (long long)(4 * RBF_GOLDEN), (long long)(3 * RBF_GOLDEN),
        (long long)(2 * RBF_GOLDEN), (long long)RBF_GOLDEN);
    __m512i z = _mm512_add_epi64(_mm512_set1_epi64((long long)(hash + j0 * RBF_GOLDEN)), steps);
    z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 30));
    z = _mm512_mullo_epi64(z, _mm512_set1_epi64((long long)0xbf58476d1ce4e5b9ULL));
    z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 27));
    z = _mm512_mullo_epi64(z, _mm512_set1_epi64((long long)0x94d049bb133111ebULL));
    z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
    const __m512i mv = _mm512_set1_epi64((long long)m);
    __m512i lo = _mm512_mul_epu32(z, mv);                         /* xl * m */
    __m512i hi = _mm512_mul_epu32(_mm512_srli_epi64(z, 32), mv); /* xh * m */
    return _mm512_srli_epi64(_mm512_add_epi64(hi, _mm512_srli_epi64(lo, 32)), 32);
}

/* pos must hold POS_CAP(k) entries: colliding positions are stored eight
 * at a time, whole vectors, and the entries past k are scratch.  (A masked
 * store would write exactly k, but the loads that read the positions back
 * cannot take their data from a masked store in flight: they would wait
 * until it retires, that is until every older memory access, DRAM misses
 * included, has completed, and the batch pipeline would be serialised.) */
RBF_AVX512 static inline void positions_avx512(const struct rbf *f, uint64_t hash, uint64_t *pos)
{
    const unsigned k = f->cfg.hashes;
    const uint64_t m = f->m;
    if (f->cfg.hashing == RBF_COLLIDING) {
        for (unsigned j = 0; j < k; j += 8)
            _mm512_storeu_si512((void *)(pos + j), stream8(hash, j, m));
        return;
    }
    /* non-colliding: the same stream, skipping repeats, as rbf__positions */
    uint64_t cand[8];
    uint64_t j0 = 0;
    for (unsigned i = 0; i < k; j0 += 8) {
        _mm512_storeu_si512((void *)cand, stream8(hash, j0, m));
        for (unsigned c = 0; c < 8 && i < k; c++) {
            uint64_t p = cand[c];
            unsigned j = 0;
            while (j < i && pos[j] != p)
                j++;
            if (j == i)
                pos[i++] = p;
        }
    }
}
#endif


#endif
