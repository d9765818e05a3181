/*
 * bench_filter.c -- `rbf bench filter`: test-and-insert and contains
 * throughput of librbf, side by side with libbloom (Debian libbloom-dev 1.6)
 * and with the machine's own limit for the same memory access pattern, in
 * one process and one run.
 *
 * What is measured, per filter size (default 128 KiB, 4 MiB, 128 MiB):
 *
 *   test-and-insert   rbf_insert (one key per call), rbf_insert_keys (a batch
 *                     per call) and libbloom's bloom_add, over FRESH random
 *                     16-byte keys (every key is new; hashing included);
 *   contains          rbf_contains, rbf_contains_keys and bloom_check, over
 *                     fresh keys (absent: the common case of a filter in a
 *                     packet path) and over keys drawn from a set inserted
 *                     beforehand (present: all k bits are read);
 *   limit             k independent random cache-line accesses per
 *                     operation over a buffer of the same size, with
 *                     precomputed indices and nothing else to do: read-
 *                     modify-write (the pattern of an insertion) and read
 *                     only.  Six kernels (a plain loop, or prefetching 16
 *                     operations ahead into L1 or into L2; 4 KiB pages or
 *                     transparent huge pages) are run and the fastest is
 *                     the limit: the best the memory system does.
 *
 * Method: each measurement is `reps` timed rounds of `keys` operations after
 * one warm-up round; the rounds of all measurements of a size are
 * interleaved (round r of every measurement, then round r+1), so a burst of
 * load from elsewhere hits them alike (--sequential: each measurement's
 * rounds back to back instead); the median round is reported.  A
 * round runs in chunks of `chunk` operations (4096 unless --chunk says
 * otherwise): the chunk's keys (or indices)
 * are generated outside the timed region, so only the filter's work is
 * timed, with its input hot in cache as in a packet path.
 *
 * Filters: rbf is sigma-bounded with sigma = half of its bits (one-phase,
 * colliding, non-retaining unless options say otherwise), so it keeps
 * recycling under fresh keys; the recycles happen inside the timed region,
 * as they would in use.  libbloom is sized by its bit count: bits per entry
 * b with ceil(b ln 2) = k gives its k, and entries = bits / b; it is reset
 * (outside the timed region) before it would pass `entries`, where it is
 * about half full like rbf at sigma.  The contains rows use a second filter
 * of each library holding the same prefilled keys, so both are at the same
 * fill (reported).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "bench.h"
#include "cli_util.h"
#include "rbf.h"

#ifdef RBF_HAVE_LIBBLOOM
#include <bloom.h>
#endif

#define CMD "bench filter"
#define CHUNK 4096u            /* operations per timed chunk, by default */
#define MAX_CHUNK (16u << 20)  /* --chunk at most */
#define MAX_CHUNK_POSITIONS (64u << 20) /* --chunk x --hashes at most (512 MiB of indices) */
#define KEY_LEN 16u            /* bytes per key */
#define LIMIT_AHEAD 16u        /* prefetch distance of the limit kernels, in operations */
#define MAX_SIZES 16
#define MAX_REPS 1000

/* ---- keys: counter-based, so that any key of a stream can be regenerated
 * (the "present" queries redraw prefilled keys by index). */

#define GOLDEN RBF_GOLDEN

static inline uint64_t mix64(uint64_t z) { return rbf_splitmix64_mix(z); }

/* Key number j of stream `stream` (16 bytes). */
static inline void make_key(uint8_t *out, uint64_t stream, uint64_t j)
{
    uint64_t a = mix64(stream + (2 * j + 1) * GOLDEN);
    uint64_t b = mix64(stream + (2 * j + 2) * GOLDEN);
    memcpy(out, &a, 8);
    memcpy(out + 8, &b, 8);
}

static inline uint64_t rng_next(uint64_t *s)
{
    *s += GOLDEN;
    return mix64(*s);
}

static inline uint64_t below(uint64_t x, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)x * n) >> 64);
}


/* ---- the measurements */

enum op_kind {
    OP_INSERT,
    OP_CONTAINS_ABSENT,
    OP_CONTAINS_PRESENT,
    OP_LIMIT_RMW,
    OP_LIMIT_READ,
    OP_LIMIT1_RMW,  /* one random line per operation (the blocked layout's pattern) */
    OP_LIMIT1_READ,
    OP_HASH,        /* rbf_hash of a 16-byte key, nothing else */
    OP_CALL1_RMW    /* per key: a call to rbf_hash, then one line RMW at the hash's line,
                       no look-ahead: the floor of one rbf_insert call per key */
};

enum impl_kind {
    IMPL_RBF_SINGLE,
    IMPL_RBF_BATCH,
    IMPL_RBFB_SINGLE, /* the blocked layout */
    IMPL_RBFB_BATCH,
    IMPL_HASH,
    IMPL_LIBBLOOM,
    /* the limit kernels: loop / prefetch into L1 / prefetch into L2, on 4 KiB
     * pages or huge pages (keep IMPL_LIMIT_FIRST first) */
    IMPL_LIMIT_FIRST,
    IMPL_LIMIT_PLAIN_4K = IMPL_LIMIT_FIRST,
    IMPL_LIMIT_L1_4K,
    IMPL_LIMIT_L2_4K,
    IMPL_LIMIT_PLAIN_HUGE,
    IMPL_LIMIT_L1_HUGE,
    IMPL_LIMIT_L2_HUGE
};

typedef struct measure {
    enum op_kind op;
    enum impl_kind impl;
    const char *op_name;
    const char *impl_name;
    double *rounds; /* ns per op of each timed round */
    double median, lo, hi;
} measure;

/* A buffer for the limit kernels: 4 KiB pages from calloc, or (Linux) an
 * anonymous mapping advised to use transparent huge pages. */
typedef struct limit_buf {
    uint64_t *w;
    size_t bytes;
    int mapped;
    int huge; /* huge pages requested (and the kernel allowed the advice) */
} limit_buf;

typedef struct ctx {
    /* options */
    uint64_t keys;
    unsigned reps;
    size_t batch;
    unsigned k;
    uint64_t seed;
    unsigned phases;
    rbf_hashing hashing;
    rbf_recycle_mode recycle;
    uint64_t fill_cap;
    double prefill; /* insert filters: this fraction of libbloom's entries, before timing */
    int json;
    int sequential; /* each measurement's rounds back to back instead of interleaved */
    int flat, blocked; /* which layouts of rbf are measured */
    size_t chunk;   /* operations per timed chunk (keys generated before each) */
    /* per size */
    uint64_t bytes;
    rbf *f;  /* test-and-insert filter */
    rbf *fc; /* contains filter, prefilled */
    rbf *fb, *fbc; /* the same two with the blocked layout */
    uint64_t fill_keys;
#ifdef RBF_HAVE_LIBBLOOM
    struct bloom bl, blc;
    int have_bl, have_blc;
    uint64_t bl_since_reset;
    uint64_t bl_resets;
#endif
    limit_buf lim4k, limhuge;
    uint64_t lim_words;
    /* chunk buffers */
    uint8_t *keybuf;
    const void **keyp;
    size_t *lens;
    uint32_t *idx;
    /* streams */
    uint64_t fresh_stream, fresh_next;
    uint64_t fill_stream;
    uint64_t rng;
    volatile uint64_t sink;
} ctx;

static int limit_alloc(limit_buf *b, size_t bytes, int huge)
{
    memset(b, 0, sizeof *b);
    b->bytes = bytes;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (huge) {
        void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return -1;
        b->w = p;
        b->mapped = 1;
        b->huge = madvise(p, bytes, MADV_HUGEPAGE) == 0;
        memset(b->w, 0, bytes); /* fault every page in now, outside timing */
        return 0;
    }
#else
    (void)huge;
#endif
    b->w = calloc(bytes / 8, 8);
    if (!b->w)
        return -1;
    memset(b->w, 0, bytes);
    return 0;
}

static void limit_free(limit_buf *b)
{
#if defined(__linux__)
    if (b->mapped) {
        munmap(b->w, b->bytes);
        b->w = NULL;
        return;
    }
#endif
    free(b->w);
    b->w = NULL;
}

/* Fill the chunk's key buffer with n fresh keys. */
static void fresh_keys(ctx *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        make_key(c->keybuf + i * KEY_LEN, c->fresh_stream, c->fresh_next++);
}

/* n keys drawn uniformly from the prefilled set. */
static void present_keys(ctx *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        make_key(c->keybuf + i * KEY_LEN, c->fill_stream, below(rng_next(&c->rng), c->fill_keys));
}

/* n*k random word indices for the limit kernels. */
static void limit_indices(ctx *c, size_t n)
{
    for (size_t i = 0; i < n * c->k; i++)
        c->idx[i] = (uint32_t)below(rng_next(&c->rng), c->lim_words);
}

/* n random words, one in each of n random lines (the one-line kernels). */
static void limit1_indices(ctx *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t x = rng_next(&c->rng);
        c->idx[i] = (uint32_t)(below(x, c->lim_words / 8) * 8 + (x & 7));
    }
}

/* The limit kernels: k independent word accesses per operation at the
 * precomputed indices.  The bit set depends on nothing loaded, so the
 * accesses of one and of successive operations overlap freely. */
static void limit_rmw_plain(uint64_t *w, const uint32_t *idx, size_t n, unsigned k)
{
    for (size_t i = 0; i < n * k; i++)
        w[idx[i]] |= 1ULL << (i & 63);
}

/* Prefetching LIMIT_AHEAD operations ahead, into L1 (locality 3) or L2
 * (locality 2); the locality must be a constant, hence the macro. */
#define LIMIT_RMW_AHEAD(name, loc)                                                   \
    static void name(uint64_t *w, const uint32_t *idx, size_t n, unsigned k)        \
    {                                                                                \
        for (size_t i = 0; i < n; i++) {                                             \
            if (i + LIMIT_AHEAD < n)                                                 \
                for (unsigned j = 0; j < k; j++)                                     \
                    __builtin_prefetch(&w[idx[(i + LIMIT_AHEAD) * k + j]], 1, loc); \
            for (unsigned j = 0; j < k; j++)                                         \
                w[idx[i * k + j]] |= 1ULL << j;                                      \
        }                                                                            \
    }
LIMIT_RMW_AHEAD(limit_rmw_l1, 3)
LIMIT_RMW_AHEAD(limit_rmw_l2, 2)

static uint64_t limit_read_plain(const uint64_t *w, const uint32_t *idx, size_t n, unsigned k)
{
    uint64_t acc = 0;
    for (size_t i = 0; i < n * k; i++)
        acc ^= w[idx[i]];
    return acc;
}

#define LIMIT_READ_AHEAD(name, loc)                                                       \
    static uint64_t name(const uint64_t *w, const uint32_t *idx, size_t n, unsigned k)   \
    {                                                                                     \
        uint64_t acc = 0;                                                                 \
        for (size_t i = 0; i < n; i++) {                                                  \
            if (i + LIMIT_AHEAD < n)                                                      \
                for (unsigned j = 0; j < k; j++)                                          \
                    __builtin_prefetch(&w[idx[(i + LIMIT_AHEAD) * k + j]], 0, loc);      \
            for (unsigned j = 0; j < k; j++)                                              \
                acc ^= w[idx[i * k + j]];                                                 \
        }                                                                                 \
        return acc;                                                                       \
    }
LIMIT_READ_AHEAD(limit_read_l1, 3)
LIMIT_READ_AHEAD(limit_read_l2, 2)

#ifdef RBF_HAVE_LIBBLOOM
/* libbloom's bits per entry for k hashes: it takes ceil(bpe ln 2) hashes;
 * bpe = (k - 0.5) / ln 2 is in the middle of the range that gives k. */
static double bloom_bpe(unsigned k)
{
    return ((double)k - 0.5) / log(2.0);
}

static int bloom_make(struct bloom *b, uint64_t bits, unsigned k)
{
    double bpe = bloom_bpe(k);
    double entries = floor((double)bits / bpe);
    double err = exp(-bpe * log(2.0) * log(2.0));
    if (entries < 1000 || entries > 2147483647.0)
        return -1;
    if (bloom_init(b, (int)entries, err) != 0)
        return -1;
    return 0;
}
#endif

/* One chunk of n operations of measurement m: prepare (untimed), then time. */
static double run_chunk(ctx *c, const measure *m, size_t n)
{
    double t0, t1;
    int64_t r = 0;
    unsigned k = c->k;
    switch (m->op) {
    case OP_INSERT: fresh_keys(c, n); break;
    case OP_CONTAINS_ABSENT: fresh_keys(c, n); break;
    case OP_CONTAINS_PRESENT: present_keys(c, n); break;
    case OP_LIMIT_RMW:
    case OP_LIMIT_READ: limit_indices(c, n); break;
    case OP_LIMIT1_RMW:
    case OP_LIMIT1_READ:
        limit1_indices(c, n);
        k = 1;
        break;
    case OP_HASH: fresh_keys(c, n); break;
    case OP_CALL1_RMW: fresh_keys(c, n); break;
    }
#ifdef RBF_HAVE_LIBBLOOM
    /* libbloom is reset before it passes its design entries: outside the
     * timed region when the whole chunk then fits (the default chunk always
     * does), else inside it, where the insert loop below resets it */
    if (m->op == OP_INSERT && m->impl == IMPL_LIBBLOOM && n <= (uint64_t)c->bl.entries &&
        c->bl_since_reset + n > (uint64_t)c->bl.entries) {
        bloom_reset(&c->bl);
        c->bl_since_reset = 0;
        c->bl_resets++;
    }
#endif
    const uint64_t *lw = NULL;
    if (m->impl >= IMPL_LIMIT_FIRST)
        lw = m->impl < IMPL_LIMIT_PLAIN_HUGE ? c->lim4k.w : c->limhuge.w;
    t0 = cli_wall_seconds();
    switch (m->impl) {
    case IMPL_RBF_SINGLE:
        if (m->op == OP_INSERT) {
            for (size_t i = 0; i < n; i++)
                r += rbf_insert(c->f, c->keybuf + i * KEY_LEN, KEY_LEN);
        } else {
            for (size_t i = 0; i < n; i++)
                r += rbf_contains(c->fc, c->keybuf + i * KEY_LEN, KEY_LEN);
        }
        break;
    case IMPL_RBF_BATCH:
        for (size_t i = 0; i < n; i += c->batch) {
            size_t b = n - i < c->batch ? n - i : c->batch;
            if (m->op == OP_INSERT)
                r += rbf_insert_keys(c->f, c->keyp + i, c->lens + i, b, NULL);
            else
                r += rbf_contains_keys(c->fc, c->keyp + i, c->lens + i, b, NULL);
        }
        break;
    case IMPL_RBFB_SINGLE:
        if (m->op == OP_INSERT) {
            for (size_t i = 0; i < n; i++)
                r += rbf_insert(c->fb, c->keybuf + i * KEY_LEN, KEY_LEN);
        } else {
            for (size_t i = 0; i < n; i++)
                r += rbf_contains(c->fbc, c->keybuf + i * KEY_LEN, KEY_LEN);
        }
        break;
    case IMPL_RBFB_BATCH:
        for (size_t i = 0; i < n; i += c->batch) {
            size_t b = n - i < c->batch ? n - i : c->batch;
            if (m->op == OP_INSERT)
                r += rbf_insert_keys(c->fb, c->keyp + i, c->lens + i, b, NULL);
            else
                r += rbf_contains_keys(c->fbc, c->keyp + i, c->lens + i, b, NULL);
        }
        break;
    case IMPL_HASH:
        for (size_t i = 0; i < n; i++)
            r ^= (int64_t)(rbf_hash(c->fb ? c->fb : c->f, c->keybuf + i * KEY_LEN, KEY_LEN) >> 1);
        break;
    case IMPL_LIBBLOOM:
#ifdef RBF_HAVE_LIBBLOOM
        if (m->op == OP_INSERT) {
            for (size_t i = 0; i < n;) {
                uint64_t room = (uint64_t)c->bl.entries - c->bl_since_reset;
                if (room == 0) { /* only with a chunk larger than libbloom's entries */
                    bloom_reset(&c->bl);
                    c->bl_since_reset = 0;
                    c->bl_resets++;
                    room = (uint64_t)c->bl.entries;
                }
                size_t seg = n - i < room ? n - i : (size_t)room;
                for (size_t j = i; j < i + seg; j++)
                    r += bloom_add(&c->bl, c->keybuf + j * KEY_LEN, (int)KEY_LEN);
                c->bl_since_reset += seg;
                i += seg;
            }
        } else {
            for (size_t i = 0; i < n; i++)
                r += bloom_check(&c->blc, c->keybuf + i * KEY_LEN, (int)KEY_LEN);
        }
#endif
        break;
    case IMPL_LIMIT_PLAIN_4K:
    case IMPL_LIMIT_PLAIN_HUGE:
        if (m->op == OP_CALL1_RMW) {
            const rbf *hf = c->fb ? c->fb : c->f;
            uint64_t *w = (uint64_t *)(uintptr_t)lw, lines = c->lim_words / 8;
            for (size_t i = 0; i < n; i++) {
                uint64_t h = rbf_hash(hf, c->keybuf + i * KEY_LEN, KEY_LEN);
                w[below(mix64(h + RBF_GOLDEN), lines) * 8 + (h & 7)] |= 1ULL << (h >> 58);
            }
        } else if (m->op == OP_LIMIT_RMW || m->op == OP_LIMIT1_RMW)
            limit_rmw_plain((uint64_t *)(uintptr_t)lw, c->idx, n, k);
        else
            r = (int64_t)limit_read_plain(lw, c->idx, n, k);
        break;
    case IMPL_LIMIT_L1_4K:
    case IMPL_LIMIT_L1_HUGE:
        if (m->op == OP_LIMIT_RMW || m->op == OP_LIMIT1_RMW)
            limit_rmw_l1((uint64_t *)(uintptr_t)lw, c->idx, n, k);
        else
            r = (int64_t)limit_read_l1(lw, c->idx, n, k);
        break;
    case IMPL_LIMIT_L2_4K:
    case IMPL_LIMIT_L2_HUGE:
        if (m->op == OP_LIMIT_RMW || m->op == OP_LIMIT1_RMW)
            limit_rmw_l2((uint64_t *)(uintptr_t)lw, c->idx, n, k);
        else
            r = (int64_t)limit_read_l2(lw, c->idx, n, k);
        break;
    }
    t1 = cli_wall_seconds();
    c->sink += (uint64_t)r;
    return (t1 - t0) * 1e9; /* ns */
}

static double run_round(ctx *c, const measure *m)
{
    double total = 0;
    for (uint64_t done = 0; done < c->keys;) {
        size_t n = c->keys - done < c->chunk ? (size_t)(c->keys - done) : c->chunk;
        total += run_chunk(c, m, n);
        done += n;
    }
    return total / (double)c->keys;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void summarise(measure *m, unsigned reps)
{
    double *s = malloc(reps * sizeof *s);
    if (!s) {
        m->median = m->lo = m->hi = m->rounds[0];
        return;
    }
    memcpy(s, m->rounds, reps * sizeof *s);
    qsort(s, reps, sizeof *s, cmp_double);
    m->median = reps % 2 ? s[reps / 2] : (s[reps / 2 - 1] + s[reps / 2]) / 2;
    m->lo = s[0];
    m->hi = s[reps - 1];
    free(s);
}

/* ---- setup of one size */

static int make_rbf(const ctx *c, uint64_t bits, rbf_layout layout, rbf **out)
{
    rbf_config cfg;
    rbf_config_init(&cfg);
    cfg.bits = bits;
    cfg.hashes = c->k;
    cfg.phases = c->phases;
    cfg.hashing = c->hashing;
    cfg.recycle = c->recycle;
    cfg.sigma = (c->phases == 2 ? bits / 2 : bits) / 2;
    cfg.seed = c->seed ^ 0x5eed5eed5eed5eedULL;
    cfg.layout = layout;
    return rbf_new(&cfg, out);
}

static double rbf_fill(const rbf *f)
{
    rbf_stats st;
    rbf_get_stats(f, &st);
    return (double)st.bits_set / (double)st.bits;
}

/* Prefill the insert filters with n fresh keys (the same for both
 * libraries), untimed: so that they are measured mid-cycle. */
static void prefill_insert(ctx *c, uint64_t n)
{
    for (uint64_t done = 0; done < n;) {
        size_t b = n - done < c->chunk ? (size_t)(n - done) : c->chunk;
        fresh_keys(c, b);
        if (c->f)
            rbf_insert_keys(c->f, c->keyp, c->lens, b, NULL);
        if (c->fb)
            rbf_insert_keys(c->fb, c->keyp, c->lens, b, NULL);
#ifdef RBF_HAVE_LIBBLOOM
        if (c->have_bl)
            for (size_t i = 0; i < b; i++)
                bloom_add(&c->bl, c->keybuf + i * KEY_LEN, (int)KEY_LEN);
        c->bl_since_reset += b;
#endif
        done += b;
    }
}

/* Prefill the contains filters with the same fill_keys keys. */
static void prefill(ctx *c)
{
    uint8_t key[KEY_LEN];
    for (uint64_t j = 0; j < c->fill_keys; j++) {
        make_key(key, c->fill_stream, j);
        if (c->fc)
            rbf_insert(c->fc, key, KEY_LEN);
        if (c->fbc)
            rbf_insert(c->fbc, key, KEY_LEN);
#ifdef RBF_HAVE_LIBBLOOM
        if (c->have_blc)
            bloom_add(&c->blc, key, (int)KEY_LEN);
#endif
    }
}

#ifdef RBF_HAVE_LIBBLOOM
/* Fraction of set bits of a libbloom filter.  Reads its bit array, which
 * its header calls private: done once, outside any timing, only to report
 * that both contains filters are at the same fill. */
static double bloom_fill(const struct bloom *b)
{
    uint64_t set = 0;
    for (int i = 0; i < b->bytes; i++)
        set += (uint64_t)__builtin_popcount(b->bf[i]);
    return (double)set / (double)b->bits;
}
#endif

typedef struct size_result {
    uint64_t bytes;
    uint64_t rbf_bits, rbf_sigma;
    int64_t bloom_bits, bloom_hashes, bloom_entries;
    uint64_t bloom_resets, rbf_cycles, rbfb_cycles;
    double fill_rbf, fill_bloom, fill_rbfb, ins_fill_rbfb;
    uint64_t fill_keys;
    uint64_t prefill_keys;        /* fresh keys put into the insert filters before timing */
    double ins_fill_rbf, ins_fill_bloom; /* insert filters' fill at the end */
    int huge_ok;
    const char *path_flat, *path_blocked; /* rbf_path of the filters measured */
    measure *ms;
    size_t nms;
} size_result;

static void add_measure(measure *ms, size_t *n, enum op_kind op, enum impl_kind impl,
                        const char *op_name, const char *impl_name)
{
    ms[*n].op = op;
    ms[*n].impl = impl;
    ms[*n].op_name = op_name;
    ms[*n].impl_name = impl_name;
    (*n)++;
}

static int run_size(ctx *c, size_result *sr)
{
    uint64_t bits = c->bytes * 8;
    int rc = 0;
    memset(sr, 0, sizeof *sr);
    sr->bytes = c->bytes;
    c->f = c->fc = c->fb = c->fbc = NULL;
    if ((c->flat && (make_rbf(c, bits, RBF_LAYOUT_FLAT, &c->f) != RBF_OK ||
                     make_rbf(c, bits, RBF_LAYOUT_FLAT, &c->fc) != RBF_OK)) ||
        (c->blocked && (make_rbf(c, bits, RBF_LAYOUT_BLOCKED, &c->fb) != RBF_OK ||
                        make_rbf(c, bits, RBF_LAYOUT_BLOCKED, &c->fbc) != RBF_OK))) {
        rc = cli_fail(CMD, "cannot create a %llu-bit rbf filter", (unsigned long long)bits);
        goto out;
    }
    rbf_stats st;
    rbf_config cfg;
    rbf_get_config(c->f ? c->f : c->fb, &cfg);
    sr->rbf_bits = cfg.bits;
    sr->rbf_sigma = cfg.sigma;
    sr->path_flat = c->f ? rbf_path(c->f) : "";
    sr->path_blocked = c->fb ? rbf_path(c->fb) : "";
    c->lim_words = c->bytes / 8;
    if (limit_alloc(&c->lim4k, (size_t)c->bytes, 0) || limit_alloc(&c->limhuge, (size_t)c->bytes, 1)) {
        rc = cli_fail(CMD, "cannot allocate %llu bytes for the limit kernels",
                      (unsigned long long)c->bytes);
        goto out;
    }
    sr->huge_ok = c->limhuge.huge;
    /* the contains filters hold half of libbloom's design entries (capped) */
    c->fill_keys = (uint64_t)((double)bits / ((double)c->k / log(2.0)) / 2);
#ifdef RBF_HAVE_LIBBLOOM
    c->have_bl = c->have_blc = 0;
    c->bl_since_reset = c->bl_resets = 0;
    if (bits <= 2147483647ULL && bloom_make(&c->bl, bits, c->k) == 0) {
        c->have_bl = 1;
        if (bloom_make(&c->blc, bits, c->k) == 0)
            c->have_blc = 1;
    }
    if (c->have_bl) {
        sr->bloom_bits = c->bl.bits;
        sr->bloom_hashes = c->bl.hashes;
        sr->bloom_entries = c->bl.entries;
        c->fill_keys = (uint64_t)c->bl.entries / 2;
        if ((unsigned)c->bl.hashes != c->k) {
            rc = cli_fail(CMD, "libbloom chose %d hashes, not %u", c->bl.hashes, c->k);
            goto out;
        }
    } else {
        sr->bloom_bits = sr->bloom_hashes = sr->bloom_entries = -1;
    }
#else
    sr->bloom_bits = sr->bloom_hashes = sr->bloom_entries = -1;
#endif
    if (c->fill_keys > c->fill_cap)
        c->fill_keys = c->fill_cap;
    if (c->fill_keys == 0)
        c->fill_keys = 1;
    sr->fill_keys = c->fill_keys;
    prefill(c);
    {
        double entries = (double)bits / (((double)c->k - 0.5) / log(2.0));
#ifdef RBF_HAVE_LIBBLOOM
        if (c->have_bl)
            entries = c->bl.entries;
#endif
        sr->prefill_keys = (uint64_t)(c->prefill * entries);
        prefill_insert(c, sr->prefill_keys);
    }
    sr->fill_rbf = c->fc ? rbf_fill(c->fc) : -1;
    sr->fill_rbfb = c->fbc ? rbf_fill(c->fbc) : -1;
    sr->fill_bloom = -1;
#ifdef RBF_HAVE_LIBBLOOM
    if (c->have_blc)
        sr->fill_bloom = bloom_fill(&c->blc);
#endif

    measure *ms = calloc(64, sizeof *ms);
    size_t nm = 0;
    if (!ms) {
        rc = cli_fail(CMD, "out of memory");
        goto out;
    }
    int bl_ok = 0;
#ifdef RBF_HAVE_LIBBLOOM
    bl_ok = c->have_bl && c->have_blc;
#endif
    static const char *ins = "test-and-insert", *cab = "contains (absent)",
                      *cpr = "contains (present)";
    if (c->flat) {
        add_measure(ms, &nm, OP_INSERT, IMPL_RBF_SINGLE, ins, "rbf_insert");
        add_measure(ms, &nm, OP_INSERT, IMPL_RBF_BATCH, ins, "rbf_insert_keys");
    }
    if (c->blocked) {
        add_measure(ms, &nm, OP_INSERT, IMPL_RBFB_SINGLE, ins, "rbf_insert blocked");
        add_measure(ms, &nm, OP_INSERT, IMPL_RBFB_BATCH, ins, "rbf_insert_keys blocked");
    }
    if (bl_ok)
        add_measure(ms, &nm, OP_INSERT, IMPL_LIBBLOOM, ins, "libbloom bloom_add");
    static const char *const lim_rmw[] = {
        "limit: k line RMW, loop, 4K",  "limit: k line RMW, prefetch L1, 4K",
        "limit: k line RMW, prefetch L2, 4K", "limit: k line RMW, loop, huge",
        "limit: k line RMW, prefetch L1, huge", "limit: k line RMW, prefetch L2, huge"};
    static const char *const lim_read[] = {
        "limit: k line read, loop, 4K",  "limit: k line read, prefetch L1, 4K",
        "limit: k line read, prefetch L2, 4K", "limit: k line read, loop, huge",
        "limit: k line read, prefetch L1, huge", "limit: k line read, prefetch L2, huge"};
    for (int v = 0; v < 6; v++)
        add_measure(ms, &nm, OP_LIMIT_RMW, (enum impl_kind)(IMPL_LIMIT_FIRST + v), ins, lim_rmw[v]);
    static const char *const lim1_rmw[] = {
        "limit: 1 line RMW, loop, 4K",  "limit: 1 line RMW, prefetch L1, 4K",
        "limit: 1 line RMW, prefetch L2, 4K", "limit: 1 line RMW, loop, huge",
        "limit: 1 line RMW, prefetch L1, huge", "limit: 1 line RMW, prefetch L2, huge"};
    static const char *const lim1_read[] = {
        "limit: 1 line read, loop, 4K",  "limit: 1 line read, prefetch L1, 4K",
        "limit: 1 line read, prefetch L2, 4K", "limit: 1 line read, loop, huge",
        "limit: 1 line read, prefetch L1, huge", "limit: 1 line read, prefetch L2, huge"};
    if (c->blocked) {
        for (int v = 0; v < 6; v++)
            add_measure(ms, &nm, OP_LIMIT1_RMW, (enum impl_kind)(IMPL_LIMIT_FIRST + v), ins,
                        lim1_rmw[v]);
        add_measure(ms, &nm, OP_HASH, IMPL_HASH, "hash", "rbf_hash");
        add_measure(ms, &nm, OP_CALL1_RMW, IMPL_LIMIT_PLAIN_4K, ins, "floor: rbf_hash + 1 line, 4K");
        add_measure(ms, &nm, OP_CALL1_RMW, IMPL_LIMIT_PLAIN_HUGE, ins,
                    "floor: rbf_hash + 1 line, huge");
    }
    for (int pass = 0; pass < 2; pass++) {
        enum op_kind op = pass ? OP_CONTAINS_PRESENT : OP_CONTAINS_ABSENT;
        const char *nmo = pass ? cpr : cab;
        if (c->flat) {
            add_measure(ms, &nm, op, IMPL_RBF_SINGLE, nmo, "rbf_contains");
            add_measure(ms, &nm, op, IMPL_RBF_BATCH, nmo, "rbf_contains_keys");
        }
        if (c->blocked) {
            add_measure(ms, &nm, op, IMPL_RBFB_SINGLE, nmo, "rbf_contains blocked");
            add_measure(ms, &nm, op, IMPL_RBFB_BATCH, nmo, "rbf_contains_keys blocked");
        }
        if (bl_ok && !pass)
            add_measure(ms, &nm, op, IMPL_LIBBLOOM, nmo, "libbloom bloom_check");
    }
    if (bl_ok)
        add_measure(ms, &nm, OP_CONTAINS_PRESENT, IMPL_LIBBLOOM, cpr, "libbloom bloom_check");
    for (int v = 0; v < 6; v++)
        add_measure(ms, &nm, OP_LIMIT_READ, (enum impl_kind)(IMPL_LIMIT_FIRST + v), "contains",
                    lim_read[v]);
    if (c->blocked)
        for (int v = 0; v < 6; v++)
            add_measure(ms, &nm, OP_LIMIT1_READ, (enum impl_kind)(IMPL_LIMIT_FIRST + v),
                        "contains", lim1_read[v]);
    sr->ms = ms;
    sr->nms = nm;
    for (size_t i = 0; i < nm; i++) {
        ms[i].rounds = calloc(c->reps, sizeof(double));
        if (!ms[i].rounds) {
            rc = cli_fail(CMD, "out of memory");
            goto out;
        }
    }
    /* warm-up round (also faults in every page), then interleaved rounds;
     * or (--sequential) each measurement alone, warm-up and rounds back to
     * back, as a harness timing one library at a time would */
    if (c->sequential) {
        for (size_t i = 0; i < nm; i++) {
            (void)run_round(c, &ms[i]);
            for (unsigned r = 0; r < c->reps; r++)
                ms[i].rounds[r] = run_round(c, &ms[i]);
        }
    } else {
        for (size_t i = 0; i < nm; i++)
            (void)run_round(c, &ms[i]);
        for (unsigned r = 0; r < c->reps; r++)
            for (size_t i = 0; i < nm; i++)
                ms[i].rounds[r] = run_round(c, &ms[i]);
    }
    for (size_t i = 0; i < nm; i++)
        summarise(&ms[i], c->reps);
    if (c->f) {
        rbf_get_stats(c->f, &st);
        sr->rbf_cycles = st.cycles;
        sr->ins_fill_rbf = rbf_fill(c->f);
    }
    if (c->fb) {
        rbf_get_stats(c->fb, &st);
        sr->rbfb_cycles = st.cycles;
        sr->ins_fill_rbfb = rbf_fill(c->fb);
    }
    sr->ins_fill_bloom = -1;
#ifdef RBF_HAVE_LIBBLOOM
    if (c->have_bl)
        sr->ins_fill_bloom = bloom_fill(&c->bl);
#endif
#ifdef RBF_HAVE_LIBBLOOM
    sr->bloom_resets = c->bl_resets;
#endif
out:
    rbf_free(c->f);
    rbf_free(c->fc);
    rbf_free(c->fb);
    rbf_free(c->fbc);
    c->f = c->fc = c->fb = c->fbc = NULL;
#ifdef RBF_HAVE_LIBBLOOM
    if (c->have_bl)
        bloom_free(&c->bl);
    if (c->have_blc)
        bloom_free(&c->blc);
    c->have_bl = c->have_blc = 0;
#endif
    limit_free(&c->lim4k);
    limit_free(&c->limhuge);
    return rc;
}

/* ---- reporting */

/* A reference row (a limit kernel or the hash alone), not a filter. */
static int is_limit(const measure *m)
{
    return m->impl >= IMPL_LIMIT_FIRST || m->op == OP_HASH || m->op == OP_CALL1_RMW;
}

static int is_blocked(const measure *m)
{
    return m->impl == IMPL_RBFB_SINGLE || m->impl == IMPL_RBFB_BATCH;
}

/* The fastest limit kernel for op (median ns/op), or 0. */
static double best_limit(const size_result *sr, enum op_kind op, const measure **which)
{
    double best = 0;
    for (size_t i = 0; i < sr->nms; i++) {
        const measure *m = &sr->ms[i];
        if (m->op == op && (best == 0 || m->median < best)) {
            best = m->median;
            if (which)
                *which = m;
        }
    }
    return best;
}

/* libbloom's median for the same operation, or 0. */
static double bloom_ref(const size_result *sr, enum op_kind op)
{
    for (size_t i = 0; i < sr->nms; i++)
        if (sr->ms[i].op == op && sr->ms[i].impl == IMPL_LIBBLOOM)
            return sr->ms[i].median;
    return 0;
}

static enum op_kind limit_of(enum op_kind op)
{
    return op == OP_INSERT || op == OP_LIMIT_RMW ? OP_LIMIT_RMW : OP_LIMIT_READ;
}

/* The limit a row is compared with: k random lines for flat rbf and
 * libbloom; for the blocked layout, one random line plus the measured cost
 * of hashing the key (rbf_hash alone), since a blocked message touches one
 * line and hashes once.  The limit rows are compared with themselves. */
static double row_limit(const size_result *sr, const measure *m)
{
    if (m->op == OP_LIMIT1_RMW || m->op == OP_LIMIT1_READ || m->op == OP_HASH)
        return best_limit(sr, m->op, NULL);
    if (is_blocked(m))
        return best_limit(sr, m->op == OP_INSERT ? OP_LIMIT1_RMW : OP_LIMIT1_READ, NULL) +
               best_limit(sr, OP_HASH, NULL);
    return best_limit(sr, limit_of(m->op), NULL);
}

/* For a blocked row, the flat row of the same operation and kind (single
 * or batched), or 0. */
static double flat_ref(const size_result *sr, const measure *m)
{
    if (!is_blocked(m))
        return 0;
    enum impl_kind want = m->impl == IMPL_RBFB_SINGLE ? IMPL_RBF_SINGLE : IMPL_RBF_BATCH;
    for (size_t i = 0; i < sr->nms; i++)
        if (sr->ms[i].op == m->op && sr->ms[i].impl == want)
            return sr->ms[i].median;
    return 0;
}

static const char *size_label(uint64_t bytes, char *buf, size_t cap)
{
    if (bytes % (1ULL << 30) == 0)
        snprintf(buf, cap, "%llu GiB", (unsigned long long)(bytes >> 30));
    else if (bytes % (1ULL << 20) == 0)
        snprintf(buf, cap, "%llu MiB", (unsigned long long)(bytes >> 20));
    else if (bytes % 1024 == 0)
        snprintf(buf, cap, "%llu KiB", (unsigned long long)(bytes >> 10));
    else
        snprintf(buf, cap, "%llu B", (unsigned long long)bytes);
    return buf;
}

/* ---- the processor: its model name and the flags of /proc/cpuinfo that
 * choose a path (Linux; empty elsewhere) */

static const char *const CPU_FLAGS[] = {"sse4_2", "popcnt", "bmi2", "avx2", "avx512f", "avx512dq",
                                        "avx512cd", "avx512_vpopcntdq", "asimd", "sve", "vx"};

typedef struct cpu_info {
    char model[128];
    char flags[256]; /* those of CPU_FLAGS present, space-separated */
} cpu_info;

static void cpu_read(cpu_info *ci)
{
    ci->model[0] = ci->flags[0] = 0;
    FILE *fp = fopen("/proc/cpuinfo", "r");
    if (!fp)
        return;
    char line[8192], vendor[64] = "";
    int have_flags = 0;
    while (fgets(line, sizeof line, fp)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        size_t klen = (size_t)(colon - line);
        while (klen && (line[klen - 1] == ' ' || line[klen - 1] == '\t'))
            klen--;
        char *val = colon + 1;
        while (*val == ' ')
            val++;
        val[strcspn(val, "\n")] = 0;
        /* x86: "model name"; ARM64: "CPU part" (no name); s390x:
         * "vendor_id" alone */
        if (!ci->model[0] && ((klen == 10 && !strncmp(line, "model name", 10)) ||
                              (klen == 8 && !strncmp(line, "CPU part", 8))))
            snprintf(ci->model, sizeof ci->model, "%s", val);
        if (!vendor[0] && klen == 9 && !strncmp(line, "vendor_id", 9))
            snprintf(vendor, sizeof vendor, "%s", val);
        /* x86: "flags"; ARM64: "Features"; s390x: "features" */
        if (!have_flags && ((klen == 5 && !strncmp(line, "flags", 5)) ||
                            (klen == 8 && (!strncmp(line, "Features", 8) ||
                                           !strncmp(line, "features", 8))))) {
            have_flags = 1;
            for (size_t i = 0; i < sizeof CPU_FLAGS / sizeof CPU_FLAGS[0]; i++) {
                size_t n = strlen(CPU_FLAGS[i]);
                for (const char *p = val; (p = strstr(p, CPU_FLAGS[i])) != NULL; p += n)
                    if ((p == val || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0)) {
                        size_t used = strlen(ci->flags);
                        snprintf(ci->flags + used, sizeof ci->flags - used, "%s%s",
                                 used ? " " : "", CPU_FLAGS[i]);
                        break;
                    }
            }
        }
    }
    fclose(fp);
    if (!ci->model[0])
        snprintf(ci->model, sizeof ci->model, "%s", vendor);
}

/* The switches of the paths set in the environment, space-separated. */
static void path_env(char *buf, size_t cap)
{
    static const char *const vars[] = {"RBF_NO_SIMD", "RBF_NO_AVX2", "RBF_NO_AVX512"};
    buf[0] = 0;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i])) {
            size_t used = strlen(buf);
            snprintf(buf + used, cap - used, "%s%s=%s", used ? " " : "", vars[i], getenv(vars[i]));
        }
}

/* The path of a row: the filter's for rbf's rows, "C" for libbloom (as
 * Debian builds it), "-" for the reference rows. */
static const char *row_path(const size_result *sr, const measure *m)
{
    switch (m->impl) {
    case IMPL_RBF_SINGLE:
    case IMPL_RBF_BATCH: return sr->path_flat;
    case IMPL_RBFB_SINGLE:
    case IMPL_RBFB_BATCH: return sr->path_blocked;
    case IMPL_LIBBLOOM: return "C";
    default: return "-";
    }
}

static void print_table(const ctx *c, const size_result *srs, size_t nsz, double load0, double load1)
{
    printf("rbf bench filter: k = %u, %u-byte random keys, %llu operations per round, "
           "median of %u rounds after 1 warm-up (%s), batch %zu, keys generated per chunk of %zu\n",
           c->k, KEY_LEN, (unsigned long long)c->keys, c->reps,
           c->sequential ? "each row's rounds back to back" : "rounds of all rows interleaved",
           c->batch, c->chunk);
    printf("rbf: %s, %s, %s, %u phase%s, sigma = bits per filter / 2; load average %.2f at start, "
           "%.2f at end\n",
           c->flat && c->blocked ? "flat and blocked layouts" : c->flat ? "flat layout" : "blocked layout",
           cli_hashing_name(c->hashing == RBF_NON_COLLIDING),
           cli_recycle_name(c->recycle == RBF_RETAINING), c->phases,
           c->phases == 2 ? "s" : "", load0, load1);
    cpu_info ci;
    cpu_read(&ci);
    char env[160];
    path_env(env, sizeof env);
    printf("cpu: %s; flags: %s; paths (rbf_path): flat %s, blocked %s%s%s\n",
           ci.model[0] ? ci.model : "unknown", ci.flags[0] ? ci.flags : "none of interest",
           nsz && c->flat ? srs[0].path_flat : "-", nsz && c->blocked ? srs[0].path_blocked : "-",
           env[0] ? "; set: " : "", env);
#ifndef RBF_HAVE_LIBBLOOM
    printf("libbloom: not found at build time, its rows are missing\n");
#endif
    for (size_t s = 0; s < nsz; s++) {
        const size_result *sr = &srs[s];
        char lb[32];
        printf("\n%s: rbf %llu bits (sigma %llu, %llu recycles", size_label(sr->bytes, lb, sizeof lb),
               (unsigned long long)sr->rbf_bits, (unsigned long long)sr->rbf_sigma,
               (unsigned long long)(c->flat ? sr->rbf_cycles : sr->rbfb_cycles));
        if (c->flat && c->blocked)
            printf(", blocked %llu", (unsigned long long)sr->rbfb_cycles);
        printf(")");
        if (sr->bloom_bits >= 0)
            printf(", libbloom %lld bits k=%lld (%llu resets)", (long long)sr->bloom_bits,
                   (long long)sr->bloom_hashes, (unsigned long long)sr->bloom_resets);
        printf("\n  insert filters: %llu keys before timing, fill at the end",
               (unsigned long long)sr->prefill_keys);
        if (c->flat)
            printf(" rbf %.3f", sr->ins_fill_rbf);
        if (c->blocked)
            printf("%s blocked %.3f", c->flat ? "," : "", sr->ins_fill_rbfb);
        if (sr->ins_fill_bloom >= 0)
            printf(", libbloom %.3f", sr->ins_fill_bloom);
        printf("; contains filters: %llu keys, fill", (unsigned long long)sr->fill_keys);
        if (c->flat)
            printf(" rbf %.3f", sr->fill_rbf);
        if (c->blocked)
            printf("%s blocked %.3f", c->flat ? "," : "", sr->fill_rbfb);
        if (sr->fill_bloom >= 0)
            printf(", libbloom %.3f", sr->fill_bloom);
        printf("\n");
        printf("  %-19s %-26s %-9s %9s %9s %12s %9s %9s\n", "operation", "implementation",
               "path", "ns/op", "Mops/s", "vs libbloom", "vs limit", "vs flat");
        for (size_t i = 0; i < sr->nms; i++) {
            const measure *m = &sr->ms[i];
            if (is_limit(m))
                continue;
            double bref = bloom_ref(sr, m->op);
            double lim = row_limit(sr, m);
            double fref = flat_ref(sr, m);
            printf("  %-19s %-26s %-9s %9.2f %9.1f ", m->op_name, m->impl_name, row_path(sr, m),
                   m->median, 1e3 / m->median);
            if (bref > 0)
                printf("%11.2fx ", bref / m->median);
            else
                printf("%12s ", "-");
            printf("%9.2f", m->median / lim);
            if (fref > 0)
                printf(" %8.2fx", fref / m->median);
            printf("\n");
            /* the limit rows go after the libbloom row of their operation */
            int last_of_op = i + 1 == sr->nms || sr->ms[i + 1].op != m->op;
            if (last_of_op && (m->op == OP_INSERT || m->op == OP_CONTAINS_PRESENT)) {
                const measure *w = NULL;
                int ins = m->op == OP_INSERT;
                double l = best_limit(sr, limit_of(m->op), &w);
                if (c->flat || sr->bloom_bits >= 0)
                    printf("  %-19s %-26s %-9s %9.2f %9.1f %12s %9.2f   (%s)\n", m->op_name,
                           ins ? "limit: k line RMW" : "limit: k line reads", "-", l, 1e3 / l, "",
                           1.0, w ? w->impl_name + 7 : "");
                if (c->blocked) {
                    const measure *w1 = NULL;
                    double l1 = best_limit(sr, ins ? OP_LIMIT1_RMW : OP_LIMIT1_READ, &w1);
                    double hc = best_limit(sr, OP_HASH, NULL);
                    printf("  %-19s %-26s %-9s %9.2f %9.1f %12s %9s   (%s)\n", m->op_name,
                           ins ? "limit: 1 line RMW" : "limit: 1 line read", "-", l1, 1e3 / l1, "",
                           "", w1 ? w1->impl_name + 7 : "");
                    printf("  %-19s %-26s %-9s %9.2f %9.1f %12s %9s   (rbf_hash alone)\n",
                           m->op_name, "hash: 16-byte key", "-", hc, 1e3 / hc, "", "");
                    printf("  %-19s %-26s %-9s %9.2f %9.1f %12s %9.2f   (the blocked rows' limit)\n",
                           m->op_name, ins ? "limit: 1 line RMW + hash" : "limit: 1 line read + hash",
                           "-", l1 + hc, 1e3 / (l1 + hc), "", 1.0);
                    if (ins) {
                        const measure *wf = NULL;
                        double fl = best_limit(sr, OP_CALL1_RMW, &wf);
                        printf("  %-19s %-26s %-9s %9.2f %9.1f %12s %9s   (%s; one call per key)\n",
                               m->op_name, "floor: rbf_hash + 1 line", "-", fl, 1e3 / fl, "", "",
                               wf ? (wf->impl == IMPL_LIMIT_PLAIN_HUGE ? "huge" : "4K") : "");
                    }
                }
            }
        }
    }
}

static void print_json(const ctx *c, const size_result *srs, size_t nsz, double load0, double load1)
{
    printf("{\"benchmark\":\"filter\",\"rbf_version\":");
    cli_json_string(stdout, rbf_version());
    printf(",\"prefill\":");
    cli_json_double(stdout, c->prefill);
    printf(",\"order\":");
    cli_json_string(stdout, c->sequential ? "sequential" : "interleaved");
    printf(",\"hashes\":%u,\"key_bytes\":%u,\"keys_per_round\":%llu,\"reps\":%u,\"warmup_rounds\":1,"
           "\"batch\":%zu,\"chunk\":%u,\"seed\":%llu,\"phases\":%u,\"hashing\":",
           c->k, KEY_LEN, (unsigned long long)c->keys, c->reps, c->batch, (unsigned)c->chunk,
           (unsigned long long)c->seed, c->phases);
    cli_json_string(stdout, cli_hashing_name(c->hashing == RBF_NON_COLLIDING));
    printf(",\"recycle\":");
    cli_json_string(stdout, cli_recycle_name(c->recycle == RBF_RETAINING));
    printf(",\"layouts\":");
    cli_json_string(stdout, c->flat && c->blocked ? "both" : c->flat ? "flat" : "blocked");
    printf(",\"libbloom\":%s,\"load_start\":",
#ifdef RBF_HAVE_LIBBLOOM
           "true"
#else
           "false"
#endif
    );
    cli_json_double(stdout, load0);
    printf(",\"load_end\":");
    cli_json_double(stdout, load1);
    cpu_info ci;
    cpu_read(&ci);
    char env[160];
    path_env(env, sizeof env);
    printf(",\"cpu_model\":");
    cli_json_string(stdout, ci.model);
    printf(",\"cpu_flags\":[");
    for (const char *p = ci.flags; *p;) {
        size_t n = strcspn(p, " ");
        char fl[32];
        snprintf(fl, sizeof fl, "%.*s", (int)(n < sizeof fl ? n : sizeof fl - 1), p);
        printf("%s", p == ci.flags ? "" : ",");
        cli_json_string(stdout, fl);
        p += n;
        while (*p == ' ')
            p++;
    }
    printf("],\"path_switches\":");
    cli_json_string(stdout, env);
    printf(",\"sizes\":[");
    for (size_t s = 0; s < nsz; s++) {
        const size_result *sr = &srs[s];
        printf("%s{\"bytes\":%llu,\"rbf_bits\":%llu,\"rbf_sigma\":%llu,\"rbf_recycles\":%llu,"
               "\"libbloom_bits\":%lld,\"libbloom_hashes\":%lld,\"libbloom_entries\":%lld,"
               "\"libbloom_resets\":%llu,\"prefill_keys\":%llu,\"contains_keys\":%llu,"
               "\"contains_fill_rbf\":",
               s ? "," : "", (unsigned long long)sr->bytes, (unsigned long long)sr->rbf_bits,
               (unsigned long long)sr->rbf_sigma, (unsigned long long)sr->rbf_cycles,
               (long long)sr->bloom_bits, (long long)sr->bloom_hashes, (long long)sr->bloom_entries,
               (unsigned long long)sr->bloom_resets, (unsigned long long)sr->prefill_keys,
               (unsigned long long)sr->fill_keys);
        cli_json_double(stdout, sr->fill_rbf);
        printf(",\"contains_fill_libbloom\":");
        if (sr->fill_bloom >= 0)
            cli_json_double(stdout, sr->fill_bloom);
        else
            printf("null");
        printf(",\"insert_fill_rbf\":");
        cli_json_double(stdout, sr->ins_fill_rbf);
        printf(",\"insert_fill_libbloom\":");
        if (sr->ins_fill_bloom >= 0)
            cli_json_double(stdout, sr->ins_fill_bloom);
        else
            printf("null");
        printf(",\"huge_pages_advised\":%s,\"limit_rmw_ns\":", sr->huge_ok ? "true" : "false");
        cli_json_double(stdout, best_limit(sr, OP_LIMIT_RMW, NULL));
        printf(",\"limit_read_ns\":");
        cli_json_double(stdout, best_limit(sr, OP_LIMIT_READ, NULL));
        printf(",\"limit_1line_rmw_ns\":");
        cli_json_double(stdout, best_limit(sr, OP_LIMIT1_RMW, NULL));
        printf(",\"limit_1line_read_ns\":");
        cli_json_double(stdout, best_limit(sr, OP_LIMIT1_READ, NULL));
        printf(",\"hash_ns\":");
        cli_json_double(stdout, best_limit(sr, OP_HASH, NULL));
        printf(",\"floor_call_1line_rmw_ns\":");
        if (c->blocked)
            cli_json_double(stdout, best_limit(sr, OP_CALL1_RMW, NULL));
        else
            printf("null");
        printf(",\"path_flat\":");
        cli_json_string(stdout, sr->path_flat);
        printf(",\"path_blocked\":");
        cli_json_string(stdout, sr->path_blocked);
        printf(",\"results\":[");
        for (size_t i = 0; i < sr->nms; i++) {
            const measure *m = &sr->ms[i];
            double bref = bloom_ref(sr, m->op);
            double lim = row_limit(sr, m);
            double fref = flat_ref(sr, m);
            printf("%s{\"operation\":", i ? "," : "");
            cli_json_string(stdout, m->op_name);
            printf(",\"implementation\":");
            cli_json_string(stdout, m->impl_name);
            printf(",\"path\":");
            cli_json_string(stdout, row_path(sr, m));
            printf(",\"ns_per_op\":");
            cli_json_double(stdout, m->median);
            printf(",\"ns_min\":");
            cli_json_double(stdout, m->lo);
            printf(",\"ns_max\":");
            cli_json_double(stdout, m->hi);
            printf(",\"mops\":");
            cli_json_double(stdout, 1e3 / m->median);
            printf(",\"speedup_vs_libbloom\":");
            if (bref > 0 && !is_limit(m))
                cli_json_double(stdout, bref / m->median);
            else
                printf("null");
            printf(",\"ratio_to_limit\":");
            cli_json_double(stdout, m->median / lim);
            printf(",\"layout\":");
            cli_json_string(stdout, is_limit(m) || m->impl == IMPL_LIBBLOOM ? ""
                                    : is_blocked(m)                          ? "blocked"
                                                                             : "flat");
            printf(",\"speedup_vs_flat\":");
            if (fref > 0)
                cli_json_double(stdout, fref / m->median);
            else
                printf("null");
            printf(",\"rounds_ns_per_op\":[");
            for (unsigned r = 0; r < c->reps; r++) {
                if (r)
                    putchar(',');
                cli_json_double(stdout, m->rounds[r]);
            }
            printf("]}");
        }
        printf("]}");
    }
    printf("]}\n");
}

static void usage(FILE *fp)
{
    fprintf(fp,
            "Usage: rbf bench filter [OPTIONS]   (or build/rbf-bench filter)\n"
            "\n"
            "Test-and-insert and contains throughput (ns per operation, hashing included,\n"
            "16-byte random keys) of rbf (one key per call and batched) and of libbloom,\n"
            "and the machine's limit for the same access pattern (k random cache-line\n"
            "accesses per operation), in one run.  Fresh keys in every round; median of\n"
            "the timed rounds after a warm-up.\n"
            "\n"
            "Options:\n"
            "  --sizes LIST      filter sizes in bytes, comma-separated (default\n"
            "                    128KiB,4MiB,128MiB; libbloom stops at 2^31 bits = 256 MiB)\n"
            "  --keys N          operations per timed round (default 1Mi)\n"
            "  --reps N          timed rounds per measurement, median reported (default 5)\n"
            "  --batch N         keys per rbf_insert_keys / rbf_contains_keys call (default 256)\n"
            "  --hashes K        hash positions per key (default 7)\n"
            "  --fill-cap N      at most N prefilled keys in the contains filters (default 4Mi)\n"
            "  --prefill F       put F x libbloom's design entries of fresh keys into the insert\n"
            "                    filters before timing, 0 to 1 (default 0; 0.5 = mid-cycle)\n"
            "  --phases 1|2      rbf phases (default 1)\n"
            "  --hashing H       colliding (default) or non-colliding\n"
            "  --recycle R       non-retaining (default) or retaining\n"
            "  --layout L        flat, blocked or both (default): rbf's bit layout; with\n"
            "                    blocked, the rows of the blocked layout, a one-line limit,\n"
            "                    the cost of hashing a key alone and the floor of one call\n"
            "                    per key (rbf_hash + 1 line RMW, no look-ahead) are added\n"
            "  --seed S          seed of the keys and of the hash key (default 1)\n"
            "  --chunk N         operations per timed chunk, whose keys are generated just\n"
            "                    before it, untimed (default 4096: the keys are in cache);\n"
            "                    --chunk 1Mi with --keys 1Mi streams each round's 16 MiB of\n"
            "                    keys from memory (libbloom is then reset inside the timed\n"
            "                    loop whenever it reaches its design entries, as rbf\n"
            "                    recycles inside it)\n"
            "  --sequential      time each row's rounds back to back (after its own warm-up)\n"
            "                    instead of interleaving the rounds of all rows; a row then\n"
            "                    runs with its filter warm in the caches, as in a harness\n"
            "                    that times one library at a time\n"
            "  --threads N       instead: one filter shared by 1, 2, ..., N threads (up to 64),\n"
            "                    rbf_insert throughput of a concurrent filter (concurrent = 1)\n"
            "                    vs a mutex-guarded single-writer filter vs one filter per\n"
            "                    thread vs the machine's limit (k random bits per key set\n"
            "                    in one shared array, no filter), and one cache line's trip\n"
            "                    between two threads; --sizes (default 4MiB), --keys (per thread per round,\n"
            "                    default 512Ki), --reps, --hashes, --phases, --hashing,\n"
            "                    --recycle, --seed and --json apply\n"
            "  --json            one JSON object instead of the table\n"
            "  -h, --help        this help\n");
}

int bench_filter_main(int argc, char **argv)
{
    ctx c;
    memset(&c, 0, sizeof c);
    c.keys = 1u << 20;
    c.reps = 5;
    c.batch = 256;
    c.k = 7;
    c.seed = 1;
    c.phases = 1;
    c.hashing = RBF_COLLIDING;
    c.recycle = RBF_NON_RETAINING;
    c.fill_cap = 4u << 20;
    c.chunk = CHUNK;
    c.flat = c.blocked = 1;
    uint64_t sizes[MAX_SIZES] = {128u << 10, 4u << 20, 128u << 20};
    size_t nsz = 3;

    enum { O_SIZES = 256, O_KEYS, O_REPS, O_BATCH, O_HASHES, O_FILLCAP, O_PHASES, O_HASHING,
           O_RECYCLE, O_SEED, O_JSON, O_PREFILL, O_SEQUENTIAL, O_CHUNK, O_THREADS, O_LAYOUT };
    static const struct option opts[] = {
        {"sizes", required_argument, NULL, O_SIZES},     {"keys", required_argument, NULL, O_KEYS},
        {"reps", required_argument, NULL, O_REPS},       {"batch", required_argument, NULL, O_BATCH},
        {"hashes", required_argument, NULL, O_HASHES},   {"fill-cap", required_argument, NULL, O_FILLCAP},
        {"phases", required_argument, NULL, O_PHASES},   {"hashing", required_argument, NULL, O_HASHING},
        {"recycle", required_argument, NULL, O_RECYCLE}, {"seed", required_argument, NULL, O_SEED},
        {"json", no_argument, NULL, O_JSON},             {"help", no_argument, NULL, 'h'},
        {"prefill", required_argument, NULL, O_PREFILL}, {"sequential", no_argument, NULL, O_SEQUENTIAL},
        {"chunk", required_argument, NULL, O_CHUNK},     {"threads", required_argument, NULL, O_THREADS},
        {"layout", required_argument, NULL, O_LAYOUT},
        {NULL, 0, NULL, 0}};
    unsigned threads = 0;
    int sizes_given = 0, keys_given = 0;
    opterr = 0;
    int o, rc, batch_given = 0;
    const char *err;
    uint64_t v;
    while ((o = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (o) {
        case 'h': usage(stdout); return cli_finish_stdout(CMD);
        case O_THREADS:
            if ((rc = cli_opt_uint(CMD, "--threads", optarg, 1, BENCH_MAX_THREADS, &v)))
                return rc;
            threads = (unsigned)v;
            break;
        case O_SIZES: {
            sizes_given = 1;
            nsz = 0;
            char *copy = strdup(optarg), *save = NULL;
            if (!copy)
                return cli_fail(CMD, "out of memory");
            for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                if (nsz == MAX_SIZES) {
                    free(copy);
                    return cli_usage(CMD, "--sizes: at most %d sizes", MAX_SIZES);
                }
                if (cli_parse_bytes(t, &v, &err) || v < 1024 || v % 8 ||
                    v > (UINT64_C(1) << 35)) {
                    int bad = cli_bad_value(CMD, "--sizes", t, NULL,
                                            "sizes in bytes from 1KiB to 32GiB, multiples of 8");
                    free(copy);
                    return bad;
                }
                sizes[nsz++] = v;
            }
            free(copy);
            if (nsz == 0)
                return cli_usage(CMD, "--sizes: no size given");
            break;
        }
        case O_KEYS:
            keys_given = 1;
            if (cli_parse_count(optarg, &v, &err) || v < 1 || v > (UINT64_C(1) << 34))
                return cli_bad_value(CMD, "--keys", optarg, NULL, "a count from 1 to 16Gi");
            c.keys = v;
            break;
        case O_REPS:
            if ((rc = cli_opt_uint(CMD, "--reps", optarg, 1, MAX_REPS, &v)))
                return rc;
            c.reps = (unsigned)v;
            break;
        case O_BATCH:
            batch_given = 1;
            if (cli_parse_uint(optarg, 1, MAX_CHUNK, &v, &err))
                return cli_bad_value(CMD, "--batch", optarg, err, "1 to %u, and at most --chunk",
                                     MAX_CHUNK);
            c.batch = (size_t)v;
            break;
        case O_HASHES:
            if ((rc = cli_opt_uint(CMD, "--hashes", optarg, 1, 64, &v)))
                return rc;
            c.k = (unsigned)v;
            break;
        case O_FILLCAP:
            if ((rc = cli_opt_count(CMD, "--fill-cap", optarg, 1, &v)))
                return rc;
            c.fill_cap = v;
            break;
        case O_PHASES:
            if (cli_parse_uint(optarg, 1, 2, &v, &err))
                return cli_bad_value(CMD, "--phases", optarg, NULL, "1 or 2");
            c.phases = (unsigned)v;
            break;
        case O_HASHING: {
            int nc;
            if ((rc = cli_opt_hashing(CMD, optarg, &nc)))
                return rc;
            c.hashing = nc ? RBF_NON_COLLIDING : RBF_COLLIDING;
            break;
        }
        case O_RECYCLE: {
            int ret;
            if ((rc = cli_opt_recycle(CMD, optarg, &ret)))
                return rc;
            c.recycle = ret ? RBF_RETAINING : RBF_NON_RETAINING;
            break;
        }
        case O_SEED:
            if ((rc = cli_opt_uint(CMD, "--seed", optarg, 0, UINT64_MAX, &v)))
                return rc;
            c.seed = v;
            break;
        case O_JSON: c.json = 1; break;
        case O_LAYOUT:
            if (!strcmp(optarg, "flat")) {
                c.flat = 1;
                c.blocked = 0;
            } else if (!strcmp(optarg, "blocked")) {
                c.flat = 0;
                c.blocked = 1;
            } else if (!strcmp(optarg, "both")) {
                c.flat = c.blocked = 1;
            } else {
                return cli_usage(CMD, "--layout: '%s': must be flat, blocked or both", optarg);
            }
            break;
        case O_SEQUENTIAL: c.sequential = 1; break;
        case O_CHUNK:
            if (cli_parse_count(optarg, &v, &err) || v < 1 || v > MAX_CHUNK)
                return cli_bad_value(CMD, "--chunk", optarg, NULL, "a count from 1 to 16Mi");
            c.chunk = (size_t)v;
            break;
        case O_PREFILL:
            if (cli_parse_double(optarg, 0, 1, 1, 1, &c.prefill, &err))
                return cli_bad_value(CMD, "--prefill", optarg, err, "a number from 0 to 1");
            break;
        default: return cli_bad_option(CMD, argc, argv, opts);
        }
    }
    if ((rc = cli_no_operands(CMD, argc, argv)))
        return rc;
    if (threads) {
        if (!sizes_given) {
            sizes[0] = 4u << 20;
            nsz = 1;
        }
        for (size_t s = 0; s < nsz; s++)
            if (c.phases == 2 && sizes[s] * 8 / 2 <= 2 * (uint64_t)c.k)
                return cli_usage(CMD, "--sizes: %llu bytes is too small for two phases",
                                 (unsigned long long)sizes[s]);
        bench_threads_opts to = {.threads = threads, .sizes = sizes, .nsizes = nsz,
                                 .keys = keys_given ? c.keys : (1u << 19), .reps = c.reps,
                                 .k = c.k, .phases = c.phases, .hashing = c.hashing,
                                 .recycle = c.recycle, .seed = c.seed, .json = c.json};
        return bench_threads_run(&to);
    }
    if (c.batch > c.chunk)
        return cli_usage(CMD, "--chunk %zu is smaller than the batch, %zu keys (--batch%s)", c.chunk,
                         c.batch, batch_given ? "" : ", default");
    if ((uint64_t)c.chunk * c.k > MAX_CHUNK_POSITIONS)
        return cli_usage(CMD,
                         "--chunk %zu with --hashes %u: the limit kernels would need %zu x %u "
                         "precomputed positions, more than %u; give a smaller --chunk",
                         c.chunk, c.k, c.chunk, c.k, (unsigned)MAX_CHUNK_POSITIONS);
    for (size_t s = 0; s < nsz; s++)
        if (c.phases == 2 && sizes[s] * 8 / 2 <= 2 * (uint64_t)c.k)
            return cli_usage(CMD, "--sizes: %llu bytes is too small for two phases",
                             (unsigned long long)sizes[s]);
    for (size_t s = 0; s < nsz; s++)
        if (c.blocked && (sizes[s] * 8 / c.phases) % 512 != 0)
            return cli_usage(CMD,
                             "--sizes: %llu bytes: the blocked layout needs bits per filter to "
                             "be a multiple of 512 (bytes a multiple of %u)",
                             (unsigned long long)sizes[s], 64u * c.phases);

    c.fresh_stream = mix64(c.seed ^ 0xf7e5a11ce0000001ULL);
    c.fill_stream = mix64(c.seed ^ 0x0f111ed000000002ULL);
    c.rng = mix64(c.seed ^ 0x7a11d0e000000003ULL);
    c.keybuf = malloc(c.chunk * KEY_LEN);
    c.keyp = malloc(c.chunk * sizeof *c.keyp);
    c.lens = malloc(c.chunk * sizeof *c.lens);
    c.idx = malloc(c.chunk * c.k * sizeof *c.idx);
    size_result *srs = calloc(nsz, sizeof *srs);
    rc = 0;
    if (!c.keybuf || !c.keyp || !c.lens || !c.idx || !srs) {
        rc = cli_fail(CMD, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < c.chunk; i++) {
        c.keyp[i] = c.keybuf + i * KEY_LEN;
        c.lens[i] = KEY_LEN;
    }
    double la[3] = {0, 0, 0}, load0, load1;
    load0 = getloadavg(la, 1) == 1 ? la[0] : -1;
    for (size_t s = 0; s < nsz && rc == 0; s++) {
        c.bytes = sizes[s];
        rc = run_size(&c, &srs[s]);
    }
    load1 = getloadavg(la, 1) == 1 ? la[0] : -1;
    if (rc == 0) {
        if (c.json)
            print_json(&c, srs, nsz, load0, load1);
        else
            print_table(&c, srs, nsz, load0, load1);
        rc = cli_finish_stdout(CMD);
    }
done:
    if (srs)
        for (size_t s = 0; s < nsz; s++) {
            for (size_t i = 0; i < srs[s].nms; i++)
                free(srs[s].ms[i].rounds);
            free(srs[s].ms);
        }
    free(srs);
    free(c.keybuf);
    free(c.keyp);
    free(c.lens);
    free(c.idx);
    return rc;
}
