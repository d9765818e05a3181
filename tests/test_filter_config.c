/*
 * test_filter_config.c -- configurations: every bad one is rejected with
 * RBF_EINVAL (and *out left NULL), the boundaries are accepted, and sizes up
 * to 2^40 bits and beyond work with no integer overflow.
 *
 * A filter of 2^40 bits needs 128 GiB, which cannot be allocated here, so the
 * position arithmetic at that size is tested through the library's internal
 * rbf__positions (src/filter/filter_internal.h) on a handle whose
 * configuration is checked by rbf_config_check but whose arrays are not
 * allocated; a real filter of 2^33 + 5 bits (1 GiB, allocated lazily by the
 * OS) checks the same through the public API.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include "filter/filter_internal.h"
#include "filter_util.h"

#ifdef RBF_SANITIZE
/* Under ASan a huge calloc aborts by default; in real life it returns NULL,
 * which is what the RBF_ENOMEM checks below are about. */
__attribute__((visibility("default"))) const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}
#endif

static void expect_einval(rbf_config c, const char *what)
{
    const char *why = NULL;
    int rc = rbf_config_check(&c, &why);
    if (rc != RBF_EINVAL)
        print_error("accepted bad configuration: %s (rc %d)\n", what, rc);
    assert_int_equal(rc, RBF_EINVAL);
    assert_non_null(why);
    assert_true(why[0] != '\0');
    rbf *f = (rbf *)&c; /* must be overwritten with NULL */
    assert_int_equal(rbf_new(&c, &f), RBF_EINVAL);
    assert_null(f);
}

static void expect_ok(rbf_config c, const char *what, int allocate)
{
    const char *why = "not cleared";
    int rc = rbf_config_check(&c, &why);
    if (rc != RBF_OK)
        print_error("rejected good configuration: %s (%s)\n", what, why ? why : "?");
    assert_int_equal(rc, RBF_OK);
    assert_null(why);
    if (allocate) {
        rbf *f = NULL;
        assert_int_equal(rbf_new(&c, &f), RBF_OK);
        assert_non_null(f);
        assert_true(rbf_insert(f, "x", 1) >= 0);
        rbf_free(f);
    }
}

static rbf_config base(void)
{
    return tu_config(1000, 3, 300, 0, RBF_COLLIDING, RBF_NON_RETAINING, 1, 1);
}

static void test_bad_configurations(void **state)
{
    (void)state;
    rbf_config c;
    c = base(), c.bits = 0;
    expect_einval(c, "bits == 0");
    c = base(), c.hashes = 0;
    expect_einval(c, "hashes == 0");
    c = base(), c.hashes = RBF_MAX_HASHES + 1, c.sigma = 999;
    expect_einval(c, "hashes > RBF_MAX_HASHES");
    c = base(), c.hashes = 0xffffffffu, c.sigma = 999;
    expect_einval(c, "hashes = UINT_MAX");
    c = base(), c.sigma = 1000;
    expect_einval(c, "sigma == bits");
    c = base(), c.sigma = UINT64_MAX;
    expect_einval(c, "sigma = 2^64-1");
    c = base(), c.sigma = 2;
    expect_einval(c, "sigma < hashes");
    c = base(), c.sigma = 500, c.phases = 2;
    expect_einval(c, "two-phase sigma == bits per filter");
    c = base(), c.bits = 1001, c.sigma = 500, c.phases = 2;
    expect_einval(c, "two-phase sigma == floor(bits/2)");
    c = base(), c.messages = 100;
    expect_einval(c, "both sigma and messages");
    c = base(), c.sigma = 0;
    expect_einval(c, "neither sigma nor messages");
    c = base(), c.phases = 0;
    expect_einval(c, "phases 0");
    c = base(), c.phases = 3;
    expect_einval(c, "phases 3");
    c = base(), c.phases = 0xffffffffu;
    expect_einval(c, "phases UINT_MAX");
    c = base(), c.bits = 10, c.hashes = 11, c.sigma = 0, c.messages = 5,
    c.hashing = RBF_NON_COLLIDING;
    expect_einval(c, "non-colliding k > bits");
    c = base(), c.bits = 21, c.hashes = 11, c.sigma = 0, c.messages = 5,
    c.hashing = RBF_NON_COLLIDING, c.phases = 2;
    expect_einval(c, "non-colliding k > bits per filter (two-phase)");
    c = base(), c.bits = 1, c.hashes = 1, c.sigma = 0, c.messages = 1, c.phases = 2;
    expect_einval(c, "two-phase with 0 bits per filter");
    c = base(), c.hashing = (rbf_hashing)2;
    expect_einval(c, "unknown hashing");
    c = base(), c.recycle = (rbf_recycle_mode)-1;
    expect_einval(c, "unknown recycle mode");
    /* NULL */
    assert_int_equal(rbf_config_check(NULL, NULL), RBF_EINVAL);
    rbf *f = (rbf *)&c;
    assert_int_equal(rbf_new(NULL, &f), RBF_EINVAL);
    assert_null(f);
    c = base();
    assert_int_equal(rbf_new(&c, NULL), RBF_EINVAL);
}

static void test_boundaries_accepted(void **state)
{
    (void)state;
    rbf_config c;
    c = base(), c.sigma = 999;
    expect_ok(c, "sigma = bits - 1", 1);
    c = base(), c.sigma = 3;
    expect_ok(c, "sigma = hashes", 1);
    c = base(), c.bits = 1001, c.sigma = 499, c.phases = 2;
    expect_ok(c, "two-phase sigma = floor(bits/2) - 1", 1);
    c = base(), c.bits = 1, c.hashes = 1, c.sigma = 0, c.messages = 1;
    expect_ok(c, "one bit", 1);
    c = base(), c.bits = 2, c.hashes = 1, c.sigma = 0, c.messages = 1, c.phases = 2;
    expect_ok(c, "two-phase, one bit each", 1);
    c = base(), c.bits = 10, c.hashes = 10, c.sigma = 0, c.messages = 5,
    c.hashing = RBF_NON_COLLIDING;
    expect_ok(c, "non-colliding k = bits", 1);
    c = base(), c.bits = 10, c.hashes = 50, c.sigma = 0, c.messages = 5;
    expect_ok(c, "colliding k > bits", 1);
    c = base(), c.bits = 100000, c.hashes = RBF_MAX_HASHES, c.sigma = 50000;
    expect_ok(c, "hashes = RBF_MAX_HASHES", 1);
    c = base(), c.sigma = 0, c.messages = UINT64_MAX;
    expect_ok(c, "messages = 2^64-1", 1);
    c = base(), c.recycle = RBF_RETAINING, c.sigma = 0, c.messages = 10;
    expect_ok(c, "N-bounded retaining (retaining has no effect)", 1);

    /* a colliding one-bit filter: the first message sets it, then every
     * message is a false positive; N = 1 recycles after each bit set */
    rbf *f = NULL;
    c = base(), c.bits = 1, c.hashes = 4, c.sigma = 0, c.messages = 2;
    assert_int_equal(rbf_new(&c, &f), RBF_OK);
    assert_int_equal(rbf_insert(f, "a", 1), 1);
    assert_int_equal(rbf_insert(f, "b", 1), 0);
    uint64_t pos[4];
    assert_int_equal(rbf_positions(f, 123, pos), 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(pos[i], 0);
    rbf_free(f);
}

/* What rbf_config_check must answer for a valid configuration of m bits
 * per filter: RBF_ENOMEM exactly when the bit array's bytes, ceil(m / 64)
 * words of 8, exceed SIZE_MAX (only on 32-bit machines), else RBF_OK. */
static int addressable(uint64_t m)
{
    unsigned __int128 bytes = ((unsigned __int128)m + 63) / 64 * 8;
    return bytes > (unsigned __int128)SIZE_MAX ? RBF_ENOMEM : RBF_OK;
}

/* Sizes up to 2^40 bits and far beyond: checked without overflow, and
 * anything that cannot be addressed is RBF_ENOMEM, never a crash. */
static void test_huge_sizes(void **state)
{
    (void)state;
    const uint64_t two40 = (uint64_t)1 << 40;
    rbf_config c;
    c = base(), c.bits = two40, c.sigma = two40 - 1;
    expect_ok(c, "2^40 bits, sigma 2^40-1", 0);
    c = base(), c.bits = two40, c.sigma = two40;
    expect_einval(c, "2^40 bits, sigma 2^40");
    c = base(), c.bits = 2 * two40 + 1, c.sigma = two40 - 1, c.phases = 2;
    expect_ok(c, "two-phase 2^41+1 bits", 0);
    c = base(), c.bits = two40 * 1024, c.sigma = 0, c.messages = two40;
    expect_ok(c, "2^50 bits N-bounded", 0);
    c = base(), c.bits = two40, c.hashes = RBF_MAX_HASHES, c.hashing = RBF_NON_COLLIDING,
    c.sigma = two40 / 2;
    expect_ok(c, "2^40 bits non-colliding k=256", 0);
    /* far too large to address: a clean error from check and from new */
    const uint64_t huge[] = {(uint64_t)1 << 62, UINT64_MAX - 63, UINT64_MAX - 1, UINT64_MAX};
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++)
        for (unsigned ph = 1; ph <= 2; ph++) {
            c = base(), c.bits = huge[i], c.sigma = 0, c.messages = 1000, c.phases = ph;
            int rc = rbf_config_check(&c, NULL);
            assert_int_equal(rc, addressable(huge[i] / ph));
            rbf *f = (rbf *)&c;
            rc = rbf_new(&c, &f);
            assert_int_equal(rc, RBF_ENOMEM); /* 2^59 bytes and more: never allocatable */
            assert_null(f);
            c.sigma = huge[i] / ph - 1, c.messages = 0;
            rc = rbf_config_check(&c, NULL);
            assert_int_equal(rc, addressable(huge[i] / ph));
        }
}

/* Positions of a filter with m bits through the internal function, on a
 * handle that is checked but not allocated: all in range, the high range
 * reached (no 32-bit truncation), distinct when non-colliding, and the
 * top half of the range hit half of the time (a z-test at 6 sigma: false
 * alarm < 2e-9). */
static void check_positions_unallocated(uint64_t total_bits, unsigned phases, rbf_hashing h)
{
    rbf_config c = tu_config(total_bits, 8, 0, 1000, h, RBF_NON_RETAINING, phases, 99);
    int rc = rbf_config_check(&c, NULL);
    assert_int_equal(rc, addressable(phases == 2 ? total_bits / 2 : total_bits));
    struct rbf fake;
    memset(&fake, 0, sizeof fake);
    fake.cfg = c;
    fake.m = phases == 2 ? total_bits / 2 : total_bits;
    fake.nwords = fake.m / 64 + (fake.m % 64 != 0);
    fake.limit_bits = UINT64_MAX;
    fake.limit_msgs = c.messages;
    uint64_t rng = 5, pos[8], maxpos = 0, upper = 0, above32 = 0;
    const uint64_t n = tu_scaled(200000);
    for (uint64_t i = 0; i < n; i++) {
        rbf__positions(&fake, tu_next(&rng), pos);
        for (int j = 0; j < 8; j++) {
            assert_true(pos[j] < fake.m);
            if (pos[j] > maxpos)
                maxpos = pos[j];
            upper += pos[j] >= fake.m / 2;
            above32 += pos[j] >> 32 != 0;
            for (int l = 0; l < j && h == RBF_NON_COLLIDING; l++)
                assert_true(pos[l] != pos[j]);
        }
    }
    double total = 8.0 * (double)n;
    assert_true((double)maxpos > (double)fake.m * (1.0 - 100.0 / total));
    double z = ((double)upper - total / 2) / sqrt(total / 4);
    assert_true(fabs(z) < 6.0);
    if (fake.m > ((uint64_t)1 << 36))
        assert_true((double)above32 > 0.9 * total);
}

static void test_positions_near_2_40_unallocated(void **state)
{
    (void)state;
    const uint64_t two40 = (uint64_t)1 << 40;
    for (int h = 0; h < 2; h++) {
        rbf_hashing hh = h ? RBF_NON_COLLIDING : RBF_COLLIDING;
        check_positions_unallocated(two40, 1, hh);
        check_positions_unallocated(two40 + 3, 1, hh);
        check_positions_unallocated(2 * two40 + 1, 2, hh);
        check_positions_unallocated((uint64_t)1 << 50, 1, hh);
        check_positions_unallocated(UINT64_MAX - 1, 1, hh);
    }
}

/* The largest size allocated here: 2^33 + 5 bits (1 GiB of virtual memory,
 * only the touched pages become resident; about 6 s under valgrind, so it
 * runs there too).  A machine that cannot reserve 1 GiB of address space
 * (ulimit -v, strict overcommit) fails it, saying so. */
static void test_positions_large_allocated(void **state)
{
    (void)state;
    const uint64_t m = ((uint64_t)1 << 33) + 5;
    rbf_config c = tu_config(m, 7, m - 1, 0, RBF_NON_COLLIDING, RBF_NON_RETAINING, 1, 3);
    rbf *f = NULL;
    int rc = rbf_new(&c, &f);
    if (rc != RBF_OK)
        fail_msg("cannot allocate a filter of 2^33 + 5 bits (1 GiB of address space): %s",
                 rbf_strerror(rc));
    assert_int_equal(rc, RBF_OK);
    uint64_t rng = 8, pos[7], maxpos = 0, above32 = 0;
    for (uint64_t i = 0; i < 20000; i++) {
        uint64_t hash = tu_next(&rng);
        assert_int_equal(rbf_positions(f, hash, pos), 7);
        for (int j = 0; j < 7; j++) {
            assert_true(pos[j] < m);
            maxpos = pos[j] > maxpos ? pos[j] : maxpos;
            above32 += pos[j] >> 32 != 0;
        }
        if (i < 2000) {
            assert_int_equal(rbf_insert_hash(f, hash), 1);
            assert_int_equal(rbf_contains_hash(f, hash), 1);
        }
    }
    assert_true(maxpos > m - m / 1000);
    assert_true(above32 > 20000 * 7 / 4); /* about half: 2^33 / 2^32 */
    rbf_stats s;
    rbf_get_stats(f, &s);
    assert_int_equal(s.bits, m);
    assert_true(s.bits_set > 2000 * 7 - 10); /* almost no overlap at this size */
    rbf_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_configurations),
        cmocka_unit_test(test_boundaries_accepted),
        cmocka_unit_test(test_huge_sizes),
        cmocka_unit_test(test_positions_near_2_40_unallocated),
        cmocka_unit_test(test_positions_large_allocated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
