/*
 * test_alloc_lines.c -- the bit arrays' allocation (src/base/alloc.c,
 * rbf__alloc_lines / rbf__free_lines): every size comes back zeroed,
 * writable to its last byte and 64-byte aligned, with the C library's
 * allocator (arrays of 2 MiB and more mapped on huge pages, Linux) and
 * with a hook; and freeing gives the whole mapping back.  Sizes that are
 * not whole pages once left the rest of the extra 2 MiB mapped for good
 * (1000 blocks of 2 MiB + 8 bytes: 2 GB of address space).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbf_alloc.h"

/* The process's virtual size in KiB (/proc/self/status VmSize), -1 where
 * there is none. */
static long vm_size_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long v = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %ld kB", &v) == 1)
            break;
    fclose(f);
    return v;
}

static const size_t sizes[] = {1,
                               64,
                               4095,
                               100000,
                               ((size_t)2 << 20) - 8,
                               (size_t)2 << 20,
                               ((size_t)2 << 20) + 8,
                               ((size_t)3 << 20) + 4097,
                               ((size_t)8 << 20) + 1};

static void check_sizes(void)
{
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        unsigned char *p = rbf__alloc_lines(n);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % 64, 0);
        assert_int_equal(p[0], 0);
        assert_int_equal(p[n / 2], 0);
        assert_int_equal(p[n - 1], 0);
        memset(p, 0xa5, n); /* every byte is ours */
        rbf__free_lines(p, n);
    }
}

static void test_sizes_libc(void **state)
{
    (void)state;
    check_sizes();
}

static void *h_malloc(void *ctx, size_t n)
{
    ++*(int *)ctx;
    return malloc(n);
}
static void *h_realloc(void *ctx, void *p, size_t n)
{
    (void)ctx;
    return realloc(p, n);
}
static void h_free(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

static void test_sizes_hooked(void **state)
{
    (void)state;
    int calls = 0;
    rbf_allocator a = {h_malloc, h_realloc, h_free, &calls, NULL, {NULL}};
    assert_int_equal(rbf_set_allocator(&a), RBF_OK);
    check_sizes();
    assert_int_equal(rbf_set_allocator(NULL), RBF_OK);
    /* the hook gave every block (no calloc: malloc then memset) */
    assert_int_equal(calls, (int)(sizeof sizes / sizeof sizes[0]));
}

/* 1000 blocks of 2 MiB + 8 bytes, each freed: the address space is back
 * where it was (within 64 MiB: the C library's own arenas) */
static void test_no_mapping_left(void **state)
{
    (void)state;
#ifdef RBF_SANITIZE
    /* there the arrays come from calloc, and the sanitizer's allocator
     * keeps freed blocks in quarantine: the address space grows anyway */
    printf("SKIPPED: the mapping check (a sanitizer build: no mapped arrays)\n");
    skip();
#endif
    long before = vm_size_kib();
    if (before < 0) {
        printf("SKIPPED: no /proc/self/status here\n");
        skip();
    }
    const size_t n = ((size_t)2 << 20) + 8;
    for (int i = 0; i < 1000; i++) {
        unsigned char *p = rbf__alloc_lines(n);
        assert_non_null(p);
        p[n - 1] = 1;
        rbf__free_lines(p, n);
    }
    long after = vm_size_kib();
    printf("VmSize %ld KiB -> %ld KiB after 1000 blocks of 2 MiB + 8 bytes\n", before, after);
    assert_true(after - before < 64 * 1024);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes_libc),
        cmocka_unit_test(test_sizes_hooked),
        cmocka_unit_test(test_no_mapping_left),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
