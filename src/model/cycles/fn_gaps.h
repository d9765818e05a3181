/*
 * fn_gaps.h -- the false-negative model's view of a workload (fn_gaps.c):
 * the gaps between a message's arrivals, by class (uniform, Zipf), as
 * explicit values (fading, a gaps file), and their survival function
 * S(x) = P(T > x).  Internal to src/model/cycles/.
 */
#ifndef RBF_FN_GAPS_H
#define RBF_FN_GAPS_H

#include "model_cycles.h"

typedef struct {
    /* geometric classes (uniform, zipf) */
    size_t ncls;
    double *q, *w; /* arrival probability and share of arrivals of each class */
    /* explicit gaps (fading, gaps) */
    size_t ngap;
    uint64_t *t;
    double *hb;   /* the previous arrival was a tick for sure (a birth) */
    double *hr;   /* the previous arrival was a repeat */
    double tail;  /* mass of gaps so long that the message is surely forgotten */
    int prev_nu;  /* gaps: previous arrival a tick with probability nu (else psi) */
    double r;     /* fraction of first arrivals */
} gapdesc;

typedef struct {
    /* geometric classes: S on a grid (integers to 1023, then 2% steps),
     * interpolated in log */
    size_t ng;
    double *gx, *gs;
    /* explicit gaps: sorted values and suffix sums P(T >= et[i]) */
    size_t ne;
    uint64_t *et;
    double *esuf, *esufb; /* esufb: the part whose previous arrival was a birth */
    /* the same suffix sums on every whole number 0..dmax (O(1) lookups,
     * the same values as the search): NULL when the gaps reach too far */
    double *dsuf, *dsufb;
    uint64_t dmax;
    double tail; /* gaps beyond the table: surely longer than any x asked */
} gap_surv;

void rbf__fn_gap_free(gapdesc *d);
int rbf__fn_gaps_geometric(const rbf_model_workload *w, gapdesc *d);
int rbf__fn_gaps_fading(const rbf_model_params *prm, const rbf_model_workload *w, uint64_t tcut,
                       gapdesc *d);
int rbf__fn_gaps_file(const rbf_model_workload *w, gapdesc *d);
void rbf__fn_surv_free(gap_surv *s);
int rbf__fn_surv_build(const gapdesc *d, gap_surv *s);
double rbf__fn_surv_at(const gap_surv *s, double x);
double rbf__fn_surv_edge(const gap_surv *s, double x, double psi, double nubar);
double rbf__fn_surv_sm(const gap_surv *s, double mu, double var);
double rbf__fn_surv_edge_sm(const gap_surv *s, double mu, double var, double psi, double nu);

#endif
