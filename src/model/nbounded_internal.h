/*
 * nbounded_internal.h -- the f_w sequence iterator shared by nbounded.c and
 * the planner (plan.c).  Internal to src/model/.
 */
#ifndef RBF_NBOUNDED_INTERNAL_H
#define RBF_NBOUNDED_INTERNAL_H

#include <stdint.h>

#include "rbf_model.h"

/* f_w(0), f_w(1), ... in O(1) each (two recurrences, resynchronised with
 * exp/expm1 every 64 terms, so the relative error stays ~1e-14). */
typedef struct fw_iter {
    uint64_t bits;
    unsigned hashes;
    double L;    /* k log1p(-1/M) */
    double a;    /* 1 - q, q = (1 - 1/M)^k */
    double q;
    uint64_t i;  /* index of the next term */
    double z;    /* q^i */
    double y;    /* 1 - q^i */
} fw_iter;

void rbf__fw_iter_init(fw_iter *it, uint64_t bits, unsigned hashes);
double rbf__fw_iter_next(fw_iter *it); /* returns f_w(i), then i++ */

/* f_o(N) and f_a(N) at any N by Euler-Maclaurin (nfast.c): O(k log N). */
double rbf__fo_fast(uint64_t M, unsigned k, uint64_t N);
double rbf__fa_fast(uint64_t M, unsigned k, uint64_t N);

/* exact_worst and exact_oracle at N by the fast method (nexact.c), any M
 * and N, O(k) to O(k^2) per term, milliseconds in all.  Returns 1 (nothing
 * usable) when its own error estimate is not below 1e-11 relative: run the
 * propagated chain then.  *relerr (may be NULL) receives the estimate. */
int rbf__nexact_fast(const rbf_model_params *p, uint64_t N, double *worst, double *oracle,
                     uint64_t *saturated_at, double *relerr);
/* RBF_MODEL_AUTO takes the fast N-bounded values (when their estimates
 * accept) where the propagation would cost more than this N k sqrt(M):
 * about 0.5 s on the 2-core test machine (1 Mi bits, k = 7, 10^5
 * messages, 7.2e8, took 7 s for both propagations) */
#define RBF__NB_AUTO_CHAIN 5e7

/* The chains above that cost (auto and fast; one value, not a curve) step a
 * message at a time by its kernel table instead of hash by hash
 * (nbounded.c): the same law summed in another order.  RBF__NB_AUTO_CHAIN;
 * tests lower it to compare the two. */
extern double rbf__nb_heavy_chain;
/* Nonzero: rbf_model_nbounded skips the fast paths and propagates (with
 * the kernel where heavy, method auto or fast): the reference of tests and
 * benchmarks at sizes where the hash steps would take minutes. */
extern int rbf__nb_chain_only;

/* The real-user rate follows from the oracle sum when rho(min(M, (N-1)k))
 * is at most this (nbounded.c): within half of it, relative. */
#define RBF__NEXACT_REAL_RMAX 1e-10

/* exact_real at any load by the potentials of the fill chain (nexact.c):
 * returns 1 when not applicable or its error estimate is above 2e-10
 * (*real and *relerr are still written when it could compute them).
 * worst (may be NULL): also E[rho(B'_N)], the real user's rate at the end
 * of its cycle, whose estimate must pass too. */
int rbf__nreal_fast(const rbf_model_params *p, uint64_t N, double *real, double *relerr,
                    double *worst);

/* E[rho(B_n)] alone by the fast evaluator (tests), *relerr its estimate. */
double rbf__nexact_term(const rbf_model_params *p, uint64_t n, double *relerr);

#endif
