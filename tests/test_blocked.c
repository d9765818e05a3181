/*
 * test_blocked.c -- the blocked layout (rbf_config.layout =
 * RBF_LAYOUT_BLOCKED).
 *
 *   - Positions: rbf_positions equals a reference written here from the
 *     rule of docs/semantics.md (block from the first splitmix64 word by
 *     multiply-shift over m / 512 blocks; offsets from the 9-bit fields 0..6
 *     of the following words; non-colliding skips repeats), for one-block
 *     filters up to 2^30 + 512 bits, k from 1 to 256, both hashings.
 *   - Every variant (colliding or not, retaining or not, sigma- or
 *     N-bounded, one or two phases) runs item by item in lock-step with the
 *     plain reference model (tests/support/filter_ref.c) fed the reference
 *     positions, through every call (single keys, hashes, the four batch
 *     calls, membership): every result, the counters after each step and
 *     the saved bit arrays must be equal; the filter is saved and reloaded
 *     half-way (format version 2) and the run goes on with the loaded one.
 *   - Configuration: bits per filter not a multiple of 512, a non-zero
 *     reserved32_, an unknown layout are refused; rbf_get_config reports
 *     the layout.
 *   - Files: a blocked filter is written as format version 2 (192-byte
 *     header, layout at byte 120); a flat one still as version 1, byte for
 *     byte; a version 2 file of a flat filter loads; damaged version 2
 *     headers are refused.
 *
 * The statistical checks of the positions are in test_blocked_uniform.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "filter_ref.h"
#include "filter_util.h"

/* ---- the reference positions, from the documented rule */

static uint64_t ref_word(uint64_t hash, uint64_t j) /* word j >= 1 of the stream */
{
    uint64_t z = hash + j * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Field t (t = 0, 1, ...) of the offset stream: field t % 7 of word 2 + t / 7. */
static unsigned ref_field(uint64_t hash, unsigned t)
{
    uint64_t w = ref_word(hash, 2 + t / 7);
    return (unsigned)((w / ((uint64_t)1 << (9 * (t % 7)))) % 512);
}

static void ref_positions(uint64_t m, unsigned k, int nc, uint64_t hash, uint64_t *pos)
{
    uint64_t nblocks = m / 512;
    uint64_t block = (uint64_t)(((unsigned __int128)ref_word(hash, 1) * nblocks) >> 64);
    unsigned got = 0;
    for (unsigned t = 0; got < k; t++) {
        uint64_t p = block * 512 + ref_field(hash, t);
        int dup = 0;
        for (unsigned i = 0; nc && i < got; i++)
            dup |= pos[i] == p;
        if (!dup)
            pos[got++] = p;
    }
}

static rbf *make(const rbf_config *c)
{
    rbf *f = NULL;
    int rc = rbf_new(c, &f);
    if (rc != RBF_OK)
        print_error("rbf_new: %s (bits %llu k %u sigma %llu N %llu phases %u)\n",
                    rbf_strerror(rc), (unsigned long long)c->bits, c->hashes,
                    (unsigned long long)c->sigma, (unsigned long long)c->messages, c->phases);
    assert_int_equal(rc, RBF_OK);
    return f;
}

static rbf_config blocked_config(uint64_t bits, unsigned k, uint64_t sigma, uint64_t n,
                                 rbf_hashing h, rbf_recycle_mode r, unsigned phases, uint64_t seed)
{
    rbf_config c = tu_config(bits, k, sigma, n, h, r, phases, seed);
    c.layout = RBF_LAYOUT_BLOCKED;
    return c;
}

static void test_positions_match_reference(void **state)
{
    (void)state;
    static const uint64_t ms[] = {512, 1024, 512 * 3, 512 * 1000, 512 * 65537,
                                  (UINT64_C(1) << 30) + 512};
    static const unsigned ks[] = {1, 2, 6, 7, 8, 13, 14, 15, 50, 256};
    uint64_t rng = 42;
    uint64_t a[256], b[256];
    for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++)
        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
            for (int nc = 0; nc < 2; nc++) {
                unsigned k = ks[ki];
                rbf_config c = blocked_config(ms[mi], k, 0, 1, nc ? RBF_NON_COLLIDING : RBF_COLLIDING,
                                              RBF_NON_RETAINING, 1, tu_next(&rng));
                rbf *f = make(&c);
                for (int t = 0; t < 300; t++) {
                    uint64_t h = tu_next(&rng);
                    assert_int_equal(rbf_positions(f, h, a), (int)k);
                    ref_positions(ms[mi], k, nc, h, b);
                    if (memcmp(a, b, k * sizeof a[0]) != 0) {
                        print_error("m %llu k %u %s hash %llx: positions differ\n",
                                    (unsigned long long)ms[mi], k, nc ? "nc" : "c",
                                    (unsigned long long)h);
                        fail();
                    }
                    for (unsigned i = 0; i < k; i++) /* one block */
                        assert_true(a[i] / 512 == a[0] / 512 && a[i] < ms[mi]);
                }
                rbf_free(f);
            }
    /* a known answer, computed by hand from the rule (hash 0, m = 1024):
     * word 1 = 0xe220a8397b1dcdaf (block 1), word 2 = 0x6e789e6aa1b965f4,
     * fields 0..2 = 0x1f4, 0x0b2, 0x06e */
    rbf_config c = blocked_config(1024, 3, 0, 1, RBF_COLLIDING, RBF_NON_RETAINING, 1, 0);
    rbf *f = make(&c);
    assert_int_equal(rbf_positions(f, 0, a), 3);
    assert_int_equal(ref_word(0, 1), 0xe220a8397b1dcdafull);
    assert_int_equal(ref_word(0, 2), 0x6e789e6aa1b965f4ull);
    assert_int_equal(a[0], 512 + 0x1f4);
    assert_int_equal(a[1], 512 + 0x0b2);
    assert_int_equal(a[2], 512 + 0x06e);
    rbf_free(f);
}

/* ---- lock-step with the reference model */

#define KEY_MAX 24
#define B_MAX 160 /* past two groups of the blocked batch pipeline (32 each) */

typedef struct msg {
    uint8_t bytes[KEY_MAX];
    size_t len;
} msg;

static void make_msg(msg *m, uint64_t u)
{
    uint64_t s = u * 0x9e3779b97f4a7c15ull + 17;
    m->len = (size_t)(u % (KEY_MAX + 1)); /* 0 .. 24 bytes: the inline and the long hash */
    for (size_t i = 0; i < KEY_MAX; i++)
        m->bytes[i] = (uint8_t)(tu_next(&s) >> 56);
}

static void ref_stats_equal(const rbf *f, const filter_ref *r, uint64_t step)
{
    rbf_stats x, y;
    rbf_get_stats(f, &x);
    filter_ref_stats(r, &y);
    y.seed = x.seed;
    if (memcmp(&x, &y, sizeof x) != 0) {
        print_error("step %llu: counters differ: set %llu/%llu frozen %llu/%llu cycles %llu/%llu "
                    "c %llu/%llu inserts %llu/%llu new %llu/%llu\n",
                    (unsigned long long)step, (unsigned long long)x.bits_set,
                    (unsigned long long)y.bits_set, (unsigned long long)x.frozen_bits_set,
                    (unsigned long long)y.frozen_bits_set, (unsigned long long)x.cycles,
                    (unsigned long long)y.cycles, (unsigned long long)x.cycle_messages,
                    (unsigned long long)y.cycle_messages, (unsigned long long)x.inserts,
                    (unsigned long long)y.inserts, (unsigned long long)x.reported_new,
                    (unsigned long long)y.reported_new);
        fail();
    }
}

static void ref_saved_equal(const rbf *f, const filter_ref *r, uint64_t step)
{
    uint64_t len, where;
    uint8_t *buf = tu_saved(f, &len);
    assert_non_null(buf);
    if (filter_ref_compare_saved(r, buf, len, &where) != 0) {
        print_error("step %llu: bit %llu differs from the reference model\n",
                    (unsigned long long)step, (unsigned long long)where);
        fail();
    }
    free(buf);
}

/* Save f to memory, check the version 2 header, load it back. */
static rbf *reload(rbf *f)
{
    uint64_t len;
    uint8_t *buf = tu_saved(f, &len);
    assert_non_null(buf);
    assert_int_equal(buf[8], 2);    /* version 2 */
    assert_int_equal(buf[12], 192); /* header size */
    assert_int_equal(buf[120], 1);  /* layout: blocked */
    rbf *g = NULL;
    assert_int_equal(rbf_load_buffer(buf, (size_t)len, &g), RBF_OK);
    rbf_config c;
    rbf_get_config(g, &c);
    assert_int_equal(c.layout, RBF_LAYOUT_BLOCKED);
    uint64_t len2;
    uint8_t *buf2 = tu_saved(g, &len2);
    assert_int_equal(len, len2);
    assert_memory_equal(buf, buf2, (size_t)len);
    free(buf);
    free(buf2);
    rbf_free(f);
    return g;
}

typedef struct lcase {
    uint64_t m; /* bits per filter */
    unsigned k;
} lcase;

static void run_lockstep(const rbf_config *cfg, uint64_t *rng, uint64_t *recycles_seen)
{
    rbf *f = make(cfg);
    filter_ref r;
    assert_int_equal(filter_ref_init(&r, cfg), 0);
    const uint64_t m = cfg->phases == 2 ? cfg->bits / 2 : cfg->bits;
    const unsigned k = cfg->hashes;
    const int nc = cfg->hashing == RBF_NON_COLLIDING;
    uint64_t cycle = cfg->sigma ? cfg->sigma / k + 1 : cfg->messages;
    uint64_t universe = 2 * cycle + 5, steps = 6 * cycle + tu_scaled(400);
    uint64_t pos[256];
    msg ms[B_MAX];
    const void *kp[B_MAX];
    size_t lens[B_MAX];
    uint64_t hs[B_MAX];
    uint8_t res[B_MAX];
    for (uint64_t step = 0; step < steps; step++) {
        if (step == steps / 2)
            f = reload(f);
        uint64_t op = tu_below(rng, 10);
        size_t nb = op < 6 ? 1 : 1 + (size_t)tu_below(rng, tu_below(rng, 8) == 0 ? B_MAX : 40);
        for (size_t q = 0; q < nb; q++) {
            uint64_t u = q > 0 && tu_below(rng, 4) == 0 ? tu_below(rng, 8) : tu_below(rng, universe);
            make_msg(&ms[q], u);
            kp[q] = ms[q].len == 0 && (u & 1) ? NULL : ms[q].bytes;
            lens[q] = ms[q].len;
            hs[q] = rbf_hash(f, kp[q], lens[q]);
        }
        int64_t got = 0, want = 0;
        int contains = op == 3 || op == 4 || op == 8;
        switch (op) {
        case 0:
        case 1: got = rbf_insert(f, kp[0], lens[0]); break;
        case 2: got = rbf_insert_hash(f, hs[0]); break;
        case 3: got = rbf_contains(f, kp[0], lens[0]); break;
        case 4: got = rbf_contains_hash(f, hs[0]); break;
        case 5: got = rbf_insert(f, kp[0], lens[0]); break;
        case 6: got = rbf_insert_many(f, hs, nb, res); break;
        case 7: got = rbf_insert_keys(f, kp, lens, nb, res); break;
        case 8:
            got = tu_below(rng, 2) ? rbf_contains_keys(f, kp, lens, nb, res)
                                   : rbf_contains_many(f, hs, nb, res);
            break;
        default: got = rbf_insert_keys(f, kp, lens, nb, res); break;
        }
        for (size_t q = 0; q < nb; q++) {
            ref_positions(m, k, nc, hs[q], pos);
            int w = contains ? filter_ref_contains(&r, pos) : filter_ref_insert(&r, pos);
            want += w;
            if (op >= 6 && res[q] != w) {
                print_error("m %llu k %u step %llu op %llu item %zu: library %d, reference %d\n",
                            (unsigned long long)m, k, (unsigned long long)step,
                            (unsigned long long)op, q, res[q], w);
                fail();
            }
        }
        if (got != want) {
            print_error("m %llu k %u step %llu op %llu: library %lld, reference %lld\n",
                        (unsigned long long)m, k, (unsigned long long)step, (unsigned long long)op,
                        (long long)got, (long long)want);
            fail();
        }
        ref_stats_equal(f, &r, step);
        if (step % 256 == 0 || step + 1 == steps)
            ref_saved_equal(f, &r, step);
    }
    rbf_stats st;
    rbf_get_stats(f, &st);
    assert_true(st.cycles >= 2);               /* it recycled */
    assert_true(st.inserts > st.reported_new); /* and saw repeats */
    *recycles_seen += st.cycles;
    rbf_free(f);
    filter_ref_free(&r);
}

static void test_every_variant_matches_reference(void **state)
{
    (void)state;
    static const lcase cases[] = {
        {512, 7}, {512 * 5, 8}, {512 * 300, 7}, {512 * 37, 15}, {512 * 3, 64}, {512, 200}};
    uint64_t rng = 2024, recycles = 0;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (int v = 0; v < 16; v++) {
            const int nc = v & 1, ret = (v >> 1) & 1, nb = (v >> 2) & 1, two = (v >> 3) & 1;
            uint64_t m = cases[ci].m;
            unsigned k = cases[ci].k;
            /* cycles of at most 3000 / k messages (300 / k with
             * RBF_TEST_SHRINK, under valgrind) */
            const uint64_t scap = tu_shrink() > 1 ? 300 : 3000, ncap = scap / 5;
            uint64_t sigma = m / 3 < scap ? m / 3 : scap;
            if (sigma < k)
                sigma = k;
            uint64_t n = m / (3 * k) + 2 < ncap ? m / (3 * k) + 2 : ncap;
            rbf_config c = blocked_config(two ? 2 * m : m, k, nb ? 0 : sigma, nb ? n : 0,
                                          nc ? RBF_NON_COLLIDING : RBF_COLLIDING,
                                          ret ? RBF_RETAINING : RBF_NON_RETAINING, two ? 2 : 1,
                                          tu_next(&rng));
            run_lockstep(&c, &rng, &recycles);
        }
    assert_true(recycles > 0);
}

/* ---- configuration */

static void test_config(void **state)
{
    (void)state;
    rbf *f = NULL;
    const char *why = NULL;
    static const uint64_t bad[] = {64, 511, 513, 1000, 512 * 3 + 64};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rbf_config c = blocked_config(bad[i], 3, 0, 10, RBF_COLLIDING, RBF_NON_RETAINING, 1, 1);
        assert_int_equal(rbf_config_check(&c, &why), RBF_EINVAL);
        assert_non_null(strstr(why, "512"));
        assert_int_equal(rbf_new(&c, &f), RBF_EINVAL);
        assert_null(f);
        c.layout = RBF_LAYOUT_FLAT; /* the same bits are fine flat */
        assert_int_equal(rbf_config_check(&c, NULL), RBF_OK);
    }
    /* two phases: bits per filter = floor(bits / 2) must be a multiple of 512 */
    rbf_config c = blocked_config(1024, 3, 0, 10, RBF_COLLIDING, RBF_NON_RETAINING, 2, 1);
    assert_int_equal(rbf_config_check(&c, NULL), RBF_OK);
    c.bits = 1025;
    assert_int_equal(rbf_config_check(&c, NULL), RBF_OK);
    c.bits = 1536;
    assert_int_equal(rbf_config_check(&c, NULL), RBF_EINVAL);
    c.bits = 512;
    assert_int_equal(rbf_config_check(&c, NULL), RBF_EINVAL);
    /* unknown layout, concurrent not 0/1, a non-zero reserved word */
    c = blocked_config(1024, 3, 0, 10, RBF_COLLIDING, RBF_NON_RETAINING, 1, 1);
    c.layout = (rbf_layout)2;
    assert_int_equal(rbf_config_check(&c, &why), RBF_EINVAL);
    assert_non_null(strstr(why, "layout"));
    c.layout = RBF_LAYOUT_BLOCKED;
    c.concurrent = 2;
    assert_int_equal(rbf_config_check(&c, NULL), RBF_EINVAL);
    c.concurrent = 0;
    c.reserved_[6] = 1;
    assert_int_equal(rbf_config_check(&c, NULL), RBF_EINVAL);
    c.reserved_[6] = 0;
    /* rbf_config_init gives the flat layout; rbf_get_config reports the layout */
    rbf_config d;
    rbf_config_init(&d);
    assert_int_equal(d.layout, RBF_LAYOUT_FLAT);
    assert_int_equal(d.concurrent, 0);
    f = make(&c);
    rbf_get_config(f, &d);
    assert_int_equal(d.layout, RBF_LAYOUT_BLOCKED);
    /* field by field (the struct has padding, which copies need not keep) */
    assert_true(d.bits == c.bits && d.hashes == c.hashes && d.sigma == c.sigma &&
                d.messages == c.messages && d.hashing == c.hashing && d.recycle == c.recycle &&
                d.phases == c.phases && d.seed == c.seed && d.concurrent == 0);
    for (int i = 0; i < 7; i++)
        assert_int_equal(d.reserved_[i], 0);
    rbf_free(f);
    /* the ABI: the layout took the place of the first reserved word */
    assert_int_equal(sizeof(rbf_config), 120);
    assert_int_equal(offsetof(rbf_config, layout), 56);
    assert_int_equal(offsetof(rbf_config, reserved_), 64);
}

/* ---- files */

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* The version 2 form of a version 1 file: same fields, a 192-byte header
 * with `layout` at 120, checksums recomputed. */
static uint8_t *to_v2(const uint8_t *v1, uint64_t len1, uint32_t layout, uint64_t *len2)
{
    *len2 = len1 + 64;
    uint8_t *b = calloc(1, (size_t)*len2);
    memcpy(b, v1, 120);
    put_le(b + 8, 2, 4);
    put_le(b + 12, 192, 4);
    put_le(b + 120, layout, 4);
    put_le(b + 184, XXH3_64bits(b, 184), 8);
    memcpy(b + 192, v1 + 128, (size_t)(len1 - 128 - 8));
    put_le(b + *len2 - 8, XXH3_64bits(b, (size_t)*len2 - 8), 8);
    return b;
}

static void refresh_checksums(uint8_t *b, uint64_t len)
{
    put_le(b + 184, XXH3_64bits(b, 184), 8);
    put_le(b + len - 8, XXH3_64bits(b, (size_t)len - 8), 8);
}

static void test_files(void **state)
{
    (void)state;
    /* a flat filter is still written as version 1 */
    rbf_config c = tu_config(4096, 3, 0, 500, RBF_COLLIDING, RBF_NON_RETAINING, 1, 99);
    rbf *f = make(&c);
    for (int i = 0; i < 100; i++)
        rbf_insert(f, &i, sizeof i);
    uint64_t len1, len2;
    uint8_t *v1 = tu_saved(f, &len1);
    assert_int_equal(len1, 128 + 4096 / 8 + 8);
    assert_int_equal(v1[8], 1);
    assert_int_equal(v1[12], 128);
    /* its version 2 form (layout flat) loads to the same filter, which
     * saves as the same version 1 bytes */
    uint8_t *v2 = to_v2(v1, len1, 0, &len2);
    rbf *g = NULL;
    assert_int_equal(rbf_load_buffer(v2, (size_t)len2, &g), RBF_OK);
    uint64_t len3;
    uint8_t *v1b = tu_saved(g, &len3);
    assert_int_equal(len3, len1);
    assert_memory_equal(v1, v1b, (size_t)len1);
    rbf_free(g);
    free(v1b);
    /* layout 1 with this flat filter's bits (4096, a multiple of 512) loads
     * as blocked; with layout 2, a non-zero reserved byte, or a wrong header
     * size it is refused */
    v2[120] = 1;
    refresh_checksums(v2, len2);
    assert_int_equal(rbf_load_buffer(v2, (size_t)len2, &g), RBF_OK);
    rbf_get_config(g, &c);
    assert_int_equal(c.layout, RBF_LAYOUT_BLOCKED);
    rbf_free(g);
    v2[120] = 2;
    refresh_checksums(v2, len2);
    assert_int_equal(rbf_load_buffer(v2, (size_t)len2, &g), RBF_ECORRUPT);
    assert_null(g);
    v2[120] = 0;
    v2[150] = 1;
    refresh_checksums(v2, len2);
    assert_int_equal(rbf_load_buffer(v2, (size_t)len2, &g), RBF_ECORRUPT);
    v2[150] = 0;
    v2[124] = 1;
    refresh_checksums(v2, len2);
    assert_int_equal(rbf_load_buffer(v2, (size_t)len2, &g), RBF_ECORRUPT);
    v2[124] = 0;
    v2[12] = 128;
    refresh_checksums(v2, len2);
    assert_int_equal(rbf_load_buffer(v2, (size_t)len2, &g), RBF_ECORRUPT);
    v2[12] = 192;
    refresh_checksums(v2, len2);
    assert_int_equal(rbf_load_buffer(v2, (size_t)len2, &g), RBF_OK);
    rbf_free(g);
    v2[8] = 3; /* a future version */
    assert_int_equal(rbf_load_buffer(v2, (size_t)len2, &g), RBF_EFORMAT);
    free(v2);
    /* flat bits that are not a multiple of 512 cannot be blocked */
    rbf_free(f);
    free(v1);
    c = tu_config(4000, 3, 0, 500, RBF_COLLIDING, RBF_NON_RETAINING, 1, 99);
    f = make(&c);
    v1 = tu_saved(f, &len1);
    v2 = to_v2(v1, len1, 1, &len2);
    assert_int_equal(rbf_load_buffer(v2, (size_t)len2, &g), RBF_ECORRUPT);
    v2[120] = 0;
    refresh_checksums(v2, len2);
    assert_int_equal(rbf_load_buffer(v2, (size_t)len2, &g), RBF_OK);
    rbf_free(g);
    free(v1);
    free(v2);
    rbf_free(f);
    /* a blocked filter through a file: version 2, and the same answers */
    c = blocked_config(2048 * 2, 5, 600, 0, RBF_COLLIDING, RBF_RETAINING, 2, 7);
    f = make(&c);
    for (int i = 0; i < 300; i++)
        rbf_insert(f, &i, sizeof i);
    char path[] = "/tmp/rbf_test_blocked_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(rbf_save(f, path), RBF_OK);
    assert_int_equal(rbf_load(path, &g), RBF_OK);
    unlink(path);
    for (int i = 0; i < 600; i++)
        assert_int_equal(rbf_contains(f, &i, sizeof i), rbf_contains(g, &i, sizeof i));
    for (int i = 200; i < 600; i++)
        assert_int_equal(rbf_insert(f, &i, sizeof i), rbf_insert(g, &i, sizeof i));
    uint8_t *sa = tu_saved(f, &len1), *sb = tu_saved(g, &len2);
    assert_int_equal(len1, 192 + 2 * 2048 / 8 + 8);
    assert_int_equal(len1, len2);
    assert_memory_equal(sa, sb, (size_t)len1);
    free(sa);
    free(sb);
    rbf_free(f);
    rbf_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_positions_match_reference),
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_files),
        cmocka_unit_test(test_every_variant_matches_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
