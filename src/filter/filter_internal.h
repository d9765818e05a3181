/*
 * filter_internal.h -- the filter's representation and the pieces its files
 * share.  Nothing here is public API.
 *
 * The filter module's files, by concern:
 *   lifecycle.c      configuration, creation, recycling, statistics
 *   path.c           the choice of a filter's code path (once, stored in
 *                    the handle), and rbf_path which names it
 *   positions.c      the keyed hash and the k positions (scalar, the reference)
 *   avx512.h         positions eight at a time (AVX-512), bit-identical
 *   bits.h           bit-array primitives (test, set and count)
 *   insert.h/.c      test-and-insert and membership, one message at a time:
 *                    the thresholds, the reference path, the public calls
 *   insert_avx512.c  the same on AVX-512: gathers, one function per k
 *   insert_pos.c     test-and-insert at positions the caller computed
 *   batch.c          the prefetching pipeline of the batch calls
 *   fast_tmpl.h      the per-k fast paths (fast_port.c, fast_avx2.c)
 *   concurrent.c/.h  the thread-safe filter (cfg.concurrent = 1)
 *   blocked.h/.c     the blocked layout's fast paths: one 512-bit mask per
 *                    message, applied to its cache line (AVX-512, AVX2)
 *   io.c             save, load and copy
 *   dump.c           the incremental image (rbf_dump)
 * The calls go one way: the public calls (insert.c, batch.c, insert_pos.c)
 * reach a path only through the functions stored in the handle (struct
 * rbf_ops), which path.c chooses; the paths call down to the thresholds
 * and the recycle (insert.c) and to positions.c, never back up; no two
 * files call each other, even through a third (tests/layering/calls.py).
 * Memory (cache-line aligned arrays, huge pages) is the base module's
 * (src/base/alloc.c).
 */
#ifndef RBF_FILTER_INTERNAL_H
#define RBF_FILTER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "rbf.h"

/* A filter's code path: the functions the public calls go to, chosen once
 * by rbf__choose_path (path.c) when the filter is made, loaded, copied or
 * made concurrent or not again. */
struct rbf;
struct rbf_ops {
    /* rbf_insert: checks the key itself; NULL: the caller checks and
     * hashes the key, then calls ins_hash */
    int (*ins_key)(struct rbf *, const void *, size_t);
    int (*ins_hash)(struct rbf *, uint64_t);
    /* rbf_contains on a checked key; NULL: hashed by the caller, then
     * con_hash */
    int (*con_key)(const struct rbf *, const void *, size_t);
    int (*con_hash)(const struct rbf *, uint64_t);
    /* the four batch calls: hashes != NULL, or keys/lens (checked) */
    int64_t (*batch)(struct rbf *, int insert, const uint64_t *hashes, const void *const *keys,
                     const size_t *lens, size_t n, uint8_t *results);
    /* rbf_insert_positions (positions not yet checked against m), and its
     * batch with a results array */
    int (*ins_pos)(struct rbf *, const uint64_t *);
    int64_t (*ins_pos_many)(struct rbf *, const uint64_t *, const uint32_t *, size_t, uint8_t *);
};

struct rbf {
    rbf_config cfg;
    uint64_t m;        /* bits per filter: cfg.bits, or cfg.bits / 2 for two-phase */
    uint64_t nwords;   /* 64-bit words per filter */
    uint64_t *active;  /* the filter taking insertions */
    uint64_t *frozen;  /* two-phase only: the filter kept from the last cycle */
    uint64_t b;        /* set bits of `active` */
    uint64_t fb;       /* set bits of `frozen` */
    uint64_t c;        /* bit-setting insertions this cycle */
    uint64_t cycles;
    uint64_t inserts;
    uint64_t reported_new;
    /* Threshold in set bits: sigma, or UINT64_MAX when not sigma-bounded,
     * so the hot path tests b + d > limit_bits with no branch on the mode. */
    uint64_t limit_bits;
    /* Threshold in messages: N, or UINT64_MAX when not N-bounded. */
    uint64_t limit_msgs;
    /* Nonzero when positions are computed eight at a time with AVX-512
     * (same values as the scalar code; set by rbf__alloc from the CPU and m):
     * RBF_SIMD_VEC, plus RBF_SIMD_GATHER for the one-phase colliding k <= 8
     * insertion by gather (AVX-512 CD too).  Blocked filters use neither:
     * RBF_SIMD_BLK512 or RBF_SIMD_BLK256 marks the one-phase colliding
     * blocked filter whose messages are built as a 512-bit mask by AVX-512
     * or AVX2 (blocked.h). */
    unsigned simd;
    /* Concurrent filters only (cfg.concurrent = 1, concurrent.c): the
     * per-thread slots, the gate and the budget pools; NULL otherwise.  A
     * concurrent filter has simd = 0 and the concurrent path in ops
     * (rbf__choose_path): it never takes a single-writer SIMD path. */
    struct rbf_conc *conc;
    /* The code path (path.c); after the fields the paths themselves read. */
    struct rbf_ops ops;
};

#define RBF_SIMD_VEC 1u
#define RBF_SIMD_GATHER 2u
#define RBF_SIMD_BLK512 4u
#define RBF_SIMD_BLK256 8u
/* One-phase colliding filters with k <= 8 (flat, or blocked without the
 * mask paths above): the per-k fast paths of fast_tmpl.h, as portable C
 * (RBF_SIMD_PORT, every processor) or compiled for AVX2 and BMI2
 * (RBF_SIMD_AVX2, x86-64). */
#define RBF_SIMD_PORT 16u
#define RBF_SIMD_AVX2 32u

/* Bits of a block of the blocked layout: one 64-byte cache line. */
#define RBF_BLOCK_BITS 512u

#if defined(__GNUC__)
#define RBF_LIKELY(x) __builtin_expect(!!(x), 1)
#define RBF_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define RBF_NOINLINE __attribute__((noinline))
#define RBF_ALWAYS_INLINE __attribute__((always_inline))
/* flatten: inline everything a function calls, so that XXH3's short-key
 * code is compiled into the insertion (GCC and clang). */
#define RBF_FLATTEN __attribute__((flatten))
#else
#define RBF_ALWAYS_INLINE
#define RBF_LIKELY(x) (x)
#define RBF_UNLIKELY(x) (x)
#define RBF_NOINLINE
#define RBF_FLATTEN
#endif

/* Room for the positions of one message on the fast paths: k rounded up to
 * a whole number of eight-lane vectors. */
#define POS_CAP(k) (((k) + 7u) & ~7u)

/* Bits per filter of a configuration: M, or floor(M/2) for two-phase. */
static inline uint64_t rbf__bits_per_filter(const rbf_config *cfg)
{
    return cfg->phases == 2 ? cfg->bits / 2 : cfg->bits;
}

/* The k positions of `hash` (see rbf.h), into pos[0..k-1]: the scalar
 * reference every other path must equal (positions.c). */
void rbf__positions(const struct rbf *f, uint64_t hash, uint64_t *pos);

/* The same positions by the path the filter's hot path uses (AVX-512 when
 * f->simd); pos must hold f->cfg.hashes rounded up to a multiple of 8
 * entries (those past k are scratch).  For tests. */
void rbf__positions_fast(const struct rbf *f, uint64_t hash, uint64_t *pos);

/* The blocked layout's block of `hash` (0..m/512-1) and the stream state
 * from which its in-block offsets are drawn (positions.c). */
uint64_t rbf__block_of(const struct rbf *f, uint64_t hash);

/* Which SIMD paths (RBF_SIMD_*) a filter of this configuration and m bits
 * per filter may use on this processor (path.c). */
unsigned rbf__simd_usable(const rbf_config *cfg, uint64_t m);

/* Choose the filter's code path from its configuration, the processor and
 * whether it is concurrent: sets f->simd and f->ops (path.c).  Called
 * whenever one of those changes; nothing else writes them. */
void rbf__choose_path(struct rbf *f);

/* Allocate the bit arrays of a checked configuration (zeroed). */
int rbf__alloc(const rbf_config *cfg, struct rbf **out);

/* Start a new cycle: one-phase clears the filter; two-phase clears the
 * frozen filter and swaps the roles (insert.c). */
void rbf__recycle(struct rbf *f);

/* Test hook of rbf_save (io.c): when not NULL, called with each step of a
 * save to a file as it is reached, so that a test can stop and kill the
 * saving process at an exact point (tests/test_robust_crash.c).  NULL in
 * production; nothing but tests sets it. */
enum {
    RBF__SAVE_CREATED, /* the temporary file exists, empty */
    RBF__SAVE_PARTIAL, /* the header and the active filter handed to stdio: a prefix written */
    RBF__SAVE_WRITTEN, /* every byte written and flushed, not yet fsync'ed */
    RBF__SAVE_SYNCED,  /* fsync'ed and closed, not yet renamed */
    RBF__SAVE_RENAMED, /* renamed over the target; its directory not yet fsync'ed */
    RBF__SAVE_DONE,    /* the directory fsync'ed: the save is complete */
    RBF__SAVE_STEPS
};
extern void (*rbf__save_hook)(int step);

#endif
