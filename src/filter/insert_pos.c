/*
 * insert_pos.c -- test-and-insert at positions the caller computed before
 * (rbf_positions), and the recycle count alone: the simulator's path for a
 * pool of messages that arrive again and again (docs/simulator.md 7).
 */
#include <stdint.h>

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

/* Any k, any variant. */
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

static int (*const ipos_k[9])(struct rbf *, const uint64_t *) = {
    ipos_any, ipos_k1, ipos_k2, ipos_k3, ipos_k4, ipos_k5, ipos_k6, ipos_k7, ipos_k8};

int rbf_insert_positions(rbf *f, const uint64_t *pos)
{
    if (!f || !pos)
        return RBF_EINVAL;
    const unsigned k = f->cfg.hashes;
    if (RBF_LIKELY(!f->frozen && k <= 8))
        return ipos_k[k](f, pos);
    return ipos_any(f, pos);
}

uint64_t rbf_cycles(const rbf *f) { return f ? f->cycles : 0; }
