/*
 * fast_tmpl.h -- the per-k fast paths of one-phase colliding filters with
 * k <= 8, flat and blocked, one message at a time and in batches
 * (internal).  One source, compiled as portable C for every processor
 * (fast_port.c) and for AVX2 with BMI2 on x86-64 (fast_avx2.c and, for
 * small flat filters, fast_avx2s.c), chosen at run time, as xxHash and
 * simdjson do; and a flat copy for AVX-512 whose batches the gather path
 * uses (fast_avx512.c).  The includer defines
 *     FT(name)    the name of a function of its copy (a prefix),
 *     FT_TARGET   the function attribute of its copy (or nothing).
 *
 * What makes these fast is what the scalar reference (rbf__positions and
 * bits.h, through insert.c and batch.c) cannot do for any k: k is a
 * constant, so the positions stay in registers as straight code, the key
 * is hashed inline (XXH3's short-key code, RBF_FLATTEN), and a call is one
 * function with no stack frame on the common path.  One message at a time
 * is bound by how many messages the processor overlaps while their loads
 * are outstanding, that is by the instructions each one issues; so the
 * fewer, the faster.  A blocked message is kept as its line and the words
 * its offsets come from (no positions stored), its line asked for as soon
 * as it is known.  The batches run a pipeline by groups: the keys of a
 * group are hashed, their positions (flat) or messages (blocked) computed
 * and their k lines or their line prefetched, while the group before is
 * decided in order, as single calls would decide it.  The includer may
 * give a faster word-level test-and-set with the same result (FT_SET for
 * the flat positions, FT_TAS for one blocked offset: the AVX2 copy uses
 * bts and adc).
 *
 * The values are the reference's, bit for bit: the same stream, the same
 * multiply-shift, the same word-level test-and-set (set_count and all_set
 * of bits.h, in the same order, so a word hit twice by one message counts
 * its bit once), the same thresholds (account1).  tests/test_fast_paths.c
 * runs every path in lock-step with the reference.
 */
#include <stddef.h>
#include <stdint.h>

#include "insert.h"

#ifndef FT_GROUP
#define FT_GROUP 16u /* messages hashed and prefetched together in a batch */
#endif

/* The word-level test-and-set of the k positions: set_count of bits.h,
 * unless the includer has a faster one with the same result (FT_SET). */
#ifndef FT_SET
#define FT_SET set_count
#endif

/* The k positions of `hash`, into p[0..k-1]: rbf__positions for one-phase
 * colliding filters, straight code for a constant k. */
FT_TARGET static inline RBF_ALWAYS_INLINE void FT(pos)(const struct rbf *f, uint64_t hash,
                                                       uint64_t *p, unsigned k, int blocked)
{
    if (!blocked) {
        const uint64_t m = f->m;
#ifdef FT_VEC_POS
        if (RBF_LIKELY(m < (UINT64_C(1) << 32))) {
            FT_VEC_POS(hash, p, k, m);
            return;
        }
#endif
#pragma GCC unroll 8
        for (unsigned i = 0; i < k; i++)
            p[i] = reduce(rbf_splitmix64_mix(hash + (uint64_t)(i + 1) * RBF_GOLDEN), m);
        return;
    }
    /* the block from word 1, the offsets from the 9-bit fields of words
     * 2, 3, ... (seven a word; k <= 8: two words at most) */
    const uint64_t base = reduce(rbf_splitmix64_mix(hash + RBF_GOLDEN), f->m / RBF_BLOCK_BITS) *
                          RBF_BLOCK_BITS;
    const uint64_t w0 = rbf_splitmix64_mix(hash + 2 * RBF_GOLDEN);
    const unsigned n0 = k < 7 ? k : 7;
#pragma GCC unroll 7
    for (unsigned i = 0; i < n0; i++)
        p[i] = base + ((w0 >> (9 * i)) & 511);
    if (k > 7)
        p[7] = base + (rbf_splitmix64_mix(hash + 3 * RBF_GOLDEN) & 511);
}

/* The line a blocked message's positions lie in, or a flat message's
 * first; for the prefetches. */
FT_TARGET static inline RBF_ALWAYS_INLINE void FT(prefetch)(const uint64_t *w, const uint64_t *p,
                                                            unsigned k, int blocked, int write)
{
    const unsigned n = blocked ? 1 : k;
#pragma GCC unroll 8
    for (unsigned i = 0; i < n; i++) {
        if (write)
            __builtin_prefetch(&w[p[i] >> 6], 1, 2);
        else
            __builtin_prefetch(&w[p[i] >> 6], 0, 2);
    }
}

/* ---- the blocked layout: a message is its line and the words its
 * offsets come from (9-bit fields, seven a word), no position stored */

typedef struct {
    uint64_t *line;
    uint64_t hash, w0, w1;
} ft_bmsg;

/* The line is asked for as soon as it is known, before the offsets' words
 * are computed (pf: 0 no (the batches prefetch their own), 1 for reading,
 * 2 for writing): one
 * message at a time, the sooner its load starts, the more of it the calls
 * around it overlap (a line in DRAM: 100 ns at 128 MiB). */
FT_TARGET static inline RBF_ALWAYS_INLINE void FT(bmsg)(const struct rbf *f, uint64_t hash,
                                                        unsigned k, ft_bmsg *b, int pf)
{
    const uint64_t blk = reduce(rbf_splitmix64_mix(hash + RBF_GOLDEN), f->m / RBF_BLOCK_BITS);
    b->line = f->active + blk * (RBF_BLOCK_BITS / 64);
    if (pf == 1)
        __builtin_prefetch(b->line, 0, 3);
    else if (pf == 2)
        __builtin_prefetch(b->line, 1, 3);
    b->hash = hash;
    b->w0 = rbf_splitmix64_mix(hash + 2 * RBF_GOLDEN);
    b->w1 = k > 7 ? rbf_splitmix64_mix(hash + 3 * RBF_GOLDEN) : 0;
}

/* Test-and-set of bit sh & 63 of *wp, adding its old value to `seen`
 * (FT_TAS of the includer, or this portable form). */
#ifndef FT_TAS
#define FT_TAS(seen, wp, sh)                                                                       \
    do {                                                                                           \
        const uint64_t ft_v = *(wp), ft_m = UINT64_C(1) << ((sh) & 63);                            \
        (seen) += (ft_v & ft_m) != 0;                                                              \
        *(wp) = ft_v | ft_m;                                                                       \
    } while (0)
#endif

/* BODY for each offset of message b, in order (k <= 8: the first seven
 * from w0, the eighth from w1), given as the line's word it lies in
 * (wi = offset / 64) and a shift whose low six bits are its bit in that
 * word (sh: the offset's field and the bits above it, which the word
 * operations modulo 64 ignore; fewer instructions than the offset alone). */
#define FT_OFFSETS(b, k, wi, sh, BODY)                                                             \
    do {                                                                                           \
        const unsigned ft_n0 = (k) < 7 ? (k) : 7;                                                  \
        _Pragma("GCC unroll 7") for (unsigned ft_i = 0; ft_i < ft_n0; ft_i++)                      \
        {                                                                                          \
            const uint64_t sh = (b)->w0 >> (9 * ft_i);                                             \
            const uint64_t wi = (sh >> 6) & 7;                                                     \
            BODY;                                                                                  \
        }                                                                                          \
        if ((k) > 7) {                                                                             \
            const uint64_t sh = (b)->w1;                                                           \
            const uint64_t wi = (sh >> 6) & 7;                                                     \
            BODY;                                                                                  \
        }                                                                                          \
    } while (0)

/* d: what set_count gives on the global positions (base + o: word base/64 +
 * o/64, bit o & 63, base a multiple of 512), in the same order, so a
 * repeated offset finds its own bit set and counts once. */
FT_TARGET static inline RBF_ALWAYS_INLINE unsigned FT(bset)(const ft_bmsg *b, unsigned k)
{
    uint64_t seen = 0;
    uint64_t *const line = b->line;
    FT_OFFSETS(b, k, wi, sh, FT_TAS(seen, line + wi, sh));
    return k - (unsigned)seen;
}

/* all_set on the line */
FT_TARGET static inline RBF_ALWAYS_INLINE int FT(ball)(const ft_bmsg *b, unsigned k)
{
    uint64_t acc = 1;
    const uint64_t *const line = b->line;
    FT_OFFSETS(b, k, wi, sh, acc &= line[wi] >> (sh & 63));
    return (int)(acc & 1);
}

/* ---- one message */

FT_TARGET static inline RBF_ALWAYS_INLINE int FT(ins)(struct rbf *f, uint64_t hash, unsigned k,
                                                      int blocked)
{
    if (blocked) {
        ft_bmsg b;
        FT(bmsg)(f, hash, k, &b, 2);
        return account1(f, hash, NULL, FT(bset)(&b, k));
    }
    uint64_t p[8];
    FT(pos)(f, hash, p, k, blocked);
    return account1(f, hash, NULL, FT_SET(f->active, p, k));
}

FT_TARGET static RBF_NOINLINE int FT(ins_long)(struct rbf *f, const void *key, size_t len)
{
    uint64_t p[8];
    rbf__positions(f, hash_key(f, key, len), p);
    return insert_positions(f, p);
}

FT_TARGET static inline RBF_ALWAYS_INLINE int FT(ins_key)(struct rbf *f, const void *key,
                                                          size_t len, unsigned k, int blocked)
{
    if (RBF_UNLIKELY(!key)) {
        if (len)
            return RBF_EINVAL;
        key = "";
    }
    if (RBF_UNLIKELY(len > 16))
        return FT(ins_long)(f, key, len);
    return FT(ins)(f, XXH3_64bits_withSeed(key, len, f->cfg.seed), k, blocked);
}

/* Membership.  Flat: each position is drawn only when the ones before it
 * were set, as the reference's contains1_colliding does (a message that is
 * not there costs one or two positions).  Blocked: every word of the one
 * line read and the bits ANDed (all_set). */
FT_TARGET static inline RBF_ALWAYS_INLINE int FT(con)(const struct rbf *f, uint64_t hash,
                                                      unsigned k, int blocked)
{
    if (!blocked) {
        const uint64_t m = f->m;
        const uint64_t *w = f->active;
#pragma GCC unroll 8
        for (unsigned i = 0; i < k; i++) {
            uint64_t q = reduce(rbf_splitmix64_mix(hash + (uint64_t)(i + 1) * RBF_GOLDEN), m);
            if (!((w[q >> 6] >> (q & 63)) & 1u))
                return 0;
        }
        return 1;
    }
    ft_bmsg b;
    FT(bmsg)(f, hash, k, &b, 1);
    return FT(ball)(&b, k);
}

/* ---- batches */

/* message j of a batch: its given hash, or its key's (the short-key code
 * inline) */
FT_TARGET static inline RBF_ALWAYS_INLINE uint64_t FT(hash_at)(const struct rbf *f,
                                                              const uint64_t *hashes,
                                                              const void *const *keys,
                                                              const size_t *lens, size_t j)
{
    if (hashes)
        return hashes[j];
    return lens[j] <= 16 && keys[j] ? XXH3_64bits_withSeed(keys[j], lens[j], f->cfg.seed)
                                     : hash_key(f, keys[j], lens[j]);
}

FT_TARGET static inline RBF_ALWAYS_INLINE void FT(fill)(const struct rbf *f, uint64_t (*ring)[8],
                                                        const uint64_t *hashes,
                                                        const void *const *keys,
                                                        const size_t *lens, size_t from, size_t to,
                                                        unsigned k, int blocked, int write)
{
    for (size_t j = from; j < to; j++) {
        const uint64_t h = FT(hash_at)(f, hashes, keys, lens, j);
        uint64_t *p = ring[j % (2 * FT_GROUP)];
        FT(pos)(f, h, p, k, blocked);
        FT(prefetch)(f->active, p, k, blocked, write);
    }
}

FT_TARGET static inline RBF_ALWAYS_INLINE int64_t FT(batch)(struct rbf *f, int insert,
                                                            const uint64_t *hashes,
                                                            const void *const *keys,
                                                            const size_t *lens, size_t n,
                                                            uint8_t *results, unsigned k,
                                                            int blocked)
{
    uint64_t ring[2 * FT_GROUP][8];
    FT(fill)(f, ring, hashes, keys, lens, 0, n < 2 * FT_GROUP ? n : 2 * FT_GROUP, k, blocked, insert);
    int64_t total = 0;
    for (size_t g = 0; g < n; g += FT_GROUP) {
        size_t end = n - g < FT_GROUP ? n : g + FT_GROUP;
        for (size_t i = g; i < end; i++) {
            const uint64_t *p = ring[i % (2 * FT_GROUP)];
            int res = insert ? account1(f, 0, p, FT_SET(f->active, p, k))
                             : all_set(f->active, p, k);
            if (results)
                results[i] = (uint8_t)res;
            total += res;
        }
        size_t from = g + 2 * FT_GROUP;
        if (from < n)
            FT(fill)(f, ring, hashes, keys, lens, from, n - from < FT_GROUP ? n : from + FT_GROUP,
                     k, blocked, insert);
    }
    return total;
}

/* The blocked layout's batch: the same pipeline, each slot a message
 * (its line prefetched into the first level for writing or reading), by
 * groups of 16: 32 and 64 were slower at every size (AVX2 and portable,
 * 64 KiB to 128 MiB), and so was one look-ahead message a step. */
#ifndef FT_BGROUP
#define FT_BGROUP 16u
#endif

FT_TARGET static inline RBF_ALWAYS_INLINE void FT(bfill)(const struct rbf *f, ft_bmsg *ring,
                                                         const uint64_t *hashes,
                                                         const void *const *keys,
                                                         const size_t *lens, size_t from, size_t to,
                                                         unsigned k, int write)
{
    for (size_t j = from; j < to; j++) {
        const uint64_t h = FT(hash_at)(f, hashes, keys, lens, j);
        ft_bmsg *b = &ring[j % (2 * FT_BGROUP)];
        FT(bmsg)(f, h, k, b, 0);
        if (write)
            __builtin_prefetch(b->line, 1, 3);
        else
            __builtin_prefetch(b->line, 0, 3);
    }
}

/* The decisions of a blocked batch keep the filter's counters in
 * registers (account1_acct), writing them back at the end. */
FT_TARGET static inline RBF_ALWAYS_INLINE int64_t FT(bbatch)(struct rbf *f, const int insert,
                                                             const uint64_t *hashes,
                                                             const void *const *keys,
                                                             const size_t *lens, size_t n,
                                                             uint8_t *results, unsigned k)
{
    ft_bmsg ring[2 * FT_BGROUP];
    FT(bfill)(f, ring, hashes, keys, lens, 0, n < 2 * FT_BGROUP ? n : 2 * FT_BGROUP, k, insert);
    int64_t total = 0;
    acct ac = acct_load(f);
    for (size_t g = 0; g < n; g += FT_BGROUP) {
        size_t end = n - g < FT_BGROUP ? n : g + FT_BGROUP;
        for (size_t i = g; i < end; i++) {
            const ft_bmsg *b = &ring[i % (2 * FT_BGROUP)];
            const int res = insert ? account1_acct(f, &ac, b->hash, FT(bset)(b, k))
                                   : FT(ball)(b, k);
            if (results)
                results[i] = (uint8_t)res;
            total += res;
        }
        size_t from = g + 2 * FT_BGROUP;
        if (from < n)
            FT(bfill)(f, ring, hashes, keys, lens, from,
                      n - from < FT_BGROUP ? n : from + FT_BGROUP, k, insert);
    }
    if (insert)
        acct_store(f, &ac);
    return total;
}

/* ---- one function per k and layout, and their tables */

#define FT_K(K, L, LN)                                                                             \
    FT_TARGET RBF_FLATTEN static int FT(ins_key_##LN##K)(struct rbf *f, const void *key,           \
                                                        size_t len)                                \
    {                                                                                              \
        return FT(ins_key)(f, key, len, K, L);                                                     \
    }                                                                                              \
    FT_TARGET static int FT(ins_hash_##LN##K)(struct rbf *f, uint64_t hash)                        \
    {                                                                                              \
        return FT(ins)(f, hash, K, L);                                                             \
    }                                                                                              \
    FT_TARGET static int FT(con_hash_##LN##K)(const struct rbf *f, uint64_t hash)                  \
    {                                                                                              \
        return FT(con)(f, hash, K, L);                                                             \
    }                                                                                              \
    FT_TARGET RBF_FLATTEN static int64_t FT(batch_##LN##K)(                                        \
        struct rbf *f, int insert, const uint64_t *hashes, const void *const *keys,                \
        const size_t *lens, size_t n, uint8_t *results)                                            \
    {                                                                                              \
        if (!L)                                                                                    \
            return FT(batch)(f, insert, hashes, keys, lens, n, results, K, L);                     \
        return insert ? FT(bbatch)(f, 1, hashes, keys, lens, n, results, K)                        \
                      : FT(bbatch)(f, 0, hashes, keys, lens, n, results, K);                       \
    }
#define FT_LAYOUT(L, LN)                                                                           \
    FT_K(1, L, LN) FT_K(2, L, LN) FT_K(3, L, LN) FT_K(4, L, LN) FT_K(5, L, LN) FT_K(6, L, LN)      \
        FT_K(7, L, LN) FT_K(8, L, LN)
FT_LAYOUT(0, f)
#ifndef FT_FLAT_ONLY
FT_LAYOUT(1, b)
#endif
#undef FT_LAYOUT
#undef FT_K

#define FT_TABLE(NAME, LN)                                                                         \
    {NULL,            FT(NAME##_##LN##1), FT(NAME##_##LN##2), FT(NAME##_##LN##3),                  \
     FT(NAME##_##LN##4), FT(NAME##_##LN##5), FT(NAME##_##LN##6), FT(NAME##_##LN##7),               \
     FT(NAME##_##LN##8)}

/* Indexed by layout (0 flat, 1 blocked) and k (1..8); read-only.  A copy
 * for flat filters only (FT_FLAT_ONLY) has no blocked row. */
#ifndef FT_FLAT_ONLY
#define FT_BLOCKED(NAME) FT_TABLE(NAME, b)
#else
#define FT_BLOCKED(NAME) {NULL}
#endif
const struct rbf_fast_paths FT(paths) = {
    {FT_TABLE(ins_key, f), FT_BLOCKED(ins_key)},
    {FT_TABLE(ins_hash, f), FT_BLOCKED(ins_hash)},
    {FT_TABLE(con_hash, f), FT_BLOCKED(con_hash)},
    {FT_TABLE(batch, f), FT_BLOCKED(batch)},
};
#undef FT_BLOCKED
#undef FT_TABLE
