/*
 * test_fast_portable.c -- the portable fast paths (fast_port.c: the path of
 * ARM64, s390x and x86-64 without AVX2), flat and blocked, give exactly what
 * the scalar reference gives, in lock-step over every single and batch call
 * (tests/support/blocked_simd.h).  Forced with RBF_NO_AVX2 on a machine
 * that has faster paths, so it runs on every machine; exits 77 (CTest:
 * skipped) only when RBF_NO_SIMD is set, which leaves nothing to compare.
 */
#include "blocked_simd.h"

static void test_portable_flat_equals_reference(void **state)
{
    (void)state;
    bs_lockstep_layout("RBF_NO_AVX2", RBF_SIMD_PORT, RBF_LAYOUT_FLAT);
}

static void test_portable_blocked_equals_reference(void **state)
{
    (void)state;
    bs_lockstep_layout("RBF_NO_AVX2", RBF_SIMD_PORT, RBF_LAYOUT_BLOCKED);
}

int main(void)
{
    if (!bs_available_layout("RBF_NO_AVX2", RBF_SIMD_PORT, RBF_LAYOUT_FLAT) ||
        !bs_available_layout("RBF_NO_AVX2", RBF_SIMD_PORT, RBF_LAYOUT_BLOCKED)) {
        printf("SKIPPED: the portable fast paths are off (RBF_NO_SIMD is set)\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_portable_flat_equals_reference),
        cmocka_unit_test(test_portable_blocked_equals_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
