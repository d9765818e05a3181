/*
 * fuzz_load.c -- libFuzzer harness for rbf_load_buffer.
 *
 * Beyond "no crash, no leak, no undefined behaviour": a buffer that loads
 * must be a filter whose saved form is exactly the input (the format has
 * one encoding per filter), whose counters respect its configuration, and
 * that works; a buffer that does not load leaves *out NULL.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rbf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rbf *f = (rbf *)&f;
    int rc = rbf_load_buffer(data, size, &f);
    if (rc != RBF_OK) {
        if (f != NULL || rc >= 0)
            abort();
        return 0;
    }
    uint64_t len;
    if (rbf_save_size(f, &len) != RBF_OK || len != size)
        abort();
    uint8_t *copy = malloc(size);
    if (!copy || rbf_save_buffer(f, copy, size) != RBF_OK || memcmp(copy, data, size) != 0)
        abort();
    free(copy);
    rbf_config c;
    rbf_stats s;
    rbf_get_config(f, &c);
    rbf_get_stats(f, &s);
    if (rbf_config_check(&c, NULL) != RBF_OK || (c.sigma && s.bits_set > c.sigma) ||
        s.bits_set > s.bits || s.frozen_bits_set > s.bits || s.reported_new > s.inserts)
        abort();
    /* the loaded filter works, and keeps its limits */
    for (uint64_t i = 0; i < 64; i++) {
        int r = rbf_insert_hash(f, i * 0x9e3779b97f4a7c15ull);
        if (r != 0 && r != 1)
            abort();
        rbf_get_stats(f, &s);
        if (c.sigma && s.bits_set > c.sigma)
            abort();
    }
    rbf_free(f);
    return 0;
}
