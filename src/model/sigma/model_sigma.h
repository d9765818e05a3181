/*
 * model_sigma.h -- the sigma-bounded rates (src/model/sigma/): the renewal
 * pass (renewal.c), the two-phase frozen filter (twophase.c), the paper's
 * method (paper.c), the asymptotic method (asym.c), the one place that
 * checks a sigma and chooses the method (rates.c) and sampled curves
 * (points.c).  Files call only down this list.  Internal to the models and
 * the planner.
 */
#ifndef RBF_MODEL_SIGMA_H
#define RBF_MODEL_SIGMA_H

#include "model_core.h"

/* ---- the renewal pass (renewal.c), resumable so that the planner can stop
 * at the first sigma over its target. */
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

int rbf__model_pass_init(model_pass *ps, uint64_t bits, unsigned hashes, int non_colliding);
void rbf__model_pass_free(model_pass *ps);
/* Process level ps->b: sets ps->g, ps->rho, ps->en0 and advances b. */
void rbf__model_pass_step(model_pass *ps);
/* f_sigma^1 at sigma = the level just processed. */
double rbf__model_pass_fp(const model_pass *ps, int retaining);

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
/* The two-phase frozen rate at sigma >= b1 from g near sigma. */
int rbf__asym_frozen(const model_asym *a, int retaining, uint64_t sigma, double *ff);
/* f^1, E[N_0] and (ff != NULL) the two-phase frozen rate at sigma by the
 * asymptotic method; returns 1 when sigma is too small for its bounds (run
 * the exact pass), else a status. */
int rbf__model_sigma_asym(const rbf_model_params *p, uint64_t sigma, double *f1, double *en0,
                          double *ff);

/* ---- rates.c: the domain check and the method choice, written once. */
/* Does p's method ask for the asymptotic method (ASYMPTOTIC, or AUTO above
 * RBF_MODEL_AUTO_EXACT_BITS)? */
int rbf__model_use_asym(const rbf_model_params *p);
/* The common parameters, 1 <= sigma < M, and for retaining sigma >= k (a
 * retained message may set k bits in the fresh filter; below that the
 * retaining filter is not sigma-bounded). */
int rbf__model_check_sigma(const rbf_model_params *p, uint64_t sigma);

#endif
