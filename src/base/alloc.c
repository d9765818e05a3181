/*
 * alloc.c -- the allocator hook and the library's allocation functions
 * (base module).  See rbf_base.h for the contract.
 */
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "rbf_alloc.h"

static void *libc_malloc(void *ctx, size_t size)
{
    (void)ctx;
    return malloc(size);
}

static void *libc_realloc(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    return realloc(ptr, size);
}

static void libc_free(void *ctx, void *ptr)
{
    (void)ctx;
    free(ptr);
}

/* The C library's calloc: fresh pages from the system come zeroed without
 * being touched (malloc then memset would fault every page in at once) */
static void *libc_calloc(void *ctx, size_t n, size_t size)
{
    (void)ctx;
    return calloc(n, size);
}

static rbf_allocator g_alloc = {libc_malloc, libc_realloc, libc_free, NULL, libc_calloc, {NULL}};

int rbf_set_allocator(const rbf_allocator *a)
{
    if (!a) {
        g_alloc = (rbf_allocator){libc_malloc, libc_realloc, libc_free, NULL, libc_calloc, {NULL}};
        return RBF_OK;
    }
    if (!a->malloc || !a->realloc || !a->free || a->reserved_[0] || a->reserved_[1] ||
        a->reserved_[2])
        return RBF_EINVAL;
    g_alloc = *a;
    return RBF_OK;
}

int rbf__alloc_hooked(void) { return g_alloc.malloc != libc_malloc; }

void *rbf__malloc(size_t size) { return g_alloc.malloc(g_alloc.ctx, size ? size : 1); }

void *rbf__realloc(void *ptr, size_t size) { return g_alloc.realloc(g_alloc.ctx, ptr, size ? size : 1); }

void rbf__free(void *ptr)
{
    if (ptr)
        g_alloc.free(g_alloc.ctx, ptr);
}

void *rbf__calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    if (g_alloc.calloc)
        return g_alloc.calloc(g_alloc.ctx, n ? n : 1, size ? size : 1);
    void *p = rbf__malloc(n * size);
    if (p)
        memset(p, 0, n * size);
    return p;
}

char *rbf__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = rbf__malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

/* ---- bit arrays
 *
 * A filter larger than the caches is touched at random: with 4 KiB pages
 * nearly every access also misses the TLB, and a page walk costs about as
 * much as the access (more under virtualisation).  So, with the C library's
 * allocator, arrays of at least RBF_HUGE_MIN bytes are mapped directly,
 * aligned to 2 MiB, and advised to use transparent huge pages (Linux; where
 * the advice is refused they simply get small pages).  The mapping is
 * zero-filled lazily by the kernel, like calloc.  Sanitizer builds keep
 * calloc so that every array stays under AddressSanitizer's bounds checks.
 * With a hook installed, the hook provides the memory (over-allocated by a
 * line plus a pointer, so the array starts on a 64-byte boundary and the
 * block's start is found again just before it). */

#define RBF_LINE ((size_t)64)

#if defined(__linux__) && defined(MADV_HUGEPAGE) && !defined(RBF_SANITIZE)
#define RBF_USE_MMAP 1
#define RBF_HUGE_MIN ((size_t)2 << 20)
#define RBF_HUGE_ALIGN ((size_t)2 << 20)
#endif

#ifdef RBF_USE_MMAP
/* Which way rbf__alloc_lines took for `bytes` (rbf__free_lines must agree). */
static int lines_mapped(size_t bytes)
{
    return !rbf__alloc_hooked() && bytes >= RBF_HUGE_MIN && bytes <= SIZE_MAX - 2 * RBF_HUGE_ALIGN;
}

/* The mapping's length: `bytes` up to whole pages (munmap takes whole pages;
 * trimming or unmapping from a point inside a page fails, and the rest of
 * the mapping would stay reserved for good) */
static size_t lines_mapped_len(size_t bytes)
{
    long pg = sysconf(_SC_PAGESIZE);
    size_t page = pg > 0 ? (size_t)pg : 4096;
    return (bytes + page - 1) / page * page;
}
#endif

void *rbf__alloc_lines(size_t bytes)
{
    if (bytes == 0)
        bytes = RBF_LINE;
#ifdef RBF_USE_MMAP
    if (lines_mapped(bytes)) {
        /* map one extra 2 MiB, then trim to an aligned start */
        bytes = lines_mapped_len(bytes);
        size_t len = bytes + RBF_HUGE_ALIGN;
        uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return NULL;
        uintptr_t a = ((uintptr_t)p + RBF_HUGE_ALIGN - 1) & ~(uintptr_t)(RBF_HUGE_ALIGN - 1);
        size_t head = (size_t)(a - (uintptr_t)p);
        if (head)
            munmap(p, head);
        if (RBF_HUGE_ALIGN - head)
            munmap((uint8_t *)a + bytes, RBF_HUGE_ALIGN - head);
        (void)madvise((void *)a, bytes, MADV_HUGEPAGE); /* advice: fine if refused */
        return (void *)a;
    }
#endif
    if (bytes > SIZE_MAX - RBF_LINE - sizeof(void *))
        return NULL;
    uint8_t *raw = rbf__calloc(1, bytes + RBF_LINE + sizeof(void *));
    if (!raw)
        return NULL;
    uintptr_t a = ((uintptr_t)raw + sizeof(void *) + RBF_LINE - 1) & ~(uintptr_t)(RBF_LINE - 1);
    memcpy((uint8_t *)a - sizeof(void *), &raw, sizeof raw);
    return (void *)a;
}

void rbf__free_lines(void *p, size_t bytes)
{
    if (!p)
        return;
    if (bytes == 0)
        bytes = RBF_LINE;
#ifdef RBF_USE_MMAP
    if (lines_mapped(bytes)) {
        munmap(p, lines_mapped_len(bytes));
        return;
    }
#endif
    void *raw;
    memcpy(&raw, (uint8_t *)p - sizeof(void *), sizeof raw);
    rbf__free(raw);
}
