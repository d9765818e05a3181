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

int rbf_insert_positions(rbf *f, const uint64_t *pos)
{
    if (!f || !pos)
        return RBF_EINVAL;
    const unsigned k = f->cfg.hashes;
    if (RBF_LIKELY(!f->frozen)) {
        switch (k) {
        case 1: return insert1_k(f, pos, 1);
        case 2: return insert1_k(f, pos, 2);
        case 3: return insert1_k(f, pos, 3);
        case 4: return insert1_k(f, pos, 4);
        case 5: return insert1_k(f, pos, 5);
        case 6: return insert1_k(f, pos, 6);
        case 7: return insert1_k(f, pos, 7);
        case 8: return insert1_k(f, pos, 8);
        default: break;
        }
    }
    uint64_t bad = 0;
    for (unsigned i = 0; i < k; i++)
        bad |= pos[i] >= f->m;
    if (RBF_UNLIKELY(bad))
        return RBF_EINVAL;
    const uint64_t c0 = f->cycles;
    int r = insert_positions(f, pos);
    return r | (f->cycles != c0) << 1;
}

uint64_t rbf_cycles(const rbf *f) { return f ? f->cycles : 0; }
