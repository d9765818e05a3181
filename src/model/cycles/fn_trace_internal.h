/*
 * fn_trace_internal.h -- the cycle law replayed on a trace (fn_trace.c),
 * shared with the planner for a trace (plan_trace.c).
 */
#ifndef RBF_FN_TRACE_INTERNAL_H
#define RBF_FN_TRACE_INTERNAL_H

#include <stdint.h>

#include "rbf_model.h"

/* where the arrival that ends a cycle is held afterwards (as rbf simulate) */
enum { TR_AFTER_KEEP = 0, TR_AFTER_NEXT = 1, TR_AFTER_SAME = 2 };

typedef struct tr_law {
    uint64_t len;  /* the law's last entry */
    double *cdf;   /* P(L <= n), n = 0..len, normalised */
    double *phi;   /* the false-positive rate of the (u+1)-th tick of a cycle, u = 0..len+1 */
    double rho_f;  /* two phases: the frozen filter's rate; 0 otherwise */
    int two, oracle, after;
    /* two phases, the shared bits (docs/models.md 9.3): k, and per
     * insertion the log-decrements of the unset fraction of the frozen
     * filter's set bits (re-inserted repeats) and of all bits */
    double k, fF, lF, lM, Md;
} tr_law;

/* counts of a replay (expected values over the false positives) */
typedef struct tr_tally {
    double arrivals, repeats, fresh, ticks, fp, fn, forgotten, cycles;
} tr_tally;

/* the forgetting curve on the trace: per gap in arrivals in [2^b, 2^(b+1)) */
#define TR_BINS 32
typedef struct tr_curve {
    double rep[TR_BINS], forg[TR_BINS], fn[TR_BINS];
} tr_curve;

int rbf__tr_law_new(const rbf_model_cycles *c, const rbf_model_params *p,
                    const rbf_model_cycle_spec *s, tr_law *w);
void rbf__tr_law_free(tr_law *w);
int rbf__tr_replay(const tr_law *w, const uint32_t *ids, uint64_t from, uint64_t to, uint32_t nd,
                   uint32_t *st, uint64_t *rng, tr_tally *whole, tr_tally *steady, uint32_t *at,
                   tr_curve *cv);

#endif
