/*
 * insert.c -- test-and-insert and membership of one message: the
 * thresholds and the two-phase insertion every path shares, the reference
 * path (scalar positions), and the public single-message calls, which go
 * to the path stored in the handle (f->ops, chosen in path.c).  The
 * AVX-512 paths are in insert_avx512.c.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "insert.h"

/* Start a new cycle: one-phase clears the filter; two-phase clears the
 * frozen filter and swaps the roles. */
void rbf__recycle(struct rbf *f)
{
    /* An array with no bit set is not cleared: a filter recycled before
     * anything was inserted (or two recycles in a row) costs nothing, and
     * a large array whose pages were never touched is not faulted in. */
    if (f->frozen) {
        uint64_t *t = f->frozen;
        uint64_t tb = f->fb;
        f->frozen = f->active;
        f->fb = f->b;
        if (tb)
            memset(t, 0, (size_t)f->nwords * sizeof(uint64_t));
        f->active = t;
    } else if (f->b) {
        memset(f->active, 0, (size_t)f->nwords * sizeof(uint64_t));
    }
    f->b = 0;
    f->c = 0;
    f->cycles++;
}

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

/* ---- the reference path */

RBF_NOINLINE int rbf__ref_insert_hash(struct rbf *f, uint64_t hash)
{
    uint64_t pos[RBF_MAX_HASHES];
    rbf__positions(f, hash, pos);
    return insert_positions(f, pos);
}

/* ---- membership */

/* One-phase colliding membership on the scalar path, straight from the
 * hash: each position is drawn only when the ones before it were set, so a
 * message that is not there (the common case) costs one or two positions
 * instead of k.  Measured without AVX-512, this early exit beats computing
 * all k positions and testing them without branches, at every size. */
RBF_NOINLINE int rbf__ref_contains1_colliding(const struct rbf *f, uint64_t hash)
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

RBF_NOINLINE int rbf__ref_contains_hash(const struct rbf *f, uint64_t hash)
{
    uint64_t pos[RBF_MAX_HASHES];
    rbf__positions(f, hash, pos);
    return contains_positions(f, pos);
}

/* ---- the public calls, on the path stored in the handle */

int rbf_insert_hash(rbf *f, uint64_t hash)
{
    if (!f)
        return RBF_EINVAL;
    return f->ops.ins_hash(f, hash);
}

int rbf_contains_hash(const rbf *f, uint64_t hash)
{
    if (!f)
        return RBF_EINVAL;
    return f->ops.con_hash(f, hash);
}

/* rbf_insert on a path without a key function of its own (kept out of
 * line so that rbf_insert itself is two tests and a jump, with no stack
 * frame). */
static RBF_NOINLINE int insert_key(struct rbf *f, const void *key, size_t len)
{
    if (!key && len)
        return RBF_EINVAL;
    return f->ops.ins_hash(f, hash_key(f, key, len));
}

int rbf_insert(rbf *f, const void *key, size_t len)
{
    if (RBF_UNLIKELY(!f))
        return RBF_EINVAL;
    if (f->ops.ins_key) /* checks key itself */
        return f->ops.ins_key(f, key, len);
    return insert_key(f, key, len);
}

int rbf_contains(const rbf *f, const void *key, size_t len)
{
    if (!f || (!key && len))
        return RBF_EINVAL;
    if (f->ops.con_key)
        return f->ops.con_key(f, key, len);
    return f->ops.con_hash(f, hash_key(f, key, len));
}
