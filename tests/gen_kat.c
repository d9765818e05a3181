/*
 * gen_kat.c -- writes the known-answer data that tests/test_kat.c checks.
 * Run once, by hand, from the code whose answers are to be kept forever;
 * the suite never runs it (it is built only by `cmake --build build
 * --target gen_kat`):
 *
 *   build/tests/gen_kat positions > tests/data/kat_positions.txt
 *   build/tests/gen_kat v1 tests/data/v1
 *
 * `positions`: rbf_hash of keys of 0..64 bytes under several seeds, and
 * rbf_positions of those hashes (and a few edge hashes) for M = 1000,
 * 2^20 + 7 and 2^33 bits, colliding and non-colliding, k = 13.
 *
 * `v1`: small saved files (format version 1) of every kind of filter, each
 * with a NAME.txt holding its configuration, every key inserted with
 * rbf_insert's answer, its stats, and the answers of rbf_contains for a
 * fixed probe set.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter/filter_internal.h"
#include "rbf.h"

#define KAT_K 13u

/* The key bytes: key[i] = (i * 131 + 7) mod 256, its first `len` bytes. */
static void kat_key(uint8_t *key, size_t len)
{
    for (size_t i = 0; i < len; i++)
        key[i] = (uint8_t)(i * 131u + 7u);
}

static const uint64_t kat_seeds[] = {0, 1, UINT64_C(0xdeadbeefcafef00d), UINT64_MAX};
static const uint64_t kat_bits[] = {1000, (UINT64_C(1) << 20) + 7, UINT64_C(1) << 33};
static const uint64_t kat_edge_hashes[] = {0, 1, UINT64_C(0x8000000000000000), UINT64_MAX};

/* A filter handle enough for rbf_hash and rbf_positions (which read only
 * the configuration and M), without the 1 GiB bit array of M = 2^33. */
static struct rbf fake_filter(uint64_t bits, rbf_hashing hashing, uint64_t seed)
{
    struct rbf f;
    memset(&f, 0, sizeof f);
    rbf_config_init(&f.cfg);
    f.cfg.bits = bits;
    f.cfg.hashes = KAT_K;
    f.cfg.sigma = KAT_K;
    f.cfg.hashing = hashing;
    f.cfg.seed = seed;
    f.m = bits;
    return f;
}

static int gen_positions(void)
{
    printf("# Known answers of rbf_hash and rbf_positions, written by tests/gen_kat.c\n"
           "# from rbf %s; checked by tests/test_kat.c.  Do not edit.\n"
           "# H seed len hash: rbf_hash of key[0..len-1], key[i] = (i*131+7) mod 256\n"
           "# P M c|n hash p0 .. p%u: rbf_positions, k = %u, colliding (c) or not (n),\n"
           "#   for every hash of the H lines and a few edge hashes\n",
           rbf_version(), KAT_K - 1, KAT_K);
    uint64_t hashes[sizeof kat_seeds / sizeof kat_seeds[0] * 65 + 4];
    size_t nh = 0;
    uint8_t key[64];
    kat_key(key, sizeof key);
    for (size_t s = 0; s < sizeof kat_seeds / sizeof kat_seeds[0]; s++) {
        struct rbf f = fake_filter(1000, RBF_COLLIDING, kat_seeds[s]);
        for (size_t len = 0; len <= 64; len++) {
            uint64_t h = rbf_hash(&f, key, len);
            printf("H %" PRIu64 " %zu %" PRIu64 "\n", kat_seeds[s], len, h);
            hashes[nh++] = h;
        }
    }
    for (size_t i = 0; i < sizeof kat_edge_hashes / sizeof kat_edge_hashes[0]; i++)
        hashes[nh++] = kat_edge_hashes[i];
    for (size_t b = 0; b < sizeof kat_bits / sizeof kat_bits[0]; b++) {
        for (int nc = 0; nc <= 1; nc++) {
            struct rbf f = fake_filter(kat_bits[b], nc ? RBF_NON_COLLIDING : RBF_COLLIDING, 0);
            for (size_t i = 0; i < nh; i++) {
                uint64_t pos[KAT_K];
                if (rbf_positions(&f, hashes[i], pos) != (int)KAT_K)
                    return 1;
                printf("P %" PRIu64 " %c %" PRIu64, kat_bits[b], nc ? 'n' : 'c', hashes[i]);
                for (unsigned j = 0; j < KAT_K; j++)
                    printf(" %" PRIu64, pos[j]);
                printf("\n");
            }
        }
    }
    return ferror(stdout) ? 1 : 0;
}

/* ---- v1 saved files */

struct v1_case {
    const char *name;
    uint64_t bits;
    unsigned hashes;
    uint64_t sigma, messages;
    rbf_hashing hashing;
    rbf_recycle_mode recycle;
    unsigned phases;
    uint64_t seed;
    unsigned inserts; /* keys "NAME-i", i = 0..inserts-1 */
};

static const struct v1_case v1_cases[] = {
    /* one-phase, sigma-bounded, colliding, non-retaining: several recycles */
    {"one_sigma", 1000, 3, 300, 0, RBF_COLLIDING, RBF_NON_RETAINING, 1, 1, 400},
    /* one-phase, sigma-bounded, non-colliding, retaining, M not a multiple of 64 */
    {"one_sigma_nc_ret", 1001, 4, 350, 0, RBF_NON_COLLIDING, RBF_RETAINING, 1,
     UINT64_C(0xdeadbeefcafef00d), 300},
    /* one-phase, N-bounded, colliding */
    {"one_n", 1024, 5, 0, 60, RBF_COLLIDING, RBF_NON_RETAINING, 1, 7, 250},
    /* two-phase, sigma-bounded, colliding, retaining */
    {"two_sigma_ret", 2000, 4, 400, 0, RBF_COLLIDING, RBF_RETAINING, 2, 2, 600},
    /* two-phase, N-bounded, non-colliding, odd M */
    {"two_n_nc", 2003, 2, 0, 100, RBF_NON_COLLIDING, RBF_NON_RETAINING, 2, UINT64_MAX, 350},
    /* a fresh filter: nothing inserted */
    {"empty", 64, 1, 32, 0, RBF_COLLIDING, RBF_NON_RETAINING, 1, 0, 0},
};

static int gen_v1_case(const char *dir, const struct v1_case *c)
{
    rbf_config cfg;
    rbf_config_init(&cfg);
    cfg.bits = c->bits;
    cfg.hashes = c->hashes;
    cfg.sigma = c->sigma;
    cfg.messages = c->messages;
    cfg.hashing = c->hashing;
    cfg.recycle = c->recycle;
    cfg.phases = c->phases;
    cfg.seed = c->seed;
    rbf *f;
    if (rbf_new(&cfg, &f) != RBF_OK)
        return 1;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.txt", dir, c->name);
    FILE *out = fopen(path, "w");
    if (!out)
        return 1;
    fprintf(out,
            "# %s.rbf: a format-version-1 file written by tests/gen_kat.c from rbf %s;\n"
            "# checked by tests/test_kat.c.  Do not edit.\n"
            "# config bits hashes sigma messages hashing recycle phases seed\n",
            c->name, rbf_version());
    fprintf(out, "config %" PRIu64 " %u %" PRIu64 " %" PRIu64 " %d %d %u %" PRIu64 "\n",
            cfg.bits, cfg.hashes, cfg.sigma, cfg.messages, (int)cfg.hashing, (int)cfg.recycle,
            cfg.phases, cfg.seed);
    fprintf(out, "# insert KEY ANSWER: rbf_insert, in this order, on a new filter\n");
    char key[64];
    for (unsigned i = 0; i < c->inserts; i++) {
        int n = snprintf(key, sizeof key, "%s-%u", c->name, i);
        int r = rbf_insert(f, key, (size_t)n);
        fprintf(out, "insert %s %d\n", key, r);
    }
    rbf_stats st;
    rbf_get_stats(f, &st);
    fprintf(out, "# stats bits bits_set frozen_bits_set cycles cycle_messages inserts "
                 "reported_new seed\n");
    fprintf(out,
            "stats %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
            " %" PRIu64 " %" PRIu64 "\n",
            st.bits, st.bits_set, st.frozen_bits_set, st.cycles, st.cycle_messages, st.inserts,
            st.reported_new, st.seed);
    /* probes: every inserted key, then as many never inserted */
    fprintf(out, "# probe KEY ANSWER: rbf_contains on the saved filter\n");
    unsigned nprobe = c->inserts ? c->inserts : 50;
    for (unsigned i = 0; i < c->inserts; i++) {
        int n = snprintf(key, sizeof key, "%s-%u", c->name, i);
        fprintf(out, "probe %s %d\n", key, rbf_contains(f, key, (size_t)n));
    }
    for (unsigned i = 0; i < nprobe; i++) {
        int n = snprintf(key, sizeof key, "absent-%u", i);
        fprintf(out, "probe %s %d\n", key, rbf_contains(f, key, (size_t)n));
    }
    int bad = ferror(out) != 0;
    bad |= fclose(out) != 0;
    snprintf(path, sizeof path, "%s/%s.rbf", dir, c->name);
    bad |= rbf_save(f, path) != RBF_OK;
    rbf_free(f);
    return bad;
}

static int gen_v1(const char *dir)
{
    for (size_t i = 0; i < sizeof v1_cases / sizeof v1_cases[0]; i++)
        if (gen_v1_case(dir, &v1_cases[i]) != 0) {
            fprintf(stderr, "gen_kat: %s failed\n", v1_cases[i].name);
            return 1;
        }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "positions") == 0)
        return gen_positions();
    if (argc == 3 && strcmp(argv[1], "v1") == 0)
        return gen_v1(argv[2]);
    fprintf(stderr, "usage: gen_kat positions > FILE | gen_kat v1 DIR\n");
    return 2;
}
