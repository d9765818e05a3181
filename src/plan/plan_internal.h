/*
 * plan_internal.h -- the planner (src/plan/): which filter to build for a
 * memory, a capacity or a false-negative budget.  It sits above every
 * model (flat sigma- and N-bounded, cycles, blocked) and no model calls it.
 * Internal to the planner and the tests.
 */
#ifndef RBF_PLAN_INTERNAL_H
#define RBF_PLAN_INTERNAL_H

#include <stdint.h>

#include "model_blocked.h"
#include "model_cycles.h"
#include "rbf_model.h"

/* Asymptotic method for a pass over M bits?  The planners switch to it at
 * a smaller M than the models (RBF_MODEL_AUTO_EXACT_BITS): a plan runs the
 * pass for several k (and a least-memory search for several M), and the
 * exact pass at 2^22 bits costs a second where a planned reservation
 * should answer in milliseconds.  Above 2^16 bits the plans of the two
 * methods have had the same k and thresholds, with capacities and rates
 * within 5e-11 of each other, on every point checked (docs/models.md 4). */
#define PLAN_AUTO_EXACT_BITS ((uint64_t)1 << 16)

static inline int plan_fast(rbf_model_method m, uint64_t M)
{
    return m == RBF_MODEL_ASYMPTOTIC || (m == RBF_MODEL_AUTO && M > PLAN_AUTO_EXACT_BITS);
}

/* ---- progress across the whole plan */
typedef struct plan_prog {
    rbf_model_progress_fn fn;
    void *ctx;
    uint64_t done, total;
} plan_prog;

static inline int prog_tick(plan_prog *pp, uint64_t add)
{
    pp->done += add;
    if (pp->done > pp->total)
        pp->total = pp->done;
    if (pp->fn && pp->fn(pp->ctx, pp->done, pp->total))
        return RBF_ECANCELED;
    return RBF_OK;
}

/* plan_sigma.c: the largest sigma >= k of one k with rate <= eps (one- or
 * two-phase, M bits per filter), as rbf_plan_memory searches it. */
int rbf__plan_sigma_k(uint64_t M, unsigned k, int nc, int ret, int two, rbf_model_method method,
                      double eps, int *feasible, uint64_t *sigma, double *en0, double *fp);
/* The same, ticking (and cancelled by) the plan's progress. */
int rbf__plan_sigma_k_prog(uint64_t M, unsigned k, int nc, int ret, int two,
                           rbf_model_method method, double eps, plan_prog *pp, int *feasible,
                           uint64_t *sigma, double *en0, double *fp);


/* ---- plan_search.c */
/* ---- the crossing of a smooth increasing rate by regula falsi
 *
 * The largest x in a bracket [lo, hi] (rate(lo) <= eps < rate(hi)) with
 * rate(x) <= eps: interpolate where g = log(rate/eps) crosses zero, with the
 * Illinois rule (an end kept twice in a row has its g halved) and a
 * bisection step whenever the bracket did not halve over two steps.  The
 * invariant is the bisection's, so for a monotone rate the answer is the
 * same adjacent pair; it takes about ten evaluations where bisection takes
 * forty. */

typedef struct rfalsi {
    double glo, ghi;
    int side;
    uint64_t width2;
    unsigned nstep;
} rfalsi;
void rbf__rf_init(rfalsi *st, double vlo, double vhi, double eps, uint64_t lo, uint64_t hi);
/* The next point to evaluate strictly inside (lo, hi). */
uint64_t rbf__rf_next(rfalsi *st, uint64_t lo, uint64_t hi);
/* Record the rate v at the point rbf__rf_next gave (feasible: v <= eps). */
void rbf__rf_update(rfalsi *st, int feasible, double v, double eps);

/* A k and the upper bound on its capacity, sorted by rbf__cmp_cand: the
 * largest bound first, the smallest k on ties. */
typedef struct kcand {
    unsigned k;
    double ub;
    uint64_t smax;
} kcand;
int rbf__cmp_cand(const void *a, const void *b);

/* What one full search at memory M learnt about each k, for the capacity
 * search, which asks about memories a few bits below: cap[k-1] is k's
 * capacity at M when it was run (0: no sigma reaches eps), else the bound
 * that let the search skip it; sigma[k-1] its sigma (or the bound's
 * limit).  Capacity is not monotone in memory bit by bit: at a fixed
 * sigma, a larger filter reaches sigma with fewer messages, so between
 * two steps of sigma a k's capacity falls a little as M grows.
 * The memo's bound on k's capacity d bits below M allows for that fall:
 * `margin` times its first-order size (measured falls reach 1.8 times it
 * on the grid of test_plan; the search uses 4, and 16 for the check of
 * its answer). */
typedef struct plan_kmemo {
    uint64_t M; /* 0: empty */
    unsigned K;
    double margin; /* times the first-order fall allowed for (4 or more) */
    double cap[MODEL_MAX_HASHES];
    uint64_t sigma[MODEL_MAX_HASHES];
} plan_kmemo;

/* plan_sigma.c: the best sigma-bounded (two = 0) or two-phase (two = 1,
 * M bits per filter) choice over k = 1..K; target > 0: the first k whose
 * capacity reaches it (the capacity search); evaluated (may be NULL): how
 * many k were run.  ref (may be NULL): a full search at a memory >= M,
 * whose bounds replace the first, cheap ones; save (may be NULL; only with
 * target <= 0): receives what this search learnt. */
int rbf__plan_sigma(uint64_t M, double eps, unsigned K, int nc, int ret, int two, double target,
                    int fast, plan_prog *pp, rbf_plan_choice *out, unsigned *evaluated,
                    const plan_kmemo *ref, plan_kmemo *save);
/* plan_sigma.c: the k whose cheap capacity bound is the largest at M (0:
 * no k makes a filter), the capacity search's first guess. */
unsigned rbf__plan_sigma_guess_k(uint64_t M, double eps, unsigned K, int nc, int two);
/* plan_nbound.c: the largest N with the flat f_w(N) <= eps for one k (0 if
 * none; at most 9e15), and the worst-case, oracle and average N-bounded
 * choices. */
uint64_t rbf__plan_worst_n(uint64_t M, unsigned k, double eps);
int rbf__plan_nbounded(uint64_t M, double eps, unsigned K, int fast, plan_prog *pp, rbf_plan *out);

/* plan_blocked.c: the planner of 2.0 (the reference the tests compare the
 * planner with). */
int rbf__plan_blocked_memory_ref(uint64_t bits, double eps, const rbf_plan_options *o,
                                 rbf_plan_choice *out);

/* rbf_plan_blocked_memory, also saying how many model evaluations it made
 * (evals may be NULL). */
int rbf__plan_blocked_memory_evals(uint64_t bits, double eps, const rbf_plan_options *o,
                                   rbf_plan_choice *out, unsigned *evals);

/* The sigma-bounded choices of one and two phases at `bits` total bits
 * whose rate is <= eps, one per (phases, k) up to the capacity peak, most
 * messages per cycle first (smaller k, then fewer phases, on ties): what
 * the false-negative planners (plan_fn.c, plan_trace.c) choose among.
 * *out is released with rbf__free. */
typedef struct {
    unsigned phases, k;
    uint64_t sigma;
    double en0, fp;
} rbf__plan_cand;
int rbf__plan_candidates(uint64_t bits, double eps, const rbf_plan_options *o,
                         rbf__plan_cand **out, size_t *n);

#endif
