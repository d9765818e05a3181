/*
 * test_flat_avx512.c -- the flat layout's AVX-512 path gives exactly what
 * the scalar reference gives, in lock-step over every single and batch call
 * (tests/support/blocked_simd.h): the gather insertion and, on a processor
 * with AVX-512 VL, the per-k batches of fast_avx512.c, which this test
 * checks the filter takes.  Exits 77 (CTest: skipped) on a processor or
 * build without AVX-512 F and DQ, or with RBF_NO_SIMD, RBF_NO_AVX2 or
 * RBF_NO_AVX512 set.
 */
#include "blocked_simd.h"
#include "filter/insert.h"

/* The batch a flat filter of m bits and k hashes takes on this machine is
 * the AVX-512 per-k one exactly when the filter takes the gather path and
 * the processor has AVX-512 VL. */
#ifdef RBF_HAVE_AVX512
static void test_flat_avx512_batch_is_the_per_k_one(void **state)
{
    (void)state;
    __builtin_cpu_init();
    const int vl = __builtin_cpu_supports("avx512vl") != 0;
    static const uint64_t ms[] = {1024, 4096, 1u << 20, UINT64_C(1) << 27};
    for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++)
        for (unsigned k = 1; k <= 9; k++) {
            rbf_config c = tu_config(ms[mi], k, ms[mi] / 3, 0, RBF_COLLIDING, RBF_NON_RETAINING, 1, 7);
            rbf *f = bs_make(&c, NULL);
            const int gather = (f->simd & RBF_SIMD_GATHER) != 0;
            assert_int_equal(gather, ms[mi] >= 4096 && k <= 8);
            const int per_k = k <= 8 && f->ops.batch == rbf__favx512_paths.batch[0][k];
            assert_int_equal(per_k, gather && vl);
            rbf_free(f);
        }
}

static void test_flat_avx512_equals_reference(void **state)
{
    (void)state;
    bs_lockstep_layout(NULL, RBF_SIMD_VEC, RBF_LAYOUT_FLAT);
}
#endif

int main(void)
{
#ifndef RBF_HAVE_AVX512
    printf("SKIPPED: no AVX-512 path in this build (not x86-64 with GCC or clang)\n");
    return 77;
#else
    if (!bs_available_layout(NULL, RBF_SIMD_VEC, RBF_LAYOUT_FLAT)) {
        printf("SKIPPED: the flat layout's AVX-512 path is not available here (no AVX-512 F and "
               "DQ, as under valgrind, which does not emulate them; or RBF_NO_SIMD / RBF_NO_AVX2 / "
               "RBF_NO_AVX512 set)\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flat_avx512_batch_is_the_per_k_one),
        cmocka_unit_test(test_flat_avx512_equals_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
#endif
}
