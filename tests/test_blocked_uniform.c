/*
 * test_blocked_uniform.c -- the blocked layout's positions are uniform and
 * independent, through the whole public path: message bytes -> rbf_hash
 * (keyed XXH3) -> rbf_positions, as test_uniform.c checks the flat layout.
 *
 * With fixed seeds, k = 14 (two offset words), colliding and non-colliding:
 *   - the block is uniform over the blocks (chi-square over the 1000 blocks
 *     of M = 512 000, and over 1000 range bins of the 65 539 blocks of
 *     M = 512 x 65 539, with the exact number of blocks in each bin);
 *   - each of the 14 in-block offsets is uniform on 0..511 (512 cells);
 *   - pairs of offsets (0,1), (0,6), (0,7), (5,6), (6,7), (1,13), (7,13):
 *     independent uniform (colliding), or for non-colliding the exact law of
 *     two distinct uniform offsets, P(x, y) = 1 / (512 x 511) for x != y,
 *     over 64 x 64 cells of 8 offsets each;
 *   - the block and the offsets are independent: the joint law of (block
 *     in 32 range bins, offset 0 / 6 / 7 / 13 in 32 bins) is the product of
 *     the uniform marginals.
 *
 * Confidence: each check fails when its chi-square p-value is below 1e-6, so
 * a correct implementation fails a given check with probability 1e-6; there
 * are 2 x (2 + 14 + 7 + 4) = 54 checks, so the whole test raises a false
 * alarm with probability below 5.4e-5.  The seeds are fixed, so the result
 * is reproducible.  A negative control shows that the block-offset check
 * rejects a rule that takes an offset from the block's own word.
 *
 * Sample size: 10^6 messages per configuration (each cell expects >= 244);
 * RBF_TEST_SHRINK divides it (valgrind).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include <gsl/gsl_cdf.h>

#include "filter_util.h"

#define K 14
#define P_MIN 1e-6

static int checks_run;

/* p-value of observed counts against expected counts (cells with expected
 * 0 must be empty). */
static double chisq_p(const uint64_t *obs, const double *expct, uint64_t cells, const char *what)
{
    double x2 = 0;
    uint64_t df = 0;
    for (uint64_t i = 0; i < cells; i++) {
        if (expct[i] <= 0) {
            assert_int_equal(obs[i], 0);
            continue;
        }
        double d = (double)obs[i] - expct[i];
        x2 += d * d / expct[i];
        df++;
    }
    double p = gsl_cdf_chisq_Q(x2, (double)(df - 1));
    checks_run++;
    if (p < P_MIN)
        print_error("%s: chi2 = %.1f on %llu df, p = %.3g\n", what, x2,
                    (unsigned long long)(df - 1), p);
    return p;
}

/* Range bin of v in 0..n-1 over `bins` bins, and the exact bin widths. */
static uint64_t bin(uint64_t v, uint64_t n, uint64_t bins)
{
    return (uint64_t)(((unsigned __int128)v * bins) / n);
}

static double *widths(uint64_t n, uint64_t bins)
{
    double *w = calloc(bins, sizeof *w);
    for (uint64_t v = 0; v < n; v++)
        w[bin(v, n, bins)] += 1;
    return w;
}

typedef struct sample {
    uint64_t n, m;
    uint64_t *block; /* n blocks */
    uint16_t *off;   /* n x K offsets */
} sample;

static void sample_free(sample *s)
{
    free(s->block);
    free(s->off);
}

/* Blocks and offsets of n messages (the 8-byte integers 0..n-1). */
static sample sample_of(uint64_t m, rbf_hashing h, uint64_t seed, uint64_t n)
{
    rbf_config c = tu_config(m, K, 0, 1, h, RBF_NON_RETAINING, 1, seed);
    c.layout = RBF_LAYOUT_BLOCKED;
    rbf *f = NULL;
    assert_int_equal(rbf_new(&c, &f), RBF_OK);
    sample s = {n, m, malloc(n * sizeof(uint64_t)), malloc(n * K * sizeof(uint16_t))};
    uint64_t pos[K];
    for (uint64_t t = 0; t < n; t++) {
        uint8_t key[8];
        for (int b = 0; b < 8; b++)
            key[b] = (uint8_t)(t >> (8 * b));
        assert_int_equal(rbf_positions(f, rbf_hash(f, key, sizeof key), pos), K);
        s.block[t] = pos[0] / 512;
        for (int i = 0; i < K; i++) {
            assert_true(pos[i] / 512 == s.block[t]);
            s.off[t * K + (uint64_t)i] = (uint16_t)(pos[i] % 512);
        }
        if (h == RBF_NON_COLLIDING)
            for (int i = 0; i < K; i++)
                for (int j = 0; j < i; j++)
                    assert_true(pos[i] != pos[j]);
    }
    rbf_free(f);
    return s;
}

static double block_marginal_p(const sample *s, uint64_t bins, const char *what)
{
    uint64_t nb = s->m / 512;
    uint64_t *obs = calloc(bins, sizeof *obs);
    double *w = widths(nb, bins);
    for (uint64_t t = 0; t < s->n; t++)
        obs[bin(s->block[t], nb, bins)]++;
    for (uint64_t j = 0; j < bins; j++)
        w[j] = (double)s->n * w[j] / (double)nb;
    double p = chisq_p(obs, w, bins, what);
    free(obs);
    free(w);
    return p;
}

static double offset_marginal_p(const sample *s, int i, const char *what)
{
    uint64_t obs[512] = {0};
    double e[512];
    for (uint64_t t = 0; t < s->n; t++)
        obs[s->off[t * K + (uint64_t)i]]++;
    for (int j = 0; j < 512; j++)
        e[j] = (double)s->n / 512;
    return chisq_p(obs, e, 512, what);
}

static double offset_pair_p(const sample *s, int i, int j, int distinct, const char *what)
{
    enum { C = 64 };
    uint64_t *obs = calloc(C * C, sizeof *obs);
    double *e = malloc(C * C * sizeof *e);
    for (uint64_t t = 0; t < s->n; t++)
        obs[(s->off[t * K + (uint64_t)i] / 8) * C + s->off[t * K + (uint64_t)j] / 8]++;
    for (int u = 0; u < C; u++)
        for (int v = 0; v < C; v++)
            e[u * C + v] = (double)s->n * (distinct ? (u == v ? 8.0 * 7 : 64.0) / (512.0 * 511)
                                                    : 1.0 / (C * C));
    double p = chisq_p(obs, e, C * C, what);
    free(obs);
    free(e);
    return p;
}

/* Joint law of (block in 32 range bins, offset value in 32 bins) against
 * the product of uniform marginals; `offset_of` gives the offset of
 * message t (so that the negative control can substitute a broken one). */
static double block_offset_p(const sample *s, uint64_t (*offset_of)(const sample *, uint64_t, int),
                             int i, const char *what)
{
    enum { C = 32 };
    uint64_t nb = s->m / 512;
    uint64_t obs[C * C] = {0};
    double e[C * C];
    double *wb = widths(nb, C);
    for (uint64_t t = 0; t < s->n; t++)
        obs[bin(s->block[t], nb, C) * C + offset_of(s, t, i) / 16]++;
    for (int u = 0; u < C; u++)
        for (int v = 0; v < C; v++)
            e[u * C + v] = (double)s->n * (wb[u] / (double)nb) / C;
    free(wb);
    return chisq_p(obs, e, C * C, what);
}

static uint64_t real_offset(const sample *s, uint64_t t, int i)
{
    return s->off[t * K + (uint64_t)i];
}

static void check(rbf_hashing h)
{
    const int nc = h == RBF_NON_COLLIDING;
    const char *hn = nc ? "non-colliding" : "colliding";
    const uint64_t n = tu_scaled(1000000);
    char what[160];
    sample s = sample_of(512 * 1000, h, 0xb10c0001 + (uint64_t)nc, n);
    snprintf(what, sizeof what, "M=512000 %s block", hn);
    assert_true(block_marginal_p(&s, 1000, what) >= P_MIN);
    for (int i = 0; i < K; i++) {
        snprintf(what, sizeof what, "M=512000 %s offset %d", hn, i);
        assert_true(offset_marginal_p(&s, i, what) >= P_MIN);
    }
    static const int pairs[][2] = {{0, 1}, {0, 6}, {0, 7}, {5, 6}, {6, 7}, {1, 13}, {7, 13}};
    for (size_t q = 0; q < sizeof pairs / sizeof pairs[0]; q++) {
        snprintf(what, sizeof what, "M=512000 %s offsets (%d,%d)", hn, pairs[q][0], pairs[q][1]);
        assert_true(offset_pair_p(&s, pairs[q][0], pairs[q][1], nc, what) >= P_MIN);
    }
    static const int idx[] = {0, 6, 7, 13};
    for (size_t q = 0; q < 4; q++) {
        snprintf(what, sizeof what, "M=512000 %s block vs offset %d", hn, idx[q]);
        assert_true(block_offset_p(&s, real_offset, idx[q], what) >= P_MIN);
    }
    sample_free(&s);
    s = sample_of(512 * 65539, h, 0xb10c0003 + (uint64_t)nc, n);
    snprintf(what, sizeof what, "M=512x65539 %s block, 1000 bins", hn);
    assert_true(block_marginal_p(&s, 1000, what) >= P_MIN);
    sample_free(&s);
}

static void test_blocked_colliding(void **state)
{
    (void)state;
    check(RBF_COLLIDING);
}

static void test_blocked_non_colliding(void **state)
{
    (void)state;
    check(RBF_NON_COLLIDING);
}

/* The negative control: an offset taken from the top 9 bits of the block's
 * own splitmix64 word (the bits that choose the block) instead of a word of
 * its own.  Its marginal is still uniform, but the block-offset check must
 * reject it. */
static rbf *g_f; /* a filter with the sample's seed, for rbf_hash */

static uint64_t broken_offset(const sample *s, uint64_t t, int i)
{
    (void)i;
    (void)s;
    uint8_t key[8];
    for (int b = 0; b < 8; b++)
        key[b] = (uint8_t)(t >> (8 * b));
    uint64_t z = rbf_hash(g_f, key, sizeof key) + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return z >> 55;
}

static void test_negative_control(void **state)
{
    (void)state;
    const uint64_t seed = 0xb10c0001;
    rbf_config c = tu_config(1024, 1, 0, 1, RBF_COLLIDING, RBF_NON_RETAINING, 1, seed);
    assert_int_equal(rbf_new(&c, &g_f), RBF_OK);
    const uint64_t n = tu_scaled(200000);
    sample s = sample_of(512 * 1000, RBF_COLLIDING, seed, n);
    int before = checks_run;
    double p = block_offset_p(&s, broken_offset, 0, "negative control (expected to fail)");
    checks_run = before;
    assert_true(p < 1e-100);
    sample_free(&s);
    rbf_free(g_f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocked_colliding),
        cmocka_unit_test(test_blocked_non_colliding),
        cmocka_unit_test(test_negative_control),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    printf("%d chi-square checks at p >= %g\n", checks_run, P_MIN);
    return rc;
}
