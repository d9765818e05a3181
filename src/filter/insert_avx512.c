/*
 * insert_avx512.c -- test-and-insert and membership of one message on
 * AVX-512: positions by vector, the k words by one gather.  Bit-identical
 * to the scalar paths of insert.c (tests/test_batch.c runs them in
 * lock-step).  Compiled on x86-64 only; chosen per filter at run time.
 */
#include <stddef.h>
#include <stdint.h>

#include "insert.h"

#ifdef RBF_HAVE_AVX512
/* The single-message insertion compiled for AVX-512 as a whole, so that the
 * positions go from the vector to the bit tests without a call between. */
RBF_AVX512 int rbf__insert_hash_avx512(struct rbf *f, uint64_t hash)
{
    uint64_t pos[RBF_MAX_HASHES];
    positions_avx512(f, hash, pos);
    return insert_positions(f, pos);
}
#endif

#ifdef RBF_HAVE_AVX512
/* The gather path's fallback (below): the scalar insertion. */
static RBF_NOINLINE int insert1_scalar(struct rbf *f, uint64_t hash)
{
    uint64_t pos[RBF_MAX_HASHES];
    rbf__positions(f, hash, pos);
    return insert_positions(f, pos);
}

/* One-phase colliding test-and-insert for k <= 8 (AVX-512 F, DQ and CD),
 * the path of nearly every filter on such a processor.  One message at a
 * time is bound by how many messages the processor can keep in flight
 * while their loads are outstanding, that is by the instructions, and
 * above all the loads, each message costs.  So the k words are read by one
 * gather and tested in one vector, and written back by k plain stores of
 * the updated words: no read-modify-write, nothing re-read.  That is exact
 * when the k positions lie in k different words (vpconflictq), which fails
 * with probability about k^2 / (2 * words); then the scalar code does it.
 * d, the number of bits newly set, is the number of lanes whose bit was
 * clear, as set_count counts it. */
RBF_AVX512CD static inline RBF_ALWAYS_INLINE int insert1_gather(struct rbf *f, uint64_t hash,
                                                                 const unsigned k)
{
    const __mmask8 km = (__mmask8)((1u << k) - 1);
    uint64_t *w = f->active;
    __m512i p = stream8(hash, 0, f->m);
    __m512i widx = _mm512_srli_epi64(p, 6);
    __m512i bit = _mm512_sllv_epi64(_mm512_set1_epi64(1), _mm512_and_si512(p, _mm512_set1_epi64(63)));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wsign-conversion"
    __m512i words = _mm512_mask_i64gather_epi64(_mm512_setzero_si512(), km, widx, (const void *)w, 8);
#pragma GCC diagnostic pop
    /* lanes below k whose word is also an earlier lane's */
    __mmask8 shared = _mm512_mask_cmpneq_epi64_mask(km, _mm512_conflict_epi64(widx), _mm512_setzero_si512());
    if (RBF_UNLIKELY(shared))
        return insert1_scalar(f, hash);
    unsigned d = (unsigned)__builtin_popcount(_mm512_mask_testn_epi64_mask(km, words, bit));
    if (RBF_LIKELY(d)) {
        uint64_t wi[8], nw[8];
        _mm512_storeu_si512((void *)wi, widx);
        _mm512_storeu_si512((void *)nw, _mm512_or_si512(words, bit));
#pragma GCC unroll 8
        for (unsigned j = 0; j < k; j++) /* k is a constant: straight code */
            w[wi[j]] = nw[j];
    }
    return account1(f, hash, NULL, d);
}

/* Keys longer than 16 bytes, out of line. */
RBF_AVX512CD static RBF_NOINLINE int insert1_gather_long(struct rbf *f, const void *key, size_t len)
{
    return insert1_gather(f, hash_key(f, key, len), f->cfg.hashes);
}

/* rbf_insert on this path: the key checked, hashed (XXH3 inlined, see
 * RBF_FLATTEN) and inserted in one function, so a message costs one call,
 * compiled once for each k from 1 to 8 so that the k stores are straight
 * code.  Every instruction counts here: a call cannot finish before its k
 * loads return, so the fewer instructions each call issues, the more
 * calls' loads the processor's reorder window overlaps (measured at 4 MiB:
 * one test of the arguments and of the path instead of two, and no stack
 * frame, took 26 ns down to 23). */
#define RBF_GATHER_KEY(K)                                                                          \
    RBF_AVX512CD RBF_FLATTEN static int insert1_gather_key##K(struct rbf *f, const void *key,      \
                                                             size_t len)                           \
    {                                                                                              \
        if (RBF_UNLIKELY(!key)) {                                                                  \
            if (len)                                                                               \
                return RBF_EINVAL;                                                                 \
            key = "";                                                                              \
        }                                                                                          \
        if (RBF_UNLIKELY(len > 16))                                                                \
            return insert1_gather_long(f, key, len);                                               \
        return insert1_gather(f, XXH3_64bits_withSeed(key, len, f->cfg.seed), K);                  \
    }                                                                                              \
    RBF_AVX512CD static int insert1_gather_hash##K(struct rbf *f, uint64_t hash)                   \
    {                                                                                              \
        return insert1_gather(f, hash, K);                                                         \
    }
RBF_GATHER_KEY(1)
RBF_GATHER_KEY(2)
RBF_GATHER_KEY(3)
RBF_GATHER_KEY(4)
RBF_GATHER_KEY(5)
RBF_GATHER_KEY(6)
RBF_GATHER_KEY(7)
RBF_GATHER_KEY(8)
#undef RBF_GATHER_KEY

/* Indexed by k (read-only tables: nothing writable holds a code pointer). */
int (*const rbf__insert1_gather_key_k[9])(struct rbf *, const void *, size_t) = {
    NULL,                   insert1_gather_key1, insert1_gather_key2, insert1_gather_key3,
    insert1_gather_key4,    insert1_gather_key5, insert1_gather_key6, insert1_gather_key7,
    insert1_gather_key8};
int (*const rbf__insert1_gather_hash_k[9])(struct rbf *, uint64_t) = {
    NULL,                    insert1_gather_hash1, insert1_gather_hash2, insert1_gather_hash3,
    insert1_gather_hash4,    insert1_gather_hash5, insert1_gather_hash6, insert1_gather_hash7,
    insert1_gather_hash8};
#endif

#ifdef RBF_HAVE_AVX512
/* One-phase colliding membership for k <= 8: one gather of the k words and
 * one vector bit test.  No branch depends on the bits, so a filter in DRAM
 * keeps several messages' loads in flight, where the scalar early exit
 * would stall on a mispredicted branch each time a message's first bit
 * happens to be set. */
RBF_AVX512 int rbf__contains1_gather(const struct rbf *f, uint64_t hash)
{
    const unsigned k = f->cfg.hashes;
    const __mmask8 km = (__mmask8)((1u << k) - 1);
    __m512i p = stream8(hash, 0, f->m);
    __m512i widx = _mm512_srli_epi64(p, 6);
    __m512i bit = _mm512_sllv_epi64(_mm512_set1_epi64(1), _mm512_and_si512(p, _mm512_set1_epi64(63)));
    /* all eight lanes are gathered (the lanes past k hold valid positions
     * too) and only the first k tested */
#pragma GCC diagnostic push /* without optimisation GCC's immintrin.h makes the gather a */
#pragma GCC diagnostic ignored "-Wconversion" /* macro that converts its mask to char */
#pragma GCC diagnostic ignored "-Wsign-conversion"
    __m512i words = _mm512_i64gather_epi64(widx, (const void *)f->active, 8);
#pragma GCC diagnostic pop
    return _mm512_mask_test_epi64_mask(km, words, bit) == km;
}

RBF_AVX512 int rbf__contains_hash_avx512(const struct rbf *f, uint64_t hash)
{
    uint64_t pos[RBF_MAX_HASHES];
    positions_avx512(f, hash, pos);
    return contains_positions(f, pos);
}
#endif

#ifndef RBF_HAVE_AVX512
/* ISO C forbids an empty translation unit. */
typedef int rbf__no_avx512;
#endif
