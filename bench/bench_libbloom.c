/*
 * bench_libbloom.c -- the libbloom adapter of `rbf bench filter`: a
 * libbloom filter of the same bits and hash count as rbf's, for the
 * comparison rows.  Empty without libbloom.
 */
#include "bench_filter.h"

#ifdef RBF_HAVE_LIBBLOOM
/* libbloom's bits per entry for k hashes: it takes ceil(bpe ln 2) hashes;
 * bpe = (k - 0.5) / ln 2 is in the middle of the range that gives k. */
double bf_bloom_bpe(unsigned k)
{
    return ((double)k - 0.5) / log(2.0);
}

int bf_bloom_make(struct bloom *b, uint64_t bits, unsigned k)
{
    double bpe = bf_bloom_bpe(k);
    double entries = floor((double)bits / bpe);
    double err = exp(-bpe * log(2.0) * log(2.0));
    if (entries < 1000 || entries > 2147483647.0)
        return -1;
    if (bloom_init(b, (int)entries, err) != 0)
        return -1;
    return 0;
}
#endif

#ifdef RBF_HAVE_LIBBLOOM
/* Fraction of set bits of a libbloom filter.  Reads its bit array, which
 * its header calls private: done once, outside any timing, only to report
 * that both contains filters are at the same fill. */
double bf_bloom_fill(const struct bloom *b)
{
    uint64_t set = 0;
    for (int i = 0; i < b->bytes; i++)
        set += (uint64_t)__builtin_popcount(b->bf[i]);
    return (double)set / (double)b->bits;
}
#endif

#ifndef RBF_HAVE_LIBBLOOM
/* ISO C forbids an empty translation unit. */
typedef int bench_no_libbloom;
#endif
