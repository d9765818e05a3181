/*
 * test_io.c -- rbf_save / rbf_load (and the _buffer forms): round trips for
 * every variant, the documented layout (docs/file-format.md), and rejection
 * of every kind of damaged file, never half-loaded (*out stays NULL; leaks
 * are caught by the ASan and valgrind runs of this test).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "filter_util.h"

static char tmpdir[4096];
static char pathbuf[4200];

static const char *tmp_path(const char *name)
{
    snprintf(pathbuf, sizeof pathbuf, "%s/%s", tmpdir, name);
    return pathbuf;
}

static int setup(void **state)
{
    (void)state;
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/rbf-test-io.XXXXXX", t && *t ? t : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    DIR *d = opendir(tmpdir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char p[8300];
            snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
            chmod(p, 0700);
            if (unlink(p) != 0)
                rmdir(p);
        }
        closedir(d);
    }
    return rmdir(tmpdir);
}

static void write_file(const char *path, const void *buf, size_t len)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    if (len)
        assert_int_equal(fwrite(buf, 1, len, fp), len);
    assert_int_equal(fclose(fp), 0);
}

/* Count entries of tmpdir whose name contains `part`. */
static int count_files(const char *part)
{
    DIR *d = opendir(tmpdir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strstr(e->d_name, part) != NULL;
    closedir(d);
    return n;
}

static uint64_t get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Recompute both checksums of a saved image (the header's at 120, over bytes
 * 0..119, and the trailing one over everything before it). */
static void fix_checksums(uint8_t *buf, size_t len)
{
    put_le(buf + 120, XXH3_64bits(buf, 120), 8);
    put_le(buf + len - 8, XXH3_64bits(buf, len - 8), 8);
}

/* A filter of the given variant after a random stream that recycled. */
static rbf *busy_filter(int v, uint64_t m, uint64_t seed, uint64_t steps)
{
    int sig = v & 1, h = (v >> 1) & 1, ret = (v >> 2) & 1;
    unsigned ph = 1 + (unsigned)((v >> 3) & 1);
    rbf_config c = tu_config(m * ph + (ph - 1), 3, sig ? m / 3 : 0, sig ? 0 : m / 10,
                             h ? RBF_NON_COLLIDING : RBF_COLLIDING,
                             ret ? RBF_RETAINING : RBF_NON_RETAINING, ph, seed);
    rbf *f = NULL;
    assert_int_equal(rbf_new(&c, &f), RBF_OK);
    uint64_t rng = seed;
    for (uint64_t i = 0; i < steps; i++)
        rbf_insert_hash(f, tu_below(&rng, 3 * m));
    return f;
}

static void assert_same_filter(const rbf *a, const rbf *b)
{
    rbf_stats sa, sb;
    rbf_get_stats(a, &sa);
    rbf_get_stats(b, &sb);
    assert_memory_equal(&sa, &sb, sizeof sa);
    rbf_config ca, cb;
    rbf_get_config(a, &ca);
    rbf_get_config(b, &cb);
    assert_int_equal(ca.bits, cb.bits);
    assert_int_equal(ca.hashes, cb.hashes);
    assert_int_equal(ca.sigma, cb.sigma);
    assert_int_equal(ca.messages, cb.messages);
    assert_int_equal(ca.hashing, cb.hashing);
    assert_int_equal(ca.recycle, cb.recycle);
    assert_int_equal(ca.phases, cb.phases);
    assert_int_equal(ca.seed, cb.seed);
    uint64_t la, lb;
    uint8_t *ba = tu_saved(a, &la), *bb = tu_saved(b, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(ba, bb, la);
    free(ba);
    free(bb);
}

/* Same state, same seed, same answers from now on. */
static void assert_same_future(rbf *a, rbf *b, uint64_t rng, uint64_t universe)
{
    for (int i = 0; i < 3000; i++) {
        uint64_t key = tu_below(&rng, universe);
        if (i % 4 == 0)
            assert_int_equal(rbf_contains(a, &key, sizeof key), rbf_contains(b, &key, sizeof key));
        else
            assert_int_equal(rbf_insert(a, &key, sizeof key), rbf_insert(b, &key, sizeof key));
    }
    assert_same_filter(a, b);
}

static void test_round_trip_every_variant(void **state)
{
    (void)state;
    const uint64_t sizes[] = {1000, 64, 4097};
    for (size_t si = 0; si < 3; si++)
        for (int v = 0; v < 16; v++) {
            rbf *f = busy_filter(v, sizes[si], 1000 + (uint64_t)v, 2000);
            rbf_stats s;
            rbf_get_stats(f, &s);
            assert_true(s.cycles > 0);
            /* through a file */
            const char *p = tmp_path("rt.rbf");
            assert_int_equal(rbf_save(f, p), RBF_OK);
            rbf *g = NULL;
            assert_int_equal(rbf_load(p, &g), RBF_OK);
            assert_non_null(g);
            assert_same_filter(f, g);
            /* through memory */
            uint64_t len;
            uint8_t *buf = tu_saved(f, &len);
            struct stat st;
            assert_int_equal(stat(p, &st), 0);
            assert_int_equal((uint64_t)st.st_size, len);
            rbf *h = NULL;
            assert_int_equal(rbf_load_buffer(buf, (size_t)len, &h), RBF_OK);
            assert_same_filter(f, h);
            free(buf);
            assert_same_future(f, g, 5, 3 * sizes[si]);
            rbf *g2 = NULL; /* g has moved on: reload the saved state */
            assert_int_equal(rbf_load(p, &g2), RBF_OK);
            assert_same_future(h, g2, 6, 3 * sizes[si]);
            rbf_free(g2);
            rbf_free(f);
            rbf_free(g);
            rbf_free(h);
        }
    assert_int_equal(count_files(".tmp."), 0); /* no temporary files left */
}

/* rbf_save_range: any split of the image's first size - 8 bytes into
 * ranges (word-aligned or not, across the header, the arrays and the
 * boundary between them) gives rbf_save_buffer's bytes, and XXH3 of them
 * is the trailing checksum; flat and blocked, one and two phases. */
static void test_save_range(void **state)
{
    (void)state;
    uint64_t rng = 99;
    for (int v = 0; v < 32; v++) {
        rbf *f;
        if (v < 16) {
            f = busy_filter(v, 4097, 300 + (uint64_t)v, 3000);
        } else {
            unsigned ph = 1 + (unsigned)(v & 1);
            rbf_config c = tu_config(512 * 9 * ph, 4, v & 2 ? 1500 : 0, v & 2 ? 0 : 500,
                                     v & 4 ? RBF_NON_COLLIDING : RBF_COLLIDING,
                                     RBF_NON_RETAINING, ph, 7 + (uint64_t)v);
            c.layout = RBF_LAYOUT_BLOCKED;
            f = NULL;
            assert_int_equal(rbf_new(&c, &f), RBF_OK);
            for (uint64_t i = 0; i < 3000; i++)
                rbf_insert_hash(f, tu_below(&rng, 20000));
        }
        uint64_t len;
        uint8_t *want = tu_saved(f, &len);
        assert_non_null(want);
        uint8_t *got = calloc(1, (size_t)len);
        assert_non_null(got);
        size_t off = 0;
        while (off < len - 8) {
            size_t n = 1 + (size_t)tu_below(&rng, v % 3 == 0 ? 13 : 700);
            if (n > len - 8 - off)
                n = (size_t)(len - 8 - off);
            assert_int_equal(rbf_save_range(f, off, got + off, n), RBF_OK);
            off += n;
        }
        assert_memory_equal(got, want, (size_t)len - 8);
        uint64_t sum = XXH3_64bits(got, (size_t)len - 8), tail = 0;
        for (int i = 7; i >= 0; i--)
            tail = tail << 8 | want[len - 8 + (size_t)i];
        assert_true(sum == tail);
        /* the limits */
        assert_int_equal(rbf_save_range(f, 0, got, (size_t)len - 8), RBF_OK);
        assert_int_equal(rbf_save_range(f, 0, got, (size_t)len - 7), RBF_ERANGE);
        assert_int_equal(rbf_save_range(f, len - 8, got, 1), RBF_ERANGE);
        assert_int_equal(rbf_save_range(f, len - 8, got, 0), RBF_OK);
        assert_int_equal(rbf_save_range(f, len, got, 0), RBF_ERANGE);
        assert_int_equal(rbf_save_range(f, UINT64_MAX, got, 1), RBF_ERANGE);
        assert_int_equal(rbf_save_range(NULL, 0, got, 1), RBF_EINVAL);
        assert_int_equal(rbf_save_range(f, 0, NULL, 1), RBF_EINVAL);
        free(got);
        free(want);
        rbf_free(f);
    }
}

/* The layout of docs/file-format.md, read field by field. */
static void test_documented_layout(void **state)
{
    (void)state;
    for (int v = 0; v < 16; v++) {
        rbf *f = busy_filter(v, 1000, 77, 500);
        rbf_config c;
        rbf_stats s;
        rbf_get_config(f, &c);
        rbf_get_stats(f, &s);
        uint64_t len;
        uint8_t *b = tu_saved(f, &len);
        uint64_t words = (s.bits + 63) / 64;
        assert_int_equal(len, 128 + words * 8 * c.phases + 8);
        assert_memory_equal(b, "RBFILTR\x1a", 8);
        assert_int_equal(get_le(b + 8, 4), 1);
        assert_int_equal(get_le(b + 12, 4), 128);
        assert_int_equal(get_le(b + 16, 8), c.bits);
        assert_int_equal(get_le(b + 24, 4), c.hashes);
        assert_int_equal(get_le(b + 28, 4), (uint64_t)c.hashing);
        assert_int_equal(get_le(b + 32, 4), (uint64_t)c.recycle);
        assert_int_equal(get_le(b + 36, 4), c.phases);
        assert_int_equal(get_le(b + 40, 8), c.sigma);
        assert_int_equal(get_le(b + 48, 8), c.messages);
        assert_int_equal(get_le(b + 56, 8), c.seed);
        assert_int_equal(get_le(b + 64, 8), s.cycles);
        assert_int_equal(get_le(b + 72, 8), s.cycle_messages);
        assert_int_equal(get_le(b + 80, 8), s.inserts);
        assert_int_equal(get_le(b + 88, 8), s.reported_new);
        assert_int_equal(get_le(b + 96, 8), s.bits_set);
        assert_int_equal(get_le(b + 104, 8), s.frozen_bits_set);
        assert_int_equal(get_le(b + 112, 8), words);
        assert_int_equal(get_le(b + 120, 8), XXH3_64bits(b, 120));
        assert_int_equal(get_le(b + len - 8, 8), XXH3_64bits(b, len - 8));
        /* bit i of a filter: word i/64, bit i%64; the set bits of each
         * array add up to the recorded counts */
        uint64_t pa = 0, pf = 0;
        for (uint64_t i = 0; i < words * 64; i++) {
            pa += (uint64_t)tu_saved_bit(b, s.bits, 0, i);
            if (c.phases == 2)
                pf += (uint64_t)tu_saved_bit(b, s.bits, 1, i);
        }
        assert_int_equal(pa, s.bits_set);
        assert_int_equal(pf, s.frozen_bits_set);
        /* a message's positions are set bits */
        uint64_t pos[3];
        uint64_t key = 12345;
        rbf_insert(f, &key, sizeof key);
        free(b);
        b = tu_saved(f, &len);
        rbf_positions(f, rbf_hash(f, &key, sizeof key), pos);
        rbf_get_stats(f, &s);
        if (rbf_contains(f, &key, sizeof key)) { /* all set in the active or in the frozen */
            int in_a = 1, in_f = c.phases == 2;
            for (int j = 0; j < 3; j++) {
                in_a &= tu_saved_bit(b, s.bits, 0, pos[j]);
                in_f &= c.phases == 2 && tu_saved_bit(b, s.bits, 1, pos[j]);
            }
            assert_true(in_a || in_f);
        }
        free(b);
        rbf_free(f);
    }
}

/* Both loaders reject buf[0..len) with exactly `want`, and leave *out NULL. */
static void expect_rejected(const uint8_t *buf, size_t len, int want, int file_too)
{
    rbf *f = (rbf *)&f;
    int rc = rbf_load_buffer(buf, len, &f);
    if (rc != want)
        print_error("load_buffer(len %zu): got %d (%s), wanted %d\n", len, rc, rbf_strerror(rc),
                    want);
    assert_int_equal(rc, want);
    assert_null(f);
    if (file_too) {
        const char *p = tmp_path("damaged.rbf");
        write_file(p, buf, len);
        f = (rbf *)&f;
        rc = rbf_load(p, &f);
        if (rc != want)
            print_error("load(file of %zu bytes): got %d (%s)\n", len, rc, rbf_strerror(rc));
        assert_int_equal(rc, want);
        assert_null(f);
    }
}

static void test_empty_and_truncated(void **state)
{
    (void)state;
    expect_rejected((const uint8_t *)"", 0, RBF_EFORMAT, 1);
    for (int v = 0; v < 16; v += 5) {
        rbf *f = busy_filter(v, 100, 3, 100);
        uint64_t len;
        uint8_t *b = tu_saved(f, &len);
        for (size_t cut = 0; cut < len; cut++) {
            uint8_t *copy = malloc(cut + 1); /* exact-size copy: ASan sees over-reads */
            memcpy(copy, b, cut);
            /* shorter than the magic: not an rbf file; else a damaged one */
            if (cut < 8)
                expect_rejected(copy, cut, RBF_EFORMAT, 1);
            else
                expect_rejected(copy, cut, RBF_ECORRUPT, 1);
            free(copy);
        }
        free(b);
        rbf_free(f);
    }
}

static void test_every_bit_flipped(void **state)
{
    (void)state;
    for (int v = 0; v < 16; v += 3) {
        rbf *f = busy_filter(v, 100, 4, 100);
        uint64_t len;
        uint8_t *b = tu_saved(f, &len);
        for (size_t bit = 0; bit < len * 8; bit++) {
            b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            /* damage in the magic or version: not an rbf file (or a version
             * we do not read); anywhere else: corrupt */
            if (bit < 96)
                expect_rejected(b, (size_t)len, RBF_EFORMAT, bit % 5 == 0);
            else
                expect_rejected(b, (size_t)len, RBF_ECORRUPT, bit % 5 == 0);
            b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        }
        rbf *g = NULL;
        assert_int_equal(rbf_load_buffer(b, (size_t)len, &g), RBF_OK); /* restored */
        rbf_free(g);
        free(b);
        rbf_free(f);
    }
}

static void test_foreign_and_wrong_version(void **state)
{
    (void)state;
    const char *text = "hello, this is a text file and not a filter at all\n";
    expect_rejected((const uint8_t *)text, strlen(text), RBF_EFORMAT, 1);
    uint8_t zeros[4096] = {0};
    expect_rejected(zeros, sizeof zeros, RBF_EFORMAT, 1);
    /* an ELF executable: this test program */
    FILE *fp = fopen("/proc/self/exe", "rb");
    if (fp) {
        uint8_t head[1024];
        size_t n = fread(head, 1, sizeof head, fp);
        fclose(fp);
        expect_rejected(head, n, RBF_EFORMAT, 1);
    }
    rbf *f = busy_filter(9, 300, 5, 300);
    uint64_t len;
    uint8_t *b = tu_saved(f, &len);
    /* wrong magic, checksums fixed */
    b[0] = 'X';
    fix_checksums(b, (size_t)len);
    expect_rejected(b, (size_t)len, RBF_EFORMAT, 1);
    b[0] = 'R';
    /* version 2 (the blocked layout's format) on a version 1 header: its
     * header size says 128, not 192, so it is a damaged version 2 file */
    put_le(b + 8, 2, 4);
    expect_rejected(b, (size_t)len, RBF_ECORRUPT, 1);
    fix_checksums(b, (size_t)len);
    expect_rejected(b, (size_t)len, RBF_ECORRUPT, 1);
    /* future versions, checksums fixed and not */
    const uint32_t versions[] = {0, 3, 255, 0xffffffffu};
    for (size_t i = 0; i < 4; i++) {
        put_le(b + 8, versions[i], 4);
        expect_rejected(b, (size_t)len, RBF_EFORMAT, 1);
        fix_checksums(b, (size_t)len);
        expect_rejected(b, (size_t)len, RBF_EFORMAT, 1);
    }
    put_le(b + 8, 1, 4);
    fix_checksums(b, (size_t)len);
    rbf *g = NULL;
    assert_int_equal(rbf_load_buffer(b, (size_t)len, &g), RBF_OK);
    rbf_free(g);
    free(b);
    rbf_free(f);
}

/* One header field changed (size `w` at offset `off` to `val`): rejected as
 * corrupt with the checksums left alone, and still rejected with both
 * checksums recomputed when the change contradicts the rest of the file. */
static void changed_field(const uint8_t *orig, size_t len, size_t off, int w, uint64_t val)
{
    uint8_t *b = malloc(len);
    memcpy(b, orig, len);
    put_le(b + off, val, w);
    expect_rejected(b, len, RBF_ECORRUPT, 0);
    fix_checksums(b, len);
    expect_rejected(b, len, RBF_ECORRUPT, 1);
    free(b);
}

static void test_header_fields_changed(void **state)
{
    (void)state;
    for (int v = 0; v < 16; v++) {
        int sig = v & 1;
        unsigned ph = 1 + (unsigned)((v >> 3) & 1);
        rbf *f = busy_filter(v, 1000, 6, 250);
        rbf_stats s;
        rbf_get_stats(f, &s);
        rbf_config c;
        rbf_get_config(f, &c);
        uint64_t len;
        uint8_t *b = tu_saved(f, &len);
        size_t n = (size_t)len;
        changed_field(b, n, 12, 4, 120);               /* header size */
        changed_field(b, n, 12, 4, 136);
        changed_field(b, n, 16, 8, c.bits + 64 * ph);  /* bits: size no longer matches */
        changed_field(b, n, 16, 8, (uint64_t)1 << 40); /* a hostile size: no huge allocation */
        changed_field(b, n, 16, 8, UINT64_MAX);
        changed_field(b, n, 16, 8, 0);
        changed_field(b, n, 24, 4, 0);                 /* hashes */
        changed_field(b, n, 24, 4, RBF_MAX_HASHES + 1);
        changed_field(b, n, 28, 4, 2);                 /* hashing */
        changed_field(b, n, 32, 4, 7);                 /* recycle */
        changed_field(b, n, 36, 4, 3 - ph);            /* phases: size no longer matches */
        changed_field(b, n, 36, 4, 0);
        if (sig) {
            changed_field(b, n, 40, 8, s.bits);        /* sigma >= bits per filter */
            changed_field(b, n, 48, 8, 5);             /* both sigma and messages */
            if (s.bits_set > 3)
                changed_field(b, n, 40, 8, s.bits_set - 1); /* more bits set than sigma */
        } else {
            changed_field(b, n, 48, 8, 0);             /* neither */
            changed_field(b, n, 72, 8, c.messages);    /* cycle count at N: should have recycled */
            changed_field(b, n, 72, 8, UINT64_MAX);
        }
        changed_field(b, n, 80, 8, s.cycle_messages > 0 ? s.cycle_messages - 1 : 0); /* inserts */
        if (s.cycle_messages == 0)
            changed_field(b, n, 80, 8, 0);
        changed_field(b, n, 88, 8, s.inserts + 1);     /* reported new > inserts */
        changed_field(b, n, 96, 8, s.bits_set + 1);    /* bit counts disagree with arrays */
        changed_field(b, n, 96, 8, s.bits_set ? s.bits_set - 1 : 1);
        changed_field(b, n, 104, 8, s.frozen_bits_set + 1);
        changed_field(b, n, 112, 8, (s.bits + 63) / 64 + 1); /* words per filter */
        changed_field(b, n, 112, 8, 0);

        /* a bit set past M in the last word, with the count adjusted and the
         * checksums fixed: still corrupt */
        if (s.bits % 64) {
            uint8_t *d = malloc(n);
            memcpy(d, b, n);
            uint64_t words = (s.bits + 63) / 64, i = words * 64 - 1; /* the last padding bit */
            d[128 + 8 * (i / 64) + (i % 64) / 8] |= (uint8_t)(1u << (i % 8));
            put_le(d + 96, s.bits_set + 1, 8);
            fix_checksums(d, n);
            expect_rejected(d, n, RBF_ECORRUPT, 1);
            free(d);
        }
        /* body bit flipped with the checksums fixed: the counts catch it */
        {
            uint8_t *d = malloc(n);
            memcpy(d, b, n);
            d[128] ^= 1;
            fix_checksums(d, n);
            expect_rejected(d, n, RBF_ECORRUPT, 1);
            free(d);
        }
        /* trailing bytes, and one byte missing */
        {
            uint8_t *d = malloc(n + 16);
            memcpy(d, b, n);
            memset(d + n, 0, 16);
            expect_rejected(d, n + 1, RBF_ECORRUPT, 1);
            expect_rejected(d, n + 16, RBF_ECORRUPT, 1);
            expect_rejected(d, n - 1, RBF_ECORRUPT, 1);
            free(d);
        }
        free(b);
        rbf_free(f);
    }
}

static void test_not_a_regular_file(void **state)
{
    (void)state;
    rbf *f = (rbf *)&f;
    /* a directory */
    assert_int_equal(rbf_load(tmpdir, &f), RBF_EIO);
    assert_null(f);
    /* a missing file */
    f = (rbf *)&f;
    errno = 0;
    assert_int_equal(rbf_load(tmp_path("does-not-exist.rbf"), &f), RBF_EIO);
    assert_int_equal(errno, ENOENT);
    assert_null(f);
    /* a character device */
    f = (rbf *)&f;
    int rc = rbf_load("/dev/null", &f); /* opened, but not a file: not an rbf file */
    assert_int_equal(rc, RBF_EFORMAT);
    assert_null(f);
    /* a FIFO with no writer: rejected at once, not a hang */
    const char *fifo = tmp_path("fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    f = (rbf *)&f;
    rc = rbf_load(fifo, &f);
    assert_int_equal(rc, RBF_EFORMAT);
    assert_null(f);
    unlink(fifo);
    /* NULL arguments */
    assert_int_equal(rbf_load(NULL, &f), RBF_EINVAL);
    assert_int_equal(rbf_load(tmp_path("x"), NULL), RBF_EINVAL);
    assert_int_equal(rbf_load_buffer("RBFILTR", 8, NULL), RBF_EINVAL);
    f = (rbf *)&f;
    assert_int_equal(rbf_load_buffer(NULL, 5, &f), RBF_EINVAL);
    assert_null(f);
    f = (rbf *)&f;
    rc = rbf_load_buffer(NULL, 0, &f); /* no bytes: not an rbf file */
    assert_int_equal(rc, RBF_EFORMAT);
    assert_null(f);
}

static void test_save_errors(void **state)
{
    (void)state;
    rbf *f = busy_filter(3, 500, 2, 100);
    assert_int_equal(rbf_save(NULL, tmp_path("a")), RBF_EINVAL);
    assert_int_equal(rbf_save(f, NULL), RBF_EINVAL);
    assert_int_equal(rbf_save(f, ""), RBF_EINVAL);
    /* into a missing directory */
    errno = 0;
    assert_int_equal(rbf_save(f, tmp_path("no/such/dir/f.rbf")), RBF_EIO);
    assert_int_equal(errno, ENOENT);
    /* over a directory: the rename fails, the old directory stays, and the
     * temporary file is removed */
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/adir", tmpdir);
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(rbf_save(f, dir), RBF_EIO);
    struct stat st;
    assert_int_equal(stat(dir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(count_files(".tmp."), 0);
    rmdir(dir);
    /* buffers */
    uint64_t need;
    assert_int_equal(rbf_save_size(f, &need), RBF_OK);
    assert_int_equal(rbf_save_size(NULL, &need), RBF_EINVAL);
    assert_int_equal(rbf_save_size(f, NULL), RBF_EINVAL);
    uint8_t *buf = malloc((size_t)need);
    assert_int_equal(rbf_save_buffer(f, buf, (size_t)need - 1), RBF_ERANGE);
    assert_int_equal(rbf_save_buffer(f, buf, 0), RBF_ERANGE);
    assert_int_equal(rbf_save_buffer(f, NULL, (size_t)need), RBF_EINVAL);
    assert_int_equal(rbf_save_buffer(NULL, buf, (size_t)need), RBF_EINVAL);
    assert_int_equal(rbf_save_buffer(f, buf, (size_t)need), RBF_OK);
    free(buf);
    /* saving over an existing filter replaces it whole */
    const char *p = tmp_path("over.rbf");
    rbf *other = busy_filter(12, 3000, 9, 1000);
    assert_int_equal(rbf_save(other, p), RBF_OK);
    assert_int_equal(rbf_save(f, p), RBF_OK);
    rbf *g = NULL;
    assert_int_equal(rbf_load(p, &g), RBF_OK);
    assert_same_filter(f, g);
    rbf_free(g);
    rbf_free(other);
    rbf_free(f);
    assert_int_equal(count_files(".tmp."), 0);
}

/* A filter loaded from a file keeps its seed, and rbf_config_init's random
 * seeds are not reused. */
static void test_seed_is_kept(void **state)
{
    (void)state;
    rbf_config c;
    rbf_config_init(&c);
    c.bits = 5000, c.hashes = 4, c.sigma = 2000;
    rbf *f = NULL;
    assert_int_equal(rbf_new(&c, &f), RBF_OK);
    for (int i = 0; i < 300; i++)
        rbf_insert(f, &i, sizeof i);
    const char *p = tmp_path("seed.rbf");
    assert_int_equal(rbf_save(f, p), RBF_OK);
    rbf *g = NULL;
    assert_int_equal(rbf_load(p, &g), RBF_OK);
    rbf_stats s;
    rbf_get_stats(g, &s);
    assert_int_equal(s.seed, c.seed);
    for (int i = 0; i < 300; i++)
        assert_int_equal(rbf_contains(g, &i, sizeof i), 1);
    for (int i = 300; i < 600; i++)
        assert_int_equal(rbf_insert(g, &i, sizeof i), rbf_insert(f, &i, sizeof i));
    rbf_free(f);
    rbf_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_every_variant),
        cmocka_unit_test(test_save_range),
        cmocka_unit_test(test_documented_layout),
        cmocka_unit_test(test_empty_and_truncated),
        cmocka_unit_test(test_every_bit_flipped),
        cmocka_unit_test(test_foreign_and_wrong_version),
        cmocka_unit_test(test_header_fields_changed),
        cmocka_unit_test(test_not_a_regular_file),
        cmocka_unit_test(test_save_errors),
        cmocka_unit_test(test_seed_is_kept),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
