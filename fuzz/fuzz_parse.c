/*
 * fuzz_parse.c -- libFuzzer harness for the CLI number parsers
 * (src/cli/util.c).  The input is one NUL-terminated string; every parser
 * sees it.  Properties checked beyond "no crash":
 *   - a count prints back and re-parses to the same value; plain digits give
 *     what strtoull gives;
 *   - everything cli_parse_count accepts, cli_parse_bytes accepts with the
 *     same value;
 *   - cli_parse_uint stays in [lo, hi]; cli_parse_double returns a finite
 *     value in its interval;
 *   - a failure always says why.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    const char *err = NULL;
    uint64_t v = 0, w = 0;

    int rc = cli_parse_count(s, &v, &err);
    if (rc != 0 && (rc != -1 || !err))
        abort();
    if (rc == 0) {
        char back[32];
        snprintf(back, sizeof back, "%llu", (unsigned long long)v);
        uint64_t v2;
        if (cli_parse_count(back, &v2, &err) != 0 || v2 != v)
            abort();
        if (cli_parse_bytes(s, &w, &err) != 0 || w != v)
            abort();
        if (strspn(s, "0123456789") == size) {
            errno = 0;
            unsigned long long u = strtoull(s, NULL, 10);
            if (errno == 0 && u != v)
                abort();
        }
    }
    err = NULL;
    rc = cli_parse_bytes(s, &w, &err);
    if (rc != 0 && !err)
        abort();

    uint64_t lo = size > 0 ? data[0] : 0, hi = lo + 1000;
    err = NULL;
    rc = cli_parse_uint(s, lo, hi, &v, &err);
    if (rc == 0 && (v < lo || v > hi))
        abort();
    if (rc != 0 && !err)
        abort();

    double d = 0;
    err = NULL;
    rc = cli_parse_double(s, 0.0, 1.0, 0, 0, &d, &err);
    if (rc == 0 && !(isfinite(d) && d > 0.0 && d < 1.0))
        abort();
    if (rc != 0 && !err)
        abort();
    rc = cli_parse_double(s, -5.0, 5.0, 1, 1, &d, &err);
    if (rc == 0 && !(isfinite(d) && d >= -5.0 && d <= 5.0))
        abort();

    int flag = -1;
    rc = cli_parse_hashing(s, &flag);
    if (rc == 0 && flag != 0 && flag != 1)
        abort();
    flag = -1;
    rc = cli_parse_recycle(s, &flag);
    if (rc == 0 && flag != 0 && flag != 1)
        abort();
    free(s);
    return 0;
}
