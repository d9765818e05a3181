/*
 * blocked_internal.h -- the blocked-layout models with the block size and
 * the summation method as parameters (for the tests: tiny blocks against a
 * brute-force chain, exact convolution against Edgeworth, quadrature
 * panels).  Internal to src/model/ and the tests.
 */
#ifndef RBF_BLOCKED_INTERNAL_H
#define RBF_BLOCKED_INTERNAL_H

#include <stdint.h>

#include "rbf_model.h"

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

/* The planner of 2.0 (the reference the tests compare the planner with). */
int rbf__plan_blocked_memory_ref(uint64_t bits, double eps, const rbf_plan_options *o,
                                 rbf_plan_choice *out);

/* rbf_plan_blocked_memory, also saying how many model evaluations it made
 * (evals may be NULL). */
int rbf__plan_blocked_memory_evals(uint64_t bits, double eps, const rbf_plan_options *o,
                                   rbf_plan_choice *out, unsigned *evals);

#endif
