/*
 * io_util.h -- helpers shared by the save/load tests (header-only; include
 * after cmocka.h and filter_util.h).
 */
#ifndef IO_UTIL_H
#define IO_UTIL_H

#include <dirent.h>
#include <string.h>

#include "filter_util.h"

/* Number of names in dir containing ".tmp." (temporary files of a save). */
static inline int count_tmp(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return n;
}

/* A small one-phase filter with 50 messages in it. */
static inline rbf *small_filter(uint64_t seed)
{
    rbf_config c = tu_config(1000, 3, 300, 0, RBF_COLLIDING, RBF_NON_RETAINING, 1, seed);
    rbf *f = NULL;
    assert_int_equal(rbf_new(&c, &f), RBF_OK);
    for (int i = 0; i < 50; i++)
        rbf_insert(f, &i, sizeof i);
    return f;
}

#endif
