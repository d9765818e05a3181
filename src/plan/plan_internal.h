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

/* plan.c: the largest sigma >= k of one k with rate <= eps (one- or
 * two-phase, M bits per filter), as rbf_plan_memory searches it. */
int rbf__plan_sigma_k(uint64_t M, unsigned k, int nc, int ret, int two, rbf_model_method method,
                      double eps, int *feasible, uint64_t *sigma, double *en0, double *fp);


/* plan_blocked.c: the planner of 2.0 (the reference the tests compare the
 * planner with). */
int rbf__plan_blocked_memory_ref(uint64_t bits, double eps, const rbf_plan_options *o,
                                 rbf_plan_choice *out);

/* rbf_plan_blocked_memory, also saying how many model evaluations it made
 * (evals may be NULL). */
int rbf__plan_blocked_memory_evals(uint64_t bits, double eps, const rbf_plan_options *o,
                                   rbf_plan_choice *out, unsigned *evals);

#endif
