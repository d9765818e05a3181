/*
 * filter_util.h -- small helpers shared by the filter tests (header-only).
 */
#ifndef FILTER_UTIL_H
#define FILTER_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbf.h"

/* The tests' generator: splitmix64 (rbf_base.h), on its own state, so its
 * draws are independent of any filter's keyed hash. */
static inline uint64_t tu_next(uint64_t *state) { return rbf_splitmix64(state); }

/* Uniform on 0..n-1 (n > 0), without modulo bias worth caring about in tests:
 * the 128-bit multiply-shift. */
static inline uint64_t tu_below(uint64_t *state, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)tu_next(state) * n) >> 64);
}

/* RBF_TEST_SHRINK=N in the environment (set by scripts/valgrind.sh): N,
 * or 1 when unset or not a positive number.  N > 1 asks a test to run a
 * smaller workload (fewer iterations, a thinner grid). */
static inline uint64_t tu_shrink(void)
{
    const char *s = getenv("RBF_TEST_SHRINK");
    uint64_t d = s ? strtoull(s, NULL, 10) : 1;
    return d < 1 ? 1 : d;
}

/* Divisor for loop counts: RBF_TEST_SHRINK=N runs every test with N times
 * fewer iterations. */
static inline uint64_t tu_scaled(uint64_t n)
{
    uint64_t d = tu_shrink();
    return n / d > 0 ? n / d : 1;
}

static inline rbf_config tu_config(uint64_t bits, unsigned k, uint64_t sigma, uint64_t n,
                                   rbf_hashing hashing, rbf_recycle_mode recycle,
                                   unsigned phases, uint64_t seed)
{
    rbf_config c;
    rbf_config_init(&c);
    c.bits = bits;
    c.hashes = k;
    c.sigma = sigma;
    c.messages = n;
    c.hashing = hashing;
    c.recycle = recycle;
    c.phases = phases;
    c.seed = seed;
    return c;
}

/* The whole saved form of f, malloc'ed; NULL on failure. */
static inline uint8_t *tu_saved(const rbf *f, uint64_t *len)
{
    if (rbf_save_size(f, len) != RBF_OK)
        return NULL;
    uint8_t *buf = malloc((size_t)*len);
    if (buf && rbf_save_buffer(f, buf, (size_t)*len) != RBF_OK) {
        free(buf);
        buf = NULL;
    }
    return buf;
}

/* Bit i of filter `which` (0 active, 1 frozen) in a saved buffer whose
 * filters have m bits each (the header size, 128 or 192 bytes, is read
 * from the buffer). */
static inline int tu_saved_bit(const uint8_t *buf, uint64_t m, int which, uint64_t i)
{
    uint64_t nwords = (m + 63) / 64;
    uint64_t hs = (uint64_t)buf[12] | (uint64_t)buf[13] << 8;
    const uint8_t *body = buf + hs + (uint64_t)which * nwords * 8;
    return (body[8 * (i / 64) + (i % 64) / 8] >> (i % 8)) & 1;
}

#endif
