/*
 * bench_filter.h -- the pieces of `rbf bench filter` (internal to bench/):
 *   bench_filter.c         the measurements and main
 *   bench_filter_options.c the command line
 *   bench_filter_limits.c  the machine-limit kernels (k random word or line
 *                          accesses per operation) and their buffers
 *   bench_libbloom.c       the libbloom adapter (the comparison library)
 *   bench_filter_report.c  the table and the JSON document
 */
#ifndef RBF_BENCH_FILTER_H
#define RBF_BENCH_FILTER_H

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

/* What the command line gives besides the measurement options of ctx. */
typedef struct args {
    uint64_t sizes[MAX_SIZES];
    size_t nsz;
    unsigned threads;
    int sizes_given, keys_given, batch_given;
    int help; /* --help printed: return the result */
} bf_args;

/* ---- the command line (bench_filter_options.c): 0 and a->help = 0 to
 * go on, else the exit code (after --help, or the error reported) */
int bf_parse_options(int argc, char **argv, ctx *c, bf_args *a);
int bf_check_options(const ctx *c, const bf_args *a);

/* ---- the machine-limit kernels (bench_filter_limits.c) */

int bf_limit_alloc(limit_buf *b, size_t bytes, int huge);
void bf_limit_free(limit_buf *b);
/* n*k random word indices into c->idx; n random words, one per random line */
void bf_limit_indices(ctx *c, size_t n);
void bf_limit1_indices(ctx *c, size_t n);
/* k word accesses per operation at c->idx: a loop, or prefetching
 * LIMIT_AHEAD operations ahead into L1 or L2 */
void bf_limit_rmw_plain(uint64_t *w, const uint32_t *idx, size_t n, unsigned k);
void bf_limit_rmw_l1(uint64_t *w, const uint32_t *idx, size_t n, unsigned k);
void bf_limit_rmw_l2(uint64_t *w, const uint32_t *idx, size_t n, unsigned k);
uint64_t bf_limit_read_plain(const uint64_t *w, const uint32_t *idx, size_t n, unsigned k);
uint64_t bf_limit_read_l1(const uint64_t *w, const uint32_t *idx, size_t n, unsigned k);
uint64_t bf_limit_read_l2(const uint64_t *w, const uint32_t *idx, size_t n, unsigned k);

#ifdef RBF_HAVE_LIBBLOOM
/* ---- libbloom (bench_libbloom.c) */
double bf_bloom_bpe(unsigned k);
int bf_bloom_make(struct bloom *b, uint64_t bits, unsigned k);
double bf_bloom_fill(const struct bloom *b);
#endif

/* ---- reporting (bench_filter_report.c): load0 and load1 are the load
 * averages before and after */
void bf_print_table(const ctx *c, const size_result *srs, size_t nsz, double load0, double load1);
void bf_print_json(const ctx *c, const size_result *srs, size_t nsz, double load0, double load1);

#endif
