/*
 * fuzz_load_file.c -- libFuzzer harness for rbf_load: the input is written to
 * a temporary file and loaded; the file loader must agree with
 * rbf_load_buffer on every input (same status, same filter).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rbf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[4096];

static void cleanup(void)
{
    if (path[0])
        unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/rbf-fuzz-load.%ld", t && *t ? t : "/tmp", (long)getpid());
        atexit(cleanup);
    }
    FILE *fp = fopen(path, "wb");
    if (!fp)
        abort();
    if (size && fwrite(data, 1, size, fp) != size)
        abort();
    if (fclose(fp) != 0)
        abort();
    rbf *a = (rbf *)&a, *b = (rbf *)&b;
    int ra = rbf_load(path, &a);
    int rb = rbf_load_buffer(data, size, &b);
    if (ra != rb)
        abort();
    if (ra != RBF_OK) {
        if (a || b)
            abort();
        return 0;
    }
    uint64_t la, lb;
    rbf_save_size(a, &la);
    rbf_save_size(b, &lb);
    uint8_t *x = malloc(la), *y = malloc(lb);
    if (!x || !y || la != lb || rbf_save_buffer(a, x, la) || rbf_save_buffer(b, y, lb) ||
        memcmp(x, y, la) != 0)
        abort();
    free(x);
    free(y);
    rbf_free(a);
    rbf_free(b);
    return 0;
}
