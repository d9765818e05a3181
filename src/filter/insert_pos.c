/*
 * insert_pos.c -- test-and-insert at positions the caller computed before
 * (rbf_positions), and the recycle count alone: the simulator's path for a
 * pool of messages that arrive again and again (docs/simulator.md 7).
 */
#include <stdint.h>

#include "concurrent.h"
#include "insert.h"

/* One-phase with k known at compile time: the bounds check and the k
 * test-and-sets are straight code. */
static inline RBF_ALWAYS_INLINE int insert1_k(struct rbf *f, const uint64_t *pos, unsigned k)
{
    uint64_t bad = 0;
#pragma GCC unroll 8
    for (unsigned i = 0; i < k; i++)
        bad |= pos[i] >= f->m;
    if (RBF_UNLIKELY(bad))
        return RBF_EINVAL;
    const uint64_t c0 = f->cycles;
    int r = account1(f, 0, pos, set_count(f->active, pos, k));
    return r | (f->cycles != c0) << 1;
}

/* One function per k, so that the entry point below is a few instructions
 * and a jump (it saves no registers; a switch over eight inlined bodies
 * made the compiler save six on every call). */
#define RBF_IPOS_K(K)                                                                  \
    static RBF_NOINLINE int ipos_k##K(struct rbf *f, const uint64_t *pos)              \
    {                                                                                  \
        return insert1_k(f, pos, K);                                                   \
    }
RBF_IPOS_K(1)
RBF_IPOS_K(2)
RBF_IPOS_K(3)
RBF_IPOS_K(4)
RBF_IPOS_K(5)
RBF_IPOS_K(6)
RBF_IPOS_K(7)
RBF_IPOS_K(8)

/* Any k, any single-writer variant. */
static RBF_NOINLINE int ipos_any(struct rbf *f, const uint64_t *pos)
{
    const unsigned k = f->cfg.hashes;
    uint64_t bad = 0;
    for (unsigned i = 0; i < k; i++)
        bad |= pos[i] >= f->m;
    if (RBF_UNLIKELY(bad))
        return RBF_EINVAL;
    const uint64_t c0 = f->cycles;
    int r = insert_positions(f, pos);
    return r | (f->cycles != c0) << 1;
}

/* A concurrent filter: its counters and recycles live in f->conc. */
static int ipos_conc(struct rbf *f, const uint64_t *pos)
{
    const unsigned k = f->cfg.hashes;
    uint64_t bad = 0;
    for (unsigned i = 0; i < k; i++)
        bad |= pos[i] >= f->m;
    if (RBF_UNLIKELY(bad))
        return RBF_EINVAL;
    return rbf__conc_insert_positions(f, pos);
}

static int (*const ipos_k[9])(struct rbf *, const uint64_t *) = {
    ipos_any, ipos_k1, ipos_k2, ipos_k3, ipos_k4, ipos_k5, ipos_k6, ipos_k7, ipos_k8};

int rbf_insert_positions(rbf *f, const uint64_t *pos)
{
    if (!f || !pos)
        return RBF_EINVAL;
    return f->ops.ins_pos(f, pos);
}

/* The batch: one call per block of messages, each result what
 * rbf_insert_positions returns.  One loop per k (1..8, one phase) and per
 * bound (sigma: only b + d > sigma can end a cycle; N: only the N-th
 * bit-setting message; both when both are set), so the k test-and-sets
 * are straight code and nothing is called per message.  The counters live
 * in registers (the stores into the bit array could alias f's own
 * fields) and go back into f around the rare threshold call; inserts and
 * reported_new are derived from the message index and c (they move with
 * them on the fast path), so the loop carries two counters, not four. */
static inline RBF_ALWAYS_INLINE int64_t iposm(struct rbf *f, const uint64_t *pos,
                                              const uint32_t *ids, size_t n, uint8_t *res,
                                              unsigned k, int by_bits, int by_msgs)
{
    uint64_t *w = f->active;
    const uint64_t m = f->m, lb = f->limit_bits, lm1 = f->limit_msgs - 1;
    uint64_t b = f->b, c = f->c;
    uint64_t ins0 = f->inserts;           /* inserts = ins0 + messages done */
    uint64_t rn_off = f->reported_new - c; /* reported_new = c + rn_off */
    size_t i;
    for (i = 0; i < n; i++) {
        const uint64_t *p = pos + (uint64_t)ids[i] * k;
        uint64_t bad = 0;
#pragma GCC unroll 8
        for (unsigned j = 0; j < k; j++)
            bad |= p[j] >= m;
        if (RBF_UNLIKELY(bad))
            break;
        const unsigned d = set_count(w, p, k);
        /* d == 0 (all bits were set: reported seen) takes no branch: it
         * adds nothing below, and b <= lb, so only a bit-setting message
         * can reach the threshold (a branch on d cost 0.7 ns a message in
         * the simulator's setup, where a tenth are seen) */
        if (RBF_UNLIKELY((by_bits && b + d > lb) || (by_msgs && (c >= lm1) & (d != 0)))) {
            f->b = b;
            f->c = c;
            f->inserts = ins0 + i + 1;
            f->reported_new = c + rn_off;
            const uint64_t c0 = f->cycles;
            const int r = rbf__threshold1(f, 0, p, d);
            res[i] = (uint8_t)(r | (f->cycles != c0) << 1);
            b = f->b;
            c = f->c;
            ins0 = f->inserts - (i + 1);
            rn_off = f->reported_new - c;
            w = f->active;
            continue;
        }
        const unsigned nz = d != 0;
        b += d;
        c += nz;
        res[i] = (uint8_t)nz;
    }
    f->b = b;
    f->c = c;
    f->inserts = ins0 + i;
    f->reported_new = c + rn_off;
    return i == n ? (int64_t)n : RBF_EINVAL;
}

#define RBF_IPOSM_K(K)                                                                  \
    static RBF_NOINLINE int64_t iposm_k##K(struct rbf *f, const uint64_t *pos,          \
                                           const uint32_t *ids, size_t n, uint8_t *res)  \
    {                                                                                   \
        if (f->limit_msgs == UINT64_MAX)                                                \
            return iposm(f, pos, ids, n, res, K, 1, 0);                                 \
        if (f->limit_bits == UINT64_MAX)                                                \
            return iposm(f, pos, ids, n, res, K, 0, 1);                                 \
        return iposm(f, pos, ids, n, res, K, 1, 1);                                     \
    }
RBF_IPOSM_K(1)
RBF_IPOSM_K(2)
RBF_IPOSM_K(3)
RBF_IPOSM_K(4)
RBF_IPOSM_K(5)
RBF_IPOSM_K(6)
RBF_IPOSM_K(7)
RBF_IPOSM_K(8)

static int64_t (*const iposm_k[9])(struct rbf *, const uint64_t *, const uint32_t *, size_t,
                                   uint8_t *) = {NULL,      iposm_k1, iposm_k2, iposm_k3, iposm_k4,
                                                 iposm_k5, iposm_k6, iposm_k7, iposm_k8};

/* The batch one message at a time (the paths without a loop of their
 * own, and a batch without a results array). */
static int64_t iposm_each(struct rbf *f, const uint64_t *pos, const uint32_t *ids, size_t n,
                          uint8_t *results)
{
    const unsigned k = f->cfg.hashes;
    for (size_t i = 0; i < n; i++) {
        int r = f->ops.ins_pos(f, pos + (uint64_t)ids[i] * k);
        if (r < 0)
            return r;
        if (results)
            results[i] = (uint8_t)r;
    }
    return (int64_t)n;
}

int64_t rbf_insert_positions_many(rbf *f, const uint64_t *pos, const uint32_t *ids, size_t n,
                                  uint8_t *results)
{
    if (!f || (n && (!pos || !ids)))
        return RBF_EINVAL;
    if (RBF_LIKELY(results != NULL))
        return f->ops.ins_pos_many(f, pos, ids, n, results);
    return iposm_each(f, pos, ids, n, results);
}

void rbf__ipos_ops(const struct rbf *f, struct rbf_ops *o)
{
    const unsigned k = f->cfg.hashes;
    if (f->conc) {
        o->ins_pos = ipos_conc;
        o->ins_pos_many = iposm_each;
    } else if (!f->frozen && k <= 8) {
        o->ins_pos = ipos_k[k];
        o->ins_pos_many = iposm_k[k];
    } else {
        o->ins_pos = ipos_any;
        o->ins_pos_many = iposm_each;
    }
}

uint64_t rbf_cycles(const rbf *f)
{
    if (!f)
        return 0;
    if (RBF_UNLIKELY(f->conc)) /* the count lives in f->conc */
        return rbf__conc_cycles(f);
    return f->cycles;
}
