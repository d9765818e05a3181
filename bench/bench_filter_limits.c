/*
 * bench_filter_limits.c -- the machine's limit for the access pattern of a
 * filter, measured by `rbf bench filter`: k independent random word
 * accesses (or one random line) per operation, with no hashing and no
 * filter logic, so a filter row can be read against what the memory
 * system allows.
 */
#include "bench_filter.h"

int bf_limit_alloc(limit_buf *b, size_t bytes, int huge)
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

void bf_limit_free(limit_buf *b)
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

/* n*k random word indices for the limit kernels. */
void bf_limit_indices(ctx *c, size_t n)
{
    for (size_t i = 0; i < n * c->k; i++)
        c->idx[i] = (uint32_t)below(rng_next(&c->rng), c->lim_words);
}

/* n random words, one in each of n random lines (the one-line kernels). */
void bf_limit1_indices(ctx *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t x = rng_next(&c->rng);
        c->idx[i] = (uint32_t)(below(x, c->lim_words / 8) * 8 + (x & 7));
    }
}

/* The limit kernels: k independent word accesses per operation at the
 * precomputed indices.  The bit set depends on nothing loaded, so the
 * accesses of one and of successive operations overlap freely. */
void bf_limit_rmw_plain(uint64_t *w, const uint32_t *idx, size_t n, unsigned k)
{
    for (size_t i = 0; i < n * k; i++)
        w[idx[i]] |= 1ULL << (i & 63);
}

/* Prefetching LIMIT_AHEAD operations ahead, into L1 (locality 3) or L2
 * (locality 2); the locality must be a constant, hence the macro. */
#define LIMIT_RMW_AHEAD(name, loc)                                                   \
    void name(uint64_t *w, const uint32_t *idx, size_t n, unsigned k)        \
    {                                                                                \
        for (size_t i = 0; i < n; i++) {                                             \
            if (i + LIMIT_AHEAD < n)                                                 \
                for (unsigned j = 0; j < k; j++)                                     \
                    __builtin_prefetch(&w[idx[(i + LIMIT_AHEAD) * k + j]], 1, loc); \
            for (unsigned j = 0; j < k; j++)                                         \
                w[idx[i * k + j]] |= 1ULL << j;                                      \
        }                                                                            \
    }
LIMIT_RMW_AHEAD(bf_limit_rmw_l1, 3)
LIMIT_RMW_AHEAD(bf_limit_rmw_l2, 2)

uint64_t bf_limit_read_plain(const uint64_t *w, const uint32_t *idx, size_t n, unsigned k)
{
    uint64_t acc = 0;
    for (size_t i = 0; i < n * k; i++)
        acc ^= w[idx[i]];
    return acc;
}

#define LIMIT_READ_AHEAD(name, loc)                                                       \
    uint64_t name(const uint64_t *w, const uint32_t *idx, size_t n, unsigned k)   \
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
LIMIT_READ_AHEAD(bf_limit_read_l1, 3)
LIMIT_READ_AHEAD(bf_limit_read_l2, 2)
