/*
 * filter_ref.h -- a plain reference model of MODEL.md section 1, for tests.
 *
 * The model keeps one byte per bit and does everything the obvious way, so
 * that it can be read against MODEL.md line by line.  It does not hash: it
 * takes the k positions of each message (from rbf_positions), so running it
 * in lock-step with the library checks the library's semantics, while the
 * positions themselves are checked by test_uniform.
 *
 * Semantics chosen in include/rbf.h where MODEL.md is open:
 *   - two-phase: a message is reported seen if all its bits are set in the
 *     active or in the frozen filter (tested before anything changes), and
 *     every message goes through the test-first insertion into the active
 *     filter;
 *   - a non-retaining sigma recycle reports the triggering message new (unless
 *     the frozen filter reports it seen) and forgets it.
 */
#ifndef FILTER_REF_H
#define FILTER_REF_H

#include <stdint.h>

#include "rbf.h"

typedef struct filter_ref {
    uint64_t m;        /* bits per filter */
    unsigned k;
    uint64_t sigma;    /* 0 = not sigma-bounded */
    uint64_t n;        /* 0 = not N-bounded */
    int retaining;
    unsigned phases;
    uint8_t *act;      /* one byte per bit */
    uint8_t *frz;      /* two-phase only */
    uint64_t b, fb, c, cycles, inserts, reported_new;
} filter_ref;

/* Set up from a configuration that rbf_config_check accepts; 0 or -1. */
int filter_ref_init(filter_ref *r, const rbf_config *cfg);
void filter_ref_free(filter_ref *r);

/* Test-and-insert the message with positions pos[0..k-1]: 1 new, 0 seen. */
int filter_ref_insert(filter_ref *r, const uint64_t *pos);

/* 1 if the message with these positions would be reported seen. */
int filter_ref_contains(const filter_ref *r, const uint64_t *pos);

/* A recycle: one-phase clears, two-phase clears the frozen filter and swaps. */
void filter_ref_recycle(filter_ref *r);

/* The counters in rbf_stats form (seed left 0). */
void filter_ref_stats(const filter_ref *r, rbf_stats *out);

/* Compare the model's bit arrays with a buffer written by rbf_save_buffer
 * (docs/file-format.md: 128-byte header, then little-endian 64-bit words,
 * bit i of a filter in word i/64 at bit i%64).  Returns 0 if equal, else
 * -1 and the first differing bit in *where (frozen filter bits offset by m). */
int filter_ref_compare_saved(const filter_ref *r, const uint8_t *buf, uint64_t len,
                             uint64_t *where);

#endif
