/*
 * blocked_simd.h -- the lock-step test of a fast path, blocked or flat,
 * against the scalar reference (header-only; used by test_blocked_avx512.c,
 * test_blocked_avx2.c, test_flat_avx2.c and test_fast_portable.c, one CTest
 * test each, so that a machine without the instructions reports that test
 * SKIPPED).
 *
 * A filter made with the path under test runs in lock-step with one made
 * with RBF_NO_SIMD set (the portable scalar code: rbf__positions and the
 * word-level bit primitives), same configuration and seed, over keys of 0
 * to 40 bytes (the inline short-key hash and the called one; NULL for some
 * empty keys) from a small universe (repeats, false positives), fed by
 * rbf_insert, rbf_insert_hash, rbf_insert_keys, rbf_insert_many and the
 * four membership calls, on one-phase colliding filters of 1 block (512
 * bits) to 2^20 bits, k from 1 to 16, 64 and 256, sigma- and N-bounded,
 * retaining and not.  Every answer, the counters and the saved bytes must
 * agree.
 */
#ifndef BLOCKED_SIMD_H
#define BLOCKED_SIMD_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "filter/filter_internal.h"
#include "filter_util.h"

/* The environment of the filter under test: `var` set (or nothing when
 * NULL).  Returns the filter. */
static rbf *bs_make(const rbf_config *c, const char *var)
{
    const char *old = var ? getenv(var) : NULL;
    if (var)
        setenv(var, "1", 1);
    rbf *f = NULL;
    int rc = rbf_new(c, &f);
    if (var && !old)
        unsetenv(var);
    assert_int_equal(rc, RBF_OK);
    return f;
}

/* 1 if a filter of this layout made with `var` set takes the path `flag`. */
static inline int bs_available_layout(const char *var, unsigned flag, rbf_layout layout)
{
    rbf_config c = tu_config(1024, 7, 0, 10, RBF_COLLIDING, RBF_NON_RETAINING, 1, 1);
    c.layout = layout;
    rbf *f = bs_make(&c, var);
    int ok = (f->simd & flag) != 0;
    rbf_free(f);
    return ok;
}

static inline int bs_available(const char *var, unsigned flag)
{
    return bs_available_layout(var, flag, RBF_LAYOUT_BLOCKED);
}

static void bs_equal_state(const rbf *a, const rbf *b, uint64_t step)
{
    rbf_stats x, y;
    rbf_get_stats(a, &x);
    rbf_get_stats(b, &y);
    if (memcmp(&x, &y, sizeof x) != 0) {
        print_error("step %llu: counters differ\n", (unsigned long long)step);
        fail();
    }
}

static void bs_equal_saved(const rbf *a, const rbf *b)
{
    uint64_t la, lb;
    uint8_t *sa = tu_saved(a, &la), *sb = tu_saved(b, &lb);
    assert_non_null(sa);
    assert_non_null(sb);
    assert_int_equal(la, lb);
    assert_memory_equal(sa, sb, (size_t)la);
    free(sa);
    free(sb);
}

/* Run the lock-step for the path taken with `var` set, which must be
 * `flag` (the blocked mask paths take every k, the fast paths of
 * fast_tmpl.h k <= 8: past that the filter runs the reference, compared
 * all the same). */
static inline void bs_lockstep_layout(const char *var, unsigned flag, rbf_layout layout)
{
    /* past 2^23 bits: the flat AVX2 path's second copy (insert.h); past
     * 2^27 (blocked, k = 3 and 8, not under the sanitizers or valgrind):
     * the AVX2 mask's single calls (blocked.c) */
    static const uint64_t ms[] = {512, 512 * 8, 512 * 1001, UINT64_C(1) << 20,
                                  (UINT64_C(1) << 23) + 512, (UINT64_C(1) << 27) + 512};
    static const unsigned ks[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 14, 15, 16, 64, 256};
    uint64_t rng = 4242;
    for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++)
        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
            for (int variant = 0; variant < 3; variant++) {
                uint64_t m = ms[mi];
                unsigned k = ks[ki];
                if (m > (UINT64_C(1) << 27) && (layout != RBF_LAYOUT_BLOCKED ||
                                                (k != 3 && k != 8) || variant || tu_shrink() > 1))
                    continue; /* two k: each recycle clears 16 MiB */
                /* cycles of at most 6000 / k messages (600 / k with
                 * RBF_TEST_SHRINK, under valgrind), so that every filter
                 * recycles a few times in few steps */
                const uint64_t scap = tu_shrink() > 1 ? 600 : 6000, ncap = scap / 4;
                uint64_t sig = m / 3 < scap ? m / 3 : scap;
                uint64_t nmsg = m / (4 * k) + 2 < ncap ? m / (4 * k) + 2 : ncap;
                if (sig < k)
                    sig = k;
                if (sig >= m)
                    continue; /* k = 256 in one block: no sigma fits */
                rbf_config c = tu_config(m, k, variant == 2 ? 0 : sig, variant == 2 ? nmsg : 0,
                                         RBF_COLLIDING,
                                         variant == 1 ? RBF_RETAINING : RBF_NON_RETAINING, 1,
                                         tu_next(&rng));
                c.layout = layout;
                rbf *fast = bs_make(&c, var);
                rbf *slow = bs_make(&c, "RBF_NO_SIMD");
                if ((flag & (RBF_SIMD_BLK512 | RBF_SIMD_BLK256)) || k <= 8)
                    assert_true(fast->simd & flag);
                assert_int_equal(slow->simd, 0);
                uint64_t cycle = variant == 2 ? nmsg : sig / k + 1;
                uint64_t universe = 4 * cycle + 7, steps = 4 * cycle + tu_scaled(1500);
                enum { B = 160 }; /* past two groups of the batch pipeline (32 each) */
                uint8_t keys[B][40];
                const void *kp[B];
                size_t lens[B];
                uint64_t hs[B];
                uint8_t ra[B], rb[B];
                for (uint64_t i = 0; i < steps; i++) {
                    uint64_t op = tu_below(&rng, 10);
                    size_t nb = op < 6 ? 1 : (size_t)tu_below(&rng, tu_below(&rng, 8) == 0 ? B : 20) + 1;
                    for (size_t q = 0; q < nb; q++) {
                        uint64_t u = tu_below(&rng, universe), s = u * 0x9e3779b97f4a7c15ULL + 1;
                        lens[q] = (size_t)(u % 41);
                        for (size_t j = 0; j < lens[q]; j++)
                            keys[q][j] = (uint8_t)(tu_next(&s) >> 56);
                        kp[q] = lens[q] == 0 && u % 2 ? NULL : keys[q];
                        hs[q] = rbf_hash(fast, kp[q], lens[q]);
                    }
                    int64_t a, b;
                    switch (op) {
                    case 0:
                    case 1:
                    case 2: a = rbf_insert(fast, kp[0], lens[0]); b = rbf_insert(slow, kp[0], lens[0]); break;
                    case 3: a = rbf_insert_hash(fast, hs[0]); b = rbf_insert_hash(slow, hs[0]); break;
                    case 4: a = rbf_contains(fast, kp[0], lens[0]); b = rbf_contains(slow, kp[0], lens[0]); break;
                    case 5: a = rbf_contains_hash(fast, hs[0]); b = rbf_contains_hash(slow, hs[0]); break;
                    case 6: a = rbf_insert_keys(fast, kp, lens, nb, ra); b = rbf_insert_keys(slow, kp, lens, nb, rb); break;
                    case 7: a = rbf_insert_many(fast, hs, nb, ra); b = rbf_insert_many(slow, hs, nb, rb); break;
                    case 8: a = rbf_contains_keys(fast, kp, lens, nb, ra); b = rbf_contains_keys(slow, kp, lens, nb, rb); break;
                    default: a = rbf_contains_many(fast, hs, nb, ra); b = rbf_contains_many(slow, hs, nb, rb); break;
                    }
                    if (a != b) {
                        print_error("layout %d m %llu k %u variant %d step %llu op %llu: fast %lld, "
                                    "reference %lld\n", (int)layout, (unsigned long long)m, k, variant, (unsigned long long)i,
                                    (unsigned long long)op, (long long)a, (long long)b);
                        fail();
                    }
                    if (op >= 6)
                        assert_memory_equal(ra, rb, nb);
                    bs_equal_state(fast, slow, i);
                    if (i % 500 == 0)
                        bs_equal_saved(fast, slow);
                }
                rbf_stats st;
                rbf_get_stats(fast, &st);
                if (st.cycles < 2 || st.inserts <= st.reported_new) {
                    print_error("m %llu k %u variant %d: %llu cycles, %llu inserts, %llu new\n",
                                (unsigned long long)m, k, variant, (unsigned long long)st.cycles,
                                (unsigned long long)st.inserts, (unsigned long long)st.reported_new);
                    fail();
                }
                bs_equal_saved(fast, slow);
                rbf_free(fast);
                rbf_free(slow);
            }
}

static inline void bs_lockstep(const char *var, unsigned flag)
{
    bs_lockstep_layout(var, flag, RBF_LAYOUT_BLOCKED);
}

#endif
