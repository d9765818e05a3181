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
    double *glr; /* log(gs[i+1]/gs[i]) of each interval where both are > 0 (the
                    interpolation's exponent, once instead of at each lookup) */
    /* past 1023, the grid's interval of x from the top bits of x's double
     * (its exponent and 8 bits of mantissa: 0.4%, a fifth of the grid's 2%
     * steps): gi[key - gkey0] is an interval at or below x's, the search
     * goes up from there (the same interval as a binary search) */
    uint32_t *gi;
    uint64_t gkey0, gkeys;
    /* explicit gaps: sorted values and suffix sums P(T >= et[i]) */
    size_t ne;
    uint64_t *et;
    double *esuf, *esufb; /* esufb: the part whose previous arrival was a birth */
    /* the same suffix sums on every whole number 0..dmax (O(1) lookups,
     * the same values as the search): NULL when the gaps reach too far */
    double *dsuf, *dsufb;
    uint64_t dmax;
    double tail; /* gaps beyond the table: surely longer than any x asked */
    /* et, esuf and esufb live in one block, dsuf and dsufb in another
     * (rbf__alloc_lines: huge pages past 2 MiB), of these sizes */
    size_t eblk_bytes, dblk_bytes;
} gap_surv;

void rbf__fn_gap_free(gapdesc *d);
int rbf__fn_gaps_geometric(const rbf_model_workload *w, gapdesc *d);
int rbf__fn_gaps_fading(const rbf_model_params *prm, const rbf_model_workload *w, uint64_t tcut,
                       gapdesc *d);
int rbf__fn_gaps_file(const rbf_model_workload *w, gapdesc *d);
void rbf__fn_surv_free(gap_surv *s);
int rbf__fn_surv_build(const gapdesc *d, gap_surv *s);
/* S(x) and the edge term (fn_gaps.c) for any x: use rbf__fn_surv_at and
 * rbf__fn_surv_edge below, which answer inline where they can */
double rbf__fn_surv_at_full(const gap_surv *s, double x);
double rbf__fn_surv_edge_full(const gap_surv *s, double x, double psi, double nubar);
double rbf__fn_surv_sm(const gap_surv *s, double mu, double var);
double rbf__fn_surv_edge_sm(const gap_surv *s, double mu, double var, double psi, double nu);

/* S(x) = P(T > x) and the edge term, inline where the dense tables
 * answer (the per-arrival loops call them millions of times), else by the
 * _full forms: the same lookups and the same arithmetic either way, so
 * the same values to the last bit; floor of a nonnegative x below 2^63 is
 * its integer part. */
static inline double rbf__fn_dense_at(const gap_surv *s, double x)
{
    /* needs s->dsuf, 0 <= x, x + 1 <= dmax */
    const double fl = (double)(uint64_t)x, f = x - fl;
    const size_t i = (size_t)fl;
    const double a = s->dsuf[i];
    return f > 0.0 ? a + f * (s->dsuf[i + 1] - a) : a;
}

static inline double rbf__fn_surv_at(const gap_surv *s, double x)
{
    if (!(x > 0.0))
        x = 0.0;
    if (s->dsuf) {
        if (x + 1.0 <= (double)s->dmax)
            return rbf__fn_dense_at(s, x);
        if (x >= (double)s->dmax) /* past every gap: a + f (a - a) = a */
            return s->dsuf[s->dmax];
    }
    return rbf__fn_surv_at_full(s, x);
}

static inline double rbf__fn_surv_edge(const gap_surv *s, double x, double psi, double nubar)
{
    if (!(x > 0.0))
        x = 0.0;
    if (s->dsuf && x >= (double)s->dmax) /* past every gap: no mass at x + 1 */
        return 0.0;
    if (!s->dsuf || !(x + 2.0 <= (double)s->dmax))
        return rbf__fn_surv_edge_full(s, x, psi, nubar);
    const double all = rbf__fn_dense_at(s, x) - rbf__fn_dense_at(s, x + 1.0);
    const double fl = (double)(uint64_t)x, f = x - fl;
    const size_t i = (size_t)fl;
    const double b0 = s->dsufb[i], b1 = s->dsufb[i + 1], b2 = s->dsufb[i + 2];
    double birth = (b0 + f * (b1 - b0)) - (b1 + f * (b2 - b1));
    if (birth < 0.0)
        birth = 0.0;
    const double v = (birth + psi * (all - birth)) / nubar;
    return v > 0.0 ? v : 0.0;
}

#endif
