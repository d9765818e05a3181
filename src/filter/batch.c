/*
 * batch.c -- the batch calls: a pipeline that computes and prefetches the
 * positions of the messages ahead while deciding each message in order.
 */
#include <stddef.h>
#include <stdint.h>

#include "insert.h"

/* ---- batches
 *
 * A filter larger than the caches costs a DRAM round trip per position, and
 * one message at a time leaves most of them waiting in line: the processor
 * cannot look far enough ahead to start the next messages' loads.  So the
 * batch functions run a pipeline: the positions of message i + ahead are
 * computed (hashing its key first) and their cache lines prefetched, then
 * message i is decided, in order, from its positions computed earlier.
 * Positions depend only on the hash and the filter size, never on the
 * filter's state, so computing them early is exact; the decisions are made
 * one message after the other exactly as single calls would, so a message
 * that repeats an earlier one of the same batch, or a recycle in the middle
 * of it, gives the same result.  A prefetch is only a hint: after a swap it
 * may have fetched the (now frozen) other array, which costs time, never
 * correctness. */

#define RBF_RING 1024u  /* positions buffered ahead (8 KiB of stack) */
#define RBF_AHEAD 16u   /* messages ahead */

typedef struct ring {
    uint64_t pos[RBF_RING];
    size_t ahead;  /* messages in flight, >= 1 */
    unsigned k;
    unsigned step; /* entries per slot: POS_CAP(k) */
} ring;

static inline void ring_init(ring *r, const struct rbf *f)
{
    r->k = f->cfg.hashes;
    r->step = POS_CAP(r->k);
    r->ahead = RBF_RING / r->step < RBF_AHEAD ? RBF_RING / r->step : RBF_AHEAD;
}

/* Prefetch the lines of a message's positions into L2 (locality 2: x86
 * prefetcht1).  Into L1 (prefetcht0) every prefetch holds one of the few L1
 * miss buffers until its line arrives, and with k lines for each of 16
 * messages in flight they run out: measured on a 128 MiB filter, batched
 * insertion took about twice as long.  L2 tracks many more misses, and an
 * L2 hit when the message is decided costs a few nanoseconds. */
/* (Always inlined: as a separate function GCC finds it has no side effect,
 * a prefetch being only a hint, and deletes the calls.) */
static inline RBF_ALWAYS_INLINE void prefetch_positions(const struct rbf *f, const uint64_t *pos,
                                                        unsigned k, int write)
{
    const uint64_t *a = f->active;
    if (write)
        for (unsigned j = 0; j < k; j++)
            __builtin_prefetch(&a[pos[j] >> 6], 1, 2);
    else
        for (unsigned j = 0; j < k; j++)
            __builtin_prefetch(&a[pos[j] >> 6], 0, 2);
    if (f->frozen)
        for (unsigned j = 0; j < k; j++)
            __builtin_prefetch(&f->frozen[pos[j] >> 6], 0, 2);
}

/* Positions of message j into slot, and prefetch them. */
static inline void ring_fill(const struct rbf *f, uint64_t *slot, uint64_t hash, int write)
{
    positions(f, hash, slot);
    /* blocked: all k positions lie in one line */
    prefetch_positions(f, slot, f->cfg.layout == RBF_LAYOUT_BLOCKED ? 1u : f->cfg.hashes, write);
}

#ifdef RBF_HAVE_AVX512
/* The gather path on a filter that fits in L2: it gains nothing from the
 * pipeline (its loads are short), and the single-message gather path
 * issues fewer instructions: measured at 128 KiB, 18 ns per key against
 * 20.  Membership takes the pipeline. */
int64_t rbf__batch_gather_direct(struct rbf *f, int insert, const uint64_t *hashes,
                                 const void *const *keys, const size_t *lens, size_t n,
                                 uint8_t *results)
{
    if (!insert)
        return rbf__batch_pipeline(f, insert, hashes, keys, lens, n, results);
    int64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        int res = hashes ? rbf__insert1_gather_hash_k[f->cfg.hashes](f, hashes[i])
                         : rbf__insert1_gather_key_k[f->cfg.hashes](f, keys[i], lens[i]);
        if (results)
            results[i] = (uint8_t)res;
        total += res;
    }
    return total;
}
#endif

/* The pipeline, for the paths without a batch of their own (the reference
 * and AVX-512 positions).  hashes != NULL: the messages' hashes; else
 * keys/lens, hashed here. */
int64_t rbf__batch_pipeline(struct rbf *f, int insert, const uint64_t *hashes,
                            const void *const *keys, const size_t *lens, size_t n,
                            uint8_t *results)
{
    ring r;
    ring_init(&r, f);
    size_t pre = n < r.ahead ? n : r.ahead;
    for (size_t j = 0; j < pre; j++)
        ring_fill(f, r.pos + j * r.step, hashes ? hashes[j] : hash_key(f, keys[j], lens[j]), insert);
    int64_t total = 0;
    size_t slot = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t *pos = r.pos + slot * r.step;
        int res = insert ? insert_positions(f, pos) : contains_positions(f, pos);
        if (results)
            results[i] = (uint8_t)res;
        total += res;
        size_t j = i + r.ahead;
        if (j < n)
            ring_fill(f, pos, hashes ? hashes[j] : hash_key(f, keys[j], lens[j]), insert);
        if (++slot == r.ahead)
            slot = 0;
    }
    return total;
}

int64_t rbf_insert_many(rbf *f, const uint64_t *hashes, size_t n, uint8_t *results)
{
    if (!f || (!hashes && n))
        return RBF_EINVAL;
    return f->ops.batch(f, 1, hashes, NULL, NULL, n, results);
}

int64_t rbf_contains_many(const rbf *f, const uint64_t *hashes, size_t n, uint8_t *results)
{
    if (!f || (!hashes && n))
        return RBF_EINVAL;
    /* a batch only reads the filter when insert == 0 */
    return f->ops.batch((struct rbf *)(uintptr_t)f, 0, hashes, NULL, NULL, n, results);
}

static int keys_ok(const void *const *keys, const size_t *lens, size_t n)
{
    if (n && (!keys || !lens))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!keys[i] && lens[i])
            return 0;
    return 1;
}

int64_t rbf_insert_keys(rbf *f, const void *const *keys, const size_t *lens, size_t n,
                        uint8_t *results)
{
    if (!f || !keys_ok(keys, lens, n))
        return RBF_EINVAL;
    return f->ops.batch(f, 1, NULL, keys, lens, n, results);
}

int64_t rbf_contains_keys(const rbf *f, const void *const *keys, const size_t *lens, size_t n,
                          uint8_t *results)
{
    if (!f || !keys_ok(keys, lens, n))
        return RBF_EINVAL;
    return f->ops.batch((struct rbf *)(uintptr_t)f, 0, NULL, keys, lens, n, results);
}

