/*
 * rbf_sim.h -- discrete-event simulator of recycling Bloom filters.
 *
 * The simulator feeds a workload of message arrivals to the library's real
 * filter (rbf_insert_hash / rbf_recycle; never a copy of it) and keeps the
 * ground truth beside it: for every message, the cycle in which it was last
 * truly held (inserted, or a false positive, which stays held because all its
 * bits are set).  Each arrival is then classified as new or held, false
 * positive or not, repeat or first-ever, false negative or not.  The exact
 * definitions are in docs/simulator.md (MODEL.md sections 1-2 are the
 * contract):
 *
 *   - new arrival: the message is not truly held by the filter(s) that would
 *     report it (one-phase: not held since the last recycle; two-phase: not
 *     held in the current or the previous cycle).
 *   - count-instance rate (`fp`, the models' measure):
 *       false-positive new arrivals / new arrivals;
 *   - count-first (`fp_first`): false-positive new arrivals / all arrivals;
 *   - count-each (`fp_each`): arrivals of a message while it is held because
 *     of a false positive (the false-positive arrival and its repeats until
 *     the message stops being held) / all arrivals;
 *   - false-negative rate (`fn`): repeat arrivals (the message arrived
 *     earlier in the same epoch) reported new / repeat arrivals.
 *
 * An epoch is one independent run: a fresh empty filter, its own random
 * stream derived from (seed, epoch index), `warmup` arrivals that are not
 * counted, then `arrivals` counted ones.  Epochs run in parallel on
 * `threads` threads; the numbers depend only on the configuration and the
 * seed, never on the thread count.  Results give per-epoch rates and their
 * mean with a 99% Student-t confidence interval across epochs.
 *
 * Conventions as in rbf.h: 0 on success, negative RBF_E* codes (rbf_base.h;
 * rbf_strerror names them) on failure; the simulator never prints.  Public
 * structs follow the ABI policy of rbf_base.h: reserved words at the end,
 * zeroed by rbf_sim_config_init, refused when non-zero by the checks.
 */
#ifndef RBF_SIM_H
#define RBF_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "rbf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- workloads */

/* The kind is an rbf_workload_kind (rbf_base.h): RBF_WORKLOAD_UNIFORM
 * (uniform with replacement from `pool` pre-generated messages), _ZIPF
 * (message of rank r (1..pool) with probability r^-exponent / H), _FADING
 * (a brand-new message with probability new_fraction, else a repeat of a
 * recent message whose popularity decays with mean lifetime `lifetime`
 * arrivals; exact definition: docs/simulator.md) or _TRACE (the lines of a
 * file, in order; the epochs split the file).  Deprecated names (2.1): */
typedef rbf_workload_kind rbf_sim_workload_kind;
#define RBF_SIM_UNIFORM RBF_WORKLOAD_UNIFORM
#define RBF_SIM_ZIPF RBF_WORKLOAD_ZIPF
#define RBF_SIM_FADING RBF_WORKLOAD_FADING
#define RBF_SIM_TRACE RBF_WORKLOAD_TRACE

typedef struct rbf_sim_workload {
    rbf_workload_kind kind;
    uint64_t pool;        /* UNIFORM, ZIPF: number of distinct messages P >= 1 */
    double exponent;      /* ZIPF: S >= 0 (0 is uniform) */
    double new_fraction;  /* FADING: R in (0, 1] */
    double lifetime;      /* FADING: L > 0, in arrivals */
    const char *trace_path; /* TRACE: file, one message per line (not owned) */
    uint64_t reserved_[4]; /* zero: room for new fields (rbf_base.h) */
} rbf_sim_workload;

/* Parse a workload spec: "uniform:P", "zipf:P:S", "fading:R:L" or
 * "trace:FILE".  P accepts the plain decimal form only.  On success returns
 * RBF_OK; for a trace, out->trace_path points INTO `spec` (keep it alive).
 * On failure returns RBF_EINVAL and, if `why` is not NULL, stores a static
 * one-line description of what is wrong. */
RBF_API int rbf_sim_workload_parse(const char *spec, rbf_sim_workload *out, const char **why);

/* ---- configuration */

/* Progress callback: `done` of `total` arrivals (all epochs, warm-up
 * included).  Called from the thread that called rbf_sim_run, a few times a
 * second; return nonzero to cancel (rbf_sim_run then returns
 * RBF_ECANCELED).  Same signature as rbf_model_progress_fn. */
typedef rbf_progress_fn rbf_sim_progress_fn; /* deprecated name (2.1) */

typedef struct rbf_sim_config {
    /* The filter under test: bits, hashes, exactly one of sigma/messages,
     * hashing, recycle, phases, exactly as for rbf_new (two-phase: bits is
     * the total, each filter has bits/2).  filter.seed is ignored: message
     * hashes are random, positions depend on the hash only. */
    rbf_config filter;
    /* Oracle N-bounded policy (needs filter.messages = N): the filter itself
     * never recycles; the simulator calls rbf_recycle right after the N-th
     * truly new arrival (false positives included) of each cycle. */
    int oracle;
    rbf_sim_workload workload;
    uint64_t arrivals; /* counted arrivals per epoch (ignored for TRACE) */
    uint64_t warmup;   /* arrivals per epoch run but not counted (default 0) */
    unsigned epochs;   /* >= 1; a confidence interval needs >= 2 */
    uint64_t seed;     /* every random choice derives from (seed, epoch index) */
    unsigned threads;  /* worker threads; 0 = the online processors */
    rbf_sim_progress_fn progress; /* may be NULL */
    void *progress_ctx;
    uint64_t reserved_[8]; /* zero: room for new fields (rbf_base.h) */
} rbf_sim_config;

/* Defaults: the paper's setup (section V-A) except the filter's k and
 * threshold: bits 1000, colliding, non-retaining, one phase, uniform:1000,
 * 100000 arrivals, no warm-up, 7 epochs, seed 1, all processors, no
 * progress.  The caller sets filter.hashes and filter.sigma or
 * filter.messages. */
RBF_API void rbf_sim_config_init(rbf_sim_config *cfg);

/* Check a configuration without running it (the trace file is not opened).
 * Returns RBF_OK or RBF_EINVAL; `why`, if not NULL, receives a static
 * description of the problem or NULL. */
RBF_API int rbf_sim_config_check(const rbf_sim_config *cfg, const char **why);

/* ---- results */

/* Counts of one epoch (or summed over epochs), counted arrivals only. */
typedef struct rbf_sim_counts {
    uint64_t arrivals;        /* all counted arrivals */
    uint64_t new_arrivals;    /* arrivals of messages not truly held */
    uint64_t fp_first;        /* new arrivals reported seen (false positives) */
    uint64_t fp_each;         /* arrivals of messages held because of a false positive */
    uint64_t repeats;         /* arrivals of messages that arrived before in the epoch */
    uint64_t false_negatives; /* repeats reported new */
    uint64_t cycles;          /* recycles of the filter */
    uint64_t anomalies;       /* held messages reported new: a filter bug, always 0 */
    uint64_t reserved_[4]; /* zero: room for new fields (rbf_base.h) */
} rbf_sim_counts;

/* Rates of one epoch.  A rate with a zero denominator is 0. */
typedef struct rbf_sim_rates {
    double fp;                 /* count-instance: fp_first / new_arrivals */
    double fp_first;           /* count-first: fp_first / arrivals */
    double fp_each;            /* count-each: fp_each / arrivals */
    double fn;                 /* false_negatives / repeats */
    double messages_per_cycle; /* new_arrivals / cycles (0 if no recycle) */
    uint64_t reserved_[4]; /* zero: room for new fields (rbf_base.h) */
} rbf_sim_rates;

/* A rate across epochs: mean, sample standard deviation and the two-sided
 * Student-t confidence interval of the mean (t quantile from GSL) at 99% in
 * a result, at any level from rbf_sim_interval.  With a single value has_ci
 * is 0 and the interval is [mean, mean]. */
typedef struct rbf_sim_stat {
    double mean;
    double stddev;
    double ci_low, ci_high; /* mean -/+ t((1 + level) / 2, n-1) stddev / sqrt(n); in a
                               result, a rate with no event over the run (or only events)
                               reaches the exact binomial bound instead (docs/simulator.md) */
    int has_ci;
    uint64_t reserved_[2]; /* zero: room for new fields (rbf_base.h) */
} rbf_sim_stat;

/* The statistics of x[0..n-1] as rbf_sim_run computes them for each rate
 * (there with level 0.99): mean, sample standard deviation (n - 1 in the
 * denominator) and the two-sided Student-t interval of the mean at `level`.
 * Returns RBF_OK, or RBF_EINVAL (out zeroed) if x or out is NULL, n is 0 or
 * level is not in (0, 1).  Non-finite values give non-finite results. */
RBF_API int rbf_sim_interval(const double *x, unsigned n, double level, rbf_sim_stat *out);

typedef struct rbf_sim_result {
    unsigned epochs;
    rbf_sim_counts total;       /* summed over epochs */
    rbf_sim_counts *epoch_counts; /* epochs entries, owned by the result */
    rbf_sim_rates *epoch_rates;   /* epochs entries, owned by the result */
    rbf_sim_stat fp, fp_first, fp_each, fn, messages_per_cycle;
    unsigned threads;       /* worker threads actually used */
    double elapsed_seconds; /* wall time of rbf_sim_run */
    /* epochs entries, owned by the result: each epoch's counts from its
     * first recycle to its last (the complete cycles after the first, the
     * steady state a short run hides; zero when it recycled fewer than
     * twice).  The arrival that recycles is counted in the cycle it ends. */
    rbf_sim_counts *epoch_steady;
    uint64_t reserved_[7]; /* zero: room for new fields (rbf_base.h) */
} rbf_sim_result;

/* Run the simulation.  On success returns RBF_OK and fills *out (release
 * with rbf_sim_result_free).  Errors: RBF_EINVAL (bad configuration),
 * RBF_ENOMEM, RBF_EIO (trace file unreadable; errno kept), RBF_ECANCELED.
 * On failure *out holds nothing to free (it is zeroed). */
RBF_API int rbf_sim_run(const rbf_sim_config *cfg, rbf_sim_result *out);

/* Release what rbf_sim_run allocated in `r` and zero it.  NULL is a no-op. */
RBF_API void rbf_sim_result_free(rbf_sim_result *r);

/* Run the ground-truth bookkeeping over a given sequence instead of a
 * workload: n arrivals whose message identities are hashes[0..n-1] (equal
 * hashes are the same message), one epoch, no warm-up; cfg->workload,
 * arrivals, epochs, seed and threads are ignored.  `counts` receives the
 * counts; if `flags` is not NULL, flags[i] receives the RBF_SIM_F* bits of
 * arrival i.  For tests and for hand-checking definitions. */
enum {
    RBF_SIM_FNEW = 1,      /* a new arrival (not truly held) */
    RBF_SIM_FFP = 2,       /* a new arrival reported seen: a false positive */
    RBF_SIM_FEACH = 4,     /* counted by count-each */
    RBF_SIM_FREPEAT = 8,   /* the message arrived before */
    RBF_SIM_FFN = 16,      /* a repeat reported new: a false negative */
    RBF_SIM_FRECYCLE = 32  /* the filter recycled during this arrival */
};
RBF_API int rbf_sim_sequence(const rbf_sim_config *cfg, const uint64_t *hashes, size_t n,
                             rbf_sim_counts *counts, uint8_t *flags);

/* Read a trace as rbf simulate does (one message per line, the last line's
 * '\n' optional; equal lines are the same message): *ids receives the
 * message of each line as a dense id in order of first appearance
 * (malloc'ed: release with free), *n the lines, *distinct the ids.  For
 * rbf_model_fn_trace.  RBF_OK, RBF_EIO (errno kept), RBF_EINVAL (empty, or
 * 2^32 - 1 distinct lines or more), RBF_ENOMEM. */
RBF_API int rbf_sim_trace_read(const char *path, uint32_t **ids, uint64_t *n, uint32_t *distinct);

/* The models' count-instance prediction for this configuration, where one
 * exists: rbf_predict (include/rbf_predict.h) on cfg->filter with
 * cfg->oracle, the same answer the CLI, the Redis module and reproduce
 * give.  Stores the rate in *fp and, if `name` is not NULL, the model's
 * static name ("f_sigma^1", "f_sigma^2", "exact_oracle", "exact_real",
 * "f_N^2_real", "blocked f_sigma^1", ...; NULL when none applies).  Returns
 * RBF_OK, RBF_ENOMODEL (no model for this case: two-phase N-bounded
 * blocked) or the model's error. */
RBF_API int rbf_sim_model(const rbf_sim_config *cfg, double *fp, const char **name);

/* The steady state of a run: over the epochs that recycled at least twice
 * (`epochs` of them), each epoch's rates from its first recycle to its last
 * (rbf_sim_result.epoch_steady), and their means with 99% intervals, as
 * the whole-epoch fp and fn are given.  has_fp / has_fn are 0 where no
 * such epoch saw a new arrival / a repeat.  RBF_OK, RBF_EINVAL (NULL),
 * RBF_ENOMEM. */
typedef struct rbf_sim_steady {
    unsigned epochs;
    int has_fp, has_fn;
    rbf_sim_stat fp, fn;
    uint64_t reserved_[4]; /* zero: room for new fields (rbf_base.h) */
} rbf_sim_steady;
RBF_API int rbf_sim_steady_of(const rbf_sim_result *r, rbf_sim_steady *out);

/* Does a model's average false-positive rate `model` lie in the run's 99%
 * interval of fp?  1 inside, 0 outside, -1 when the run cannot judge it:
 * no interval (one epoch), or fewer than 10 false positives expected from
 * the model over the run's new arrivals (a "no" would then mislead).  The
 * verdict rbf simulate prints. */
RBF_API int rbf_sim_model_inside_ci99(const rbf_sim_result *r, double model);

#ifdef __cplusplus
}
#endif

#endif /* RBF_SIM_H */
