/*
 * test_copy.c -- rbf_copy: the copy saves to the same bytes as the original
 * (every layout, phase count, bound, and a concurrent filter), answers
 * every later message as the original does, and the two change
 * independently.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "filter_util.h"

static uint8_t *image(const rbf *f, uint64_t *len)
{
    assert_int_equal(rbf_save_size(f, len), RBF_OK);
    uint8_t *b = malloc((size_t)*len);
    assert_non_null(b);
    assert_int_equal(rbf_save_buffer(f, b, (size_t)*len), RBF_OK);
    return b;
}

static void check(uint64_t bits, unsigned k, uint64_t sigma, uint64_t n, unsigned phases,
                  rbf_layout layout, unsigned concurrent)
{
    rbf_config c;
    rbf_config_init(&c);
    c.bits = bits, c.hashes = k, c.sigma = sigma, c.messages = n, c.phases = phases;
    c.layout = layout, c.concurrent = concurrent, c.seed = 9;
    rbf *f, *g;
    assert_int_equal(rbf_new(&c, &f), RBF_OK);
    uint64_t st = 5;
    for (int i = 0; i < 3000; i++) {
        uint64_t x = tu_next(&st);
        rbf_insert(f, &x, sizeof x);
    }
    assert_int_equal(rbf_copy(f, &g), RBF_OK);
    uint64_t la, lb;
    uint8_t *a = image(f, &la), *b = image(g, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(a, b, (size_t)la);
    free(a), free(b);
    for (int i = 0; i < 3000; i++) {
        uint64_t x = tu_next(&st) % 6000;
        assert_int_equal(rbf_insert(f, &x, sizeof x), rbf_insert(g, &x, sizeof x));
    }
    rbf_stats sf, sg;
    rbf_get_stats(f, &sf);
    rbf_get_stats(g, &sg);
    assert_true(sf.cycles > 0);
    assert_memory_equal(&sf, &sg, sizeof sf);
    /* independent: a recycle of the copy leaves the original alone */
    rbf_recycle(g);
    rbf_get_stats(f, &sf);
    rbf_get_stats(g, &sg);
    assert_int_equal(sg.cycles, sf.cycles + 1);
    rbf_free(f);
    rbf_free(g);
}

static void test_copy_variants(void **state)
{
    (void)state;
    check(1u << 15, 4, 1u << 13, 0, 1, RBF_LAYOUT_FLAT, 0);
    check(1u << 15, 3, 0, 1500, 1, RBF_LAYOUT_FLAT, 0);
    check(1u << 15, 4, 1u << 12, 0, 2, RBF_LAYOUT_FLAT, 0);
    check(1u << 15, 6, 1u << 13, 0, 1, RBF_LAYOUT_BLOCKED, 0);
    check(1u << 15, 4, 1u << 13, 0, 1, RBF_LAYOUT_FLAT, 1);
}

static void test_copy_args(void **state)
{
    (void)state;
    rbf *g = (rbf *)1;
    assert_int_equal(rbf_copy(NULL, &g), RBF_EINVAL);
    assert_null(g);
    assert_int_equal(rbf_copy(NULL, NULL), RBF_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_copy_variants),
                                       cmocka_unit_test(test_copy_args)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
