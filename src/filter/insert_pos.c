/*
 * insert_pos.c -- test-and-insert at positions the caller computed before
 * (rbf_positions), and the recycle count alone: the simulator's path for a
 * pool of messages that arrive again and again (docs/simulator.md 7).
 */
#include <stdint.h>

#include "insert.h"

int rbf_insert_positions(rbf *f, const uint64_t *pos)
{
    if (!f || !pos)
        return RBF_EINVAL;
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

uint64_t rbf_cycles(const rbf *f) { return f ? f->cycles : 0; }
