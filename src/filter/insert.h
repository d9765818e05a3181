/*
 * insert.h -- test-and-insert and membership at computed positions, shared
 * by the single-message paths (insert.c, insert_avx512.c) and the batch
 * pipeline (batch.c).  Internal.
 */
#ifndef RBF_FILTER_INSERT_H
#define RBF_FILTER_INSERT_H

#include <stdint.h>

#include "avx512.h"
#include "bits.h"
#include "filter_internal.h"
#include "positions.h"

/* ---- test-and-insert
 *
 * One-phase filters (the common case) set the bits and count d in one pass:
 * nothing has to be undone, because a sigma recycle clears the whole filter
 * anyway.  The thresholds are one predictable branch: limit_bits and
 * limit_msgs are UINT64_MAX when unused, so "b + d <= limit_bits and
 * c + 1 < limit_msgs" is the whole test whatever the policy; the recycle
 * itself is out of line. */

/* One-phase, a bit-setting message (d > 0) that reaches a threshold: a
 * sigma recycle (and the retained message), or the N-th message of the
 * cycle.  pos is the message's positions, or NULL to recompute them from
 * hash.  The message is reported new: counted here, and 1 returned. */
int rbf__threshold1(struct rbf *f, uint64_t hash, const uint64_t *pos, unsigned d);

/* Two-phase test-and-insert at given positions (insert.c). */
int rbf__insert2_positions(struct rbf *f, const uint64_t *pos);

/* One-phase: account for a message whose bits were just set, d of them new. */
static inline int account1(struct rbf *f, uint64_t hash, const uint64_t *pos, unsigned d)
{
    f->inserts++;
    if (d == 0)
        return 0; /* all bits were set: reported seen */
    if (RBF_UNLIKELY((f->b + d > f->limit_bits) | (f->c + 1 >= f->limit_msgs)))
        return rbf__threshold1(f, hash, pos, d); /* a tail call: no frame on the common path */
    f->b += d;
    f->c++;
    f->reported_new++;
    return 1;
}

/* account1 for a batch: the counters it changes held in a local copy
 * (registers, not the filter's memory) across many messages, written back
 * around the rare threshold call (which reads and changes them) and by the
 * caller at the end (acct_store). */
typedef struct {
    uint64_t inserts, b, c, reported_new;
} acct;

static inline acct acct_load(const struct rbf *f)
{
    acct a = {f->inserts, f->b, f->c, f->reported_new};
    return a;
}

static inline void acct_store(struct rbf *f, const acct *a)
{
    f->inserts = a->inserts;
    f->b = a->b;
    f->c = a->c;
    f->reported_new = a->reported_new;
}

static inline int account1_acct(struct rbf *f, acct *a, uint64_t hash, unsigned d)
{
    a->inserts++;
    if (d == 0)
        return 0;
    if (RBF_UNLIKELY((a->b + d > f->limit_bits) | (a->c + 1 >= f->limit_msgs))) {
        acct_store(f, a);
        const int r = rbf__threshold1(f, hash, NULL, d);
        *a = acct_load(f);
        return r;
    }
    a->b += d;
    a->c++;
    a->reported_new++;
    return 1;
}

/* Test-and-insert at given positions, any variant. */
static inline int insert_positions(struct rbf *f, const uint64_t *pos)
{
    if (f->frozen)
        return rbf__insert2_positions(f, pos);
    return account1(f, 0, pos, set_count(f->active, pos, f->cfg.hashes));
}

static inline int contains_positions(const struct rbf *f, const uint64_t *pos)
{
    const unsigned k = f->cfg.hashes;
    int seen = all_set(f->active, pos, k);
    if (f->frozen)
        seen |= all_set(f->frozen, pos, k);
    return seen;
}

/* The positions of `hash`, by the fastest path the filter may use; pos must
 * hold POS_CAP(k) entries. */
static inline void positions(const struct rbf *f, uint64_t hash, uint64_t *pos)
{
#ifdef RBF_HAVE_AVX512
    if (f->simd & RBF_SIMD_VEC) {
        positions_avx512(f, hash, pos);
        return;
    }
#endif
    rbf__positions(f, hash, pos);
}


/* ---- the paths' entry points, which path.c stores in f->ops */

/* The reference path (insert.c): scalar positions, any configuration. */
int rbf__ref_insert_hash(struct rbf *f, uint64_t hash);
int rbf__ref_contains_hash(const struct rbf *f, uint64_t hash);
/* One-phase colliding flat filters: the early exit (insert.c). */
int rbf__ref_contains1_colliding(const struct rbf *f, uint64_t hash);

/* The batch pipeline of batch.c, for the paths without a batch of their
 * own; and the gather path's batch for filters of at most
 * RBF_BATCH_DIRECT_WORDS words, one gather insertion after the other. */
int64_t rbf__batch_pipeline(struct rbf *f, int insert, const uint64_t *hashes,
                            const void *const *keys, const size_t *lens, size_t n,
                            uint8_t *results);
int64_t rbf__batch_gather_direct(struct rbf *f, int insert, const uint64_t *hashes,
                                 const void *const *keys, const size_t *lens, size_t n,
                                 uint8_t *results);
#define RBF_BATCH_DIRECT_WORDS ((512u << 10) / 8) /* filters up to 512 KiB */

/* rbf_insert_positions and its batch for this filter (insert_pos.c): sets
 * o->ins_pos and o->ins_pos_many. */
void rbf__ipos_ops(const struct rbf *f, struct rbf_ops *o);

/* The per-k fast paths of one-phase colliding filters with k <= 8
 * (fast_tmpl.h): one table of functions for each copy, indexed by layout
 * (0 flat, 1 blocked) and k (1..8). */
struct rbf_fast_paths {
    int (*ins_key[2][9])(struct rbf *, const void *, size_t); /* checks the key */
    int (*ins_hash[2][9])(struct rbf *, uint64_t);
    int (*con_hash[2][9])(const struct rbf *, uint64_t);
    int64_t (*batch[2][9])(struct rbf *, int insert, const uint64_t *hashes,
                           const void *const *keys, const size_t *lens, size_t n,
                           uint8_t *results);
};
/* Portable C, every processor (fast_port.c). */
extern const struct rbf_fast_paths rbf__fport_paths;
#ifdef RBF_HAVE_AVX512
/* The same source compiled for AVX2 and BMI2 (fast_avx2.c), and a flat
 * copy of it for filters in the second-level cache (fast_avx2s.c). */
extern const struct rbf_fast_paths rbf__favx2_paths;
extern const struct rbf_fast_paths rbf__favx2s_paths;
/* Flat, for AVX-512 (fast_avx512.c): the gather path's batches. */
extern const struct rbf_fast_paths rbf__favx512_paths;
#endif
/* The flat filters the small AVX2 copy takes: up to 1 MiB. */
#define RBF_AVX2_SMALL_BITS (UINT64_C(1) << 23)

/* The copy a filter with RBF_SIMD_PORT or RBF_SIMD_AVX2 takes. */
static inline const struct rbf_fast_paths *fast_paths(const struct rbf *f)
{
#ifdef RBF_HAVE_AVX512
    if (f->simd & RBF_SIMD_AVX2)
        return f->cfg.layout == RBF_LAYOUT_FLAT && f->m <= RBF_AVX2_SMALL_BITS
                   ? &rbf__favx2s_paths
                   : &rbf__favx2_paths;
#endif
    (void)f;
    return &rbf__fport_paths;
}

#define RBF_SIMD_FAST (RBF_SIMD_PORT | RBF_SIMD_AVX2)

/* The index of a filter's layout in those tables. */
static inline unsigned fast_layout(const struct rbf *f)
{
    return f->cfg.layout == RBF_LAYOUT_BLOCKED;
}

#ifdef RBF_HAVE_AVX512
/* The AVX-512 paths (insert_avx512.c). */
int rbf__insert_hash_avx512(struct rbf *f, uint64_t hash);
int rbf__contains1_gather(const struct rbf *f, uint64_t hash);
int rbf__contains_hash_avx512(const struct rbf *f, uint64_t hash);
/* One-phase colliding insertion by gather, indexed by k = 1..8: of a key
 * (checked: RBF_EINVAL for NULL with len > 0) and of a hash. */
extern int (*const rbf__insert1_gather_key_k[9])(struct rbf *, const void *, size_t);
extern int (*const rbf__insert1_gather_hash_k[9])(struct rbf *, uint64_t);
#endif

#endif
