/*
 * rbf_abi.h -- the checks of the ABI policy of rbf_base.h (base module,
 * internal): a public struct's reserved words must be zero, so that a
 * later version can give them a meaning and tell an old caller from a new
 * one.  Every module that takes such a struct checks it with this, one
 * way.  Nothing here is public API.
 */
#ifndef RBF_ABI_H
#define RBF_ABI_H

#include <stddef.h>
#include <stdint.h>

/* 1 if the n reserved words are all zero. */
static inline int rbf__reserved_zero(const uint64_t *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (r[i])
            return 0;
    return 1;
}

/* 1 if the reserved words of *s (a struct with a uint64_t reserved_[]
 * array) are all zero. */
#define RBF_RESERVED_ZERO(s) \
    rbf__reserved_zero((s)->reserved_, sizeof (s)->reserved_ / sizeof (s)->reserved_[0])

#endif
