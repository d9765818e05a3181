/*
 * test_kat.c -- known answers kept forever: the hash, the positions and the
 * saved files of version 1 must not change (docs/file-format.md).
 *
 *   - tests/data/kat_positions.txt: rbf_hash of keys of 0..64 bytes under
 *     four seeds, rbf_positions for M = 1000, 2^20 + 7 and 2^33, colliding
 *     and non-colliding; every value is recomputed and compared, with the
 *     public rbf_positions, with k = 1, 5 and 13 (the positions of k are the
 *     first k of k = 13), and with the filter's fast path (AVX-512 where the
 *     CPU has it).
 *   - tests/data/v1/NAME.rbf: files of every kind of filter.  Each loads with
 *     the recorded configuration and stats, answers rbf_contains (and
 *     rbf_contains_keys) exactly as recorded for every probe, and replaying
 *     the recorded insertions on a new filter gives the recorded answers and
 *     the very same bytes.
 *
 * Both were written once by tests/gen_kat.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter/filter_internal.h"
#include "rbf.h"

#define KAT_K 13u

static rbf *new_filter(uint64_t bits, unsigned k, rbf_hashing hashing, uint64_t seed)
{
    rbf_config cfg;
    rbf_config_init(&cfg);
    cfg.bits = bits;
    cfg.hashes = k;
    cfg.sigma = k;
    cfg.hashing = hashing;
    cfg.seed = seed;
    rbf *f = NULL;
    assert_int_equal(rbf_new(&cfg, &f), RBF_OK);
    return f;
}

static FILE *open_data(const char *name)
{
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/%s", RBF_TEST_DATA_DIR, name);
    if (n < 0 || (size_t)n >= sizeof path)
        fail_msg("data path too long: %s/%s", RBF_TEST_DATA_DIR, name);
    FILE *fp = fopen(path, "r");
    if (!fp)
        fail_msg("cannot open %s", path);
    return fp;
}

static void test_positions(void **state)
{
    (void)state;
    FILE *fp = open_data("kat_positions.txt");
    uint8_t key[64];
    for (size_t i = 0; i < sizeof key; i++)
        key[i] = (uint8_t)(i * 131u + 7u);
    char line[1024];
    unsigned nh = 0, np = 0;
    while (fgets(line, sizeof line, fp)) {
        if (line[0] == 'H') {
            uint64_t seed, want;
            size_t len;
            assert_int_equal(sscanf(line, "H %" SCNu64 " %zu %" SCNu64, &seed, &len, &want), 3);
            assert_true(len <= sizeof key);
            rbf *f = new_filter(1000, 1, RBF_COLLIDING, seed);
            assert_true(rbf_hash(f, key, len) == want);
            if (len == 0)
                assert_true(rbf_hash(f, NULL, 0) == want);
            rbf_free(f);
            nh++;
        } else if (line[0] == 'P') {
            uint64_t m, hash, want[KAT_K];
            char hc;
            int off = 0;
            assert_int_equal(sscanf(line, "P %" SCNu64 " %c %" SCNu64 "%n", &m, &hc, &hash, &off),
                             3);
            const char *p = line + off;
            for (unsigned j = 0; j < KAT_K; j++) {
                char *end;
                want[j] = strtoull(p, &end, 10);
                assert_true(end != p);
                p = end;
            }
            rbf_hashing hashing = hc == 'n' ? RBF_NON_COLLIDING : RBF_COLLIDING;
            static const unsigned ks[] = {1, 5, KAT_K};
            for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
                unsigned k = ks[ki];
                uint64_t got[16] = {0};
                if (m < (UINT64_C(1) << 32)) {
                    rbf *f = new_filter(m, k, hashing, 0);
                    assert_int_equal(rbf_positions(f, hash, got), (int)k);
                    for (unsigned j = 0; j < k; j++)
                        assert_true(got[j] == want[j]);
                    uint64_t fast[16] = {0};
                    rbf__positions_fast(f, hash, fast); /* AVX-512 where available */
                    for (unsigned j = 0; j < k; j++)
                        assert_true(fast[j] == want[j]);
                    rbf_free(f);
                } else {
                    /* M = 2^33: rbf_positions reads only the configuration
                     * and M, so no 1 GiB array is allocated for it. */
                    struct rbf f;
                    memset(&f, 0, sizeof f);
                    rbf_config_init(&f.cfg);
                    f.cfg.bits = m;
                    f.cfg.hashes = k;
                    f.cfg.sigma = k;
                    f.cfg.hashing = hashing;
                    f.cfg.seed = 0;
                    f.m = m;
                    assert_int_equal(rbf_config_check(&f.cfg, NULL), RBF_OK);
                    assert_int_equal(rbf_positions(&f, hash, got), (int)k);
                    for (unsigned j = 0; j < k; j++)
                        assert_true(got[j] == want[j]);
                }
            }
            np++;
        }
    }
    fclose(fp);
    /* 4 seeds x 65 lengths; (260 + 4 edge hashes) x 3 sizes x 2 hashings */
    assert_int_equal(nh, 260);
    assert_int_equal(np, 264 * 6);
}

/* ---- v1 files */

struct probe {
    char key[64];
    int answer;
};

static void check_v1(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s.txt", name);
    char rel[4200];
    snprintf(rel, sizeof rel, "v1/%s", path);
    FILE *fp = open_data(rel);
    rbf_config cfg;
    rbf_config_init(&cfg);
    rbf_stats want;
    memset(&want, 0, sizeof want);
    int have_cfg = 0, have_stats = 0;
    struct probe *ins = NULL, *probes = NULL;
    size_t nins = 0, nprobe = 0;
    char line[512];
    while (fgets(line, sizeof line, fp)) {
        int hashing, recycle;
        struct probe pr;
        if (sscanf(line,
                   "config %" SCNu64 " %u %" SCNu64 " %" SCNu64 " %d %d %u %" SCNu64,
                   &cfg.bits, &cfg.hashes, &cfg.sigma, &cfg.messages, &hashing, &recycle,
                   &cfg.phases, &cfg.seed) == 8) {
            cfg.hashing = (rbf_hashing)hashing;
            cfg.recycle = (rbf_recycle_mode)recycle;
            have_cfg = 1;
        } else if (sscanf(line,
                          "stats %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
                          " %" SCNu64 " %" SCNu64 " %" SCNu64,
                          &want.bits, &want.bits_set, &want.frozen_bits_set, &want.cycles,
                          &want.cycle_messages, &want.inserts, &want.reported_new,
                          &want.seed) == 8) {
            have_stats = 1;
        } else if (sscanf(line, "insert %63s %d", pr.key, &pr.answer) == 2) {
            ins = realloc(ins, (nins + 1) * sizeof *ins);
            assert_non_null(ins);
            ins[nins++] = pr;
        } else if (sscanf(line, "probe %63s %d", pr.key, &pr.answer) == 2) {
            probes = realloc(probes, (nprobe + 1) * sizeof *probes);
            assert_non_null(probes);
            probes[nprobe++] = pr;
        }
    }
    fclose(fp);
    assert_true(have_cfg && have_stats);
    assert_true(nprobe >= 50);

    /* the saved bytes */
    snprintf(path, sizeof path, "%s/v1/%s.rbf", RBF_TEST_DATA_DIR, name);
    FILE *bf = fopen(path, "rb");
    assert_non_null(bf);
    uint8_t bytes[4096];
    size_t nbytes = fread(bytes, 1, sizeof bytes, bf);
    assert_true(feof(bf));
    fclose(bf);

    /* 1. load: configuration, stats, answers */
    rbf *f = NULL;
    assert_int_equal(rbf_load(path, &f), RBF_OK);
    rbf_config got;
    rbf_get_config(f, &got);
    assert_true(got.bits == cfg.bits && got.hashes == cfg.hashes && got.sigma == cfg.sigma &&
                got.messages == cfg.messages && got.hashing == cfg.hashing &&
                got.recycle == cfg.recycle && got.phases == cfg.phases && got.seed == cfg.seed);
    rbf_stats st;
    rbf_get_stats(f, &st);
    assert_memory_equal(&st, &want, sizeof st);
    const void **keys = calloc(nprobe, sizeof *keys);
    size_t *lens = calloc(nprobe, sizeof *lens);
    uint8_t *res = calloc(nprobe, 1);
    assert_true(keys && lens && res);
    int64_t seen = 0;
    for (size_t i = 0; i < nprobe; i++) {
        keys[i] = probes[i].key;
        lens[i] = strlen(probes[i].key);
        assert_int_equal(rbf_contains(f, keys[i], lens[i]), probes[i].answer);
        seen += probes[i].answer;
    }
    assert_int_equal(rbf_contains_keys(f, keys, lens, nprobe, res), seen);
    for (size_t i = 0; i < nprobe; i++)
        assert_int_equal(res[i], probes[i].answer);
    rbf_free(f);

    /* 2. replay: the same answers, stats and bytes */
    assert_int_equal(rbf_new(&cfg, &f), RBF_OK);
    for (size_t i = 0; i < nins; i++)
        assert_int_equal(rbf_insert(f, ins[i].key, strlen(ins[i].key)), ins[i].answer);
    rbf_get_stats(f, &st);
    assert_memory_equal(&st, &want, sizeof st);
    uint64_t size;
    assert_int_equal(rbf_save_size(f, &size), RBF_OK);
    assert_true(size == nbytes);
    uint8_t again[4096];
    assert_int_equal(rbf_save_buffer(f, again, sizeof again), RBF_OK);
    assert_memory_equal(again, bytes, nbytes);
    rbf_free(f);

    free(keys);
    free(lens);
    free(res);
    free(ins);
    free(probes);
}

static void test_v1_one_sigma(void **state)
{
    (void)state;
    check_v1("one_sigma");
}

static void test_v1_one_sigma_nc_ret(void **state)
{
    (void)state;
    check_v1("one_sigma_nc_ret");
}

static void test_v1_one_n(void **state)
{
    (void)state;
    check_v1("one_n");
}

static void test_v1_two_sigma_ret(void **state)
{
    (void)state;
    check_v1("two_sigma_ret");
}

static void test_v1_two_n_nc(void **state)
{
    (void)state;
    check_v1("two_n_nc");
}

static void test_v1_empty(void **state)
{
    (void)state;
    check_v1("empty");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_positions),
        cmocka_unit_test(test_v1_one_sigma),
        cmocka_unit_test(test_v1_one_sigma_nc_ret),
        cmocka_unit_test(test_v1_one_n),
        cmocka_unit_test(test_v1_two_sigma_ret),
        cmocka_unit_test(test_v1_two_n_nc),
        cmocka_unit_test(test_v1_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
