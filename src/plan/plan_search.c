/*
 * plan_search.c -- the searches the planner's policies share: the crossing
 * of a smooth increasing rate by regula falsi, and the order in which k
 * values are tried (largest capacity bound first).
 */
#include <math.h>
#include <stdint.h>

#include "plan_internal.h"

static double rf_g(double v, double eps)
{
    return v > 0.0 ? log(v) - log(eps) : -1e300;
}

void rbf__rf_init(rfalsi *st, double vlo, double vhi, double eps, uint64_t lo, uint64_t hi)
{
    st->glo = rf_g(vlo, eps);
    st->ghi = rf_g(vhi, eps);
    st->side = 0;
    st->width2 = hi - lo;
    st->nstep = 0;
}

uint64_t rbf__rf_next(rfalsi *st, uint64_t lo, uint64_t hi)
{
    uint64_t mid;
    if (++st->nstep % 3 == 0 && (hi - lo) * 2 > st->width2) {
        mid = lo + (hi - lo) / 2;
    } else {
        double fr = st->glo > -1e299 && st->ghi > st->glo ? -st->glo / (st->ghi - st->glo) : 0.5;
        double x = (double)lo + fr * (double)(hi - lo);
        mid = x <= (double)lo + 1.0 ? lo + 1 : x >= (double)hi - 1.0 ? hi - 1 : (uint64_t)(x + 0.5);
    }
    if (st->nstep % 3 == 0)
        st->width2 = hi - lo;
    return mid;
}

void rbf__rf_update(rfalsi *st, int feasible, double v, double eps)
{
    double g = rf_g(v, eps);
    if (feasible) {
        st->glo = g;
        if (st->side == -1)
            st->ghi *= 0.5;
        st->side = -1;
    } else {
        st->ghi = g;
        if (st->side == 1)
            st->glo *= 0.5;
        st->side = 1;
    }
}

int rbf__cmp_cand(const void *a, const void *b)
{
    const kcand *x = a, *y = b;
    if (x->ub != y->ub)
        return x->ub > y->ub ? -1 : 1;
    return x->k < y->k ? -1 : (x->k > y->k);
}
