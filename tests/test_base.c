/*
 * test_base.c -- the base module: one set of status codes with one
 * message each, the version macros against the run-time getters,
 * splitmix64's known answers, and the ABI policy of rbf_base.h: the size
 * and field offsets of every public struct are pinned here, so a change
 * that would break programs built against an older 2.x header fails this
 * test (a new field must take reserved words, not grow the struct).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "rbf.h"
#include "rbf_model.h"
#include "rbf_sim.h"

static void test_status_codes(void **state)
{
    (void)state;
    const int codes[] = {RBF_OK,     RBF_EINVAL,  RBF_ENOMEM,    RBF_EIO,     RBF_EFORMAT,
                         RBF_ECORRUPT, RBF_ERANGE, RBF_ECANCELED, RBF_ENOMODEL};
    const size_t n = sizeof codes / sizeof codes[0];
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(codes[i], -(int)i); /* 0, -1, ... -8: no gaps, no duplicates */
        const char *m = rbf_strerror(codes[i]);
        assert_non_null(m);
        assert_string_not_equal(m, "unknown error");
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(m, rbf_strerror(codes[j]));
    }
    assert_string_equal(rbf_strerror(-9), "unknown error");
    assert_string_equal(rbf_strerror(1), "unknown error");
}

static void test_version(void **state)
{
    (void)state;
    assert_int_equal(rbf_version_number(), RBF_VERSION_NUMBER);
    assert_int_equal(RBF_VERSION_NUMBER,
                     RBF_VERSION_MAJOR * 10000 + RBF_VERSION_MINOR * 100 + RBF_VERSION_PATCH);
    assert_string_equal(rbf_version(), RBF_VERSION_STRING);
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", RBF_VERSION_MAJOR, RBF_VERSION_MINOR,
             RBF_VERSION_PATCH);
    assert_string_equal(rbf_version(), want);
}

/* splitmix64 from state 0 (Vigna's reference outputs), and the finaliser
 * as a bijection on a few words. */
static void test_splitmix64(void **state)
{
    (void)state;
    uint64_t s = 0;
    assert_true(rbf_splitmix64(&s) == UINT64_C(0xe220a8397b1dcdaf));
    assert_true(rbf_splitmix64(&s) == UINT64_C(0x6e789e6aa1b965f4));
    assert_true(rbf_splitmix64(&s) == UINT64_C(0x06c45d188009454f));
    assert_true(s == 3 * RBF_GOLDEN);
    assert_true(rbf_splitmix64_mix(0) == 0);
}

/* The ABI: sizes and offsets of the public structs (x86-64 / LP64). */
static void test_abi_layout(void **state)
{
    (void)state;
    if (sizeof(void *) != 8 || sizeof(unsigned) != 4) {
        print_message("SKIPPED: layout pinned for LP64 only\n");
        skip();
    }
    assert_int_equal(sizeof(rbf_config), 120);
    assert_int_equal(offsetof(rbf_config, seed), 48);
    assert_int_equal(offsetof(rbf_config, layout), 56);
    assert_int_equal(offsetof(rbf_config, concurrent), 60);
    assert_int_equal(offsetof(rbf_config, reserved_), 64);
    assert_int_equal(sizeof(rbf_stats), 128);
    assert_int_equal(offsetof(rbf_stats, reserved_), 64);
    assert_int_equal(sizeof(rbf_allocator), 64);
    assert_int_equal(offsetof(rbf_sim_config, filter), 0);
    assert_int_equal(offsetof(rbf_sim_config, oracle), sizeof(rbf_config));
}

/* Input checks refuse a non-zero reserved word (a field this version does
 * not know), and the *_init functions zero them. */
static void test_reserved_refused(void **state)
{
    (void)state;
    rbf_config c;
    memset(&c, 0xA5, sizeof c);
    rbf_config_init(&c);
    for (size_t i = 0; i < sizeof c.reserved_ / sizeof c.reserved_[0]; i++)
        assert_true(c.reserved_[i] == 0);
    c.bits = 1000;
    c.hashes = 3;
    c.sigma = 300;
    const char *why = NULL;
    assert_int_equal(rbf_config_check(&c, &why), RBF_OK);
    c.reserved_[6] = 1;
    assert_int_equal(rbf_config_check(&c, &why), RBF_EINVAL);
    assert_non_null(strstr(why, "rbf_config_init"));
    rbf *f = (rbf *)&c;
    assert_int_equal(rbf_new(&c, &f), RBF_EINVAL);
    assert_null(f);

    rbf_sim_config s;
    memset(&s, 0x5A, sizeof s);
    rbf_sim_config_init(&s);
    s.filter.hashes = 3;
    s.filter.sigma = 300;
    assert_int_equal(rbf_sim_config_check(&s, &why), RBF_OK);
    s.reserved_[0] = 2;
    assert_int_equal(rbf_sim_config_check(&s, &why), RBF_EINVAL);
    s.reserved_[0] = 0;
    s.workload.reserved_[3] = 2;
    assert_int_equal(rbf_sim_config_check(&s, &why), RBF_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_codes), cmocka_unit_test(test_version),
        cmocka_unit_test(test_splitmix64),   cmocka_unit_test(test_abi_layout),
        cmocka_unit_test(test_reserved_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
