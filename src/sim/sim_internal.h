/*
 * sim_internal.h -- pieces of the simulator shared by the files of src/sim/ and by
 * the simulator's unit tests: the random generator, the workload samplers
 * and the trace loader.  Not public API.
 */
#ifndef RBF_SIM_INTERNAL_H
#define RBF_SIM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "rbf_sim.h"

/* ---- random numbers
 *
 * xoshiro256** (Blackman and Vigna 2018): 256 bits of state, period
 * 2^256 - 1, passes BigCrush, a handful of cycles per draw.  Each epoch has
 * its own generator whose state is a splitmix64 stream started from a mix of
 * (seed, stream), so epochs are independent and do not depend on which
 * thread runs them. */
typedef struct sim_rng {
    uint64_t s[4];
} sim_rng;

void rbf__sim_rng_seed(sim_rng *r, uint64_t seed, uint64_t stream);

static inline uint64_t sim_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t sim_rng_next(sim_rng *r)
{
    uint64_t *s = r->s;
    const uint64_t out = sim_rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = sim_rotl(s[3], 45);
    return out;
}

/* Uniform double in [0, 1) with 53 random bits. */
static inline double sim_rng_double(sim_rng *r)
{
    return (double)(sim_rng_next(r) >> 11) * 0x1.0p-53;
}

/* floor(x n / 2^64): a uniform 64-bit x becomes uniform on 0..n-1 with no
 * division (bias below n / 2^64). */
static inline uint64_t sim_reduce(uint64_t x, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)x * n) >> 64);
}

/* ---- Walker/Vose alias table: exact sampling from n weights in O(1).
 * One 64-bit draw x gives both the column (high half of x n) and the coin
 * (low half of x n, uniform on the column's sub-interval), so a draw costs
 * one multiply, one load and one compare. */
typedef struct sim_alias {
    uint64_t n;
    uint64_t *thr;   /* accept column i when the coin is below thr[i] */
    uint32_t *alias; /* otherwise take alias[i] */
} sim_alias;

/* Build from n > 0 non-negative weights with a positive sum (n < 2^32).
 * Returns RBF_OK, RBF_EINVAL or RBF_ENOMEM. */
int rbf__sim_alias_init(sim_alias *a, const double *w, uint64_t n);
void rbf__sim_alias_free(sim_alias *a);

static inline uint64_t sim_alias_draw(const sim_alias *a, uint64_t x)
{
    unsigned __int128 p = (unsigned __int128)x * a->n;
    uint64_t i = (uint64_t)(p >> 64);
    uint64_t coin = (uint64_t)p;
    return coin < a->thr[i] ? i : a->alias[i];
}

/* Zipf over ranks 1..n with exponent s: weight r^-s.  Index i = rank - 1. */
int rbf__sim_zipf_init(sim_alias *a, uint64_t n, double s);

/* ---- the fading workload (docs/simulator.md): births and repeats.
 * Messages are numbered by birth; the last `window` of them are kept in a
 * ring (slot = index & (window - 1)).  A repeat picks the message born `a`
 * births before the newest, a = 0..n-1 with n = min(births, window), with
 * probability proportional to p^a, p = exp(-1 / (L R)). */
typedef struct sim_fading {
    uint64_t new_threshold; /* an arrival is a birth when a draw is below it (R 2^64) */
    int always_new;         /* R == 1 */
    double log_p;           /* -1 / (L R) */
    uint64_t window;        /* ring size, a power of two */
    uint64_t births;
    double one_minus_pn;    /* 1 - p^n for the current n */
} sim_fading;

/* Largest ring the fading workload uses (entries). */
#define SIM_FADING_MAX_WINDOW (1ULL << 22)

/* R in (0, 1], L > 0.  Returns RBF_OK or RBF_EINVAL. */
int rbf__sim_fading_init(sim_fading *fw, double new_fraction, double lifetime);

/* Next arrival: returns the birth index of its message; *birth is 1 when
 * it is a brand-new message (the caller resets its ring slot). */
static inline uint64_t sim_fading_next(sim_fading *fw, sim_rng *r, int *birth);

/* ---- traces: distinct lines get dense ids 0..ids-1 in order of first
 * appearance; hashes[id] = XXH3_64bits(line) without its '\n'. */
typedef struct sim_trace {
    uint64_t lines;
    uint64_t ids;
    uint32_t *line_id; /* lines entries */
    uint64_t *hashes;  /* ids entries */
} sim_trace;

/* Load a trace file.  RBF_OK, RBF_EIO (errno kept), RBF_EINVAL (empty file
 * or more than 2^32 - 1 distinct lines), RBF_ENOMEM. */
int rbf__sim_trace_load(const char *path, sim_trace *t);

/* Dense ids for n 64-bit keys (equal keys, equal ids), in order of first
 * appearance.  ids_out[i] for each key; *distinct the number of ids;
 * first_key (may be NULL) receives each id's key and must hold n entries. */
int rbf__sim_dense_ids(const uint64_t *keys, size_t n, uint32_t *ids_out, uint64_t *first_key,
                  uint64_t *distinct);

void rbf__sim_trace_free(sim_trace *t);

/* ---- the definition of sim_fading_next (needs math.h's log1p) */
#include <math.h>

static inline uint64_t sim_fading_next(sim_fading *fw, sim_rng *r, int *birth)
{
    uint64_t x = sim_rng_next(r);
    if (fw->births == 0 || fw->always_new || x < fw->new_threshold) {
        *birth = 1;
        uint64_t idx = fw->births++;
        if (fw->births <= fw->window)
            fw->one_minus_pn = -expm1(fw->log_p * (double)fw->births);
        return idx;
    }
    *birth = 0;
    uint64_t n = fw->births < fw->window ? fw->births : fw->window;
    /* Inverse CDF of the geometric truncated to 0..n-1:
     * P(a' <= a) = (1 - p^(a+1)) / (1 - p^n). */
    double u = sim_rng_double(r);
    double a = log1p(-u * fw->one_minus_pn) / fw->log_p;
    uint64_t age = a < (double)n ? (uint64_t)a : n - 1;
    return fw->births - 1 - age;
}

/* 1 (default): pool workloads drive the filter by positions computed once
 * per epoch (rbf_insert_positions); 0: by hash (rbf_insert_hash).  The
 * numbers are the same; tests compare the two. */
extern int rbf__sim_use_positions;

#endif
