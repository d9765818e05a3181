/*
 * test_flat_avx2.c -- the flat layout's AVX2 fast path (fast_avx2.c) gives
 * exactly what the scalar reference gives, in lock-step over every single
 * and batch call (tests/support/blocked_simd.h).  On a machine with
 * AVX-512 the path is forced with RBF_NO_AVX512.  Exits 77 (CTest:
 * skipped) on a processor or build without AVX2.
 */
#include "blocked_simd.h"

static void test_flat_avx2_equals_reference(void **state)
{
    (void)state;
    bs_lockstep_layout("RBF_NO_AVX512", RBF_SIMD_AVX2, RBF_LAYOUT_FLAT);
}

int main(void)
{
    if (!bs_available_layout("RBF_NO_AVX512", RBF_SIMD_AVX2, RBF_LAYOUT_FLAT)) {
        printf("SKIPPED: the flat layout's AVX2 path is not available here (no AVX2 and BMI2, "
               "not x86-64, or RBF_NO_SIMD / RBF_NO_AVX2 set)\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flat_avx2_equals_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
