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
 *     positions.  The blocked layout (rbf_config.layout) first picks one
 *     512-bit block, then the k positions inside it the same way.
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
 * The library never prints, exits or aborts.
 *
 * Threads.  A filter made with `concurrent = 0` (the default) is not
 * thread-safe: use one per thread or lock around it; rbf_contains* on a
 * handle that no thread modifies may run concurrently.  A filter made with
 * `concurrent = 1` (or switched with rbf_set_concurrent) may be used by any
 * number of threads at once through rbf_insert*, rbf_contains*, the batch
 * calls, rbf_recycle, rbf_get_stats, rbf_save* and the read-only calls
 * (rbf_get_config, rbf_hash, rbf_positions), for every variant:
 *
 *   - Inserts take no lock.  A thread announces itself in a slot of its
 *     own (one CAS on a cache line no other thread writes), tests the k
 *     bits, ORs the words that change with atomic fetch-or, and counts the
 *     bits it newly set from the old words it got back.  Positions that
 *     share a word are merged into one (word, mask) pair first.
 *   - Counters live in those per-thread slots (64-byte lines, 128 slots,
 *     8 KiB per filter: the whole memory cost, with no spare bit array);
 *     rbf_get_stats sums them.  Threads beyond 128 share slots (a busy
 *     slot sends a thread on to the next one).
 *   - sigma and N are held exactly: a thread reserves budget for a message
 *     (its bits that look clear, and one message) from a private chunk it
 *     took from the filter's pool; chunks shrink as the pool nears the
 *     threshold.  A message for which the pool has no budget left takes the
 *     slow path: it stops the inserters (see recycling below), settles
 *     every thread's chunk, and decides on the exact counts, just as the
 *     single-writer filter would.  So the recycle point is exactly the
 *     single-writer one (the first message with b + d > sigma, or the N-th
 *     bit-setting message), sigma is never exceeded, and the models apply
 *     unchanged.
 *   - Recycling is linearizable.  The recycler closes a gate (a generation
 *     counter, odd while closed), waits until no slot is in use, clears the
 *     bits in place (no spare array: no memory beyond the slots), and opens
 *     the gate.  Each insert therefore takes effect wholly before or wholly
 *     after a recycle, and a message whose insert returned before a recycle
 *     began is held until that recycle: every rbf_contains, from any
 *     thread, that starts after the insert returned and before that
 *     recycle sees it (two-phase: until the message leaves the frozen
 *     filter).  rbf_contains and rbf_get_stats
 *     take no slot: they read the gate before and after (a seqlock) and
 *     retry if a recycle ran meanwhile.  Inserters and readers wait (spin,
 *     then sched_yield) while a recycle clears the array: M/8 bytes of
 *     stores.
 *   - Two threads inserting the same message at the same moment may both
 *     be told "new" (each set some of its bits); a single writer would have
 *     told the second "seen".  Counters still agree with the bits.
 *   - rbf_save, rbf_save_buffer and rbf_save_size may run while other
 *     threads insert: saving stops the inserters while the filter is
 *     serialised (into the buffer, or written to the file; the fsync and
 *     rename come after), so the saved file is a consistent state.
 *   - rbf_free and rbf_set_concurrent must not run while any other thread
 *     uses the filter (join or quiesce them first).
 *   - `concurrent` is a run-time choice: it is not saved; rbf_load gives a
 *     single-writer filter (rbf_set_concurrent switches it).
 *   - A single-writer filter is exactly as fast as before (the same
 *     machine code on its fast paths).  A concurrent insert costs several
 *     times a single-writer one on one thread (its atomic operations: about
 *     one per word with a bit to set), but threads share no written cache
 *     line on the fast path, so it scales with cores; on one or two cores a
 *     mutex around a single-writer filter is faster (docs/performance.md,
 *     `rbf bench filter --threads N`).
 */
#ifndef RBF_H
#define RBF_H

#include <stddef.h>
#include <stdint.h>

#include "rbf_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The layout of the positions: rbf_layout and RBF_BLOCK_BITS (rbf_base.h). */

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
    rbf_layout layout;        /* RBF_LAYOUT_FLAT (default, 0) or RBF_LAYOUT_BLOCKED */
    unsigned concurrent;      /* 0 (default): single writer; 1: thread-safe, lock-free inserts */
    uint64_t reserved_[7];    /* zero: room for new fields (rbf_base.h) */
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
 * or 2, non-colliding with hashes > bits per filter, the blocked layout
 * with bits per filter not a multiple of 512, concurrent not 0 or 1, an
 * unknown enum, a non-zero reserved word) or
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
/* A copy of f (configuration, seed, counters, both bit arrays) in *out: the
 * two then answer alike and change independently.  RBF_OK, RBF_EINVAL,
 * RBF_ENOMEM. */
RBF_API int rbf_copy(const rbf *f, rbf **out);

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
 * For the blocked layout they are global positions, block * 512 + offset.
 * Returns k or a negative code.  For tests and tools. */
RBF_API int rbf_positions(const rbf *f, uint64_t hash, uint64_t *pos);

/* The code path this filter's insertions and membership tests take, chosen
 * when it was made from what the processor has (every path gives the same
 * answers, counters and saved bytes): "avx512", "avx2", "portable" (the
 * per-k C code of every processor), "reference" (the scalar reference:
 * configurations no fast path takes, or RBF_NO_SIMD set) or "concurrent".
 * The environment variables RBF_NO_AVX512, RBF_NO_AVX2 and RBF_NO_SIMD,
 * read when a filter is made, switch the faster paths off (for tests and
 * benchmarks).  A static string; "" for NULL. */
RBF_API const char *rbf_path(const rbf *f);

/* Test-and-insert at positions computed before with rbf_positions (by a
 * filter of the same configuration): exactly rbf_insert_hash on the hash
 * they came from, without computing them again.  Returns what
 * rbf_insert_hash would (1 reported new, 0 seen) plus RBF_RECYCLED (2)
 * when the filter recycled during this insertion; RBF_EINVAL on a NULL
 * argument or a position outside the filter. */
#define RBF_RECYCLED 2
RBF_API int rbf_insert_positions(rbf *f, const uint64_t *pos);

/* The same for n messages of a table: message i's positions are
 * pos[ids[i] * k .. ids[i] * k + k - 1] (k = the filter's hashes; every
 * ids[i] must index a message of the table: not checked), and results[i]
 * (results may be NULL) receives what rbf_insert_positions returns for
 * it; in order, exactly as n single calls (one call per block, no call
 * per message).  Returns n, or RBF_EINVAL on a NULL pos or ids with n > 0
 * (nothing done) or at the first message with a position outside the
 * filter (the ones before it are done: rbf_stats.inserts tells how many).
 * The simulator's path for pool workloads. */
RBF_API int64_t rbf_insert_positions_many(rbf *f, const uint64_t *pos, const uint32_t *ids,
                                          size_t n, uint8_t *results);

/* The number of recycles so far (rbf_stats.cycles), alone and cheaply; 0
 * for NULL. */
RBF_API uint64_t rbf_cycles(const rbf *f);

/* Recycle now, exactly as a threshold recycle would (one-phase: clear;
 * two-phase: clear the frozen filter and swap).  Returns RBF_OK, or
 * RBF_EINVAL if f is NULL. */
RBF_API int rbf_recycle(rbf *f);

/* Read the counters.  `out` is fully written; f must not be NULL.  On a
 * concurrent filter the counts are a consistent sum taken while no recycle
 * ran: bits_set <= sigma and reported_new <= inserts hold, and each count
 * lies between its values at the start and at the end of the call. */
RBF_API void rbf_get_stats(const rbf *f, rbf_stats *out);

/* Make a filter concurrent (1) or single-writer (0), e.g. one loaded with
 * rbf_load, which is always single-writer.  No other thread may use f
 * during the call.  Returns RBF_OK, RBF_EINVAL (f NULL or concurrent not
 * 0/1) or RBF_ENOMEM (the per-thread slots could not be allocated; f is
 * unchanged). */
RBF_API int rbf_set_concurrent(rbf *f, unsigned concurrent);

/* Save a filter to `path`, atomically: written to a temporary file
 * `path`.tmp.XXXXXX in the same directory, fsync'ed, then renamed over
 * `path`; a crash leaves either the old file or the new one (and possibly
 * the temporary file, never read, safe to delete).
 *
 * What is at `path` is respected:
 *   - nothing: a new file is created with mode 0666 minus the umask, as
 *     fopen would;
 *   - a regular file: replaced; it keeps its permission bits and, where the
 *     process may set them (root), its owner and group.  Other names of a
 *     hard-linked file keep the old contents;
 *   - a symlink: followed (through any chain of links) to the regular file
 *     it names, which is replaced as above in its own directory; the link
 *     stays the same link.  A dangling link is refused (errno ENOENT);
 *   - anything else is refused and left untouched: a directory (errno
 *     EISDIR), a device, FIFO or socket (errno EEXIST), or a link to one.
 * Returns RBF_OK, RBF_EINVAL (NULL or empty argument), RBF_ENOMEM, or
 * RBF_EIO with errno saying why (the above, or the failing system call's).
 * The format (docs/file-format.md) is portable: magic, version,
 * little-endian fields, XXH3 checksum. */
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

/* Part of the image rbf_save_buffer would write now: bytes [offset,
 * offset + len) into buf, for a range within the first size - 8 bytes
 * (size from rbf_save_size; the last 8 bytes are the checksum,
 * XXH3_64bits of every byte before it, which the caller computes over the
 * bytes it took: docs/file-format.md).  Costs O(len), whatever the
 * filter's size: for streaming an image in pieces (the Redis module's
 * SCANDUMP).  Pieces taken at different times are of different states if
 * the filter changed in between; keeping them consistent is the caller's
 * business.  Returns RBF_OK, RBF_EINVAL (NULL f, or NULL buf with len > 0)
 * or RBF_ERANGE (the range reaches past size - 8). */
RBF_API int rbf_save_range(const rbf *f, uint64_t offset, void *buf, size_t len);

/* Dumps: the image of a filter as it was at rbf_dump_open, read front to
 * back in pieces while the filter goes on changing (the Redis module's
 * SCANDUMP streams one).  Before every write to the filter while a dump is
 * open, tell the dump what is coming: rbf_dump_before_insert with the keys
 * about to be inserted (it works out itself whether they may recycle), or
 * rbf_dump_before_recycle before a recycle or any other write.  The dump
 * then keeps copies of the pages of the image not yet read that the write
 * may change (4 KiB each; rbf_dump_held says how many bytes it holds), and
 * rbf_dump_read serves them.  The filter must outlive its dumps; any
 * number of dumps of one filter may be open.  The last 8 bytes read are
 * the image's checksum, so the bytes read, end to end, are exactly what
 * rbf_save_buffer would have written at rbf_dump_open and load with
 * rbf_load_buffer.
 *
 * rbf_dump_open: RBF_OK, RBF_EINVAL, RBF_ENOMEM.  rbf_dump_before_*:
 * RBF_OK, or RBF_ENOMEM when a copy could not be made: the dump is then
 * broken (every later call answers RBF_ENOMEM) and should be closed.
 * rbf_dump_read stores in *got the bytes it wrote into buf (at most cap; 0
 * once the whole image was read). */
typedef struct rbf_dump rbf_dump;
RBF_API int rbf_dump_open(const rbf *f, rbf_dump **out);
RBF_API void rbf_dump_close(rbf_dump *d);
RBF_API uint64_t rbf_dump_size(const rbf_dump *d);   /* image bytes, checksum included */
RBF_API uint64_t rbf_dump_offset(const rbf_dump *d); /* bytes read so far */
RBF_API uint64_t rbf_dump_held(const rbf_dump *d);   /* bytes of page copies held */
RBF_API int rbf_dump_before_insert(rbf_dump *d, const void *const *keys, const size_t *lens,
                                   size_t n);
RBF_API int rbf_dump_before_recycle(rbf_dump *d);
RBF_API int rbf_dump_read(rbf_dump *d, void *buf, size_t cap, size_t *got);

/* The total size of the image whose first len bytes are at head (at least
 * its header: 128 bytes for a flat filter, 192 for a blocked one), from
 * its header, which is checked (magic, version, header checksum): for a
 * reader that assembles an image in pieces and must know how much is
 * coming.  RBF_OK, RBF_EFORMAT (not an rbf image, or a version this
 * library does not read), RBF_ECORRUPT (a damaged header), RBF_ERANGE
 * (len shorter than the header), RBF_EINVAL (NULL). */
RBF_API int rbf_image_size(const void *head, size_t len, uint64_t *size);

#ifdef __cplusplus
}
#endif

#endif /* RBF_H */
