/*
 * test_uniform.c -- the positions are uniform and independent (MODEL.md
 * section 1), through the whole public path: message bytes -> rbf_hash
 * (keyed XXH3) -> rbf_positions.
 *
 * For M = 1000 and M = 2^20 + 7, colliding and non-colliding, k = 5, with
 * fixed seeds:
 *   - marginal uniformity of each hash index (chi-square over bins of the
 *     range and over residues mod 64, with the exact expected counts);
 *   - pairwise independence of every pair of indexes (chi-square on the joint
 *     law of (bin_i, bin_j)): independent uniform for colliding hashing, and
 *     for non-colliding the exact joint law of two distinct uniform positions,
 *     P(x, y) = 1 / (M (M - 1)) for x != y, summed over the cells;
 *   - two different seeds give independent positions for the same messages.
 *
 * Confidence: each check fails when its chi-square p-value is below 1e-6, so
 * a correct implementation fails a given check with probability 1e-6; there
 * are 128 checks in all, so the whole test raises a false alarm with
 * probability below 1.3e-4.  The seeds are fixed, so the result is
 * reproducible.  A negative control shows the same checks reject classic
 * double hashing (h1 + i h2) mod M.
 *
 * Sample size: 10^6 messages per configuration (each cell expects >= 950);
 * RBF_TEST_SHRINK divides it (valgrind), keeping every cell above 5.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include <gsl/gsl_cdf.h>

#include "filter_util.h"

#define K 5
#define P_MIN 1e-6

static int checks_run;

/* Binning of a position: range bins floor(p * B / M) or residues p mod B. */
typedef struct {
    int by_mod;
    uint64_t nbins;
} binning;

static uint64_t bin_of(binning b, uint64_t m, uint64_t p)
{
    if (b.by_mod)
        return p % b.nbins;
    return (uint64_t)(((unsigned __int128)p * b.nbins) / m);
}

/* Exact number of positions 0..m-1 falling in each bin. */
static void bin_widths(binning b, uint64_t m, double *w)
{
    for (uint64_t j = 0; j < b.nbins; j++)
        w[j] = 0;
    if (m <= 1u << 22) {
        for (uint64_t p = 0; p < m; p++)
            w[bin_of(b, m, p)] += 1;
        return;
    }
    fail_msg("bin_widths: m too large for the direct count");
}

/* Chi-square statistic of observed counts against expected counts; returns
 * the p-value (upper tail) and records the check. */
static double chisq_p(const uint64_t *obs, const double *expct, uint64_t cells, const char *what)
{
    double x2 = 0;
    uint64_t df = 0;
    for (uint64_t i = 0; i < cells; i++) {
        if (expct[i] <= 0) {
            assert_int_equal(obs[i], 0); /* an impossible cell was hit */
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

/* Marginal of index i. */
static double marginal_p(const uint64_t *pos, uint64_t n, uint64_t m, int i, binning b,
                         const char *what)
{
    uint64_t *obs = calloc(b.nbins, sizeof *obs);
    double *w = malloc(b.nbins * sizeof *w);
    bin_widths(b, m, w);
    for (uint64_t t = 0; t < n; t++)
        obs[bin_of(b, m, pos[t * K + (uint64_t)i])]++;
    for (uint64_t j = 0; j < b.nbins; j++)
        w[j] = (double)n * w[j] / (double)m;
    double p = chisq_p(obs, w, b.nbins, what);
    free(obs);
    free(w);
    return p;
}

/* Joint law of (bin of pos_i in a, bin of pos_j in b): independent uniform,
 * or two distinct uniform positions (`distinct`). */
static double joint_p(const uint64_t *pa, int ia, const uint64_t *pb, int ib, uint64_t n,
                      uint64_t m, binning b, int distinct, const char *what)
{
    uint64_t cells = b.nbins * b.nbins;
    uint64_t *obs = calloc(cells, sizeof *obs);
    double *e = malloc(cells * sizeof *e), *w = malloc(b.nbins * sizeof *w);
    bin_widths(b, m, w);
    for (uint64_t t = 0; t < n; t++)
        obs[bin_of(b, m, pa[t * K + (uint64_t)ia]) * b.nbins +
            bin_of(b, m, pb[t * K + (uint64_t)ib])]++;
    double md = (double)m;
    for (uint64_t u = 0; u < b.nbins; u++)
        for (uint64_t v = 0; v < b.nbins; v++) {
            double pr = distinct ? (w[u] * w[v] - (u == v ? w[u] : 0)) / (md * (md - 1))
                                 : w[u] * w[v] / (md * md);
            e[u * b.nbins + v] = (double)n * pr;
        }
    double p = chisq_p(obs, e, cells, what);
    free(obs);
    free(e);
    free(w);
    return p;
}

/* Positions of n messages (the 8-byte little-endian integers base..base+n-1
 * as bytes) under a filter of m bits with the given hashing and seed. */
static uint64_t *positions_of(uint64_t m, rbf_hashing h, uint64_t seed, uint64_t base, uint64_t n)
{
    rbf_config c = tu_config(m, K, 0, 1, h, RBF_NON_RETAINING, 1, seed);
    rbf *f = NULL;
    assert_int_equal(rbf_new(&c, &f), RBF_OK);
    uint64_t *pos = malloc(n * K * sizeof *pos);
    for (uint64_t t = 0; t < n; t++) {
        uint8_t key[8];
        for (int b = 0; b < 8; b++)
            key[b] = (uint8_t)((base + t) >> (8 * b));
        assert_int_equal(rbf_positions(f, rbf_hash(f, key, sizeof key), pos + t * K), K);
        for (int i = 0; i < K; i++)
            assert_true(pos[t * K + (uint64_t)i] < m);
        if (h == RBF_NON_COLLIDING)
            for (int i = 0; i < K; i++)
                for (int j = 0; j < i; j++)
                    assert_true(pos[t * K + (uint64_t)i] != pos[t * K + (uint64_t)j]);
    }
    rbf_free(f);
    return pos;
}

static void check_config(uint64_t m, rbf_hashing h)
{
    const uint64_t n = tu_scaled(1000000);
    const int nc = h == RBF_NON_COLLIDING;
    uint64_t *pos = positions_of(m, h, 0x5eed0001 + m, 0, n);
    char what[160];
    const binning range_marg = {0, m < 1000 ? m : 1000}, mod_marg = {1, 64};
    const binning range_pair = {0, 32}, mod_pair = {1, 32};
    for (int i = 0; i < K; i++) {
        snprintf(what, sizeof what, "M=%llu %s index %d range",
                 (unsigned long long)m, nc ? "non-colliding" : "colliding", i);
        assert_true(marginal_p(pos, n, m, i, range_marg, what) >= P_MIN);
        snprintf(what, sizeof what, "M=%llu %s index %d mod 64",
                 (unsigned long long)m, nc ? "non-colliding" : "colliding", i);
        assert_true(marginal_p(pos, n, m, i, mod_marg, what) >= P_MIN);
    }
    for (int i = 0; i < K; i++)
        for (int j = i + 1; j < K; j++) {
            snprintf(what, sizeof what, "M=%llu %s pair (%d,%d) range",
                     (unsigned long long)m, nc ? "non-colliding" : "colliding", i, j);
            assert_true(joint_p(pos, i, pos, j, n, m, range_pair, nc, what) >= P_MIN);
            snprintf(what, sizeof what, "M=%llu %s pair (%d,%d) mod 32",
                     (unsigned long long)m, nc ? "non-colliding" : "colliding", i, j);
            assert_true(joint_p(pos, i, pos, j, n, m, mod_pair, nc, what) >= P_MIN);
        }
    /* the same messages under another seed: independent of the first */
    uint64_t *pos2 = positions_of(m, h, 0x5eed0002 + m, 0, n);
    snprintf(what, sizeof what, "M=%llu %s two seeds, index 0 range", (unsigned long long)m,
             nc ? "non-colliding" : "colliding");
    assert_true(joint_p(pos, 0, pos2, 0, n, m, range_pair, 0, what) >= P_MIN);
    snprintf(what, sizeof what, "M=%llu %s two seeds, index 3 vs 1 mod 32",
             (unsigned long long)m, nc ? "non-colliding" : "colliding");
    assert_true(joint_p(pos, 3, pos2, 1, n, m, mod_pair, 0, what) >= P_MIN);
    free(pos);
    free(pos2);
}

static void test_uniform_m1000_colliding(void **state)
{
    (void)state;
    check_config(1000, RBF_COLLIDING);
}

static void test_uniform_m1000_non_colliding(void **state)
{
    (void)state;
    check_config(1000, RBF_NON_COLLIDING);
}

static void test_uniform_m2p20p7_colliding(void **state)
{
    (void)state;
    check_config((1u << 20) + 7, RBF_COLLIDING);
}

static void test_uniform_m2p20p7_non_colliding(void **state)
{
    (void)state;
    check_config((1u << 20) + 7, RBF_NON_COLLIDING);
}

/* Negative control: the same pair check flags double hashing
 * pos_i = (h1 + i h2) mod M at M = 1000 (pos_2 - pos_0 = 2 h2 is even). */
static void test_checks_reject_double_hashing(void **state)
{
    (void)state;
    const uint64_t m = 1000, n = tu_scaled(200000);
    uint64_t *pos = malloc(n * K * sizeof *pos), rng = 17;
    for (uint64_t t = 0; t < n; t++) {
        uint64_t h1 = tu_next(&rng), h2 = tu_next(&rng);
        for (int i = 0; i < K; i++)
            pos[t * K + (uint64_t)i] = (h1 % m + (uint64_t)i * (h2 % m)) % m;
    }
    const binning mod_pair = {1, 32};
    int before = checks_run;
    assert_true(joint_p(pos, 0, pos, 2, n, m, mod_pair, 0, "double hashing (expected to fail)") <
                P_MIN);
    checks_run = before; /* not one of the counted checks */
    free(pos);
}

/* rbf_config_init draws a fresh seed from the OS each time. */
static void test_config_init_seeds_differ(void **state)
{
    (void)state;
    rbf_config a, b, c;
    rbf_config_init(&a);
    rbf_config_init(&b);
    rbf_config_init(&c);
    assert_true(a.seed != b.seed);
    assert_true(b.seed != c.seed);
    assert_true(a.seed != c.seed);
    /* and the defaults */
    assert_int_equal(a.hashing, RBF_COLLIDING);
    assert_int_equal(a.recycle, RBF_NON_RETAINING);
    assert_int_equal(a.phases, 1);
    assert_int_equal(a.bits, 0);
    assert_int_equal(a.hashes, 0);
    assert_int_equal(a.sigma, 0);
    assert_int_equal(a.messages, 0);
}

/* The seed keys the message hash itself: the same message gets different
 * 64-bit hashes under different seeds, and hashes of many messages under
 * two seeds agree in a bit no more often than chance (a z-test at 6 sigma
 * per bit, 64 bits: false alarm < 1.3e-7). */
static void test_seed_keys_the_hash(void **state)
{
    (void)state;
    rbf_config c = tu_config(1000, 3, 0, 10, RBF_COLLIDING, RBF_NON_RETAINING, 1, 1);
    rbf *a = NULL, *b = NULL;
    assert_int_equal(rbf_new(&c, &a), RBF_OK);
    c.seed = 2;
    assert_int_equal(rbf_new(&c, &b), RBF_OK);
    const uint64_t n = tu_scaled(100000);
    uint64_t agree[64] = {0};
    for (uint64_t t = 0; t < n; t++) {
        char key[32];
        int len = snprintf(key, sizeof key, "message-%llu", (unsigned long long)t);
        uint64_t x = rbf_hash(a, key, (size_t)len) ^ rbf_hash(b, key, (size_t)len);
        assert_true(x != 0);
        for (int bit = 0; bit < 64; bit++)
            agree[bit] += !((x >> bit) & 1);
    }
    for (int bit = 0; bit < 64; bit++) {
        double z = ((double)agree[bit] - (double)n / 2) / sqrt((double)n / 4);
        assert_true(fabs(z) < 6);
    }
    rbf_free(a);
    rbf_free(b);
}

static int report(void **state)
{
    (void)state;
    print_message("%d chi-square checks at p >= %g each\n", checks_run, P_MIN);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uniform_m1000_colliding),
        cmocka_unit_test(test_uniform_m1000_non_colliding),
        cmocka_unit_test(test_uniform_m2p20p7_colliding),
        cmocka_unit_test(test_uniform_m2p20p7_non_colliding),
        cmocka_unit_test(test_checks_reject_double_hashing),
        cmocka_unit_test(test_config_init_seeds_differ),
        cmocka_unit_test(test_seed_keys_the_hash),
    };
    return cmocka_run_group_tests(tests, NULL, report);
}
