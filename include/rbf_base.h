/*
 * rbf_base.h -- what every part of rbf shares: version, status codes, the
 * hashing and recycling vocabulary, the allocator hook, the splitmix64
 * generator, and the policy by which the public structs grow.
 *
 * rbf.h (the filter), rbf_model.h (the models) and rbf_sim.h (the
 * simulator) all include this header; a program never needs to include it
 * by itself.  It depends on nothing.
 *
 * ---- How the public structs grow (the ABI policy)
 *
 * Every public struct that a caller allocates (rbf_config, rbf_stats,
 * rbf_model_params, the model results, rbf_plan*, rbf_sim_*) ends with
 * reserved words (`reserved_`, an array of uint64_t) and keeps its size
 * from one 2.x release to the next:
 *
 *   - A new field takes the place of reserved words of the same total size,
 *     at the same offset, so sizeof() and every existing field's offset stay
 *     the same.  A program built against an older 2.x header therefore still
 *     passes structs of the right size, and struct arrays (curve rows) keep
 *     their stride.
 *   - Zero means "as before" for every new field: the *_init functions
 *     (rbf_config_init, rbf_model_params_init, rbf_plan_options_init,
 *     rbf_sim_config_init) zero the whole struct, reserved words included,
 *     so a program that calls them gets the behaviour of the version it was
 *     written for.  Always fill an input struct with its *_init function
 *     before setting fields.
 *   - Input checks refuse non-zero reserved words (RBF_EINVAL, "a field
 *     this version of the library does not know is set"), so a program built
 *     against a newer header that uses a new field fails cleanly on an older
 *     library instead of being silently ignored.
 *   - Output structs are written whole, reserved words as zero.
 *   - Only when a struct's reserve is used up, or a signature must change,
 *     does the major version and the shared library's soname change (as from
 *     1.x to 2.0, which introduced this policy).
 *
 * Compile-time and run-time versions: RBF_VERSION_NUMBER and
 * rbf_version_number() (major * 10000 + minor * 100 + patch).
 */
#ifndef RBF_BASE_H
#define RBF_BASE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RBF_VERSION_MAJOR 2
#define RBF_VERSION_MINOR 1
#define RBF_VERSION_PATCH 0
#define RBF_VERSION_STRING "2.1.0"
#define RBF_VERSION_NUMBER (RBF_VERSION_MAJOR * 10000 + RBF_VERSION_MINOR * 100 + RBF_VERSION_PATCH)

#if defined(_WIN32)
#define RBF_API
#elif defined(__GNUC__)
#define RBF_API __attribute__((visibility("default")))
#else
#define RBF_API
#endif

/* Status codes, one set for the filter, the models and the simulator:
 * 0 is success, errors are negative.  rbf_strerror() names each. */
enum {
    RBF_OK = 0,
    RBF_EINVAL = -1,    /* invalid argument or configuration, or outside a model's domain */
    RBF_ENOMEM = -2,    /* out of memory, or a size that cannot be allocated */
    RBF_EIO = -3,       /* a system call on a file failed (errno is kept) */
    RBF_EFORMAT = -4,   /* not an rbf file, or an unsupported version */
    RBF_ECORRUPT = -5,  /* an rbf file that is truncated or damaged */
    RBF_ERANGE = -6,    /* a number out of its valid range, or a buffer too small */
    RBF_ECANCELED = -7, /* a progress callback asked to stop */
    RBF_ENOMODEL = -8   /* no model exists for this configuration */
};

/* Largest k accepted, by the filter and the models alike.  More hashes than
 * this never helps a Bloom filter. */
#define RBF_MAX_HASHES 256u

/* How the k positions of a message are drawn: with replacement
 * (colliding, the default) or k distinct positions (non-colliding). */
typedef enum { RBF_COLLIDING = 0, RBF_NON_COLLIDING = 1 } rbf_hashing;

/* What a sigma-bounded filter does with the message that triggers a
 * recycle: forget it (non-retaining, the default) or insert it into the
 * fresh filter (retaining). */
typedef enum { RBF_NON_RETAINING = 0, RBF_RETAINING = 1 } rbf_recycle_mode;

/* Where a message's k positions lie (docs/semantics.md, "Positions"):
 *   RBF_LAYOUT_FLAT     anywhere in the filter's bits (the default; the
 *                       positions of 1.x);
 *   RBF_LAYOUT_BLOCKED  all k in one 64-byte block of 512 bits, chosen
 *                       uniformly and independently of the positions inside
 *                       it: one cache line per message, a few times faster,
 *                       at a slightly higher false-positive rate for the
 *                       same memory.  Bits per filter must be a multiple of
 *                       RBF_BLOCK_BITS.
 * The filter and the models share it (rbf_model_params.layout). */
typedef enum { RBF_LAYOUT_FLAT = 0, RBF_LAYOUT_BLOCKED = 1 } rbf_layout;

/* The blocked layout's block: 512 bits, one 64-byte cache line. */
#define RBF_BLOCK_BITS 512u

/* The kind of workload (2.1: one enum for the simulator and the models;
 * rbf_sim_workload_kind and rbf_model_wl_kind are other names of it):
 *   RBF_WORKLOAD_UNIFORM  uniform with replacement from a pool of messages;
 *   RBF_WORKLOAD_ZIPF     a pool's message of rank r with probability
 *                         r^-exponent / H;
 *   RBF_WORKLOAD_FADING   a new message with probability new_fraction, else
 *                         a repeat of a recent one whose popularity decays
 *                         (docs/simulator.md);
 *   RBF_WORKLOAD_TRACE    measured traffic: the simulator replays a file's
 *                         lines in order; the false-negative model takes
 *                         the trace's distribution of repeat gaps. */
typedef enum {
    RBF_WORKLOAD_UNIFORM = 0,
    RBF_WORKLOAD_ZIPF = 1,
    RBF_WORKLOAD_FADING = 2,
    RBF_WORKLOAD_TRACE = 3
} rbf_workload_kind;

/* The one progress callback of the library (models, planner, simulator,
 * prediction): called with the work done so far out of `total`; a
 * non-zero return asks the computation to stop (RBF_ECANCELED).
 * rbf_model_progress_fn and rbf_sim_progress_fn are other names of it. */
typedef int (*rbf_progress_fn)(void *ctx, uint64_t done, uint64_t total);

/* ---- splitmix64 (Steele, Lea & Flood 2014), the project's one generator
 *
 * An additive Weyl sequence (the golden-ratio increment) through a strong
 * 64-bit finaliser: each output is a full-avalanche function of the state.
 * The filter extends a message's hash into its positions with this stream
 * (so the constants are part of the saved-file contract); the simulator,
 * the benchmarks and the tests seed and draw with it.  Public so that a
 * program can make the same reproducible key streams. */
#define RBF_GOLDEN UINT64_C(0x9e3779b97f4a7c15)

/* The finaliser alone: a bijection of 64-bit words. */
static inline uint64_t rbf_splitmix64_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* The next output of the stream whose state is *state. */
static inline uint64_t rbf_splitmix64(uint64_t *state)
{
    *state += RBF_GOLDEN;
    return rbf_splitmix64_mix(*state);
}

/* Version of the library actually linked, e.g. "2.0.0". */
RBF_API const char *rbf_version(void);

/* The same as a number: major * 10000 + minor * 100 + patch (compare with
 * RBF_VERSION_NUMBER, the version of the header compiled against). */
RBF_API int rbf_version_number(void);

/* A static English description of status code `code`; never NULL. */
RBF_API const char *rbf_strerror(int code);

/* ---- The allocator hook
 *
 * Every allocation rbf makes (filters and their bit arrays, model work
 * arrays, plans, simulator results) goes through these functions, so a
 * host program can account for the memory (the Redis module routes it
 * through the server's allocator) or fail it on purpose (tests).  `malloc`
 * and `realloc` return NULL on failure, as the C library's do; `free`
 * accepts NULL.  `ctx` is passed to each call unchanged.  The library asks
 * for no particular alignment from these functions: it aligns the large bit
 * arrays to 64-byte cache lines itself.
 *
 * Without a hook (and with the C library's allocator), bit arrays of 2 MiB
 * or more are mapped directly with huge pages where the system allows;
 * with a hook installed everything goes through the hook. */
typedef struct rbf_allocator {
    void *(*malloc)(void *ctx, size_t size);
    void *(*realloc)(void *ctx, void *ptr, size_t size);
    void (*free)(void *ctx, void *ptr);
    void *ctx;
    /* Optional (NULL: malloc then memset): n * size zeroed bytes.  Worth
     * giving for large filters: an allocator that gets fresh pages from the
     * system hands them out zeroed without touching them, where memset
     * would fault in every page at once (a 128 MiB filter: milliseconds
     * instead of seconds on a busy machine). */
    void *(*calloc)(void *ctx, size_t n, size_t size);
    void *reserved_[3]; /* NULL: room for new members */
} rbf_allocator;

/* Install `a` (copied) as the allocator of the whole library, or the C
 * library's allocator again when `a` is NULL.  Call it before any other rbf
 * function, or when no object made by rbf is alive: memory must be freed by
 * the allocator that made it.  Not thread-safe with respect to other rbf
 * calls.  Returns RBF_OK, or RBF_EINVAL if malloc, realloc or free is NULL
 * or a reserved member is not. */
RBF_API int rbf_set_allocator(const rbf_allocator *a);

#ifdef __cplusplus
}
#endif

#endif /* RBF_BASE_H */
