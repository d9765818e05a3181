/*
 * test_path.c -- the code path is chosen once and stored in the handle
 * (src/filter/path.c): a concurrent filter, made so or switched, always
 * has the concurrent path and no single-writer SIMD path; switched back,
 * it has again exactly the path a new filter of its configuration has; a
 * copy and a loaded filter have the path of the original.  Runs on any
 * processor (whatever path it gives, the rule is the same).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "filter/filter_internal.h"
#include "filter_util.h"

/* The configurations: both layouts, one and two phases, both hashings, k
 * inside and outside the per-k paths. */
static rbf_config config_of(unsigned i)
{
    static const unsigned ks[] = {3, 12};
    rbf_config c = tu_config(1u << 16, ks[i & 1], 3000, 0, (i >> 1) & 1 ? RBF_NON_COLLIDING
                                                                        : RBF_COLLIDING,
                             RBF_NON_RETAINING, 1 + ((i >> 2) & 1), 1);
    c.layout = (i >> 3) & 1 ? RBF_LAYOUT_BLOCKED : RBF_LAYOUT_FLAT;
    return c;
}

static void same_path(const rbf *a, const rbf *b)
{
    assert_int_equal(a->simd, b->simd);
    assert_memory_equal(&a->ops, &b->ops, sizeof a->ops);
    assert_string_equal(rbf_path(a), rbf_path(b));
}

static void test_concurrent_rule(void **state)
{
    (void)state;
    for (unsigned i = 0; i < 16; i++) {
        rbf_config c = config_of(i);
        rbf *f = NULL, *g = NULL, *h = NULL;
        assert_int_equal(rbf_new(&c, &f), RBF_OK);
        assert_int_equal(rbf_new(&c, &g), RBF_OK);
        assert_non_null(f->ops.ins_hash);
        assert_non_null(f->ops.batch);
        assert_non_null(f->ops.ins_pos);
        assert_string_not_equal(rbf_path(f), "concurrent");

        assert_int_equal(rbf_set_concurrent(f, 1), RBF_OK);
        assert_string_equal(rbf_path(f), "concurrent");
        assert_int_equal(f->simd, 0);
        assert_true(f->ops.ins_hash != g->ops.ins_hash);

        c.concurrent = 1;
        assert_int_equal(rbf_new(&c, &h), RBF_OK);
        same_path(f, h); /* made concurrent = switched to it */

        assert_int_equal(rbf_set_concurrent(f, 0), RBF_OK);
        same_path(f, g); /* back: the path of a new filter */
        rbf_free(f);
        rbf_free(g);
        rbf_free(h);
    }
}

static void test_copy_and_load(void **state)
{
    (void)state;
    for (unsigned i = 0; i < 16; i++) {
        rbf_config c = config_of(i);
        rbf *f = NULL, *g = NULL, *h = NULL;
        assert_int_equal(rbf_new(&c, &f), RBF_OK);
        for (uint64_t j = 0; j < 100; j++)
            assert_true(rbf_insert_hash(f, j * 0x9e3779b97f4a7c15ULL) >= 0);
        assert_int_equal(rbf_copy(f, &g), RBF_OK);
        same_path(f, g);
        uint64_t n = 0;
        assert_int_equal(rbf_save_size(f, &n), RBF_OK);
        void *img = malloc((size_t)n);
        assert_non_null(img);
        assert_int_equal(rbf_save_buffer(f, img, (size_t)n), RBF_OK);
        assert_int_equal(rbf_load_buffer(img, (size_t)n, &h), RBF_OK);
        same_path(f, h);
        free(img);
        rbf_free(f);
        rbf_free(g);
        rbf_free(h);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_rule),
        cmocka_unit_test(test_copy_and_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
