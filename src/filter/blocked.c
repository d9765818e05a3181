/*
 * blocked.c -- the blocked layout's fast paths: test-and-insert and
 * membership of one-phase colliding blocked filters, one message at a time
 * and in batches, each message a 512-bit mask applied to one cache line
 * (blocked.h), on AVX-512 or AVX2.  Bit-identical to the scalar code, which
 * every other blocked filter (and every processor without these) runs.
 */
#include <stddef.h>
#include <stdint.h>

#include "blocked.h"

#ifdef RBF_HAVE_BLK_SIMD

/* The line of a message's block. */
static inline RBF_ALWAYS_INLINE uint64_t *blk_line(const struct rbf *f, uint64_t hash)
{
    return f->active + blk_block(hash, f->m / RBF_BLOCK_BITS) * (RBF_BLOCK_BITS / 64);
}

/* The message's key hashed inline (XXH3's short-key code, see RBF_FLATTEN
 * in insert_avx512.c); the caller has checked the key. */
static inline RBF_ALWAYS_INLINE uint64_t blk_hash_key(const struct rbf *f, const void *key,
                                                      size_t len)
{
    return XXH3_64bits_withSeed(key, len, f->cfg.seed);
}

#ifndef BLK_NO_EARLY
#define BLK_EARLY(p, w) __builtin_prefetch((p), (w), 3)
#else
#define BLK_EARLY(p, w) ((void)(p))
#endif

/* ---- one message, AVX-512
 *
 * As on the flat gather path (insert_avx512.c), a single call is bound by
 * how many calls the processor overlaps while their line loads are
 * outstanding, that is by the instructions each call issues: the calls are
 * compiled once for each k from 1 to 8, so that the mask is straight code,
 * with the key hashed inline. */

/* The line is computed and its load started (a prefetch) before the mask
 * is built, so that the memory access is in flight as early as possible in
 * the call's instructions: the fewer instructions stand between the start
 * of one call and its load, the more calls' loads overlap. */
RBF_BLK512 static inline RBF_ALWAYS_INLINE int insert512(struct rbf *f, uint64_t hash, unsigned k)
{
    uint64_t *line = blk_line(f, hash);
    BLK_EARLY(line, 1);
    __m512i mk = blk_mask512(hash, k);
    return account1(f, hash, NULL, blk_set512(line, mk));
}

RBF_BLK512 static RBF_NOINLINE int insert512_long(struct rbf *f, const void *key, size_t len)
{
    return insert512(f, hash_key(f, key, len), f->cfg.hashes);
}

RBF_BLK512 static inline RBF_ALWAYS_INLINE int insert512_key(struct rbf *f, const void *key,
                                                             size_t len, unsigned k)
{
    if (RBF_UNLIKELY(!key)) {
        if (len)
            return RBF_EINVAL;
        key = "";
    }
    if (RBF_UNLIKELY(len > 16))
        return insert512_long(f, key, len);
    return insert512(f, blk_hash_key(f, key, len), k);
}

RBF_BLK512 static inline RBF_ALWAYS_INLINE int contains512(const struct rbf *f, uint64_t hash,
                                                           unsigned k)
{
    return blk_all512(blk_line(f, hash), hash, k);
}

RBF_BLK512 static inline RBF_ALWAYS_INLINE int contains512_key(const struct rbf *f, const void *key,
                                                               size_t len, unsigned k)
{
    if (!key)
        key = "";
    uint64_t h = len <= 16 ? blk_hash_key(f, key, len) : hash_key(f, key, len);
    return contains512(f, h, k);
}

#define BLK512_K(K)                                                                                \
    RBF_BLK512 RBF_FLATTEN static int ins512_key##K(struct rbf *f, const void *key, size_t len)   \
    {                                                                                              \
        return insert512_key(f, key, len, K);                                                      \
    }                                                                                              \
    RBF_BLK512 static int ins512_hash##K(struct rbf *f, uint64_t hash)                             \
    {                                                                                              \
        return insert512(f, hash, K);                                                              \
    }                                                                                              \
    RBF_BLK512 RBF_FLATTEN static int con512_key##K(const struct rbf *f, const void *key,         \
                                                    size_t len)                                    \
    {                                                                                              \
        return contains512_key(f, key, len, K);                                                    \
    }                                                                                              \
    RBF_BLK512 static int con512_hash##K(const struct rbf *f, uint64_t hash)                       \
    {                                                                                              \
        return contains512(f, hash, K);                                                            \
    }
BLK512_K(1)
BLK512_K(2)
BLK512_K(3)
BLK512_K(4)
BLK512_K(5)
BLK512_K(6)
BLK512_K(7)
BLK512_K(8)
#undef BLK512_K

/* Any k (the table's entry 0). */
RBF_BLK512 RBF_FLATTEN static int ins512_key0(struct rbf *f, const void *key, size_t len)
{
    return insert512_key(f, key, len, f->cfg.hashes);
}
RBF_BLK512 static int ins512_hash0(struct rbf *f, uint64_t hash)
{
    return insert512(f, hash, f->cfg.hashes);
}
RBF_BLK512 RBF_FLATTEN static int con512_key0(const struct rbf *f, const void *key, size_t len)
{
    return contains512_key(f, key, len, f->cfg.hashes);
}
RBF_BLK512 static int con512_hash0(const struct rbf *f, uint64_t hash)
{
    return contains512(f, hash, f->cfg.hashes);
}

/* Indexed by k for k <= 8, else 0 (read-only: nothing writable holds a
 * code pointer). */
static int (*const ins512_key_k[9])(struct rbf *, const void *, size_t) = {
    ins512_key0, ins512_key1, ins512_key2, ins512_key3, ins512_key4,
    ins512_key5, ins512_key6, ins512_key7, ins512_key8};
static int (*const ins512_hash_k[9])(struct rbf *, uint64_t) = {
    ins512_hash0, ins512_hash1, ins512_hash2, ins512_hash3, ins512_hash4,
    ins512_hash5, ins512_hash6, ins512_hash7, ins512_hash8};
static int (*const con512_key_k[9])(const struct rbf *, const void *, size_t) = {
    con512_key0, con512_key1, con512_key2, con512_key3, con512_key4,
    con512_key5, con512_key6, con512_key7, con512_key8};
static int (*const con512_hash_k[9])(const struct rbf *, uint64_t) = {
    con512_hash0, con512_hash1, con512_hash2, con512_hash3, con512_hash4,
    con512_hash5, con512_hash6, con512_hash7, con512_hash8};

static inline unsigned kslot(const struct rbf *f)
{
    return f->cfg.hashes <= 8 ? f->cfg.hashes : 0;
}

/* ---- one message, AVX2
 *
 * As on AVX-512: compiled once for each k from 1 to 8 (the mask is
 * straight code), the key hashed inline, the line's load started before
 * the mask is built. */

RBF_BLK256 static inline RBF_ALWAYS_INLINE int insert256(struct rbf *f, uint64_t hash, unsigned k)
{
    uint64_t *line = blk_line(f, hash);
    BLK_EARLY(line, 1);
    blk256 mk = blk_mask256(hash, k);
    return account1(f, hash, NULL, blk_set256(line, mk));
}

RBF_BLK256 static RBF_NOINLINE int insert256_long(struct rbf *f, const void *key, size_t len)
{
    return insert256(f, hash_key(f, key, len), f->cfg.hashes);
}

RBF_BLK256 static inline RBF_ALWAYS_INLINE int insert256_key(struct rbf *f, const void *key,
                                                             size_t len, unsigned k)
{
    if (RBF_UNLIKELY(!key)) {
        if (len)
            return RBF_EINVAL;
        key = "";
    }
    if (RBF_UNLIKELY(len > 16))
        return insert256_long(f, key, len);
    return insert256(f, blk_hash_key(f, key, len), k);
}

RBF_BLK256 static inline RBF_ALWAYS_INLINE int contains256(const struct rbf *f, uint64_t hash,
                                                           unsigned k)
{
    return blk_test256(blk_line(f, hash), blk_mask256(hash, k));
}

RBF_BLK256 static inline RBF_ALWAYS_INLINE int contains256_key(const struct rbf *f, const void *key,
                                                               size_t len, unsigned k)
{
    if (!key)
        key = "";
    uint64_t h = len <= 16 ? blk_hash_key(f, key, len) : hash_key(f, key, len);
    return contains256(f, h, k);
}

#define BLK256_K(K)                                                                                \
    RBF_BLK256 RBF_FLATTEN static int ins256_key##K(struct rbf *f, const void *key, size_t len)   \
    {                                                                                              \
        return insert256_key(f, key, len, (K) ? (K) : f->cfg.hashes);                             \
    }                                                                                              \
    RBF_BLK256 static int ins256_hash##K(struct rbf *f, uint64_t hash)                             \
    {                                                                                              \
        return insert256(f, hash, (K) ? (K) : f->cfg.hashes);                                     \
    }                                                                                              \
    RBF_BLK256 RBF_FLATTEN static int con256_key##K(const struct rbf *f, const void *key,         \
                                                    size_t len)                                    \
    {                                                                                              \
        return contains256_key(f, key, len, (K) ? (K) : f->cfg.hashes);                           \
    }                                                                                              \
    RBF_BLK256 static int con256_hash##K(const struct rbf *f, uint64_t hash)                       \
    {                                                                                              \
        return contains256(f, hash, (K) ? (K) : f->cfg.hashes);                                   \
    }
BLK256_K(0)
BLK256_K(1)
BLK256_K(2)
BLK256_K(3)
BLK256_K(4)
BLK256_K(5)
BLK256_K(6)
BLK256_K(7)
BLK256_K(8)
#undef BLK256_K

static int (*const ins256_key_k[9])(struct rbf *, const void *, size_t) = {
    ins256_key0, ins256_key1, ins256_key2, ins256_key3, ins256_key4,
    ins256_key5, ins256_key6, ins256_key7, ins256_key8};
static int (*const ins256_hash_k[9])(struct rbf *, uint64_t) = {
    ins256_hash0, ins256_hash1, ins256_hash2, ins256_hash3, ins256_hash4,
    ins256_hash5, ins256_hash6, ins256_hash7, ins256_hash8};
static int (*const con256_key_k[9])(const struct rbf *, const void *, size_t) = {
    con256_key0, con256_key1, con256_key2, con256_key3, con256_key4,
    con256_key5, con256_key6, con256_key7, con256_key8};
static int (*const con256_hash_k[9])(const struct rbf *, uint64_t) = {
    con256_hash0, con256_hash1, con256_hash2, con256_hash3, con256_hash4,
    con256_hash5, con256_hash6, con256_hash7, con256_hash8};

/* ---- the entry points */

/* ---- batches
 *
 * The pipeline of batch.c with one line per message: the mask and the
 * block of message i + ahead are computed (hashing its key first) and its
 * line prefetched, then message i is decided from its mask.  The masks
 * depend only on the hash, so computing them early is exact, and the
 * decisions are made in order as single calls would make them.  A
 * one-phase filter's array never moves (a recycle clears it in place). */

#ifndef BLK_GROUP
#define BLK_GROUP 32u /* messages hashed and prefetched together */
#endif
#ifndef BLK_PF_LOC
#define BLK_PF_LOC 2 /* prefetch into L2: see prefetch_positions in batch.c */
#endif

typedef struct blk_slot {
    uint64_t *line;
    uint64_t hash;
} blk_slot;

/* Hash messages [from, to) of a batch into their slots of the ring of
 * 2 BLK_GROUP and prefetch their lines: in a loop of their own, which
 * measured faster than hashing each message between two decisions. */
static inline RBF_ALWAYS_INLINE void blk_fill(const struct rbf *f, blk_slot *ring,
                                              const uint64_t *hashes, const void *const *keys,
                                              const size_t *lens, size_t from, size_t to)
{
    for (size_t j = from; j < to; j++) {
        uint64_t h;
        if (hashes)
            h = hashes[j];
        else
            h = lens[j] <= 16 && keys[j] ? blk_hash_key(f, keys[j], lens[j])
                                          : hash_key(f, keys[j], lens[j]);
        blk_slot *s = &ring[j % (2 * BLK_GROUP)];
        s->line = blk_line(f, h);
        s->hash = h;
        __builtin_prefetch(s->line, 1, BLK_PF_LOC);
    }
}

/* The messages go by groups of BLK_GROUP: while group g is decided, groups
 * g + 1 (and g + 2 once g is done) are in flight, so each line has been
 * asked for between one and two groups before it is needed.  A message's
 * mask is built when it is decided, from its hash alone (no memory: the
 * processor overlaps it with the loads in flight). */
#define BLK_BATCH(NAME, TARGET, MASKT, MASKF, SETF, TESTF)                                          \
    TARGET static inline RBF_ALWAYS_INLINE int64_t NAME(                                           \
        struct rbf *f, int insert, const uint64_t *hashes, const void *const *keys,                \
        const size_t *lens, size_t n, uint8_t *results, unsigned k)                                \
    {                                                                                              \
        blk_slot ring[2 * BLK_GROUP];                                                              \
        blk_fill(f, ring, hashes, keys, lens, 0, n < 2 * BLK_GROUP ? n : 2 * BLK_GROUP);           \
        int64_t total = 0;                                                                         \
        for (size_t g = 0; g < n; g += BLK_GROUP) {                                                \
            size_t end = n - g < BLK_GROUP ? n : g + BLK_GROUP;                                    \
            for (size_t i = g; i < end; i++) {                                                     \
                const blk_slot *s = &ring[i % (2 * BLK_GROUP)];                                    \
                MASKT mk = MASKF(s->hash, k);                                                      \
                int res = insert ? account1(f, s->hash, NULL, SETF(s->line, mk))                   \
                                 : TESTF(s->line, mk);                                             \
                if (results)                                                                       \
                    results[i] = (uint8_t)res;                                                     \
                total += res;                                                                      \
            }                                                                                      \
            size_t from = g + 2 * BLK_GROUP;                                                       \
            if (from < n)                                                                          \
                blk_fill(f, ring, hashes, keys, lens, from,                                        \
                         n - from < BLK_GROUP ? n : from + BLK_GROUP);                             \
        }                                                                                          \
        return total;                                                                              \
    }

BLK_BATCH(batch512_body, RBF_BLK512, __m512i, blk_mask512, blk_set512, blk_test512)
BLK_BATCH(batch256_body, RBF_BLK256, blk256, blk_mask256, blk_set256, blk_test256)

/* As for single messages, the batch is compiled once for each k from 1 to
 * 8, so that the mask is straight code. */
#define BLK512_BATCH_K(K)                                                                          \
    RBF_BLK512 RBF_FLATTEN static int64_t batch512_##K(struct rbf *f, int insert,                  \
                                                       const uint64_t *hashes,                     \
                                                       const void *const *keys,                    \
                                                       const size_t *lens, size_t n,               \
                                                       uint8_t *results)                           \
    {                                                                                              \
        return batch512_body(f, insert, hashes, keys, lens, n, results,                            \
                             (K) ? (K) : f->cfg.hashes);                                           \
    }
BLK512_BATCH_K(0)
BLK512_BATCH_K(1)
BLK512_BATCH_K(2)
BLK512_BATCH_K(3)
BLK512_BATCH_K(4)
BLK512_BATCH_K(5)
BLK512_BATCH_K(6)
BLK512_BATCH_K(7)
BLK512_BATCH_K(8)
#undef BLK512_BATCH_K

static int64_t (*const batch512_k[9])(struct rbf *, int, const uint64_t *, const void *const *,
                                      const size_t *, size_t, uint8_t *) = {
    batch512_0, batch512_1, batch512_2, batch512_3, batch512_4,
    batch512_5, batch512_6, batch512_7, batch512_8};

#define BLK256_BATCH_K(K)                                                                          \
    RBF_BLK256 RBF_FLATTEN static int64_t batch256_##K(struct rbf *f, int insert,                  \
                                                       const uint64_t *hashes,                     \
                                                       const void *const *keys,                    \
                                                       const size_t *lens, size_t n,               \
                                                       uint8_t *results)                           \
    {                                                                                              \
        return batch256_body(f, insert, hashes, keys, lens, n, results,                            \
                             (K) ? (K) : f->cfg.hashes);                                           \
    }
BLK256_BATCH_K(0)
BLK256_BATCH_K(1)
BLK256_BATCH_K(2)
BLK256_BATCH_K(3)
BLK256_BATCH_K(4)
BLK256_BATCH_K(5)
BLK256_BATCH_K(6)
BLK256_BATCH_K(7)
BLK256_BATCH_K(8)
#undef BLK256_BATCH_K

static int64_t (*const batch256_k[9])(struct rbf *, int, const uint64_t *, const void *const *,
                                      const size_t *, size_t, uint8_t *) = {
    batch256_0, batch256_1, batch256_2, batch256_3, batch256_4,
    batch256_5, batch256_6, batch256_7, batch256_8};

/* AVX2, k <= 8: test-and-insert by the per-k fast paths' AVX2 copy
 * (fast_avx2.c: the k words of the line tested and set by bts, the
 * line's load started as soon as the block is known), which builds no
 * mask: fewer instructions a message than the two-register mask (measured
 * on an Intel Xeon with AVX-512 off: single calls 12 against 21 ns at
 * 128 KiB, 24 against 28-29 at 4 MiB; batches 11-21 against 17-24 ns).
 * Single calls on filters past 16 MiB (in DRAM) keep the mask, whose
 * line loads start sooner (128 MiB: 77 against 80-82 ns), and membership
 * keeps it everywhere (batches at 128 MiB: 20 against 23 ns). */
#define BLK_AVX2_SINGLE_MAX_BITS (UINT64_C(1) << 27)
static int64_t batch256_mixed(struct rbf *f, int insert, const uint64_t *hashes,
                              const void *const *keys, const size_t *lens, size_t n,
                              uint8_t *results)
{
    const unsigned k = kslot(f);
    return insert ? rbf__favx2_paths.batch[1][k](f, insert, hashes, keys, lens, n, results)
                  : batch256_k[k](f, insert, hashes, keys, lens, n, results);
}

void rbf__blk_ops(const struct rbf *f, struct rbf_ops *o)
{
    const unsigned k = kslot(f);
    if (f->simd & RBF_SIMD_BLK512) {
        o->ins_key = ins512_key_k[k];
        o->ins_hash = ins512_hash_k[k];
        o->con_key = con512_key_k[k];
        o->con_hash = con512_hash_k[k];
        o->batch = batch512_k[k];
    } else {
        const int one = k && f->m <= BLK_AVX2_SINGLE_MAX_BITS;
        o->ins_key = one ? rbf__favx2_paths.ins_key[1][k] : ins256_key_k[k];
        o->ins_hash = one ? rbf__favx2_paths.ins_hash[1][k] : ins256_hash_k[k];
        o->con_key = con256_key_k[k];
        o->con_hash = con256_hash_k[k];
        o->batch = k ? batch256_mixed : batch256_k[k];
    }
}

#else
/* ISO C forbids an empty translation unit. */
typedef int rbf__no_blk_simd;
#endif
