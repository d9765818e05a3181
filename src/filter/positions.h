/*
 * positions.h -- the keyed hash and the position arithmetic (internal).
 */
#ifndef RBF_FILTER_POSITIONS_H
#define RBF_FILTER_POSITIONS_H

#include <stddef.h>
#include <stdint.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "filter_internal.h"
#include "rbf_base.h"

/* floor(x m / 2^64): a 64-bit word to a position in 0..m-1. */
static inline uint64_t reduce(uint64_t x, uint64_t m)
{
    return (uint64_t)(((unsigned __int128)x * m) >> 64);
}

/* The message's keyed 64-bit hash (rbf_hash). */
static inline uint64_t hash_key(const struct rbf *f, const void *key, size_t len)
{
    static const char empty[1] = {0};
    return XXH3_64bits_withSeed(key ? key : empty, len, f->cfg.seed);
}

#endif
