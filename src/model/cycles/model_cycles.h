/*
 * model_cycles.h -- cycle lengths, forgetting and false negatives
 * (src/model/cycles/): the cycle object and its bounds (cycles.c), the
 * cycle-length laws (laws.c), forgetting at one gap (forget.c), the
 * false-negative model (fn.c) and the recycling policies (policy.c).
 * Internal to the models and the planner.
 */
#ifndef RBF_MODEL_CYCLES_H
#define RBF_MODEL_CYCLES_H

#include "model_nbound.h"

#define CYC_TINY 1e-28
#define CYC_LOST 1e-13
#define CYC_MAX_LEN ((uint64_t)1 << 26)
/* the forgetting bounds' exact sums (forget.c); and the longest two-phase
 * cycle whose forgetting is tabled (cycles.c: past it, summed when asked) */
#define CYC_MAX_CONV ((uint64_t)1 << 17)

/* ---- laws.c: the cycle-length laws (see there) */
int rbf__cyc_sigma_pmf_plain(const rbf_model_params *p, uint64_t sigma, uint64_t nmax,
                             double *pmf, double *phi, double *rend, double *lost);
int rbf__cyc_sigma_pmf(const rbf_model_params *p, uint64_t sigma, uint64_t nmax, double *pmf,
                     double *phi, double *rend, double *lost);
double *rbf__cyc_step_table(const rbf_model_params *p, uint64_t bmax);
int rbf__cyc_nreal_marginal(const rbf_model_params *p, uint64_t N, const double *tau, uint64_t bmax,
                          double *efp, double *rhoF, uint64_t *levels);
int rbf__cyc_nreal_joint(const rbf_model_params *p, uint64_t N, const double *tau, uint64_t bmax,
                       uint64_t F, double *out, double *phi, double *lost);
int rbf__cyc_nreal_moments(const rbf_model_params *p, uint64_t N, const double *tau, uint64_t bmax,
                         uint64_t F, double *out, double *phi, double *lost);
/* The marginal pass and the moments' pass in one (laws.c): the same
 * efp, rhoF and levels as rbf__cyc_nreal_marginal and, kept per step, the
 * moments rbf__cyc_nreal_moments spreads; rbf__cyc_nreal_spread then lays
 * them out for a given F, as rbf__cyc_nreal_moments would (the same values
 * to the last bit; a wider F needs no new pass; `fast`: the division-free
 * layout of the large-filter law, the same to rounding). */
typedef struct {
    double *T;       /* T0, T1, T2 of each step, 3 a step */
    uint64_t steps;  /* steps with mass */
    double W0, W1, W2, lost;
} rbf_cyc_mstats;
int rbf__cyc_nreal_fused(const rbf_model_params *p, uint64_t N, const double *tau, uint64_t bmax,
                         double *efp, double *rhoF, uint64_t *levels, rbf_cyc_mstats *st);
int rbf__cyc_nreal_spread(const rbf_cyc_mstats *st, uint64_t F, double *out, double *phi,
                          double *lost, int fast);
void rbf__cyc_mstats_free(rbf_cyc_mstats *st);
/* Which builds the cycle laws: RBF_CYC_LAW_AUTO (the chain, and for the
 * real user's N-bounded law the joint pass unless its cost estimate is
 * over CYC_JOINT_BUDGET, then the moments; the large-filter laws of
 * laws_asym.c where p->method allows them and the chain would cost more
 * than CYC_ASYM_BUDGET steps), or one forced (tests): the joint pass, the
 * moments, the large-filter laws, or the chain (never the large-filter
 * laws, the rest as AUTO). */
enum {
    RBF_CYC_LAW_AUTO = 0,
    RBF_CYC_LAW_JOINT = 1,
    RBF_CYC_LAW_MOMENTS = 2,
    RBF_CYC_LAW_ASYM = 3,
    RBF_CYC_LAW_CHAIN = 4
};
extern int rbf__cyc_law_method;
/* The chain's steps past which (method auto) the large-filter law answers
 * instead: about 0.1 s of chain.  Below CYC_ASYM_MIN_BITS bits the chain
 * always runs.  Method fast takes the large-filter law from
 * CYC_FAST_MIN_BITS bits whatever the cost (its error there: about 2e-7
 * of fn, docs/models.md 9.7). */
#define CYC_ASYM_BUDGET 2e8
#define CYC_ASYM_MIN_BITS ((uint64_t)1 << 16)
#define CYC_FAST_MIN_BITS ((uint64_t)1 << 12)

/* ---- laws_asym.c: the cycle laws of large filters (see there).  The
 * sigma law has rbf__cyc_sigma_pmf's outputs; the N-bounded one gives what
 * rbf__cyc_nreal_fused gives (the marginal's efp and rhoF, the moments per
 * step), and *sd the spread of the fill after N bit-setting messages. */
double rbf__cyc_sigma_chain_cost(const rbf_model_params *p, uint64_t sigma);
/* the ticks past which the large-filter sigma law has no mass */
uint64_t rbf__cyc_sigma_asym_len(const rbf_model_params *p, uint64_t sigma);
int rbf__cyc_sigma_pmf_asym(const rbf_model_params *p, uint64_t sigma, uint64_t nmax, double *pmf,
                            double *phi, double *rend, double *lost);
int rbf__cyc_nreal_asym(const rbf_model_params *p, uint64_t N, double *efp, double *rhoF,
                        rbf_cyc_mstats *st, double *sd);
/* 1 if c's law came from the moments */
int rbf__cyc_law_is_moments(const rbf_model_cycles *c);
/* the joint pass's cost estimate N x levels x (sqrt(E fp) + 1) above which
 * the moments answer: about 0.4 s of joint pass (docs/models.md 9.5) */
#define CYC_JOINT_BUDGET 3e7

/* ---- cycles.c: the spec check and an in-place prefix sum */
int rbf__cyc_check_spec(const rbf_model_params *p, const rbf_model_cycle_spec *s);
void rbf__cyc_cumsum(double *x, uint64_t n);

/* ---- forget.c: a Chernoff bound on P(B_n > sigma), B_n the set bits after n
 * messages of k hashes in M = p->bits (sigma + 1 < M). */
double rbf__model_fill_tail_bound(const rbf_model_params *p, uint64_t n, uint64_t sigma);
/* ... and on P(B_n <= sigma), the lower tail. */
double rbf__model_fill_low_bound(const rbf_model_params *p, uint64_t n, uint64_t sigma);
/* forget.c: rbf_model_forget(c, g, RBF_MODEL_FROM_TICK, 0) of the
 * sigma-bounded cycles of p (phases 1 or 2) lies in [*lo, *hi]: bounds in
 * O(k sigma + g) from E[L] and both Chernoff bounds on the fill (on 4096
 * blocks past g = 2^17); with `exact` and g <= 2^17, unless they are within
 * 1e-12 relative, the value itself (*lo = *hi) from the cycle-length law
 * up to g + 1 only (sigma + 1 < M). */
int rbf__model_forget_sigma(const rbf_model_params *p, uint64_t sigma, unsigned phases,
                            uint64_t g, double *lo, double *hi, int exact);
/* Its two halves, for a caller that decides between them (plan_fn.c): the
 * bounds, with E[L] in *mean; the value from the law (g <= 2^17), given E[L]. */
int rbf__model_forget_bounds(const rbf_model_params *p, uint64_t sigma, unsigned phases,
                             uint64_t g, double *mean, double *lo, double *hi);
int rbf__model_forget_law(const rbf_model_params *p, uint64_t sigma, unsigned phases, uint64_t g,
                          double mean, double *out);
/* ---- cycles.c: the cycle object's tables for fn.c: P(L = n) and phil[j] =
 * P(L > j and the cycle's (j+1)-th tick is a false positive), n, j =
 * 0..len, and the frozen filter's rate. */
void rbf__model_cycles_tables(const rbf_model_cycles *c, const double **pmf, const double **phil,
                              uint64_t *len, double *rho_frozen);

#endif
