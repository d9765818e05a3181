/*
 * test_blocked_avx2.c -- the blocked layout's AVX2 path gives exactly what
 * the scalar code gives (tests/support/blocked_simd.h).  Exits 77 (CTest:
 * skipped) on a processor or build without the path.
 */
#include "blocked_simd.h"

static void test_avx2_equals_scalar(void **state)
{
    (void)state;
    bs_lockstep("RBF_NO_AVX512", RBF_SIMD_BLK256);
}

int main(void)
{
    if (!bs_available("RBF_NO_AVX512", RBF_SIMD_BLK256)) {
        printf("SKIPPED: the blocked layout's AVX2 path is not available here\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_avx2_equals_scalar),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
