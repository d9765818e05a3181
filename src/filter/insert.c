/*
 * insert.c -- test-and-insert and membership of one message: the public
 * single-message calls, the thresholds, the two-phase insertion and the
 * scalar membership test.  The AVX-512 paths are in insert_avx512.c.
 */
#include <stddef.h>
#include <stdint.h>

#include "concurrent.h"
#include "blocked.h"
#include "insert.h"

RBF_NOINLINE int rbf__threshold1(struct rbf *f, uint64_t hash, const uint64_t *pos, unsigned d)
{
    f->reported_new++;
    if (f->b + d > f->limit_bits) {
        rbf__recycle(f);
        if (f->cfg.recycle == RBF_RETAINING) {
            uint64_t tmp[RBF_MAX_HASHES];
            if (!pos) {
                rbf__positions(f, hash, tmp);
                pos = tmp;
            }
            f->b = set_count(f->active, pos, f->cfg.hashes);
            f->c = 1;
        }
    } else {
        f->b += d;
        f->c++;
        rbf__recycle(f); /* c reached N */
    }
    return 1;
}

/* Two-phase test-and-insert at given positions.  The bits are set first
 * and the newly set ones recorded: d is then exact even when colliding
 * positions repeat, and the rare over-threshold case undoes them, because
 * the frozen filter must be the active one as it was. */
RBF_NOINLINE int rbf__insert2_positions(struct rbf *f, const uint64_t *pos)
{
    const unsigned k = f->cfg.hashes;
    uint64_t newly[RBF_MAX_HASHES];
    f->inserts++;
    unsigned d = set_bits(f->active, pos, k, newly);
    if (d == 0)
        return 0; /* all bits set in the active filter: reported seen */
    int seen_frozen = all_set(f->frozen, pos, k);
    if (f->b + d > f->limit_bits) {
        /* sigma would be passed: recycle instead of taking the message */
        for (unsigned i = 0; i < d; i++)
            f->active[newly[i] >> 6] &= ~(1ULL << (newly[i] & 63));
        rbf__recycle(f);
        if (f->cfg.recycle == RBF_RETAINING) {
            f->b = set_count(f->active, pos, k);
            f->c = 1;
        }
    } else {
        f->b += d;
        if (++f->c >= f->limit_msgs)
            rbf__recycle(f);
    }
    if (seen_frozen)
        return 0;
    f->reported_new++;
    return 1;
}

static inline int insert_hash(struct rbf *f, uint64_t hash)
{
#ifdef RBF_HAVE_AVX512
    if (f->simd & RBF_SIMD_GATHER)
        return rbf__insert1_gather_hash_k[f->cfg.hashes](f, hash);
    if (f->simd & RBF_SIMD_VEC)
        return rbf__insert_hash_avx512(f, hash);
    if (f->simd & (RBF_SIMD_BLK512 | RBF_SIMD_BLK256))
        return rbf__blk_insert_hash(f, hash);
#endif
    if (f->simd & RBF_SIMD_FAST)
        return fast_paths(f)->ins_hash[fast_layout(f)][f->cfg.hashes](f, hash);
    if (RBF_UNLIKELY(f->conc)) /* concurrent filters have simd = 0 */
        return rbf__conc_insert_hash(f, hash);
    uint64_t pos[RBF_MAX_HASHES];
    positions(f, hash, pos);
    return insert_positions(f, pos);
}

/* ---- membership */

/* One-phase colliding membership on the scalar path, straight from the
 * hash: each position is drawn only when the ones before it were set, so a
 * message that is not there (the common case) costs one or two positions
 * instead of k.  Measured without AVX-512, this early exit beats computing
 * all k positions and testing them without branches, at every size. */
static inline int contains1_colliding(const struct rbf *f, uint64_t hash)
{
    const unsigned k = f->cfg.hashes;
    const uint64_t m = f->m;
    const uint64_t *w = f->active;
    uint64_t s = hash;
    for (unsigned i = 0; i < k; i++) {
        s += RBF_GOLDEN;
        uint64_t p = reduce(rbf_splitmix64_mix(s), m);
        if (!((w[p >> 6] >> (p & 63)) & 1u))
            return 0;
    }
    return 1;
}

static inline int contains_hash(const struct rbf *f, uint64_t hash)
{
#ifdef RBF_HAVE_AVX512
    if (f->simd & RBF_SIMD_VEC) {
        if (!f->frozen && f->cfg.hashing == RBF_COLLIDING && f->cfg.hashes <= 8)
            return rbf__contains1_gather(f, hash);
        return rbf__contains_hash_avx512(f, hash);
    }
    if (f->simd & (RBF_SIMD_BLK512 | RBF_SIMD_BLK256))
        return rbf__blk_contains_hash(f, hash);
#endif
    if (f->simd & RBF_SIMD_FAST)
        return fast_paths(f)->con_hash[fast_layout(f)][f->cfg.hashes](f, hash);
    if (RBF_UNLIKELY(f->conc)) /* concurrent filters have simd = 0 */
        return rbf__conc_contains_hash(f, hash);
    if (!f->frozen && f->cfg.hashing == RBF_COLLIDING && f->cfg.layout == RBF_LAYOUT_FLAT)
        return contains1_colliding(f, hash);
    uint64_t pos[RBF_MAX_HASHES];
    positions(f, hash, pos);
    return contains_positions(f, pos);
}

int rbf_insert_hash(rbf *f, uint64_t hash)
{
    if (!f)
        return RBF_EINVAL;
    return insert_hash(f, hash);
}

int rbf_contains_hash(const rbf *f, uint64_t hash)
{
    if (!f)
        return RBF_EINVAL;
    return contains_hash(f, hash);
}

/* rbf_insert off the gather path (kept out of line so that rbf_insert
 * itself is two tests and a jump, with no stack frame). */
static RBF_NOINLINE int insert_key(struct rbf *f, const void *key, size_t len)
{
    if (!key && len)
        return RBF_EINVAL;
    return insert_hash(f, hash_key(f, key, len));
}

int rbf_insert(rbf *f, const void *key, size_t len)
{
    if (RBF_UNLIKELY(!f))
        return RBF_EINVAL;
#ifdef RBF_HAVE_AVX512
    if (f->simd & RBF_SIMD_GATHER) /* k <= 8 */
        return rbf__insert1_gather_key_k[f->cfg.hashes](f, key, len); /* checks key itself */
    if (f->simd & (RBF_SIMD_BLK512 | RBF_SIMD_BLK256))
        return rbf__blk_insert_key(f, key, len); /* checks key itself */
#endif
    if (f->simd & RBF_SIMD_FAST) /* checks key itself */
        return fast_paths(f)->ins_key[fast_layout(f)][f->cfg.hashes](f, key, len);
    return insert_key(f, key, len);
}

int rbf_contains(const rbf *f, const void *key, size_t len)
{
    if (!f || (!key && len))
        return RBF_EINVAL;
#ifdef RBF_HAVE_BLK_SIMD
    if (f->simd & (RBF_SIMD_BLK512 | RBF_SIMD_BLK256))
        return rbf__blk_contains_key(f, key, len);
#endif
    return contains_hash(f, hash_key(f, key, len));
}

