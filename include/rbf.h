/*
 * rbf.h -- Recycling Bloom Filters.
 *
 * A recycling Bloom filter is a Bloom filter that clears itself when it gets
 * too full, so it can de-duplicate an endless stream in fixed memory.  This
 * header is the whole public filter API; the models are in rbf_model.h and
 * the simulator in rbf_sim.h.
 *
 * Semantics (see docs/semantics.md and the paper's section II):
 *
 *   - A filter has M bits (`bits`) and k hash positions per message
 *     (`hashes`).  Positions are independent and uniform on 0..M-1, derived
 *     from one keyed 64-bit XXH3 hash of the message extended by a
 *     splitmix64 stream and reduced by multiply-shift.  Colliding hashing
 *     draws the k positions with replacement, non-colliding draws k distinct
 *     positions.
 *   - Insertion is test-first: d = number of distinct positions whose bit is
 *     0.  d == 0 means the message is reported seen (a repeat or a false
 *     positive).  Otherwise the message is new.
 *   - sigma-bounded: the filter never holds more than sigma set bits.  If
 *     b + d > sigma the filter recycles (clears) instead of taking the
 *     message; non-retaining forgets the message, retaining inserts it into
 *     the fresh filter.
 *   - N-bounded: right after the N-th bit-setting insertion of a cycle the
 *     filter recycles.  A message that sets no bit is never counted.
 *   - Two-phase: two filters of floor(M/2) bits, one active and one frozen.
 *     A message is reported seen if all its bits are set in the active or in
 *     the frozen filter.  Every message goes through the test-first
 *     insertion into the active filter.  When the active filter must
 *     recycle, the frozen one is cleared and becomes active, and the full
 *     active filter (without the triggering message) becomes frozen.
 *
 * Conventions: functions return 0 (or a documented non-negative value) on
 * success and a negative RBF_E* code on failure; rbf_strerror() names it.
 * The version, status codes, the hashing and recycling enums, the
 * allocator hook and the ABI policy (how rbf_config and rbf_stats grow)
 * are in rbf_base.h, included here.
 * The library never prints, exits or aborts.  An rbf handle is not
 * thread-safe: use one per thread or lock around it; rbf_contains* on a
 * handle that no thread modifies may run concurrently.
 */
#ifndef RBF_H
#define RBF_H

#include <stddef.h>
#include <stdint.h>

#include "rbf_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Filter configuration.  Initialise with rbf_config_init(), then set
 * `bits`, `hashes` and exactly one of `sigma` / `messages`. */
typedef struct rbf_config {
    uint64_t bits;            /* M: total memory in bits (two-phase: split evenly) */
    unsigned hashes;          /* k: positions per message, 1..RBF_MAX_HASHES */
    uint64_t sigma;           /* sigma-bounded threshold in set bits per filter (0 = off) */
    uint64_t messages;        /* N-bounded threshold in bit-setting messages (0 = off) */
    rbf_hashing hashing;      /* RBF_COLLIDING (default) or RBF_NON_COLLIDING */
    rbf_recycle_mode recycle; /* RBF_NON_RETAINING (default) or RBF_RETAINING */
    unsigned phases;          /* 1 (default) or 2 */
    uint64_t seed;            /* hash key: rbf_config_init draws one from the OS;
                                 set it yourself for reproducible positions */
    uint64_t reserved_[8];    /* zero: room for new fields (rbf_base.h) */
} rbf_config;

/* Counters of a filter.  All counts are since rbf_new()/rbf_load(). */
typedef struct rbf_stats {
    uint64_t bits;            /* bits per filter (M, or floor(M/2) for two-phase) */
    uint64_t bits_set;        /* set bits of the active filter */
    uint64_t frozen_bits_set; /* set bits of the frozen filter (two-phase; else 0) */
    uint64_t cycles;          /* recycles so far */
    uint64_t cycle_messages;  /* bit-setting insertions into the active filter this cycle */
    uint64_t inserts;         /* rbf_insert* calls */
    uint64_t reported_new;    /* of those, reported new (returned 1) */
    uint64_t seed;            /* the hash key in use */
    uint64_t reserved_[8];    /* written as zero: room for new counters (rbf_base.h) */
} rbf_stats;

/* Opaque filter handle. */
typedef struct rbf rbf;

/* Fill `cfg` with defaults: colliding, non-retaining, one phase, a random
 * seed from the operating system (getrandom), and zero
 * bits/hashes/sigma/messages, which the caller must set.  Every field,
 * reserved words included, is written: call it before setting fields.  A known seed lets
 * whoever knows it choose messages that collide or fill the filter fast:
 * keep the random one unless you need reproducible runs. */
RBF_API void rbf_config_init(rbf_config *cfg);

/* Check a configuration without allocating.  Returns RBF_OK or RBF_EINVAL
 * (bits == 0, hashes == 0 or > RBF_MAX_HASHES, both or neither of
 * sigma/messages, sigma < hashes or sigma >= bits per filter, phases not 1
 * or 2, non-colliding with hashes > bits per filter, an unknown enum, a
 * non-zero reserved word) or
 * RBF_ENOMEM (bits too large to address).  If `why` is not NULL it receives
 * a static string saying what is wrong, or NULL on success. */
RBF_API int rbf_config_check(const rbf_config *cfg, const char **why);

/* Create a filter.  On success returns RBF_OK and stores a new handle in
 * *out, owned by the caller (release with rbf_free).  On failure *out is
 * set to NULL and a negative code is returned. */
RBF_API int rbf_new(const rbf_config *cfg, rbf **out);

/* Release a filter.  rbf_free(NULL) does nothing. */
RBF_API void rbf_free(rbf *f);

/* The configuration the filter runs with. */
RBF_API void rbf_get_config(const rbf *f, rbf_config *out);

/* The keyed 64-bit hash of a message: XXH3_64bits_withSeed(key, len, seed).
 * Compute it once and pass it to the *_hash functions. `key` may be NULL
 * only when len == 0. */
RBF_API uint64_t rbf_hash(const rbf *f, const void *key, size_t len);

/* Test-and-insert a message.  Returns 1 if the message is reported new
 * (its bits were set; for the message that triggers a non-retaining
 * sigma-bounded recycle, new but forgotten), 0 if reported seen, or
 * RBF_EINVAL if f is NULL or key is NULL with len > 0. */
RBF_API int rbf_insert(rbf *f, const void *key, size_t len);

/* Membership test: 1 if the message would be reported seen, 0 if not,
 * RBF_EINVAL on a NULL argument.  Changes nothing. */
RBF_API int rbf_contains(const rbf *f, const void *key, size_t len);

/* As rbf_insert / rbf_contains, for a message whose keyed hash the caller
 * already computed (rbf_hash, or any uniform 64-bit value per message). */
RBF_API int rbf_insert_hash(rbf *f, uint64_t hash);
RBF_API int rbf_contains_hash(const rbf *f, uint64_t hash);

/* Batch versions: process n messages in order, exactly as n single calls
 * would, overlapping their memory accesses (positions are computed ahead and
 * prefetched).  results[i] receives what the single call would return (0 or
 * 1); `results` may be NULL.  Returns the number of messages for which
 * the single call returns 1 (reported new for rbf_insert_many, reported
 * seen for rbf_contains_many), or a negative code on a NULL argument. */
RBF_API int64_t rbf_insert_many(rbf *f, const uint64_t *hashes, size_t n, uint8_t *results);
RBF_API int64_t rbf_contains_many(const rbf *f, const uint64_t *hashes, size_t n,
                                  uint8_t *results);

/* Same over n keys: keys[i] with lens[i] bytes, hashed with rbf_hash (the
 * hashing is overlapped with the memory accesses too).  Returns the number
 * reported new.  Every key is checked first: if one is NULL with a non-zero
 * length, nothing is processed and RBF_EINVAL is returned. */
RBF_API int64_t rbf_insert_keys(rbf *f, const void *const *keys, const size_t *lens, size_t n,
                                uint8_t *results);

/* Batch membership test over n keys, as n rbf_contains calls: results[i]
 * (if `results` is not NULL) receives 1 if keys[i] would be reported seen,
 * else 0.  Returns the number reported seen, or RBF_EINVAL on a NULL
 * argument (checked for every key before any is processed).  Changes
 * nothing. */
RBF_API int64_t rbf_contains_keys(const rbf *f, const void *const *keys, const size_t *lens,
                                  size_t n, uint8_t *results);

/* The bit positions (0..bits per filter - 1) of a message's hash, k of
 * them, in the order they are drawn; `pos` must hold `hashes` entries.
 * Returns k or a negative code.  For tests and tools. */
RBF_API int rbf_positions(const rbf *f, uint64_t hash, uint64_t *pos);

/* Test-and-insert at positions computed before with rbf_positions (by a
 * filter of the same configuration): exactly rbf_insert_hash on the hash
 * they came from, without computing them again.  Returns what
 * rbf_insert_hash would (1 reported new, 0 seen) plus RBF_RECYCLED (2)
 * when the filter recycled during this insertion; RBF_EINVAL on a NULL
 * argument or a position outside the filter. */
#define RBF_RECYCLED 2
RBF_API int rbf_insert_positions(rbf *f, const uint64_t *pos);

/* The number of recycles so far (rbf_stats.cycles), alone and cheaply; 0
 * for NULL. */
RBF_API uint64_t rbf_cycles(const rbf *f);

/* Recycle now, exactly as a threshold recycle would (one-phase: clear;
 * two-phase: clear the frozen filter and swap).  Returns RBF_OK, or
 * RBF_EINVAL if f is NULL. */
RBF_API int rbf_recycle(rbf *f);

/* Read the counters.  `out` is fully written; f must not be NULL. */
RBF_API void rbf_get_stats(const rbf *f, rbf_stats *out);

/* Save a filter to `path`, atomically: written to a temporary file in the
 * same directory, fsync'ed, then renamed over `path`; a crash leaves either
 * the old file or the new one.  Returns RBF_OK, RBF_EINVAL or RBF_EIO
 * (errno says why).  The format (docs/file-format.md) is portable: magic,
 * version, little-endian fields, XXH3 checksum. */
RBF_API int rbf_save(const rbf *f, const char *path);

/* Load a filter saved by rbf_save.  On success stores a new handle in *out.
 * A truncated, corrupted or foreign file is rejected (RBF_ECORRUPT,
 * RBF_EFORMAT) and *out is NULL: never half-loaded.  RBF_EIO if the file
 * cannot be opened or read: errno then says why (ENOENT for a missing file;
 * strerror(errno) is the message to show a user). */
RBF_API int rbf_load(const char *path, rbf **out);

/* Same, from/to memory.  rbf_save_size gives the exact byte count;
 * rbf_save_buffer writes it into buf (cap bytes) and returns RBF_OK or
 * RBF_ERANGE if cap is too small. */
RBF_API int rbf_save_size(const rbf *f, uint64_t *size);
RBF_API int rbf_save_buffer(const rbf *f, void *buf, size_t cap);
RBF_API int rbf_load_buffer(const void *buf, size_t len, rbf **out);

#ifdef __cplusplus
}
#endif

#endif /* RBF_H */
