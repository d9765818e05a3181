/*
 * concurrent.h -- the thread-safe filter (cfg.concurrent = 1).  Internal.
 *
 * The design is described in concurrent.c and in rbf.h ("Threads"); the
 * public calls dispatch here when f->conc is set.
 */
#ifndef RBF_FILTER_CONCURRENT_H
#define RBF_FILTER_CONCURRENT_H

#include <stddef.h>
#include <stdint.h>

#include "filter_internal.h"

/* Make f concurrent: allocate the slots and the pools, starting from f's
 * counters.  RBF_OK or RBF_ENOMEM (f unchanged).  The caller then chooses
 * the path again (rbf__choose_path), which takes the concurrent one. */
int rbf__conc_attach(struct rbf *f);

/* Back to single writer: settle the counters into f and free the state.
 * No other thread may use f.  The caller then chooses the path again. */
void rbf__conc_detach(struct rbf *f);

/* Whether the concurrent code computes positions by AVX-512 (the same
 * values as the scalar code); set by rbf__choose_path. */
void rbf__conc_use_vec(struct rbf *f, int vec);

/* The public calls on a concurrent filter. */
int rbf__conc_insert_hash(struct rbf *f, uint64_t hash);
int rbf__conc_contains_hash(const struct rbf *f, uint64_t hash);
/* rbf_insert_positions: the result plus RBF_RECYCLED when this insertion
 * recycled the filter. */
int rbf__conc_insert_positions(struct rbf *f, const uint64_t *pos);
int64_t rbf__conc_batch(struct rbf *f, int insert, const uint64_t *hashes,
                        const void *const *keys, const size_t *lens, size_t n,
                        uint8_t *results);
void rbf__conc_recycle(struct rbf *f);
void rbf__conc_stats(const struct rbf *f, rbf_stats *out);
/* The recycle count alone: one load (it changes only in exclusive sections). */
uint64_t rbf__conc_cycles(const struct rbf *f);

/* Stop every inserter and settle the counters into f's own fields (b, fb,
 * c, cycles, inserts, reported_new), which are then exact, until
 * rbf__conc_exclusive_end.  For saving. */
void rbf__conc_exclusive_begin(const struct rbf *f);
void rbf__conc_exclusive_end(const struct rbf *f);

/* Test hooks.  With debug on, every exclusive section checks that the
 * active array's popcount equals the settled bit count and is at most
 * sigma, that the frozen one's equals fb, and that the message count is
 * below N; rbf__conc_violations counts the failures.  rbf__conc_slow_paths
 * counts the inserts decided in an exclusive section. */
void rbf__conc_set_debug(struct rbf *f, int on);
uint64_t rbf__conc_violations(const struct rbf *f);
uint64_t rbf__conc_slow_paths(const struct rbf *f);

#endif
