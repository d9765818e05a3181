/*
 * test_simd.c -- the AVX-512 paths of the filter give exactly what the
 * scalar code gives: the positions eight at a time (AVX-512 F and DQ), and
 * the one-phase colliding single insertion by gather (AVX-512 CD too).
 *
 * On a processor without them (or with RBF_NO_SIMD set, or under valgrind,
 * which does not emulate AVX-512) there is nothing to compare: the program
 * says SKIPPED and exits 77, which CTest reports as skipped, not passed.
 * (The batch functions are checked on whatever path the machine takes by
 * tests/test_batch.c.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "filter/filter_internal.h"
#include "filter_util.h"

static const rbf_hashing HASHINGS[2] = {RBF_COLLIDING, RBF_NON_COLLIDING};

static rbf *make(const rbf_config *c)
{
    rbf *f = NULL;
    assert_int_equal(rbf_new(c, &f), RBF_OK);
    assert_non_null(f);
    return f;
}

static void stats_equal(const rbf *a, const rbf *b, uint64_t step)
{
    rbf_stats x, y;
    rbf_get_stats(a, &x);
    rbf_get_stats(b, &y);
    if (memcmp(&x, &y, sizeof x) != 0) {
        print_error("step %llu: the counters of the gather and scalar paths differ\n",
                    (unsigned long long)step);
        fail();
    }
}

static void saved_equal(const rbf *a, const rbf *b, const void *unused, uint64_t step)
{
    (void)unused;
    uint64_t la, lb;
    uint8_t *sa = tu_saved(a, &la);
    uint8_t *sb = tu_saved(b, &lb);
    assert_non_null(sa);
    assert_non_null(sb);
    assert_int_equal(la, lb);
    if (memcmp(sa, sb, (size_t)la) != 0) {
        print_error("step %llu: saved filters differ\n", (unsigned long long)step);
        fail();
    }
    free(sa);
    free(sb);
}

/* The hot path's positions (AVX-512 where the CPU has it) are those of the
 * scalar definition, rbf__positions, bit for bit: sizes around powers of
 * two and up to 2^32 - 1 bits (the largest the vector path takes), k from 1
 * to 256, both hashings.  Filters this large are never allocated: the
 * positions only need the configuration. */
static void test_fast_positions_equal_scalar(void **state)
{
    (void)state;
    static const uint64_t ms[] = {1, 2, 3, 7, 64, 1000, 1u << 20, (1u << 20) + 7, 1000003,
                                  (UINT64_C(1) << 31) - 1, UINT64_C(1) << 31,
                                  (UINT64_C(1) << 32) - 1, (UINT64_C(1) << 32) - 977};
    static const unsigned ks[] = {1, 2, 7, 8, 9, 15, 16, 17, 100, 256};
    uint64_t rng = 4242;
    uint64_t *a = malloc(RBF_MAX_HASHES * sizeof *a), *b = malloc(RBF_MAX_HASHES * sizeof *b);
    assert_true(a && b);
    rbf_config c;
    rbf_config_init(&c);
    c.bits = 1000;
    c.hashes = 3;
    c.sigma = 500;
    rbf *f = make(&c);
    uint64_t simd = f->simd;
    for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++)
        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
            for (int h = 0; h < 2; h++) {
                if (h == 1 && ks[ki] > ms[mi])
                    continue; /* non-colliding needs k <= m */
                /* the same filter, re-pointed at another configuration:
                 * only m, k, the hashing and the path choice are read */
                f->m = ms[mi];
                f->cfg.hashes = ks[ki];
                f->cfg.hashing = HASHINGS[h];
                f->simd = (unsigned)simd;
                for (int t = 0; t < 200; t++) {
                    uint64_t hash = tu_next(&rng);
                    memset(a, 0xa5, RBF_MAX_HASHES * sizeof *a);
                    memset(b, 0xa5, RBF_MAX_HASHES * sizeof *b);
                    rbf__positions(f, hash, a);
                    rbf__positions_fast(f, hash, b);
                    /* equal, and nothing written past k rounded up to 8 */
                    unsigned cap = (ks[ki] + 7u) & ~7u;
                    assert_memory_equal(a, b, ks[ki] * sizeof *a);
                    for (unsigned i = ks[ki]; i < RBF_MAX_HASHES; i++)
                        assert_true(a[i] == 0xa5a5a5a5a5a5a5a5ULL &&
                                    (i < cap || b[i] == 0xa5a5a5a5a5a5a5a5ULL));
                    for (unsigned i = 0; i < ks[ki]; i++)
                        assert_true(a[i] < ms[mi]);
                }
            }
    f->m = 1000; /* back to its own configuration before freeing */
    f->cfg.hashes = 3;
    f->cfg.hashing = RBF_COLLIDING;
    rbf_free(f);
    free(a);
    free(b);
    assert_true(simd & RBF_SIMD_VEC); /* main() skipped the program otherwise */
}

/* The one-phase colliding single insertion for k <= 8 on AVX-512 (one
 * gather, k stores; the scalar code when two positions share a word) gives
 * what the scalar path gives: a filter made with RBF_NO_SIMD set runs in
 * lock-step with one made without, same configuration and seed, over keys
 * of 0 to 40 bytes (the inline short-key hash and the called one; NULL for
 * some empty keys) from a small universe (repeats, false positives), fed
 * by rbf_insert, rbf_insert_hash and small rbf_insert_keys batches, on
 * filters from 8 words (the vector positions, no gather) and 64 words (the
 * gather, where with k = 8, 37% of the messages share a word and take
 * the scalar fallback) to 2^20 bits,
 * sigma- and N-bounded, retaining and not.  Every answer, the counters and
 * the saved bits must agree. */
static void test_single_gather_path_equals_scalar(void **state)
{
    (void)state;
    static const uint64_t ms[] = {512, 4096, 70001, UINT64_C(1) << 20};
    uint64_t rng = 777;
    int gather_seen = 0;
    const char *old = getenv("RBF_NO_SIMD");
    for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++)
        for (unsigned k = 1; k <= 8; k++)
            for (int variant = 0; variant < 3; variant++) {
                uint64_t m = ms[mi];
                /* cycles of at most about 8192 / k messages, so that the
                 * big filters recycle too without millions of steps */
                uint64_t sig = m / 3 < 8192 ? m / 3 : 8192;
                uint64_t nmsg = m / (4 * k) + 1 < 2048 ? m / (4 * k) + 1 : 2048;
                if (sig < k)
                    sig = k;
                rbf_config c = tu_config(m, k, variant == 2 ? 0 : sig, variant == 2 ? nmsg : 0,
                                         RBF_COLLIDING,
                                         variant == 1 ? RBF_RETAINING : RBF_NON_RETAINING, 1,
                                         tu_next(&rng));
                rbf *fast = make(&c);
                setenv("RBF_NO_SIMD", "1", 1);
                rbf *slow = make(&c);
                if (old)
                    setenv("RBF_NO_SIMD", old, 1);
                else
                    unsetenv("RBF_NO_SIMD");
                assert_int_equal(slow->simd, 0);
                gather_seen |= (fast->simd & RBF_SIMD_GATHER) != 0;
                /* the gather only from 64 words on (positions.c) */
                assert_int_equal((fast->simd & RBF_SIMD_GATHER) != 0, m >= 4096);
                uint64_t cycle = variant == 2 ? nmsg : sig / k + 1;
                uint64_t universe = m / 2 + 7, steps = 4 * cycle + tu_scaled(2000); /* the recycles asserted below need all 4 cycles, whatever RBF_TEST_SHRINK */
                enum { B = 9 };
                uint8_t keys[B][40];
                const void *kp[B];
                size_t lens[B];
                uint8_t ra[B], rb[B];
                for (uint64_t i = 0; i < steps; i++) {
                    /* one message by key (half the steps), by hash, or a
                     * batch of 1 to B keys (rbf_insert_keys; on filters of
                     * at most 512 KiB it runs the single path per key) */
                    uint64_t op = tu_below(&rng, 8);
                    size_t nb = op == 7 ? (size_t)tu_below(&rng, B) + 1 : 1;
                    for (size_t q = 0; q < nb; q++) {
                        uint64_t u = tu_below(&rng, universe), s = u * 0x9e3779b97f4a7c15ULL + 1;
                        lens[q] = (size_t)(u % 41);
                        for (size_t j = 0; j < lens[q]; j++)
                            keys[q][j] = (uint8_t)(tu_next(&s) >> 56);
                        kp[q] = lens[q] == 0 && u % 2 ? NULL : keys[q]; /* NULL, 0 is valid */
                    }
                    int a, b;
                    if (op < 4) {
                        a = rbf_insert(fast, kp[0], lens[0]);
                        b = rbf_insert(slow, kp[0], lens[0]);
                    } else if (op < 7) {
                        uint64_t h = rbf_hash(fast, kp[0], lens[0]);
                        assert_true(h == rbf_hash(slow, kp[0], lens[0]));
                        a = rbf_insert_hash(fast, h);
                        b = rbf_insert_hash(slow, h);
                    } else {
                        a = (int)rbf_insert_keys(fast, kp, lens, nb, ra);
                        b = (int)rbf_insert_keys(slow, kp, lens, nb, rb);
                        assert_memory_equal(ra, rb, nb);
                    }
                    if (a != b) {
                        print_error("m %llu k %u variant %d step %llu op %llu: gather path %d, "
                                    "scalar %d\n",
                                    (unsigned long long)m, k, variant, (unsigned long long)i,
                                    (unsigned long long)op, a, b);
                        fail();
                    }
                    if (i % 97 == 0 || i + 1 == steps)
                        stats_equal(fast, slow, i);
                }
                rbf_stats st;
                rbf_get_stats(fast, &st);
                assert_true(st.cycles >= 2); /* it recycled */
                assert_true(st.inserts > st.reported_new); /* and saw repeats */
                saved_equal(fast, slow, NULL, steps);
                rbf_free(fast);
                rbf_free(slow);
            }
    assert_true(gather_seen); /* main() skipped the program otherwise */
}

/* The paths this machine's filters take: RBF_SIMD_* bits of a one-phase
 * colliding filter of 2^16 bits with k = 3 (which may use every path;
 * below 4096 bits the gather is not used). */
static unsigned machine_simd(void)
{
    rbf_config c = tu_config(65536, 3, 300, 0, RBF_COLLIDING, RBF_NON_RETAINING, 1, 1);
    rbf *f = NULL;
    if (rbf_new(&c, &f) != RBF_OK)
        return 0;
    unsigned s = f->simd;
    rbf_free(f);
    return s;
}

int main(void)
{
    unsigned simd = machine_simd();
    if (!(simd & RBF_SIMD_VEC) || !(simd & RBF_SIMD_GATHER)) {
        printf("SKIPPED: %s: the AVX-512 paths are not used here, nothing to compare\n",
               getenv("RBF_NO_SIMD") ? "RBF_NO_SIMD is set"
               : !(simd & RBF_SIMD_VEC) ? "no AVX-512 F/DQ (or not in this build)"
                                         : "no AVX-512 CD");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_positions_equal_scalar),
        cmocka_unit_test(test_single_gather_path_equals_scalar),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
