/*
 * io.c -- the portable filter file format, atomic saves, and copies.
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
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "concurrent.h"
#include "filter_internal.h"
#include "rbf.h"
#include "rbf_alloc.h"

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
    return f->nwords * f->cfg.phases; /* not f->frozen: a concurrent recycle may swap it */
}

int rbf_save_size(const rbf *f, uint64_t *size)
{
    if (!f || !size)
        return RBF_EINVAL;
    *size = header_size(f) + body_words(f) * 8u + 8u;
    return RBF_OK;
}

void (*rbf__save_hook)(int step) = NULL;

static void save_step(int step)
{
    if (rbf__save_hook)
        rbf__save_hook(step);
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

static int serialise_state(const struct rbf *f, struct sink *s);

/* A concurrent filter is saved in an exclusive section: its inserters wait,
 * so the file holds one consistent state (the counters settled). */
static int serialise(const struct rbf *f, struct sink *s)
{
    if (!f->conc)
        return serialise_state(f, s);
    rbf__conc_exclusive_begin(f);
    int rc = serialise_state(f, s);
    rbf__conc_exclusive_end(f);
    return rc;
}

static int serialise_state(const struct rbf *f, struct sink *s)
{
    uint8_t h[RBF_HEADER_MAX];
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    s->st = &st;
    uint32_t hs = encode_header(f, h);
    int rc = sink_write(s, h, hs);
    if (!rc)
        rc = write_words(s, f->active, f->nwords);
    if (!rc && s->fp)
        save_step(RBF__SAVE_PARTIAL);
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

/* Bytes [offset, offset + len) of the image, checksum excluded: the
 * header from its encoding, the arrays word by word (each word is written
 * little-endian, so a range may start or end inside one). */
static void range_state(const struct rbf *f, uint64_t offset, uint8_t *out, size_t len)
{
    uint8_t h[RBF_HEADER_MAX];
    const uint64_t hs = encode_header(f, h);
    if (offset < hs) {
        size_t n = hs - offset < len ? (size_t)(hs - offset) : len;
        memcpy(out, h + offset, n);
        out += n;
        offset += n;
        len -= n;
    }
    while (len) {
        uint64_t w = (offset - hs) / 8, skip = (offset - hs) % 8;
        const uint64_t *arr = w < f->nwords ? f->active : f->frozen;
        uint64_t i = w < f->nwords ? w : w - f->nwords;
        if (skip == 0 && len >= 8) {
            /* whole words, up to the end of this array or of the range */
            uint64_t n = len / 8, left = f->nwords - i;
            if (n > left)
                n = left;
            for (uint64_t j = 0; j < n; j++)
                put_u64(out + 8 * j, arr[i + j]);
            out += 8 * n;
            offset += 8 * n;
            len -= (size_t)(8 * n);
            continue;
        }
        uint8_t b[8];
        put_u64(b, arr[i]);
        size_t n = 8 - (size_t)skip < len ? 8 - (size_t)skip : len;
        memcpy(out, b + skip, n);
        out += n;
        offset += n;
        len -= n;
    }
}

int rbf_save_range(const rbf *f, uint64_t offset, void *buf, size_t len)
{
    uint64_t size;
    if (!f || (!buf && len))
        return RBF_EINVAL;
    rbf_save_size(f, &size);
    if (offset > size - 8 || len > size - 8 - offset)
        return RBF_ERANGE;
    if (len == 0)
        return RBF_OK;
    if (f->conc)
        rbf__conc_exclusive_begin(f);
    range_state(f, offset, buf, len);
    if (f->conc)
        rbf__conc_exclusive_end(f);
    return RBF_OK;
}

/* fsync the directory holding the file `path_copy` names, so the rename
 * itself is durable.  path_copy is a copy of the path made before the save
 * began (dirname() writes into it): nothing is allocated after the rename,
 * so running out of memory cannot skip this step silently. */
static int sync_parent_dir(char *path_copy)
{
    int fd = open(dirname(path_copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

/* Where a save to `path` goes.  Nothing there: a new file at `path`.  A
 * regular file: that file.  A symlink: the regular file it resolves to (the
 * link stays a link; a dangling link, or one to anything else, is refused).
 * Anything else (directory, device, FIFO, socket) is refused, untouched:
 * RBF_EIO with errno EISDIR for a directory, EEXIST for the rest.  On
 * success *target is the path to replace (malloc'ed), *exists says whether
 * a file is there and *st is its stat. */
static int save_target(const char *path, char **target, int *exists, struct stat *st)
{
    struct stat lst;
    *target = NULL;
    *exists = 0;
    if (lstat(path, &lst) != 0) {
        if (errno != ENOENT)
            return RBF_EIO;
        *target = rbf__strdup(path);
        return *target ? RBF_OK : RBF_ENOMEM;
    }
    char *t;
    if (S_ISLNK(lst.st_mode)) {
        char *r = realpath(path, NULL); /* every link resolved; ENOENT if dangling */
        if (!r)
            return errno == ENOMEM ? RBF_ENOMEM : RBF_EIO;
        t = rbf__strdup(r); /* ours, through the allocator hook; r is libc's */
        rbf__free(r);
        if (!t)
            return RBF_ENOMEM;
        if (stat(t, st) != 0) {
            int e = errno;
            rbf__free(t);
            errno = e;
            return RBF_EIO;
        }
    } else {
        t = rbf__strdup(path);
        if (!t)
            return RBF_ENOMEM;
        *st = lst;
    }
    if (!S_ISREG(st->st_mode)) {
        rbf__free(t);
        errno = S_ISDIR(st->st_mode) ? EISDIR : EEXIST;
        return RBF_EIO;
    }
    *target = t;
    *exists = 1;
    return RBF_OK;
}

/* Create a new temporary file `target`.tmp.XXXXXX with permissions `mode`
 * (the umask applies), like mkstemp but with a mode; its name goes into
 * *tmp (malloc'ed).  Returns the descriptor, or -1 with errno. */
static int create_temp(const char *target, mode_t mode, char **tmp)
{
    static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    size_t n = strlen(target);
    char *t = rbf__malloc(n + sizeof ".tmp.XXXXXX");
    if (!t) {
        errno = ENOMEM;
        return -1;
    }
    memcpy(t, target, n);
    memcpy(t + n, ".tmp.", 5);
    uint64_t r = 0;
    for (int attempt = 0; attempt < 1000; attempt++) {
        uint8_t rnd[6];
        if (getrandom(rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t)sizeof rnd) {
            /* no entropy yet: the name need only be unlikely, O_EXCL makes it safe */
            r = r * 6364136223846793005u + (uint64_t)getpid() + (uint64_t)attempt;
            for (int i = 0; i < 6; i++)
                rnd[i] = (uint8_t)(r >> (8 * i + 16));
        }
        for (int i = 0; i < 6; i++)
            t[n + 5 + (size_t)i] = chars[rnd[i] % (sizeof chars - 1)];
        t[n + 11] = '\0';
        int fd = open(t, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        if (fd >= 0) {
            *tmp = t;
            return fd;
        }
        if (errno != EEXIST)
            break;
    }
    int e = errno;
    rbf__free(t);
    errno = e;
    return -1;
}

int rbf_save(const rbf *f, const char *path)
{
    if (!f || !path || !*path)
        return RBF_EINVAL;
    char *target;
    int exists;
    struct stat old;
    int rc = save_target(path, &target, &exists, &old);
    if (rc)
        return rc;
    char *dir = rbf__strdup(target); /* for sync_parent_dir, allocated up front */
    if (!dir) {
        rbf__free(target);
        return RBF_ENOMEM;
    }
    /* A new file gets 0666 minus the umask, as fopen would create it; an
     * existing one keeps its permissions and, where the process may set
     * them (root), its owner and group. */
    char *tmp;
    int fd = create_temp(target, exists ? (mode_t)0600 : (mode_t)0666, &tmp);
    if (fd < 0) {
        int e = errno;
        rbf__free(target);
        rbf__free(dir);
        errno = e;
        return e == ENOMEM ? RBF_ENOMEM : RBF_EIO;
    }
    save_step(RBF__SAVE_CREATED);
    int e = 0;
    if (exists) {
        if (old.st_uid != geteuid() || old.st_gid != getegid()) {
            /* best effort: where it is not permitted, the file becomes the
             * saver's, as with any program that rewrites a file */
            int ignored = fchown(fd, old.st_uid, old.st_gid);
            (void)ignored;
        }
        if (fchmod(fd, old.st_mode & 07777) != 0) {
            e = errno;
            rc = RBF_EIO;
        }
    }
    FILE *fp = rc ? NULL : fdopen(fd, "wb");
    if (!fp) {
        if (!rc) {
            e = errno;
            rc = RBF_EIO;
        }
        close(fd);
        unlink(tmp);
        rbf__free(tmp);
        rbf__free(target);
        rbf__free(dir);
        errno = e;
        return rc;
    }
    struct sink s = {.fp = fp};
    rc = serialise(f, &s);
    if (!rc && fflush(fp) != 0)
        rc = RBF_EIO;
    if (!rc)
        save_step(RBF__SAVE_WRITTEN);
    if (!rc && fsync(fd) != 0)
        rc = RBF_EIO;
    e = errno;
    if (fclose(fp) != 0 && !rc) {
        rc = RBF_EIO;
        e = errno;
    }
    if (!rc)
        save_step(RBF__SAVE_SYNCED);
    if (!rc && rename(tmp, target) != 0) {
        rc = RBF_EIO;
        e = errno;
    }
    if (rc) {
        unlink(tmp);
        rbf__free(tmp);
        rbf__free(target);
        rbf__free(dir);
        errno = e;
        return rc;
    }
    rbf__free(tmp);
    rbf__free(target);
    save_step(RBF__SAVE_RENAMED);
    (void)sync_parent_dir(dir); /* best effort: the data itself is safe */
    rbf__free(dir);
    save_step(RBF__SAVE_DONE);
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

/* ---- copy
 *
 * A filter of its own with the same configuration, seed, counters and
 * bits.  A concurrent filter is copied through its image, which gathers
 * its per-thread state. */
int rbf_copy(const rbf *f, rbf **out)
{
    if (!out)
        return RBF_EINVAL;
    *out = NULL;
    if (!f)
        return RBF_EINVAL;
    if (f->conc) {
        uint64_t n = 0;
        int rc = rbf_save_size(f, &n);
        void *img = rc == RBF_OK && n <= SIZE_MAX ? rbf__malloc((size_t)n) : NULL;
        if (!img)
            return RBF_ENOMEM;
        rc = rbf_save_buffer(f, img, (size_t)n);
        if (rc == RBF_OK)
            rc = rbf_load_buffer(img, (size_t)n, out);
        rbf__free(img);
        if (rc == RBF_OK && (rc = rbf_set_concurrent(*out, 1)) != RBF_OK) {
            rbf_free(*out);
            *out = NULL;
        }
        return rc;
    }
    struct rbf *g;
    int rc = rbf__alloc(&f->cfg, &g);
    if (rc != RBF_OK)
        return rc;
    /* only the words ever written: an untouched array stays unfaulted */
    if (f->b)
        memcpy(g->active, f->active, (size_t)f->nwords * sizeof(uint64_t));
    if (f->frozen && f->fb)
        memcpy(g->frozen, f->frozen, (size_t)f->nwords * sizeof(uint64_t));
    g->b = f->b;
    g->fb = f->fb;
    g->c = f->c;
    g->cycles = f->cycles;
    g->inserts = f->inserts;
    g->reported_new = f->reported_new;
    *out = g;
    return RBF_OK;
}
