/*
 * model_blocked.h -- the blocked layout's models (src/model/blocked/) with
 * the block size and the summation method as parameters (for the tests:
 * tiny blocks against a brute-force chain, exact convolution against
 * Edgeworth, quadrature panels), and the mean-field limit the blocked
 * planner starts from.  Built on the models' core only.  Internal to the
 * models, the planner and the tests.
 */
#ifndef RBF_MODEL_BLOCKED_H
#define RBF_MODEL_BLOCKED_H

#include <stdint.h>

#include "model_core.h"

/* How the distribution of a sum of block counts is computed. */
enum {
    RBF__BLK_AUTO = -1,     /* exact when B <= RBF__BLK_EXACT_MAX, else Edgeworth */
    RBF__BLK_EDGEWORTH = 0, /* 4-cumulant Edgeworth expansion */
    RBF__BLK_EXACT = 1      /* FFT convolution powers */
};
#define RBF__BLK_EXACT_MAX 64u

/* p->bits: total bits (a multiple of block_bits); panels: Gauss-Legendre
 * panels of 16 nodes (0: the default, 8). */
int rbf__model_blocked_n_w(const rbf_model_params *p, unsigned block_bits, uint64_t messages,
                           int mode, unsigned panels, rbf_model_blocked_n_result *out);

/* One-phase (two_phase = 0) or two-phase (p->bits: each filter). */
int rbf__model_blocked_sigma_w(const rbf_model_params *p, unsigned block_bits, uint64_t sigma,
                               int two_phase, int mode, unsigned panels,
                               rbf_model_blocked_two_phase_result *out);

/* The mean-field limit of one k (p->hashes, hashing; blocks of
 * RBF_MODEL_BLOCK_BITS): mu(t), the mean set bits of a block at Poisson load
 * t, and int_0^t r, r(t) = E[rho_W(b_t)] the rate of a new message. */
typedef struct rbf__blk_mf rbf__blk_mf;
int rbf__blk_mf_new(const rbf_model_params *p, rbf__blk_mf **out);
void rbf__blk_mf_free(rbf__blk_mf *m);
int rbf__blk_mf_at(rbf__blk_mf *m, double t, double *mu, double *irho);
/* The t where g(t) = v for g increasing: which = 0 the average rate
 * F(t) = (1/t) int_0^t r, 1 mu(t).  Returns 1 (and the largest load
 * followed in *t) when g stays below v. */
int rbf__blk_mf_solve(rbf__blk_mf *m, int which, double v, double *t);

#endif
