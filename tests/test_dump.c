/*
 * test_dump.c -- rbf_dump_*: an image streamed in pieces while the filter
 * changes is exactly the image rbf_save_buffer wrote when the dump opened,
 * for every layout, phase count and bound, with inserts that stay in their
 * cycle and inserts and recycles that change every page; several dumps of
 * one filter at once; the page copies released as the reading passes them;
 * a failed copy breaks the dump instead of serving a wrong image; and
 * rbf_image_size reads an image's size from its header.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "filter_util.h"

static rbf *make(uint64_t bits, unsigned k, uint64_t sigma, uint64_t messages, unsigned phases,
                 rbf_layout layout)
{
    rbf_config c;
    rbf_config_init(&c);
    c.bits = bits;
    c.hashes = k;
    c.sigma = sigma;
    c.messages = messages;
    c.phases = phases;
    c.layout = layout;
    c.seed = 42;
    rbf *f = NULL;
    assert_int_equal(rbf_new(&c, &f), RBF_OK);
    return f;
}

static uint8_t *image(const rbf *f, uint64_t *len)
{
    assert_int_equal(rbf_save_size(f, len), RBF_OK);
    uint8_t *b = malloc((size_t)*len);
    assert_non_null(b);
    assert_int_equal(rbf_save_buffer(f, b, (size_t)*len), RBF_OK);
    return b;
}

static void insert_n(rbf *f, rbf_dump *const *d, int nd, uint64_t *state, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char key[24];
        int len = snprintf(key, sizeof key, "k%llu", (unsigned long long)tu_next(state));
        const void *kp = key;
        size_t kl = (size_t)len;
        for (int j = 0; j < nd; j++)
            assert_int_equal(rbf_dump_before_insert(d[j], &kp, &kl, 1), RBF_OK);
        rbf_insert(f, key, kl);
    }
}

/* One dump read in pieces of `piece` bytes with `per` inserts between
 * pieces (and a recycle every `recycle_every` pieces, 0: never) equals the
 * image at open, and loads. */
static void check_stream(rbf *f, size_t piece, size_t per, int recycle_every)
{
    uint64_t state = 7, len;
    insert_n(f, NULL, 0, &state, 300);
    uint8_t *want = image(f, &len);
    rbf_dump *d;
    assert_int_equal(rbf_dump_open(f, &d), RBF_OK);
    assert_int_equal(rbf_dump_size(d), len);
    uint8_t *got = malloc((size_t)len);
    assert_non_null(got);
    uint64_t off = 0;
    int pieces = 0;
    for (;;) {
        size_t n = 0;
        assert_int_equal(rbf_dump_read(d, got + off, piece, &n), RBF_OK);
        if (n == 0)
            break;
        off += n;
        assert_int_equal(rbf_dump_offset(d), off);
        pieces++;
        if (recycle_every && pieces % recycle_every == 0) {
            assert_int_equal(rbf_dump_before_recycle(d), RBF_OK);
            rbf_recycle(f);
        }
        insert_n(f, &d, 1, &state, per);
    }
    assert_int_equal(off, len);
    assert_memory_equal(got, want, (size_t)len);
    /* everything read: no copies are held but the page table */
    uint64_t npages = (len - 8 + 4095) / 4096;
    assert_true(rbf_dump_held(d) <= npages * sizeof(void *));
    rbf *g = NULL;
    assert_int_equal(rbf_load_buffer(got, (size_t)len, &g), RBF_OK);
    rbf_free(g);
    rbf_dump_close(d);
    free(got);
    free(want);
}

static void test_stream_variants(void **state)
{
    (void)state;
    struct {
        uint64_t bits, sigma, messages;
        unsigned k, phases;
        rbf_layout layout;
    } v[] = {
        {1u << 18, 1u << 16, 0, 5, 1, RBF_LAYOUT_FLAT},
        {1u << 18, 0, 4000, 3, 1, RBF_LAYOUT_FLAT},
        {1u << 18, 1u << 15, 0, 4, 2, RBF_LAYOUT_FLAT},
        {1u << 18, 1u << 16, 0, 6, 1, RBF_LAYOUT_BLOCKED},
        {(1u << 18) + 64, 1u << 16, 0, 2, 1, RBF_LAYOUT_FLAT}, /* a partial last word */
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        size_t pieces[] = {1000, 4096, 5000, 1u << 20};
        for (size_t p = 0; p < sizeof pieces / sizeof pieces[0]; p++) {
            for (int rec = 0; rec <= 3; rec += 3) {
                rbf *f = make(v[i].bits, v[i].k, v[i].sigma, v[i].messages, v[i].phases,
                              v[i].layout);
                check_stream(f, pieces[p], 40, rec);
                rbf_free(f);
            }
        }
    }
}

/* Inserts near the sigma bound may recycle: every page not read is kept. */
static void test_insert_that_recycles(void **state)
{
    (void)state;
    rbf *f = make(1u << 16, 4, 400, 0, 1, RBF_LAYOUT_FLAT);
    check_stream(f, 512, 60, 0);
    rbf_stats s;
    rbf_get_stats(f, &s);
    assert_true(s.cycles > 5); /* the stream really crossed recycles */
    rbf_free(f);
}

/* Two dumps opened at different times each give their own image. */
static void test_two_dumps(void **state)
{
    (void)state;
    rbf *f = make(1u << 17, 5, 1u << 15, 0, 1, RBF_LAYOUT_FLAT);
    uint64_t st = 11, la, lb;
    insert_n(f, NULL, 0, &st, 200);
    uint8_t *wa = image(f, &la);
    rbf_dump *d[2];
    assert_int_equal(rbf_dump_open(f, &d[0]), RBF_OK);
    uint8_t *ga = malloc((size_t)la), *gb = NULL, *wb = NULL;
    size_t n, oa = 0, ob = 0;
    assert_int_equal(rbf_dump_read(d[0], ga, 3000, &n), RBF_OK);
    oa += n;
    insert_n(f, d, 1, &st, 500);
    wb = image(f, &lb);
    gb = malloc((size_t)lb);
    assert_int_equal(rbf_dump_open(f, &d[1]), RBF_OK);
    while (oa < la || ob < lb) {
        insert_n(f, d, 2, &st, 30);
        if (oa < la) {
            assert_int_equal(rbf_dump_read(d[0], ga + oa, 7000, &n), RBF_OK);
            oa += n;
        }
        insert_n(f, d, 2, &st, 30);
        if (ob < lb) {
            assert_int_equal(rbf_dump_read(d[1], gb + ob, 2500, &n), RBF_OK);
            ob += n;
        }
    }
    assert_memory_equal(ga, wa, (size_t)la);
    assert_memory_equal(gb, wb, (size_t)lb);
    assert_memory_not_equal(wa, wb, (size_t)la);
    rbf_dump_close(d[0]);
    rbf_dump_close(d[1]);
    free(ga), free(gb), free(wa), free(wb);
    rbf_free(f);
}

/* Copies are held only for pages written before they were read. */
static void test_held_bytes(void **state)
{
    (void)state;
    rbf *f = make(1u << 20, 3, 1u << 19, 0, 1, RBF_LAYOUT_FLAT);
    rbf_dump *d;
    assert_int_equal(rbf_dump_open(f, &d), RBF_OK);
    assert_int_equal(rbf_dump_held(d), 0);
    uint64_t st = 3;
    insert_n(f, &d, 1, &st, 1);
    /* one message, k = 3 words: at most 3 pages of 4 KiB */
    uint64_t h = rbf_dump_held(d);
    uint64_t table = ((rbf_dump_size(d) - 8 + 4095) / 4096) * sizeof(void *);
    assert_true(h > table && h <= table + 3 * 4096);
    assert_int_equal(rbf_dump_before_recycle(d), RBF_OK);
    assert_int_equal(rbf_dump_held(d), table + rbf_dump_size(d) - 8);
    rbf_dump_close(d);
    rbf_free(f);
}

/* A copy that cannot be made breaks the dump: it never serves a wrong image. */
static int fail_after = -1;
static void *f_malloc(void *c, size_t n)
{
    (void)c;
    if (fail_after == 0)
        return NULL;
    if (fail_after > 0)
        fail_after--;
    return malloc(n);
}
static void *f_realloc(void *c, void *p, size_t n)
{
    (void)c;
    return realloc(p, n);
}
static void f_free(void *c, void *p)
{
    (void)c;
    free(p);
}

static void test_broken_on_enomem(void **state)
{
    (void)state;
    rbf *f = make(1u << 16, 4, 1u << 14, 0, 1, RBF_LAYOUT_FLAT);
    rbf_dump *d;
    assert_int_equal(rbf_dump_open(f, &d), RBF_OK);
    rbf_allocator a = {f_malloc, f_realloc, f_free, NULL, NULL, {NULL}};
    assert_int_equal(rbf_set_allocator(&a), RBF_OK);
    fail_after = 0;
    int rc = rbf_dump_before_recycle(d);
    fail_after = -1;
    assert_int_equal(rbf_set_allocator(NULL), RBF_OK);
    assert_int_equal(rc, RBF_ENOMEM);
    uint8_t buf[64];
    size_t n = 1;
    assert_int_equal(rbf_dump_read(d, buf, sizeof buf, &n), RBF_ENOMEM);
    assert_int_equal(n, 0);
    rbf_dump_close(d);
    rbf_free(f);
}

static void test_image_size(void **state)
{
    (void)state;
    rbf_layout lays[] = {RBF_LAYOUT_FLAT, RBF_LAYOUT_BLOCKED};
    for (int i = 0; i < 2; i++) {
        for (unsigned ph = 1; ph <= 2; ph++) {
            rbf *f = make(1u << 14, 3, 1000, 0, ph, lays[i]);
            uint64_t len, sz;
            uint8_t *b = image(f, &len);
            assert_int_equal(rbf_image_size(b, (size_t)len, &sz), RBF_OK);
            assert_int_equal(sz, len);
            size_t hs = lays[i] == RBF_LAYOUT_BLOCKED ? 192 : 128;
            assert_int_equal(rbf_image_size(b, hs, &sz), RBF_OK);
            assert_int_equal(sz, len);
            assert_int_equal(rbf_image_size(b, hs - 1, &sz), RBF_ERANGE);
            b[20] ^= 1; /* a damaged header */
            assert_int_equal(rbf_image_size(b, hs, &sz), RBF_ECORRUPT);
            b[20] ^= 1;
            b[0] = 'X';
            assert_int_equal(rbf_image_size(b, hs, &sz), RBF_EFORMAT);
            free(b);
            rbf_free(f);
        }
    }
    uint64_t sz;
    assert_int_equal(rbf_image_size(NULL, 200, &sz), RBF_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_variants),   cmocka_unit_test(test_insert_that_recycles),
        cmocka_unit_test(test_two_dumps),         cmocka_unit_test(test_held_bytes),
        cmocka_unit_test(test_broken_on_enomem),  cmocka_unit_test(test_image_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
