/*
 * model_internal.h -- shared internals of the model module (src/model/).
 *
 * Not installed.  Everything here is hidden (the library is built with
 * -fvisibility=hidden and none of these carry RBF_API).
 */
#ifndef RBF_MODEL_INTERNAL_H
#define RBF_MODEL_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "rbf_model.h"

/* ---- compensated (Neumaier) summation.  Every long sum of the module goes
 * through this: the renewal pass adds up to 2^40 terms of very different
 * sizes, and plain summation would lose ~log2(M) bits. */
typedef struct {
    double s; /* running sum */
    double c; /* running compensation (lost low-order parts) */
} model_sum;

static inline void msum_init(model_sum *a)
{
    a->s = 0.0;
    a->c = 0.0;
}

static inline void msum_add(model_sum *a, double x)
{
    double t = a->s + x;
    if (fabs(a->s) >= fabs(x))
        a->c += (a->s - t) + x;
    else
        a->c += (x - t) + a->s;
    a->s = t;
}

static inline double msum_get(const model_sum *a) { return a->s + a->c; }

/* Clamp a computed probability into [0, 1] (a rounding error can push a
 * ratio of sums a few ulps past 1) and map a NaN (which would only come
 * from 0/0 on an empty range) to 0. */
static inline double model_clamp01(double x)
{
    if (!(x > 0.0)) /* also catches NaN */
        return 0.0;
    return x > 1.0 ? 1.0 : x;
}

/* rho(b) and f_w(n) with no domain check (callers pass valid values); the
 * public rbf_model_rho / rbf_model_f_w check and report. */
double rbf__model_rho(uint64_t bits, unsigned hashes, int non_colliding, uint64_t b);
double rbf__model_f_w(uint64_t bits, unsigned hashes, uint64_t n);

/* The n-point Gauss-Legendre rule on [-1, 1]: nodes x[0..n-1] (ascending)
 * and weights w[0..n-1]. */
void rbf__model_gauss_legendre(unsigned n, double *x, double *w);

/* Largest k the module accepts (work arrays are O(k) to O(k^3)). */
#define MODEL_MAX_HASHES RBF_MAX_HASHES

/* Validate the common parameters: bits >= 1, 1 <= hashes <= max,
 * non-colliding needs hashes <= bits, flags 0/1, a known method. */
int rbf__model_check_params(const rbf_model_params *p);
/* plan.c: the largest sigma >= k of one k with rate <= eps (one- or
 * two-phase, M bits per filter), as rbf_plan_memory searches it. */
int rbf__plan_sigma_k(uint64_t M, unsigned k, int nc, int ret, int two, rbf_model_method method,
                      double eps, int *feasible, uint64_t *sigma, double *en0, double *fp);

/* cycles.c: a Chernoff bound on P(B_n > sigma), B_n the set bits after n
 * messages of k hashes in M = p->bits (sigma + 1 < M). */
double rbf__model_fill_tail_bound(const rbf_model_params *p, uint64_t n, uint64_t sigma);
/* ... and on P(B_n <= sigma), the lower tail. */
double rbf__model_fill_low_bound(const rbf_model_params *p, uint64_t n, uint64_t sigma);
/* cycles.c: rbf_model_forget(c, g, RBF_MODEL_FROM_TICK, 0) of the
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
/* cycles.c: the cycle object's tables for fn.c: P(L = n) and phil[j] =
 * P(L > j and the cycle's (j+1)-th tick is a false positive), n, j =
 * 0..len, and the frozen filter's rate. */
void rbf__model_cycles_tables(const rbf_model_cycles *c, const double **pmf, const double **phil,
                              uint64_t *len, double *rho_frozen);

/* 1 - rho(b) computed without cancellation when rho(b) is close to 1. */
double rbf__model_one_minus_rho(uint64_t bits, unsigned hashes, int non_colliding, uint64_t b);

/* ---- the renewal pass (fast.c), resumable so that the planner can stop
 * at the first sigma over its target and the two-phase planner can
 * checkpoint it. */
typedef struct model_pass {
    uint64_t bits;
    unsigned hashes;
    int non_colliding;
    uint64_t b;      /* the next level to process */
    double *u;       /* u_p(b): inflow into level b at hash phase p (k entries) */
    double *v;       /* scratch: v(b, p) */
    double *inv;     /* non-colliding: 1/(M - p) */
    double *x;       /* scratch: x_p(b) */
    model_sum sum_g;     /* sum of g_j over processed j (all j >= 0) */
    model_sum sum_g1;    /* sum of g_j over processed j >= 1 (retaining) */
    model_sum sum_gr;    /* sum of g_j rho(j) */
    /* results of the last step() */
    double g;        /* g_b */
    double rho;      /* rho(b) */
    double en0;      /* E[N_0] at sigma = b: sum_{j<b} g_j */
} model_pass;

/* Saved state of a pass (u and the sums), for checkpoints. */
typedef struct model_pass_state {
    uint64_t b;
    model_sum sum_g, sum_g1, sum_gr;
    double *u; /* k entries, owned by the caller of rbf__model_pass_save */
} model_pass_state;

int rbf__model_pass_init(model_pass *ps, uint64_t bits, unsigned hashes, int non_colliding);
void rbf__model_pass_free(model_pass *ps);
/* Process level ps->b: sets ps->g, ps->rho, ps->en0 and advances b. */
void rbf__model_pass_step(model_pass *ps);
/* f_sigma^1 at sigma = the level just processed. */
double rbf__model_pass_fp(const model_pass *ps, int retaining);
void rbf__model_pass_save(const model_pass *ps, model_pass_state *st);
void rbf__model_pass_restore(model_pass *ps, const model_pass_state *st);

/* ---- per-message step distribution (the paper's tau_k(i, i+d), d = 0..k,
 * without a threshold): out[d] for d = 0..k.  `work` holds k + 1 doubles.
 * O(k^2). */
void rbf__model_step_dist(uint64_t bits, unsigned hashes, int non_colliding, uint64_t i, double *out);

/* Two-phase frozen-filter rate at threshold sigma given g_j for
 * j = sigma-k+1..sigma: gwin[t] = g_{sigma-k+1+t} for t = 0..k-1 (entries
 * for j < 0 or j < first must be 0).  Returns sum F_i rho(i).  O(k^3). */
double rbf__model_frozen_rate(uint64_t bits, unsigned hashes, int non_colliding, int retaining,
                         uint64_t sigma, const double *gwin);

/* ---- the paper's method (paper.c) for one sigma. */
int rbf__model_paper_sigma(const rbf_model_params *p, uint64_t sigma, double *fp, double *en0,
                      double *fp_frozen);

/* ---- the asymptotic sigma-bounded model (asym.c): an exact pass over the
 * start-up transient [0, b1), then closed forms and quadrature. */
typedef struct model_asym {
    uint64_t M;
    unsigned k;
    int nc;
    double C;          /* g_b = C/(M-b) + transient */
    uint64_t b1;       /* exact prefix [0, b1); UINT64_MAX: not applicable */
    model_sum pre_g;   /* sum_{b<b1} g_b */
    model_sum pre_gr;  /* sum_{b<b1} g_b rho(b) */
    double pre_delta;  /* sum_{b<b1} (g_b - C/(M-b)) */
    double pre_delta1; /* sum_{b<b1} (g_b - C/(M-b)) b (nexact.c) */
    double dinf;       /* its limit */
    double *gtail;     /* g_b for b1-k <= b < b1 */
} model_asym;

double rbf__asym_C(uint64_t M, unsigned k, int nc);
/* Prefix for every sigma >= smin (a.b1 = UINT64_MAX when smin is too
 * small for the bounds: use the exact pass).  prog may be NULL. */
int rbf__asym_init(model_asym *a, uint64_t M, unsigned k, int nc, uint64_t smin,
                   const rbf_model_params *prog);
void rbf__asym_free(model_asym *a);
/* f_sigma^1 and E[N_0] at sigma >= b1 */
int rbf__asym_eval(const model_asym *a, uint64_t sigma, int retaining, double *fp, double *en0);
/* g_b for b >= b1 - k */
double rbf__asym_g(const model_asym *a, uint64_t b);
/* Does p's method ask for the asymptotic method (ASYMPTOTIC, or AUTO above
 * RBF_MODEL_AUTO_EXACT_BITS)? */
int rbf__model_use_asym(const rbf_model_params *p);
/* f^1, E[N_0] and (ff != NULL) the two-phase frozen rate at sigma by the
 * asymptotic method; returns 1 when sigma is too small for its bounds (run
 * the exact pass), else a status. */
int rbf__model_sigma_asym(const rbf_model_params *p, uint64_t sigma, double *f1, double *en0,
                          double *ff);

/* Cancellation check helper: calls the progress callback if any. */
static inline int model_progress(const rbf_model_params *p, uint64_t done, uint64_t total)
{
    if (p->progress && p->progress(p->progress_ctx, done, total))
        return RBF_ECANCELED;
    return RBF_OK;
}

#endif
