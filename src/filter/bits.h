/*
 * bits.h -- bit-array primitives of the filter (internal).
 */
#ifndef RBF_FILTER_BITS_H
#define RBF_FILTER_BITS_H

#include <stdint.h>

/* 1 if all the bits at pos[0..k-1] are set.  Branch-free: every word is
 * read and the bits are ANDed.  Where this is used the k positions are
 * already computed (and, in a batch, their lines prefetched), so reading
 * them all costs little, and no branch waits for a load: stopping at the
 * first clear bit would be mispredicted whenever a message's first bit
 * happens to be set, and on a filter outside the caches each misprediction
 * waits for the memory round trip. */
static inline int all_set(const uint64_t *w, const uint64_t *pos, unsigned k)
{
    uint64_t acc = 1;
    for (unsigned i = 0; i < k; i++)
        acc &= w[pos[i] >> 6] >> (pos[i] & 63);
    return (int)(acc & 1);
}

/* Set the bits at pos[0..k-1] in w and return how many went from 0 to 1
 * (a colliding position that repeats counts once: the second visit finds
 * the bit set).  Word-level: one load, one OR, one store per position,
 * and no branch on the loaded data. */
static inline unsigned set_count(uint64_t *w, const uint64_t *pos, unsigned k)
{
    unsigned d = 0;
#pragma GCC unroll 8
    for (unsigned i = 0; i < k; i++) {
        uint64_t p = pos[i];
        uint64_t bit = 1ULL << (p & 63);
        uint64_t old = w[p >> 6];
        d += (old & bit) == 0;
        w[p >> 6] = old | bit;
    }
    return d;
}

/* As set_count, and record the newly set positions in newly[] (so that
 * they can be undone). */
static inline unsigned set_bits(uint64_t *w, const uint64_t *pos, unsigned k, uint64_t *newly)
{
    unsigned d = 0;
    for (unsigned i = 0; i < k; i++) {
        uint64_t p = pos[i];
        uint64_t bit = 1ULL << (p & 63);
        uint64_t old = w[p >> 6];
        newly[d] = p;
        d += (old & bit) == 0;
        w[p >> 6] = old | bit;
    }
    return d;
}

#endif
