/*
 * io.c -- the portable filter file format and atomic saves.
 *
 * Layout (docs/file-format.md), every integer little-endian:
 *
 *   0   8  magic "RBFILTR\x1a"
 *   8   4  format version (1)
 *   12  4  header size (128)
 *   16  8  bits          24  4 hashes      28  4 hashing    32  4 recycle
 *   36  4  phases        40  8 sigma       48  8 messages   56  8 seed
 *   64  8  cycles        72  8 cycle_messages                80  8 inserts
 *   88  8  reported_new  96  8 bits_set    104 8 frozen_bits_set
 *   112 8  words per filter
 *   120 8  XXH3-64 of bytes 0..119 (so a damaged header is caught before
 *          anything is allocated)
 *   128    active filter words, then the frozen filter's (two-phase)
 *   end-8  XXH3-64 of every byte before it
 *
 * Version 2 (written for blocked filters only; flat filters keep writing
 * version 1 byte for byte, so that 1.x readers still read them): a 192-byte
 * header, bytes 0..119 as above, then
 *   120 4  layout (0 flat, 1 blocked)   124 4  zero
 *   128 56 zero (reserved)
 *   184 8  XXH3-64 of bytes 0..183
 * and the arrays from byte 192 (a 64-byte boundary).
 *
 * A load checks the magic and version (RBF_EFORMAT), then the header
 * checksum, the configuration, the exact size, the body checksum, and that
 * the recorded bit counts match the arrays (RBF_ECORRUPT).  Only a file that
 * passes everything becomes a filter.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "filter_internal.h"
#include "rbf.h"

#define RBF_MAGIC "RBFILTR\x1a"
#define RBF_FORMAT_V1 1u
#define RBF_FORMAT_V2 2u
#define RBF_HEADER_V1 128u
#define RBF_HEADER_V2 192u
#define RBF_HEADER_MAX RBF_HEADER_V2
#define CHUNK_WORDS 8192u

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Version 2 only for what version 1 cannot say (the blocked layout). */
static uint32_t header_size(const struct rbf *f)
{
    return f->cfg.layout == RBF_LAYOUT_FLAT ? RBF_HEADER_V1 : RBF_HEADER_V2;
}

/* Encodes the header; returns its size. */
static uint32_t encode_header(const struct rbf *f, uint8_t h[RBF_HEADER_MAX])
{
    const uint32_t hs = header_size(f);
    memset(h, 0, RBF_HEADER_MAX);
    memcpy(h, RBF_MAGIC, 8);
    put_u32(h + 8, hs == RBF_HEADER_V1 ? RBF_FORMAT_V1 : RBF_FORMAT_V2);
    put_u32(h + 12, hs);
    put_u64(h + 16, f->cfg.bits);
    put_u32(h + 24, f->cfg.hashes);
    put_u32(h + 28, (uint32_t)f->cfg.hashing);
    put_u32(h + 32, (uint32_t)f->cfg.recycle);
    put_u32(h + 36, f->cfg.phases);
    put_u64(h + 40, f->cfg.sigma);
    put_u64(h + 48, f->cfg.messages);
    put_u64(h + 56, f->cfg.seed);
    put_u64(h + 64, f->cycles);
    put_u64(h + 72, f->c);
    put_u64(h + 80, f->inserts);
    put_u64(h + 88, f->reported_new);
    put_u64(h + 96, f->b);
    put_u64(h + 104, f->fb);
    put_u64(h + 112, f->nwords);
    if (hs == RBF_HEADER_V2)
        put_u32(h + 120, (uint32_t)f->cfg.layout);
    put_u64(h + hs - 8, XXH3_64bits(h, hs - 8));
    return hs;
}

static uint64_t body_words(const struct rbf *f)
{
    return f->nwords * (f->frozen ? 2u : 1u);
}

int rbf_save_size(const rbf *f, uint64_t *size)
{
    if (!f || !size)
        return RBF_EINVAL;
    *size = header_size(f) + body_words(f) * 8u + 8u;
    return RBF_OK;
}

/* A sink for the serialised bytes: a stdio stream or a memory buffer. */
struct sink {
    FILE *fp;
    uint8_t *buf;
    size_t pos;
    XXH3_state_t *st;
};

static int sink_write(struct sink *s, const void *p, size_t n)
{
    XXH3_64bits_update(s->st, p, n);
    if (s->fp)
        return fwrite(p, 1, n, s->fp) == n ? RBF_OK : RBF_EIO;
    memcpy(s->buf + s->pos, p, n);
    s->pos += n;
    return RBF_OK;
}

static int write_words(struct sink *s, const uint64_t *w, uint64_t n)
{
    uint8_t chunk[CHUNK_WORDS * 8];
    while (n) {
        size_t m = n < CHUNK_WORDS ? (size_t)n : CHUNK_WORDS;
        for (size_t i = 0; i < m; i++)
            put_u64(chunk + 8 * i, w[i]);
        int rc = sink_write(s, chunk, m * 8);
        if (rc)
            return rc;
        w += m;
        n -= m;
    }
    return RBF_OK;
}

static int serialise(const struct rbf *f, struct sink *s)
{
    uint8_t h[RBF_HEADER_MAX];
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    s->st = &st;
    uint32_t hs = encode_header(f, h);
    int rc = sink_write(s, h, hs);
    if (!rc)
        rc = write_words(s, f->active, f->nwords);
    if (!rc && f->frozen)
        rc = write_words(s, f->frozen, f->nwords);
    if (rc)
        return rc;
    uint8_t tail[8];
    put_u64(tail, XXH3_64bits_digest(&st));
    if (s->fp)
        return fwrite(tail, 1, 8, s->fp) == 8 ? RBF_OK : RBF_EIO;
    memcpy(s->buf + s->pos, tail, 8);
    s->pos += 8;
    return RBF_OK;
}

int rbf_save_buffer(const rbf *f, void *buf, size_t cap)
{
    uint64_t need;
    if (!f || !buf)
        return RBF_EINVAL;
    rbf_save_size(f, &need);
    if (need > cap)
        return RBF_ERANGE;
    struct sink s = {.buf = buf};
    return serialise(f, &s);
}

/* fsync the directory holding `path`, so the rename itself is durable. */
static int sync_parent_dir(const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return -1;
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(copy);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

int rbf_save(const rbf *f, const char *path)
{
    if (!f || !path || !*path)
        return RBF_EINVAL;
    size_t n = strlen(path);
    char *tmp = malloc(n + sizeof ".tmp.XXXXXX");
    if (!tmp)
        return RBF_ENOMEM;
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");
    int fd = mkstemp(tmp);
    if (fd < 0) {
        free(tmp);
        return RBF_EIO;
    }
    FILE *fp = fdopen(fd, "wb");
    if (!fp) {
        int e = errno;
        close(fd);
        unlink(tmp);
        free(tmp);
        errno = e;
        return RBF_EIO;
    }
    struct sink s = {.fp = fp};
    int rc = serialise(f, &s);
    if (!rc && fflush(fp) != 0)
        rc = RBF_EIO;
    if (!rc && fsync(fd) != 0)
        rc = RBF_EIO;
    int e = errno;
    if (fclose(fp) != 0 && !rc) {
        rc = RBF_EIO;
        e = errno;
    }
    if (!rc && rename(tmp, path) != 0) {
        rc = RBF_EIO;
        e = errno;
    }
    if (rc) {
        unlink(tmp);
        free(tmp);
        errno = e;
        return rc;
    }
    free(tmp);
    (void)sync_parent_dir(path); /* best effort: the data itself is safe */
    return RBF_OK;
}

/* A source of serialised bytes: a stdio stream or a memory buffer. */
struct source {
    FILE *fp;
    const uint8_t *buf;
    size_t len, pos;
    XXH3_state_t *st;
};

static int source_read(struct source *s, void *p, size_t n, int hash)
{
    if (s->fp) {
        if (fread(p, 1, n, s->fp) != n)
            return ferror(s->fp) ? RBF_EIO : RBF_ECORRUPT;
    } else {
        if (s->len - s->pos < n)
            return RBF_ECORRUPT;
        memcpy(p, s->buf + s->pos, n);
        s->pos += n;
    }
    if (hash)
        XXH3_64bits_update(s->st, p, n);
    return RBF_OK;
}

static int read_words(struct source *s, uint64_t *w, uint64_t n, uint64_t *popcount)
{
    uint8_t chunk[CHUNK_WORDS * 8];
    uint64_t pc = 0;
    while (n) {
        size_t m = n < CHUNK_WORDS ? (size_t)n : CHUNK_WORDS;
        int rc = source_read(s, chunk, m * 8, 1);
        if (rc)
            return rc;
        for (size_t i = 0; i < m; i++) {
            w[i] = get_u64(chunk + 8 * i);
            pc += (uint64_t)__builtin_popcountll(w[i]);
        }
        w += m;
        n -= m;
    }
    *popcount = pc;
    return RBF_OK;
}

/* Bits past M in the last word must be zero. */
static int tail_clear(const struct rbf *f, const uint64_t *w)
{
    unsigned used = (unsigned)(f->m % 64);
    return used == 0 || (w[f->nwords - 1] >> used) == 0;
}

/* `total` is the whole size in bytes when known (files), else 0. */
static int deserialise(struct source *s, uint64_t total, rbf **out)
{
    uint8_t h[RBF_HEADER_MAX];
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    s->st = &st;
    *out = NULL;
    int rc = source_read(s, h, 8, 1);
    if (rc)
        return rc == RBF_ECORRUPT ? RBF_EFORMAT : rc;
    if (memcmp(h, RBF_MAGIC, 8) != 0)
        return RBF_EFORMAT;
    rc = source_read(s, h + 8, RBF_HEADER_V1 - 8, 1);
    if (rc)
        return rc;
    const uint32_t version = get_u32(h + 8);
    if (version != RBF_FORMAT_V1 && version != RBF_FORMAT_V2)
        return RBF_EFORMAT;
    const uint32_t hs = version == RBF_FORMAT_V1 ? RBF_HEADER_V1 : RBF_HEADER_V2;
    if (get_u32(h + 12) != hs)
        return RBF_ECORRUPT;
    if (hs > RBF_HEADER_V1) {
        rc = source_read(s, h + RBF_HEADER_V1, hs - RBF_HEADER_V1, 1);
        if (rc)
            return rc;
    }
    if (get_u64(h + hs - 8) != XXH3_64bits(h, hs - 8))
        return RBF_ECORRUPT;
    uint32_t layout = RBF_LAYOUT_FLAT;
    if (version == RBF_FORMAT_V2) {
        layout = get_u32(h + 120);
        for (uint32_t i = 124; i < hs - 8; i++) /* reserved: zero */
            if (h[i])
                return RBF_ECORRUPT;
    }

    rbf_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.bits = get_u64(h + 16);
    cfg.hashes = get_u32(h + 24);
    cfg.hashing = (rbf_hashing)get_u32(h + 28);
    cfg.recycle = (rbf_recycle_mode)get_u32(h + 32);
    cfg.phases = get_u32(h + 36);
    cfg.sigma = get_u64(h + 40);
    cfg.messages = get_u64(h + 48);
    cfg.seed = get_u64(h + 56);
    cfg.layout = (rbf_layout)(layout > 1 ? 0 : layout);
    if (get_u32(h + 28) > 1 || get_u32(h + 32) > 1 || layout > 1 ||
        rbf_config_check(&cfg, NULL) != RBF_OK)
        return RBF_ECORRUPT;
    uint64_t m = cfg.phases == 2 ? cfg.bits / 2 : cfg.bits;
    uint64_t nwords = m / 64 + (m % 64 != 0);
    uint64_t words = nwords * cfg.phases;
    if (get_u64(h + 112) != nwords)
        return RBF_ECORRUPT;
    /* The exact size must match before anything is allocated, so a damaged
     * or hostile header cannot make us allocate more than the file holds. */
    if (words > (UINT64_MAX - hs - 8) / 8)
        return RBF_ECORRUPT;
    uint64_t expect = hs + words * 8 + 8;
    if (total && total != expect)
        return RBF_ECORRUPT;
    if (!total && (uint64_t)(s->len) != expect)
        return RBF_ECORRUPT;

    struct rbf *f;
    rc = rbf__alloc(&cfg, &f);
    if (rc)
        return rc;
    f->cycles = get_u64(h + 64);
    f->c = get_u64(h + 72);
    f->inserts = get_u64(h + 80);
    f->reported_new = get_u64(h + 88);
    f->b = get_u64(h + 96);
    f->fb = get_u64(h + 104);

    uint64_t pa = 0, pf = 0;
    rc = read_words(s, f->active, nwords, &pa);
    if (!rc && f->frozen)
        rc = read_words(s, f->frozen, nwords, &pf);
    uint8_t tail[8];
    if (!rc)
        rc = source_read(s, tail, 8, 0);
    if (!rc && get_u64(tail) != XXH3_64bits_digest(&st))
        rc = RBF_ECORRUPT;
    if (!rc && s->fp && fgetc(s->fp) != EOF)
        rc = RBF_ECORRUPT;
    /* Semantic checks: counts agree with the arrays and with the limits. */
    if (!rc && (pa != f->b || pf != f->fb || !tail_clear(f, f->active) ||
                (f->frozen && !tail_clear(f, f->frozen)) || (!f->frozen && f->fb != 0) ||
                f->b > f->limit_bits || f->c >= f->limit_msgs || f->c > f->inserts ||
                f->reported_new > f->inserts))
        rc = RBF_ECORRUPT;
    if (rc) {
        rbf_free(f);
        return rc;
    }
    *out = f;
    return RBF_OK;
}

int rbf_load_buffer(const void *buf, size_t len, rbf **out)
{
    if (!out)
        return RBF_EINVAL;
    *out = NULL;
    if (!buf && len)
        return RBF_EINVAL;
    struct source s = {.buf = buf, .len = len};
    if (len < 8)
        return RBF_EFORMAT;
    return deserialise(&s, 0, out);
}

int rbf_load(const char *path, rbf **out)
{
    if (!out)
        return RBF_EINVAL;
    *out = NULL;
    if (!path)
        return RBF_EINVAL;
    /* O_NONBLOCK so that a FIFO with no writer is rejected below instead of
     * blocking the open forever; regular files ignore the flag. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return RBF_EIO;
    FILE *fp = fdopen(fd, "rb");
    if (!fp) {
        int e = errno;
        close(fd);
        errno = e;
        return RBF_EIO;
    }
    struct stat stbuf;
    int rc;
    if (fstat(fileno(fp), &stbuf) != 0) {
        rc = RBF_EIO;
    } else if (!S_ISREG(stbuf.st_mode)) {
        errno = EISDIR;
        rc = S_ISDIR(stbuf.st_mode) ? RBF_EIO : RBF_EFORMAT;
    } else if (stbuf.st_size < 8) {
        rc = RBF_EFORMAT;
    } else {
        struct source s = {.fp = fp};
        rc = deserialise(&s, (uint64_t)stbuf.st_size, out);
    }
    int e = errno;
    fclose(fp);
    errno = e;
    return rc;
}
