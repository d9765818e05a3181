/*
 * rbf_alloc.h -- the library's allocation functions (base module, internal).
 *
 * Every allocation in rbf goes through these, so that the allocator hook of
 * rbf_base.h (rbf_set_allocator) sees all of them: a host's accounting, or
 * a test that fails the n-th allocation.  Nothing here is public API.
 */
#ifndef RBF_ALLOC_H
#define RBF_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "rbf_base.h"

/* As malloc/realloc/free, through the hook. */
void *rbf__malloc(size_t size);
void *rbf__realloc(void *ptr, size_t size);
void rbf__free(void *ptr);

/* calloc through the hook: n * size zeroed bytes, NULL on overflow. */
void *rbf__calloc(size_t n, size_t size);

/* A copy of the string s, NULL if out of memory. */
char *rbf__strdup(const char *s);

/* Zeroed memory aligned to 64 bytes (a cache line), for bit arrays; release
 * with rbf__free_lines(p, bytes) passing the same byte count.  Arrays of at
 * least 2 MiB are mapped with huge pages when no hook is installed. */
void *rbf__alloc_lines(size_t bytes);
void rbf__free_lines(void *p, size_t bytes);

/* Nonzero when a hook other than the C library's allocator is installed. */
int rbf__alloc_hooked(void);

#endif
