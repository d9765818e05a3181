/*
 * blocked.h -- the blocked layout's fast paths (internal): a message as a
 * 512-bit mask over its block, on AVX-512 or AVX2.
 *
 * In the blocked layout all k positions of a message lie in one 64-byte
 * block (docs/semantics.md), so the whole message is a 512-bit mask: bit o
 * of the mask is set for each in-block offset o.  Then
 *     reported seen   <=> (line & mask) == mask,
 *     d               =  popcount(mask & ~line)  (a repeated colliding
 *                        offset is one bit of the mask: counted once),
 *     insertion       :  line |= mask,
 * which is what the scalar code computes position by position
 * (set_count / all_set of bits.h on the global positions of rbf__positions),
 * bit for bit: tests/test_blocked_simd.c runs both in lock-step.
 *
 * Building the mask: offset o sets bit o & 63 of word o >> 6.  With the eight
 * words of the mask in eight 64-bit lanes, lane j receives 1 << (o - 64 j)
 * from a variable shift: vpsllvq gives 0 for a shift count of 64 or more
 * (and for a "negative" one, which is a huge unsigned count), so exactly the
 * lane j = o >> 6 receives the bit.  One add, one shift and one OR per
 * position; no branch, no table.  AVX2 does the same on two halves of four
 * lanes.
 *
 * Used for one-phase colliding blocked filters (the common case); the
 * others (two-phase, non-colliding) take the generic code with the global
 * positions.  The path is chosen per filter at creation (path.c).
 */
#ifndef RBF_FILTER_BLOCKED_H
#define RBF_FILTER_BLOCKED_H

#include <stddef.h>
#include <stdint.h>

#include "filter_internal.h"
#include "insert.h"
#include "positions.h"

#ifdef RBF_HAVE_AVX512 /* x86-64 with GCC or clang (avx512.h): AVX2 too */
#define RBF_HAVE_BLK_SIMD 1
#define RBF_BLK512 __attribute__((target("avx512f,avx512vpopcntdq,popcnt")))
#define RBF_BLK256 __attribute__((target("avx2,popcnt")))

/* The in-block offsets of a colliding message are the 9-bit fields of the
 * stream words after the block's word: word j (j = 0, 1, ...) is the
 * (j + 2)-th word of the stream of `hash`. */
static inline uint64_t blk_word(uint64_t hash, unsigned j)
{
    return rbf_splitmix64_mix(hash + (uint64_t)(j + 2) * RBF_GOLDEN);
}

/* The block of a message (the first word of its stream). */
static inline uint64_t blk_block(uint64_t hash, uint64_t nblocks)
{
    return reduce(rbf_splitmix64_mix(hash + RBF_GOLDEN), nblocks);
}

/* ---- AVX-512: the mask in one register */

/* The bits of n offsets (n <= 7, a constant where inlined) of word w.
 * The seven 9-bit fields are extracted in one vector (a variable shift and
 * an AND), then for each position its lane is broadcast by a permute
 * (vpermq: no trip through memory, where a load cannot always take its data
 * from part of a vector store in flight and would wait for the store to
 * retire, that is for the previous calls' line loads) and turned into the
 * position's bit by an add and a shift; the ORs merge three at a time. */
RBF_BLK512 static inline RBF_ALWAYS_INLINE __m512i blk_word_mask512(uint64_t w, unsigned n)
{
    const __m512i neg = _mm512_set_epi64(-448, -384, -320, -256, -192, -128, -64, 0);
    const __m512i one = _mm512_set1_epi64(1);
    const __m512i sh = _mm512_set_epi64(63, 54, 45, 36, 27, 18, 9, 0);
    __m512i o = _mm512_and_si512(_mm512_srlv_epi64(_mm512_set1_epi64((long long)w), sh),
                                 _mm512_set1_epi64(511));
    __m512i m0 = _mm512_setzero_si512(), m1 = _mm512_setzero_si512();
#pragma GCC unroll 7
    for (unsigned i = 0; i < n; i++) {
        __m512i oi = _mm512_permutexvar_epi64(_mm512_set1_epi64((long long)i), o);
        __m512i b = _mm512_sllv_epi64(one, _mm512_add_epi64(neg, oi));
        if (i & 1)
            m1 = _mm512_or_si512(m1, b);
        else
            m0 = _mm512_or_si512(m0, b);
    }
    return _mm512_or_si512(m0, m1);
}

RBF_BLK512 static inline RBF_ALWAYS_INLINE __m512i blk_mask512(uint64_t hash, unsigned k)
{
    __m512i m = blk_word_mask512(blk_word(hash, 0), k < 7 ? k : 7);
    for (unsigned j = 1; j * 7 < k; j++)
        m = _mm512_or_si512(m, blk_word_mask512(blk_word(hash, j), k - j * 7 < 7 ? k - j * 7 : 7));
    return m;
}

/* Test-and-set the mask in the line; returns d. */
RBF_BLK512 static inline RBF_ALWAYS_INLINE unsigned blk_set512(uint64_t *line, __m512i mk)
{
    __m512i l = _mm512_load_si512((const void *)line);
    __m512i nb = _mm512_andnot_si512(l, mk);
    /* d: the eight words' counts (each <= 64) narrowed to bytes and summed
     * by vpsadbw, exactly (d <= 512) */
    __m128i c8 = _mm512_cvtepi64_epi8(_mm512_popcnt_epi64(nb));
    unsigned d = (unsigned)_mm_cvtsi128_si32(_mm_sad_epu8(c8, _mm_setzero_si128()));
    if (d)
        _mm512_store_si512((void *)line, _mm512_or_si512(l, mk));
    return d;
}

/* Membership without the mask: the n offsets of word w in eight lanes
 * (lane i: offset i), each lane fetches its word of the line with one
 * permute (vpermq, index o >> 6) and tests its bit (vprolvq: 1 << (o & 63));
 * returns the lanes whose bit is clear.  A handful of instructions where
 * building the mask takes four per position. */
RBF_BLK512 static inline RBF_ALWAYS_INLINE __mmask8 blk_clear512(__m512i l, uint64_t w, unsigned n)
{
    const __m512i sh = _mm512_set_epi64(63, 54, 45, 36, 27, 18, 9, 0);
    __m512i o = _mm512_and_si512(_mm512_srlv_epi64(_mm512_set1_epi64((long long)w), sh),
                                 _mm512_set1_epi64(511));
    __m512i words = _mm512_permutexvar_epi64(_mm512_srli_epi64(o, 6), l);
    __m512i bit = _mm512_rolv_epi64(_mm512_set1_epi64(1), o);
    return _mm512_mask_testn_epi64_mask((__mmask8)((1u << n) - 1), words, bit);
}

/* 1 if every bit of the message (k offsets from its stream) is set in the
 * line. */
RBF_BLK512 static inline RBF_ALWAYS_INLINE int blk_all512(const uint64_t *line, uint64_t hash,
                                                         unsigned k)
{
    __m512i l = _mm512_load_si512((const void *)line);
    unsigned clear = blk_clear512(l, blk_word(hash, 0), k < 7 ? k : 7);
    for (unsigned j = 1; j * 7 < k; j++)
        clear |= blk_clear512(l, blk_word(hash, j), k - j * 7 < 7 ? k - j * 7 : 7);
    return clear == 0;
}

RBF_BLK512 static inline RBF_ALWAYS_INLINE int blk_test512(const uint64_t *line, __m512i mk)
{
    __m512i l = _mm512_load_si512((const void *)line);
    return _mm512_test_epi64_mask(_mm512_andnot_si512(l, mk), mk) == 0;
}

/* ---- AVX2: the mask in two registers (words 0-3 and 4-7) */

typedef struct blk256 {
    __m256i lo, hi;
} blk256;

RBF_BLK256 static inline RBF_ALWAYS_INLINE blk256 blk_mask256(uint64_t hash, unsigned k)
{
    const __m256i nlo = _mm256_set_epi64x(-192, -128, -64, 0);
    const __m256i nhi = _mm256_set_epi64x(-448, -384, -320, -256);
    const __m256i one = _mm256_set1_epi64x(1);
    blk256 r = {_mm256_setzero_si256(), _mm256_setzero_si256()};
    for (unsigned j = 0; j * 7 < k; j++) {
        uint64_t w = blk_word(hash, j);
        unsigned n = k - j * 7 < 7 ? k - j * 7 : 7;
#pragma GCC unroll 7
        for (unsigned i = 0; i < n; i++) {
            __m256i o = _mm256_set1_epi64x((long long)((w >> (9 * i)) & 511));
            r.lo = _mm256_or_si256(r.lo, _mm256_sllv_epi64(one, _mm256_add_epi64(nlo, o)));
            r.hi = _mm256_or_si256(r.hi, _mm256_sllv_epi64(one, _mm256_add_epi64(nhi, o)));
        }
    }
    return r;
}

RBF_BLK256 static inline RBF_ALWAYS_INLINE unsigned blk_set256(uint64_t *line, blk256 mk)
{
    __m256i l0 = _mm256_load_si256((const __m256i *)line);
    __m256i l1 = _mm256_load_si256((const __m256i *)(line + 4));
    uint64_t nb[8];
    _mm256_storeu_si256((__m256i *)nb, _mm256_andnot_si256(l0, mk.lo));
    _mm256_storeu_si256((__m256i *)(nb + 4), _mm256_andnot_si256(l1, mk.hi));
    _mm256_store_si256((__m256i *)line, _mm256_or_si256(l0, mk.lo));
    _mm256_store_si256((__m256i *)(line + 4), _mm256_or_si256(l1, mk.hi));
    unsigned d = 0;
    for (unsigned j = 0; j < 8; j++)
        d += (unsigned)__builtin_popcountll(nb[j]);
    return d;
}

RBF_BLK256 static inline RBF_ALWAYS_INLINE int blk_test256(const uint64_t *line, blk256 mk)
{
    __m256i l0 = _mm256_load_si256((const __m256i *)line);
    __m256i l1 = _mm256_load_si256((const __m256i *)(line + 4));
    __m256i nb = _mm256_or_si256(_mm256_andnot_si256(l0, mk.lo), _mm256_andnot_si256(l1, mk.hi));
    return _mm256_testz_si256(nb, nb);
}

/* The functions of the path of a one-phase colliding blocked filter
 * whose f->simd has RBF_SIMD_BLK512 or RBF_SIMD_BLK256 (blocked.c), into
 * o (path.c). */
void rbf__blk_ops(const struct rbf *f, struct rbf_ops *o);
#endif

#endif
