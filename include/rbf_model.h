/*
 * rbf_model.h -- analytic models of recycling Bloom filters.
 *
 * The average false-positive rate of sigma-bounded and N-bounded recycling
 * Bloom filters (one- and two-phase), expected messages per cycle, the
 * classic worst-case formula and the paper's N-bounded bounds, their exact
 * counterparts, and capacity planning.  The formulas and algorithms are in
 * docs/models.md (the contract is MODEL.md sections 3-5).
 *
 * This module depends on nothing else in the project (not even rbf.h): it is
 * pure numerics.  All functions are thread-safe and reentrant.  They return
 * RBF_OK (0) or a negative code and write results through pointers;
 * a result is never NaN and a probability is always within [0, 1].
 *
 * All rates are "count-instance" rates: the probability that a new message
 * (one not held by the filter) is reported seen, averaged over new messages.
 */
#ifndef RBF_MODEL_H
#define RBF_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "rbf_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes (RBF_OK, RBF_EINVAL for parameters outside a model's
 * domain, RBF_ENOMEM, RBF_ECANCELED when the progress callback asked to
 * stop), rbf_hashing, rbf_recycle_mode, RBF_MAX_HASHES and the ABI policy
 * (reserved words at the end of every struct, zeroed by the *_init
 * functions) are rbf_base.h's, shared with the filter and the simulator. */

/* Method for the sigma-bounded model.  RBF_MODEL_FAST is the 1.0 name of
 * the exact renewal pass (RBF_MODEL_EXACT); the asymptotic method is
 * RBF_MODEL_ASYMPTOTIC ("fast" on the command line). */
typedef enum {
    RBF_MODEL_FAST = 0,       /* = RBF_MODEL_EXACT: renewal pass, every sigma at once, O(kM) (MODEL.md 3) */
    RBF_MODEL_EXACT = 0,      /* the renewal pass */
    RBF_MODEL_PAPER = 1,      /* the paper's tau/pi recursions and linear solve, O(k^2 M) per sigma */
    RBF_MODEL_ASYMPTOTIC = 2, /* closed forms + quadrature after an exact start-up pass:
                               * milliseconds at any M, within 1e-9 of the exact pass
                               * (docs/models.md 3b); sigma below ~2^13 runs the exact pass */
    RBF_MODEL_AUTO = 3        /* exact pass when M <= RBF_MODEL_AUTO_EXACT_BITS, else asymptotic
                               * (N-bounded: also asymptotic above that many messages, or
                               * where the propagation would cost N k sqrt(M) > 5e7) */
} rbf_model_method;

/* RBF_MODEL_AUTO runs the exact pass up to this many bits (so every value
 * of 1.0 there is unchanged), the asymptotic method above. */
#define RBF_MODEL_AUTO_EXACT_BITS ((uint64_t)1 << 22)

/* Progress callback for long computations: `done` of `total` units.  Return
 * nonzero to cancel (the call then returns RBF_ECANCELED). */
typedef rbf_progress_fn rbf_model_progress_fn; /* deprecated name (2.1) */

/* Parameters shared by the models. */
typedef struct rbf_model_params {
    /* M: the bits of ONE filter (two-phase functions: of each half), where
     * rbf_config.bits is the whole memory.  bits_per_filter is the same
     * field under the name that says so (2.1); `bits` stays for source
     * compatibility. */
    union {
        uint64_t bits;
        uint64_t bits_per_filter;
    };
    unsigned hashes;    /* k >= 1 */
    rbf_hashing hashing;      /* RBF_COLLIDING (default) or RBF_NON_COLLIDING */
    rbf_recycle_mode recycle; /* RBF_NON_RETAINING (default) or RBF_RETAINING (sigma-bounded only) */
    rbf_model_method method;
    rbf_model_progress_fn progress; /* may be NULL */
    void *progress_ctx;
    /* Filter layout, an rbf_layout (RBF_LAYOUT_FLAT = 0, the default).
     * The flat functions above ignore it; the rbf_model_blocked_* functions
     * below model the blocked layout whatever it says. */
    int layout;
    uint64_t reserved_[8]; /* zero: room for new fields (rbf_base.h) */
} rbf_model_params;

/* Fill `p` with defaults: colliding, non-retaining, RBF_MODEL_AUTO, no
 * progress. */
RBF_API void rbf_model_params_init(rbf_model_params *p);

/* The false-positive probability of a new message when b of M bits are
 * set, into *out: (b/M)^k colliding, C(b,k)/C(M,k) non-colliding.  Returns
 * RBF_OK, or RBF_EINVAL (nothing written) outside the domain: bits or
 * hashes 0, hashes > RBF_MAX_HASHES, b > bits, non-colliding with
 * hashes > bits, an unknown hashing, out NULL. */
RBF_API int rbf_model_rho(uint64_t bits, unsigned hashes, rbf_hashing hashing, uint64_t b,
                          double *out);

/* One-phase sigma-bounded filter at threshold sigma (1 <= sigma < M):
 * average false-positive rate f_sigma^1 and expected messages per cycle
 * E[N_0]. */
typedef struct rbf_model_sigma_result {
    double fp;                /* f_sigma^1 */
    double expected_messages; /* E[N_0] */
    uint64_t reserved_[4]; /* written as zero: room for new fields (rbf_base.h) */
} rbf_model_sigma_result;

RBF_API int rbf_model_sigma(const rbf_model_params *p, uint64_t sigma,
                                  rbf_model_sigma_result *out);

/* f_sigma^1 and E[N_0] at n given thresholds sigmas[i] (any order, each
 * 1 <= sigma < M; retaining: sigma >= k): the exact method makes one pass
 * to the largest, the asymptotic one costs milliseconds per point at any
 * M.  This is the curve at any size: sample the points you need. */
RBF_API int rbf_model_sigma_points(const rbf_model_params *p, const uint64_t *sigmas,
                                         size_t n, rbf_model_sigma_result *out);

/* The points of a sampled curve (rbf model --curve --points P): P values
 * spread evenly over [first, last], each rounded to the nearest integer,
 * repeats dropped, first and last included (P = 1: last alone).  out must
 * hold min(P, last - first + 1) values; returns how many it wrote (0 when
 * P is 0 or last < first). */
RBF_API size_t rbf_model_curve_points(uint64_t first, uint64_t last, uint64_t points,
                                      uint64_t *out);

/* The whole curve at once (exact pass): for every sigma in 0..sigma_max
 * (sigma_max < M), fp[sigma] = f_sigma^1 and en0[sigma] = E[N_0].  Either
 * array may be NULL; each must hold sigma_max + 1 entries. */
RBF_API int rbf_model_sigma_curve(const rbf_model_params *p, uint64_t sigma_max, double *fp,
                                        double *en0);

/* Two-phase sigma-bounded filter: p->bits is M', the bits of EACH of the
 * two filters (total memory 2M').  fp is f_sigma^2, fp_active the one-phase
 * rate of the active filter, fp_frozen the average rate of the frozen one. */
typedef struct rbf_model_two_phase_result {
    double fp;
    double fp_active;
    double fp_frozen;
    double expected_messages; /* E[N_0] of one filter per cycle */
    uint64_t reserved_[4]; /* written as zero: room for new fields (rbf_base.h) */
} rbf_model_two_phase_result;

RBF_API int rbf_model_two_phase(const rbf_model_params *p, uint64_t sigma,
                                      rbf_model_two_phase_result *out);

/* The two-phase model at n given thresholds (as rbf_model_sigma_points). */
RBF_API int rbf_model_two_phase_points(const rbf_model_params *p, const uint64_t *sigmas,
                                             size_t n, rbf_model_two_phase_result *out);

/* The two-phase model for every sigma in 0..sigma_max (sigma_max < M') in
 * one renewal pass, O(k^2 M'): rows[sigma] as rbf_model_two_phase would
 * give it (fast method; p->method is ignored).  `rows` holds sigma_max + 1
 * entries.  Rows where the model is undefined (sigma = 0; retaining with
 * sigma < k) hold the formula's value, not an error. */
RBF_API int rbf_model_two_phase_curve(const rbf_model_params *p, uint64_t sigma_max,
                                            rbf_model_two_phase_result *rows);

/* Closed form for k = 1, colliding, non-retaining (paper section IV-D). */
RBF_API int rbf_model_k1_closed_form(uint64_t bits, uint64_t sigma, double *fp);

/* N-bounded models at N bit-setting messages per cycle.  f_w, f_o and f_a
 * are the paper's formulas (colliding hashing, whatever p->non_colliding
 * says); the exact_* values follow p->non_colliding.  p->retaining does
 * not apply; p->method chooses how the exact values are computed (below).
 * The exact values propagate the distribution of set bits message by
 * message over the window where it has mass above 1e-30: O(N k W) time with W about 25 standard deviations of the number
 * of set bits (O(sqrt(M)) wide), O(W) memory.  exact_real is 1 when mass
 * reaches a full filter (every new message is then a false positive, and
 * a real user never counts to N).  Once every bit is set (the window has
 * moved to M) the rest is in closed form (saturated_at), so any N past
 * that answers at once.  f_o and f_a at one N > 2^22 (RBF_MODEL_AUTO) or
 * > 65536 (RBF_MODEL_ASYMPTOTIC) are summed by Euler-Maclaurin, O(k log N),
 * within 1e-9 of the O(N) scan (docs/models.md 3b).  With
 * RBF_MODEL_ASYMPTOTIC, or RBF_MODEL_AUTO above RBF_MODEL_AUTO_EXACT_BITS
 * bits or messages, exact_worst and exact_oracle come from a positive representation of the
 * occupancy moments in milliseconds at any M and N, within 1e-9 of the
 * propagation (the propagation runs when its own error estimate says no);
 * exact_real too when rho(min(M, (N-1)k)) <= 1e-10, past saturation, and
 * at any load by the potentials of the fill chain (from about 2^16 bits at
 * k <= 5, 2^18 at k <= 12) when their error
 * estimate allows; by the propagation otherwise (docs/models.md 3b). */
typedef struct rbf_model_n_result {
    double f_w;          /* (1-(1-1/M)^{kN})^k: classic rate of the message after N */
    double f_o;          /* oracle lower bound: mean of f_w(i-1), i = 1..N */
    double f_a;          /* real-user lower bound */
    double exact_worst;  /* E[rho(B_N)]: exact rate of the message after N insertions */
    double exact_oracle; /* sum_{n<N} E[rho(B_n)] / N */
    double exact_real;   /* exact real-user (bit-setting count) rate */
    uint64_t saturated_at; /* 0, or the n from which E[rho(B_n)] = 1 (every bit set,
                            * to the 1e-30 window): later terms are taken as 1 in
                            * closed form, so any N answers at once */
    double exact_real_worst; /* E[rho(B'_N)]: the real user's rate just before it
                              * recycles (B'_N the bits after N bit-setting messages;
                              * 1 when the filter may fill first), the frozen
                              * filter's rate in two phases.  2.x: from a reserved word */
    uint64_t reserved_[3]; /* written as zero: room for new fields (rbf_base.h) */
} rbf_model_n_result;

RBF_API int rbf_model_nbounded(const rbf_model_params *p, uint64_t messages,
                                     rbf_model_n_result *out);

/* Every N at once: rows[n-1] receives the results for N = n, n = 1..messages
 * (`rows` holds `messages` entries).  Same cost as rbf_model_nbounded at
 * N = messages. */
RBF_API int rbf_model_nbounded_curve(const rbf_model_params *p, uint64_t messages,
                                           rbf_model_n_result *rows);

/* The classic worst-case formula alone (cheap): into *out the rate
 * (1-(1-1/M)^{kn})^k of the message after n insertions (0 for n = 0).
 * Returns RBF_OK, or RBF_EINVAL (nothing written) for bits or hashes 0,
 * hashes > RBF_MAX_HASHES, or out NULL. */
RBF_API int rbf_model_f_w(uint64_t bits, unsigned hashes, uint64_t n, double *out);

/* ---- Capacity planning (MODEL.md 5) ---- */

/* One policy's best choice. */
typedef struct rbf_plan_choice {
    int feasible;             /* 0 if no k <= max_hashes meets the target */
    unsigned hashes;          /* best k */
    uint64_t sigma;           /* sigma-bounded / two-phase: threshold (else 0) */
    uint64_t messages;        /* N-bounded policies: N (else 0) */
    double expected_messages; /* messages per cycle: E[N_0], or N */
    double fp;                /* the model's rate at this choice */
    double gain_vs_worst_case; /* expected_messages / worst_case.expected_messages */
    uint64_t reserved_[4]; /* written as zero: room for new fields (rbf_base.h) */
} rbf_plan_choice;

typedef struct rbf_plan {
    uint64_t bits;    /* total memory M */
    double target_fp; /* epsilon */
    rbf_plan_choice sigma_bounded; /* largest sigma with f_sigma^1 <= eps */
    rbf_plan_choice average_n;     /* largest N with f_a(N) <= eps */
    rbf_plan_choice oracle_n;      /* largest N with f_o(N) <= eps */
    rbf_plan_choice worst_case;    /* largest N with f_w(N) <= eps */
    rbf_plan_choice two_phase;     /* two filters of M/2, largest sigma with f_sigma^2 <= eps */
    uint64_t reserved_[8]; /* written as zero: room for new fields (rbf_base.h) */
} rbf_plan;

/* Which policies a plan computes (rbf_plan_options.policies, 2.1): a
 * caller that builds one kind of filter asks for that policy only, and the
 * plan takes a fraction of the time.  Policies not asked for are written
 * with feasible = 0. */
#define RBF_PLAN_SIGMA_BOUNDED 1u /* sigma_bounded */
#define RBF_PLAN_TWO_PHASE 2u     /* two_phase */
#define RBF_PLAN_N_BOUNDED 4u     /* average_n, oracle_n and worst_case */
#define RBF_PLAN_ALL 7u

/* Planner options (rbf_plan_options_init: max_hashes 32, colliding,
 * non-retaining, no progress, RBF_MODEL_AUTO, every policy). */
typedef struct rbf_plan_options {
    unsigned max_hashes;
    rbf_hashing hashing;
    rbf_recycle_mode recycle;
    rbf_model_progress_fn progress;
    void *progress_ctx;
    rbf_model_method method; /* RBF_MODEL_AUTO (default), _EXACT or _ASYMPTOTIC */
    uint64_t policies;       /* 0 (every policy) or RBF_PLAN_* bits (2.1) */
    uint64_t reserved_[7];   /* zero: room for new fields (rbf_base.h) */
} rbf_plan_options;

RBF_API void rbf_plan_options_init(rbf_plan_options *o);

/* For total memory `bits` and target average rate eps (0 < eps < 1): the
 * best k and threshold of every policy, maximising expected messages per
 * cycle (smallest k on ties).  Thresholds respect the filter's rules
 * (k <= sigma < bits per filter), so a choice can be used in an rbf_config
 * as it is.  A policy that no k <= max_hashes makes reach eps has
 * feasible = 0.  Fast: k values that cannot win are skipped by a proven
 * bound (docs/models.md).  With o->method = RBF_MODEL_AUTO (default) the
 * planners (rbf_plan_memory, rbf_plan_messages, _two_phase) run the exact
 * pass up to 2^16 bits per filter and the asymptotic method above (the
 * models switch at RBF_MODEL_AUTO_EXACT_BITS): the same k and thresholds
 * as the exact pass on every point checked, capacities and rates within
 * 5e-11 (docs/models.md 4); a plan takes milliseconds to about a tenth of
 * a second at any size up to 2^44 bits. */
RBF_API int rbf_plan_memory(uint64_t bits, double eps, const rbf_plan_options *o,
                                  rbf_plan *out);

/* The inverse: the least memory (bits) whose sigma-bounded one-phase plan
 * holds at least `messages` messages per cycle at average rate eps; `out`
 * (may be NULL) receives the plan at that memory, of the policies in
 * o->policies.  Capacity is not monotone in memory bit by bit (a larger
 * filter reaches the same sigma with slightly fewer messages), so the
 * answer is a memory that holds `messages` one bit below which does not:
 * the least one wherever capacity does not fall (docs/models.md). */
RBF_API int rbf_plan_messages(uint64_t messages, double eps, const rbf_plan_options *o,
                                    uint64_t *bits, rbf_plan *out);

/* Same question for the two-phase filter: least total memory whose
 * two-phase plan holds at least `messages` per cycle. */
RBF_API int rbf_plan_messages_two_phase(uint64_t messages, double eps,
                                              const rbf_plan_options *o, uint64_t *bits,
                                              rbf_plan *out);

/* ---- Blocked layout (docs/models.md, "Blocked layout") ----
 *
 * M bits = B blocks of RBF_MODEL_BLOCK_BITS (512) bits; every message picks
 * one block uniformly, independently of its k positions inside the block
 * (colliding: uniform with replacement on the block's 512 bits;
 * non-colliding: k distinct).  Insertion, sigma-bounded (global set-bit
 * count), N-bounded (global bit-setting count) and two-phase are exactly as
 * for the flat filter.  p->bits must be a positive multiple of 512 (for the
 * two-phase function: the bits of EACH half).
 *
 * Method: the arrivals are Poissonised (a rate-B Poisson clock; the message
 * sequence, and so every count per cycle, is unchanged), which makes the
 * blocks independent; a block's bits after L messages follow the flat
 * 512-bit occupancy chain; the global count is the sum of B independent
 * block counts, whose distribution is computed exactly (FFT convolution
 * powers, B <= 64 by default) or by a 4-cumulant Edgeworth expansion
 * (B > 64); the time integrals use Gauss-Legendre quadrature.  Errors and
 * validation: docs/models.md.  Cost: milliseconds to a second. */
/* Deprecated names (2.1) of RBF_BLOCK_BITS and the rbf_layout values
 * (rbf_base.h), which the filter and the models share. */
#define RBF_MODEL_BLOCK_BITS RBF_BLOCK_BITS
typedef rbf_layout rbf_model_layout;
enum {
    RBF_MODEL_LAYOUT_FLAT = RBF_LAYOUT_FLAT,
    RBF_MODEL_LAYOUT_BLOCKED = RBF_LAYOUT_BLOCKED
};

/* N-bounded blocked filter at N = `messages` bit-setting messages (real
 * user) or N new messages (oracle) per cycle.  exact_worst and
 * exact_oracle are exact (binomial block loads, truncated below 1e-30);
 * exact_real is exact up to quadrature (B <= 64) or carries the Edgeworth
 * error (B > 64; docs/models.md).  exact_real is 1 (and
 * messages_per_cycle_real infinite) when N > bits: a real user can never
 * count to N. */
typedef struct rbf_model_blocked_n_result {
    double exact_worst;  /* E[rho(S_N)]: the message after N insertions */
    double exact_oracle; /* sum_{n<N} E[rho(S_n)] / N */
    double exact_real;   /* real-user rate: E[FP] / (N + E[FP]) per cycle */
    double messages_per_cycle_real; /* N + E[FP]: new messages per real-user cycle */
    int exact_convolution; /* 1: block sums convolved exactly; 0: Edgeworth */
    uint64_t reserved_[4]; /* written as zero: room for new fields (rbf_base.h) */
} rbf_model_blocked_n_result;

RBF_API int rbf_model_blocked_nbounded(const rbf_model_params *p, uint64_t messages,
                                             rbf_model_blocked_n_result *out);

/* Sigma-bounded blocked filter (one phase; p->retaining and
 * p->non_colliding choose the variant), 1 <= sigma < bits. */
typedef struct rbf_model_blocked_sigma_result {
    double fp;                 /* average count-instance rate */
    double expected_messages;  /* E[N_0]: messages until the filter holds >= sigma bits */
    double messages_per_cycle; /* new arrivals per cycle as the simulator counts them
                                  (non-retaining: arrivals at <= sigma bits; retaining:
                                  one less, the retained message) */
    int exact_convolution;
    uint64_t reserved_[4]; /* written as zero: room for new fields (rbf_base.h) */
} rbf_model_blocked_sigma_result;

RBF_API int rbf_model_blocked_sigma(const rbf_model_params *p, uint64_t sigma,
                                          rbf_model_blocked_sigma_result *out);

/* Two-phase blocked filter: p->bits is the bits of EACH filter (a multiple
 * of 512), 1 <= sigma < p->bits.  Like rbf_model_two_phase:
 * fp = 1 - (1 - fp_active)(1 - fp_frozen). */
typedef struct rbf_model_blocked_two_phase_result {
    double fp;
    double fp_active;
    double fp_frozen;
    double expected_messages; /* E[N_0] of one filter per cycle */
    double messages_per_cycle;
    int exact_convolution;
    uint64_t reserved_[4]; /* written as zero: room for new fields (rbf_base.h) */
} rbf_model_blocked_two_phase_result;

RBF_API int rbf_model_blocked_two_phase(const rbf_model_params *p, uint64_t sigma,
                                              rbf_model_blocked_two_phase_result *out);

/* Capacity planning for the blocked layout: the sigma-bounded one-phase
 * filter of `bits` rounded DOWN to a multiple of 512 (o->non_colliding,
 * o->retaining), the k <= o->max_hashes and largest sigma whose blocked
 * rate is <= eps, maximising E[N_0] (messages per cycle).
 * gain_vs_worst_case is against the FLAT classic sizing on the same
 * memory.  The search: a few model evaluations per k from a mean-field guess (docs/models.md
 * 8.4): tens of milliseconds, a few tenths at 16-64 blocks where the
 * reported rate uses the exact sums. */
RBF_API int rbf_plan_blocked_memory(uint64_t bits, double eps, const rbf_plan_options *o,
                                          rbf_plan_choice *out);

/* The inverse, as rbf_plan_messages is for the flat layout: the least
 * memory *bits (a multiple of 512: whole blocks) whose blocked
 * sigma-bounded one-phase plan (rbf_plan_blocked_memory at *bits, with the
 * same options) holds at least `capacity` messages per cycle (E[N_0]) at
 * average rate <= eps; *out receives that plan (its fp and
 * expected_messages as rbf_plan_blocked_memory reports them).  Least
 * within one block: the plan at *bits - 512 holds fewer (when *bits >
 * 512), if the capacity of the blocked plan is non-decreasing in the
 * memory, which it is up to the integer effects of k and sigma
 * (docs/models.md 8.4; both ends are decided on the values
 * rbf_plan_blocked_memory reports, whichever sums they use).  1 <= capacity <= 2^50.  Returns
 * RBF_OK; RBF_EINVAL for arguments outside the domain (eps not in (0, 1),
 * capacity 0 or above 2^50, max_hashes outside 1..RBF_MAX_HASHES, NULL
 * pointers) or when more than 2^56 bits would be needed; RBF_ENOMEM;
 * RBF_ECANCELED when o->progress (called with done = memories planned,
 * total = an estimate of them all) returns nonzero.  Milliseconds to a
 * few tenths of a second at any size (docs/models.md). */
RBF_API int rbf_plan_blocked_capacity(uint64_t capacity, double eps, const rbf_plan_options *o,
                                      uint64_t *bits, rbf_plan_choice *out);

/* ---- Cycles, forgetting and false negatives (docs/models.md section 9)
 *
 * The clock of these functions is the *tick*: an arrival that the active
 * filter does not hold (a new message, or a repeat whose bits are no longer
 * all set in the active filter), false positives included.  One-phase: the
 * new arrivals.  A cycle is the ticks between two recycles of the active
 * filter. */

/* Which recycling policy: exactly one of sigma and messages is non-zero. */
typedef struct rbf_model_cycle_spec {
    unsigned phases;   /* 1 or 2 (two-phase: p->bits is the M' of each filter) */
    uint64_t sigma;    /* sigma-bounded threshold (k <= sigma < M' if retaining), or 0 */
    uint64_t messages; /* N-bounded N, or 0 */
    int oracle;        /* N-bounded: 0 the real user (the filter counts bit-setting
                          messages), 1 the oracle (recycles after N new arrivals) */
    uint64_t reserved_[4]; /* zero: room for new fields (rbf_base.h) */
} rbf_model_cycle_spec;

/* One phase, no threshold, real user, reserved words zero. */
RBF_API void rbf_model_cycle_spec_init(rbf_model_cycle_spec *s);

/* The distribution of ticks per cycle and what follows from it (opaque). */
typedef struct rbf_model_cycles rbf_model_cycles;

/* Build the cycle-length distribution of `s` with the hashing and recycle
 * mode of `p`, from the renewal chain (sigma-bounded: the same per-message
 * steps as the renewal pass; real-user N-bounded: N bit-setting steps plus
 * the false positives between them; oracle: exactly N), truncated where
 * the remaining mass is below 1e-13.  Cost O(k sigma W) or O(N W F k), W
 * and F the windows of the distributions (docs/models.md).  With
 * p->method RBF_MODEL_AUTO, a filter of 2^16 bits or more whose chain
 * would take more than about 0.1 s gets the large-filter law instead
 * (from the fill's first three cumulants, O(len) or O(N); within about
 * 1e-10 of the chain there, measured in docs/models.md 9.7); with
 * RBF_MODEL_ASYMPTOTIC every filter of 2^12 bits or more does (within
 * about 2e-7 at 2^12 bits); RBF_MODEL_EXACT and RBF_MODEL_PAPER always run
 * the chain.
 * rbf_model_cycles_get_law says which law answered.  Returns RBF_OK,
 * RBF_EINVAL (domain) or RBF_ENOMEM (also when a distribution would
 * exceed 2^26 entries). */
RBF_API int rbf_model_cycles_new(const rbf_model_params *p, const rbf_model_cycle_spec *s,
                                       rbf_model_cycles **out);
RBF_API void rbf_model_cycles_free(rbf_model_cycles *c);

/* The accessors return RBF_OK and write the value through `out`, or
 * RBF_EINVAL when `c` or `out` is NULL (2.1). */
/* P(L = n), the probability that a cycle has n ticks. */
RBF_API int rbf_model_cycles_get_pmf(const rbf_model_cycles *c, uint64_t n, double *out);
/* The largest n with P(L = n) > 0 (after truncation). */
RBF_API int rbf_model_cycles_get_max(const rbf_model_cycles *c, uint64_t *out);
/* E[L] (ticks per cycle). */
RBF_API int rbf_model_cycles_get_mean(const rbf_model_cycles *c, double *out);
/* The policy's average false-positive rate (count-instance), the same
 * model as rbf_model_sigma / _two_phase / _nbounded, plus the two-phase
 * N-bounded filter (the frozen filter holds the previous cycle's N). */
RBF_API int rbf_model_cycles_get_fp(const rbf_model_cycles *c, double *out);
/* Which law built a cycle-length distribution (2.1). */
typedef enum {
    RBF_MODEL_LAW_NONE = 0,    /* none was built */
    RBF_MODEL_LAW_CHAIN = 1,   /* the renewal chain: exact */
    RBF_MODEL_LAW_MOMENTS = 2, /* the real user's N-bounded law from the chain's first two
                                  moments of the false positives (docs/models.md 9.5) */
    RBF_MODEL_LAW_LARGE = 3    /* the large-filter law, from the fill's first three
                                  cumulants (docs/models.md 9.7) */
} rbf_model_law;
/* Its name: "chain", "moments", "large-filter" ("" for RBF_MODEL_LAW_NONE
 * or an unknown value); a static string. */
RBF_API const char *rbf_model_law_name(rbf_model_law law);
/* The law that built c, through *out (its name: rbf_model_law_name). */
RBF_API int rbf_model_cycles_get_law(const rbf_model_cycles *c, rbf_model_law *out);

/* Deprecated (2.1): the same values returned bare, 0 when `c` is NULL.
 * Use rbf_model_cycles_get_pmf, _get_max, _get_mean and _get_fp. */
RBF_API double rbf_model_cycles_pmf(const rbf_model_cycles *c, uint64_t n);
RBF_API uint64_t rbf_model_cycles_max(const rbf_model_cycles *c);
RBF_API double rbf_model_cycles_mean(const rbf_model_cycles *c);
RBF_API double rbf_model_cycles_fp(const rbf_model_cycles *c);

/* Where the message's last arrival fell (docs/models.md 9.2). */
typedef enum {
    RBF_MODEL_FROM_TICK = 0, /* it was a tick: inserted (or a false positive) at a uniformly
                                chosen tick of a cycle */
    RBF_MODEL_FROM_HELD = 1  /* it was held: at a uniformly chosen time between ticks */
} rbf_model_from;

/* The probability that a message is no longer held by any filter after g
 * further ticks (its repeat would be reported new unless it is a false
 * positive).  `active_only` = 1 asks instead whether it is no longer held
 * by the active filter (two-phase; the same for one phase). */
RBF_API double rbf_model_forget(const rbf_model_cycles *c, uint64_t g, rbf_model_from from,
                                      int active_only);

/* The probability that the repeat after g further ticks is a false
 * negative: held by no filter and not a false positive either.  The
 * filters it meets are young (a recycle came after its last arrival): the
 * active filter has the age the repeat's cycle has then (the law of the
 * residual, by time reversal) and that age's false-positive rate, not the
 * average; two-phase, the frozen filter its average rate, independently
 * (docs/models.md 9.2).  For large g, forget * (1 - fp). */
RBF_API double rbf_model_miss(const rbf_model_cycles *c, uint64_t g, rbf_model_from from);

/* A workload for the false-negative model: kind RBF_WORKLOAD_UNIFORM
 * (uniform:P), _ZIPF (zipf:P:S), _FADING (fading:R:L, the simulator's
 * definition) or _TRACE (a measured distribution of repeat gaps in
 * arrivals, as from a trace).  Deprecated names (2.1) of the kinds: */
typedef rbf_workload_kind rbf_model_wl_kind;
#define RBF_MODEL_WL_UNIFORM RBF_WORKLOAD_UNIFORM
#define RBF_MODEL_WL_ZIPF RBF_WORKLOAD_ZIPF
#define RBF_MODEL_WL_FADING RBF_WORKLOAD_FADING
#define RBF_MODEL_WL_GAPS RBF_WORKLOAD_TRACE

typedef struct rbf_model_workload {
    rbf_workload_kind kind;
    uint64_t pool;          /* UNIFORM, ZIPF */
    double exponent;        /* ZIPF */
    double new_fraction;    /* FADING: R; TRACE: fraction of arrivals that are first arrivals */
    double lifetime;        /* FADING: L */
    const uint64_t *gaps;   /* TRACE: gap values >= 1 in arrivals (1 = the next arrival) */
    const double *gap_prob; /* TRACE: their probabilities (normalised by the model) */
    size_t gap_count;
    uint64_t reserved_[4];  /* zero: room for new fields (rbf_base.h) */
} rbf_model_workload;

typedef struct rbf_model_fn_result {
    double fn;            /* false negatives / repeats, the simulator's `fn` */
    double fp;            /* the policy's average false-positive rate used */
    double tick_fraction; /* ticks per arrival (0: stuck, no arrival is new any more) */
    double forgotten;     /* P(a repeat is held by no filter) */
    double cycle_mean;    /* E[ticks per cycle] */
    unsigned iterations;  /* passes of the tick clock (several: the two-phase oracle's
                             fixed point) */
    uint64_t reserved_[4];
} rbf_model_fn_result;

/* The steady-state false-negative rate of `s` (filter `p`) under workload
 * `w` (docs/models.md 9.3: the filter ages in ticks and the clock runs in
 * arrivals, a repeat forgotten when its gap reaches back past the cycles
 * its filters hold; the tick rate at each age from the workload's gap law,
 * the false positives of the filter that young). */
RBF_API int rbf_model_fn(const rbf_model_params *p, const rbf_model_cycle_spec *s,
                               const rbf_model_workload *w, rbf_model_fn_result *out);
/* The same with the cycle law `c` already built from (p, s) (NULL: built
 * here): the law is most of the cost. */
RBF_API int rbf_model_fn_with(const rbf_model_cycles *c, const rbf_model_params *p,
                              const rbf_model_cycle_spec *s, const rbf_model_workload *w,
                              rbf_model_fn_result *out);

/* A trace for the false-negative model (docs/models.md 9.5): the cycle law
 * replayed on the trace itself.  Each arrival is taken in order with the
 * ground truth of rbf simulate (held iff it arrived in the current cycle,
 * or the previous one with two phases); the filter is replaced by its
 * model: cycles of L ticks drawn from the cycle-length law, a new arrival a
 * false positive with the rate phi(u) of a cycle u ticks old (two phases:
 * and the frozen filter's average rate), a repeat held by no filter a
 * false negative unless it is a false positive.  No gap law is assumed, so
 * bursts and the correlation of gaps with the filter's state are kept. */
typedef struct rbf_model_trace {
    const uint32_t *ids; /* the message of each arrival, in order (equal ids: the same) */
    uint64_t arrivals;   /* entries of ids */
    uint32_t distinct;   /* every id is below it */
    uint64_t window;     /* 0: the whole trace from an empty filter; A: each whole window
                            of A arrivals from an empty filter, as rbf simulate's epochs */
    unsigned replicas;   /* independent draws of the cycle boundaries; 0: automatic (as
                            many as about 4e7 replayed arrivals allow, 1 to 32) */
    uint64_t seed;       /* of the draws */
    /* optional (NULL: not asked), RBF_MODEL_TRACE_BINS entries: the
     * forgetting curve on the trace, by the repeat's gap in arrivals */
    struct rbf_model_trace_bin *curve;
    uint64_t reserved_[3];
} rbf_model_trace;

/* The repeats whose gap in arrivals (1: the next arrival) is in [gap_lo,
 * gap_hi] = [2^b, 2^(b+1) - 1], bin b: how many per window, and the share
 * held by no filter and the share reported new (false negatives). */
#define RBF_MODEL_TRACE_BINS 32
typedef struct rbf_model_trace_bin {
    uint64_t gap_lo, gap_hi;
    double repeats, forgotten, fn;
} rbf_model_trace_bin;

typedef struct rbf_model_trace_rates {
    double fp;            /* false positives / new arrivals (rbf simulate's fp) */
    double fn;            /* false negatives / repeats (rbf simulate's fn) */
    double forgotten;     /* repeats held by no filter / repeats */
    double tick_fraction; /* ticks per arrival */
    double fp_se, fn_se;  /* standard errors across replicas (NAN with one replica) */
    double arrivals, repeats, cycles; /* counted, per window */
    uint64_t reserved_[2];
} rbf_model_trace_rates;

typedef struct rbf_model_trace_result {
    rbf_model_trace_rates whole;  /* every arrival of each window */
    rbf_model_trace_rates steady; /* from each window's first recycle to its last (the
                                     complete cycles after the first; zero counts if none) */
    double fp_law;                /* the policy's average rate, from the cycle law */
    double cycle_mean;            /* E[ticks per cycle] */
    uint64_t windows;             /* windows replayed */
    unsigned replicas;
    uint64_t reserved_[4];
} rbf_model_trace_result;

/* fp and fn of `s` (filter `p`) on trace `t`.  Cost: the cycle law, then
 * O(replicas x arrivals) with one 32-bit word per distinct message.
 * Returns RBF_OK, RBF_EINVAL, RBF_ENOMEM (also the law's limits, as
 * rbf_model_fn) or RBF_ECANCELED (p->progress). */
RBF_API int rbf_model_fn_trace(const rbf_model_params *p, const rbf_model_cycle_spec *s,
                               const rbf_model_trace *t, rbf_model_trace_result *out);
/* The same with the cycle law `c` already built from (p, s) (NULL: built
 * here), for a caller that replays one law several times (2.1). */
RBF_API int rbf_model_fn_trace_with(const rbf_model_cycles *c, const rbf_model_params *p,
                                    const rbf_model_cycle_spec *s, const rbf_model_trace *t,
                                    rbf_model_trace_result *out);

/* Sizing for both errors (rbf plan --remember): among one- and two-phase
 * sigma-bounded filters of `bits` total memory with average rate <= eps,
 * the one holding the most messages per cycle whose probability of
 * forgetting a message repeated after `remember` ticks (from a tick) is
 * <= miss.  feasible = 0 if none; `least_bits` then (if not NULL) receives
 * the least memory that has one (0 if not found up to 2^25 bits).  That
 * search plans some thirty memories and calls o->progress (if set) before
 * each, with done = memories planned and total = an estimate of them all;
 * a nonzero return cancels it (RBF_ECANCELED). */
typedef struct rbf_plan_remember_result {
    int feasible;
    unsigned phases;
    unsigned hashes;
    uint64_t sigma;
    double expected_messages; /* E[N_0] of one filter */
    double fp;
    double miss;              /* P(forgotten after `remember` ticks) */
    uint64_t bits;            /* the memory planned */
    uint64_t miss_is_bound;   /* 1: `miss` is a proven upper bound, not the value (the
                                 cycle-length law was not run: remember > 2^17 ticks, or
                                 over its work budget; docs/models.md 9.4); 0: the value */
    uint64_t reserved_[3];
} rbf_plan_remember_result;

RBF_API int rbf_plan_remember(uint64_t bits, double eps, uint64_t remember, double miss,
                                    const rbf_plan_options *o, rbf_plan_remember_result *out,
                                    uint64_t *least_bits);

/* ---- A policy in one call: what `rbf model` gives for --oracle,
 * two-phase --messages, --fn and --forget (src/model/policy.c).  p is
 * the filter (p->bits per filter), s the policy, w a workload for the
 * false-negative rate or NULL, and gaps[0..ngaps-1] tick gaps at which
 * forgotten[i] (rbf_model_forget from a tick) and false_negative[i]
 * (rbf_model_miss) are wanted.  N-bounded without a workload or gaps, the
 * rate and the mean cycle follow from the N-bounded rates (any N, in
 * milliseconds); otherwise from the cycle-length law.  A real user whose
 * active filter fills before its N-th bit-setting message is `stuck`:
 * fp = 1, cycle_mean 0 (no cycle ends), fn 0 (every arrival is reported
 * seen), and has_cycles 0 (forgotten, tick_fraction and the gap arrays
 * are then 0: they do not apply). */
typedef struct rbf_model_policy_result {
    double fp;              /* the policy's average false-positive rate */
    double cycle_mean;      /* E[ticks per cycle] (0 when stuck) */
    uint64_t saturated_at;  /* N-bounded without a workload: as rbf_model_n_result */
    int stuck;              /* 1: the filter fills and never recycles */
    int has_cycles;         /* 1: the cycle-length law was built (forget values apply) */
    double fn;              /* with a workload: false negatives / repeats */
    double forgotten;       /* with a workload: P(a repeat is held by no filter) */
    double tick_fraction;   /* with a workload: ticks per arrival */
    uint64_t cycle_law;     /* (2.1) the rbf_model_law of the cycle-length law built, or
                               RBF_MODEL_LAW_NONE */
    uint64_t reserved_[3];  /* written as zero: room for new fields (rbf_base.h) */
} rbf_model_policy_result;

RBF_API int rbf_model_policy(const rbf_model_params *p, const rbf_model_cycle_spec *s,
                             const rbf_model_workload *w, const uint64_t *gaps, size_t ngaps,
                             double *forgotten, double *false_negative,
                             rbf_model_policy_result *out);

/* Sizing for a log (rbf plan --fn trace:FILE --miss D, docs/models.md
 * 9.6): among one- and two-phase sigma-bounded filters of `bits` total
 * memory with average rate <= eps, the one holding the most messages per
 * cycle whose false-negative rate on trace `t` (rbf_model_fn_trace: the
 * whole trace, or its windows, from an empty filter) is <= miss.
 * feasible = 0 if none; `least_bits` (if not NULL) then receives the least
 * memory that has one, within 1% (0 if none up to 2^31 bits): memories
 * doubled, then bisected, each planned in full (o->progress is called
 * before each; nonzero cancels). */
typedef struct rbf_plan_trace_result {
    int feasible;
    unsigned phases, hashes;
    uint64_t sigma;
    double expected_messages; /* E[N_0] of one filter */
    double fp;                /* the average rate */
    double fn, fn_se;         /* on the trace (whole windows), its standard error */
    uint64_t bits;            /* the memory planned */
    unsigned candidates;      /* (phases, k) replayed on the trace */
    double fp_trace;          /* false positives / new arrivals on the trace (replayed) */
    uint64_t reserved_[3];
} rbf_plan_trace_result;

RBF_API int rbf_plan_trace(uint64_t bits, double eps, const rbf_model_trace *t, double miss,
                           const rbf_plan_options *o, rbf_plan_trace_result *out,
                           uint64_t *least_bits);

#ifdef __cplusplus
}
#endif

#endif /* RBF_MODEL_H */
