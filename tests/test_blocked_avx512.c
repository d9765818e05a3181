/*
 * test_blocked_avx512.c -- the blocked layout's AVX-512 (F, VPOPCNTDQ) path gives exactly what
 * the scalar code gives (tests/support/blocked_simd.h).  Exits 77 (CTest:
 * skipped) on a processor or build without the path.
 */
#include "blocked_simd.h"

static void test_avx512_equals_scalar(void **state)
{
    (void)state;
    bs_lockstep(NULL, RBF_SIMD_BLK512);
}

int main(void)
{
    if (!bs_available(NULL, RBF_SIMD_BLK512)) {
        printf("SKIPPED: the blocked layout's AVX-512 (F, VPOPCNTDQ) path is not available here\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_avx512_equals_scalar),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
