/*
 * plan_fn.c -- sizing for both errors (rbf plan --remember, docs/models.md 9.4).
 *
 * For each phase count (1, 2) and k, the largest sigma (>= k) whose average
 * rate is <= eps (found as rbf_plan_memory finds it: in O(log M) rates by
 * the asymptotic method above 2^22 bits) holds the most messages per cycle, and it also forgets least
 * (a longer cycle clears later), so it is the only candidate of that
 * (phases, k): feasible iff its probability of forgetting a message after
 * `remember` ticks (from a tick) is <= miss.  Candidates are tried in
 * decreasing order of messages per cycle; the first feasible one wins.
 * Each is first judged by cheap bounds on that probability
 * (rbf__model_forget_sigma, cycles.c); only undecided ones, and the
 * winner's reported value, run the cycle-length law up to remember + 1.
 */
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"
#include "rbf_alloc.h"

static int cand_cmp(const void *a, const void *b)
{
    const rbf__plan_cand *x = a, *y = b;
    if (x->en0 != y->en0)
        return x->en0 < y->en0 ? 1 : -1;
    if (x->k != y->k)
        return x->k < y->k ? -1 : 1;
    return x->phases < y->phases ? -1 : (x->phases > y->phases);
}

int rbf__plan_candidates(uint64_t bits, double eps, const rbf_plan_options *o,
                         rbf__plan_cand **out, size_t *n)
{
    const unsigned K = o->max_hashes ? o->max_hashes : 32;
    const int nc = o->hashing == RBF_NON_COLLIDING, ret = o->recycle == RBF_RETAINING;
    rbf__plan_cand *cs = rbf__calloc(2 * (size_t)K, sizeof *cs);
    if (!cs)
        return RBF_ENOMEM;
    size_t m = 0;
    int rc = RBF_OK;
    for (unsigned ph = 1; ph <= 2 && !rc; ph++) {
        uint64_t mb = ph == 2 ? bits / 2 : bits;
        double best = 0.0;
        for (unsigned k = 1; k <= K; k++) {
            int feasible = 0;
            uint64_t sigma = 0;
            double en0 = 0.0, fp = 0.0;
            if ((rc = rbf__plan_sigma_k(mb, k, nc, ret, ph == 2, o->method, eps, &feasible, &sigma,
                                        &en0, &fp)))
                break;
            if (!feasible)
                continue;
            /* capacity is unimodal in k: past the peak, a k holding less
             * than half the best cannot win (and forgets more) */
            if (en0 > best)
                best = en0;
            else if (en0 < 0.5 * best)
                break;
            cs[m].phases = ph;
            cs[m].k = k;
            cs[m].sigma = sigma;
            cs[m].en0 = en0;
            cs[m].fp = fp;
            m++;
        }
    }
    if (rc) {
        rbf__free(cs);
        return rc;
    }
    qsort(cs, m, sizeof *cs, cand_cmp);
    *out = cs;
    *n = m;
    return RBF_OK;
}

#define RBF__FORGET_BUDGET 4e9

/* need_value: out->miss must be the forgetting probability (else, in the
 * least-memory search, only feasibility counts and miss is a bound). */
static int plan_at(uint64_t bits, double eps, uint64_t remember, double miss, int need_value,
                   const rbf_plan_options *o, rbf_plan_remember_result *out)
{
    memset(out, 0, sizeof *out);
    out->bits = bits;
    const int nc = o->hashing == RBF_NON_COLLIDING, ret = o->recycle == RBF_RETAINING;
    rbf__plan_cand *cs = NULL;
    size_t n = 0;
    int rc = rbf__plan_candidates(bits, eps, o, &cs, &n);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        rbf_model_params p;
        rbf_model_params_init(&p);
        p.bits = cs[i].phases == 2 ? bits / 2 : bits;
        p.hashes = cs[i].k;
        p.hashing = nc ? RBF_NON_COLLIDING : RBF_COLLIDING;
        p.recycle = ret ? RBF_RETAINING : RBF_NON_RETAINING;
        p.method = o->method; /* E[L] by the plan's own method */
        rbf_model_cycle_spec s;
        rbf_model_cycle_spec_init(&s);
        s.phases = cs[i].phases;
        s.sigma = cs[i].sigma;
        if (!ret) {
            /* proven shortcut: a non-retaining filter forgets the message
             * that triggers a recycle at once, a share 1/E[L] of the ticks,
             * and E[L] = E[N_0] + g_sigma <= E[N_0] + 1/(1 - rho(sigma)) */
            double omr = rbf__model_one_minus_rho(p.bits, p.hashes, nc, cs[i].sigma);
            if (omr > 0.0 && 1.0 / (cs[i].en0 + 1.0 / omr) > miss * (1.0 + 1e-9))
                continue;
        }
        double f;
        int bound = 0;
        if (cs[i].sigma + 1 < p.bits) {
            /* bounds first: most candidates are decided by them; else, or
             * for the value reported, the cycle-length law up to
             * remember + 1 (cycles.c), when it is within its budget */
            double lo, hi, mean;
            if ((rc = rbf__model_forget_bounds(&p, cs[i].sigma, cs[i].phases, remember, &mean, &lo,
                                               &hi)))
                break;
            if (lo > miss)
                continue;
            const int tight = hi - lo <= 1e-12 * hi;
            if (!(hi <= miss && (!need_value || tight))) {
                /* the law costs about k min(sigma, k W) W steps */
                const double W = (double)remember + 2.0, ks = (double)cs[i].k;
                const double lev = (double)cs[i].sigma < ks * W ? (double)cs[i].sigma : ks * W;
                if (remember <= ((uint64_t)1 << 17) && ks * lev * W <= RBF__FORGET_BUDGET) {
                    if (!tight) { /* the law, reusing the bounds' E[L] */
                        if ((rc = rbf__model_forget_law(&p, cs[i].sigma, cs[i].phases, remember,
                                                         mean, &hi)))
                            break;
                        lo = hi;
                    }
                } else if (hi > miss) {
                    continue; /* not proven feasible: passed over (conservative) */
                }
            }
            f = hi;
            bound = hi - lo > 1e-12 * hi;
        } else {
            rbf_model_cycles *c = NULL;
            if ((rc = rbf_model_cycles_new(&p, &s, &c)))
                break;
            f = rbf_model_forget(c, remember, RBF_MODEL_FROM_TICK, 0);
            rbf_model_cycles_free(c);
        }
        if (f <= miss) {
            out->feasible = 1;
            out->phases = cs[i].phases;
            out->hashes = cs[i].k;
            out->sigma = cs[i].sigma;
            out->expected_messages = cs[i].en0;
            out->fp = cs[i].fp;
            out->miss = f;
            out->miss_is_bound = (uint64_t)bound;
            break;
        }
    }
    rbf__free(cs);
    return rc;
}

int rbf_plan_remember(uint64_t bits, double eps, uint64_t remember, double miss,
                      const rbf_plan_options *o, rbf_plan_remember_result *out, uint64_t *least_bits)
{
    rbf_plan_options def;
    if (!o) {
        rbf_plan_options_init(&def);
        o = &def;
    }
    if (!out || bits < 2 || !(eps > 0.0 && eps < 1.0) || !(miss >= 0.0 && miss < 1.0) ||
        o->max_hashes > MODEL_MAX_HASHES)
        return RBF_EINVAL;
    if (least_bits)
        *least_bits = 0;
    int rc = plan_at(bits, eps, remember, miss, 1, o, out);
    if (rc || out->feasible || !least_bits)
        return rc;
    /* a non-retaining filter forgets the message that triggers a recycle
     * at once (miss >= 1/E[L] > 0): with miss = 0 no memory has one */
    if (miss == 0.0 && o->recycle != RBF_RETAINING)
        return RBF_OK;
    /* least memory: double until feasible, then bisect (assumes feasibility
     * is monotone in memory; checked by the tests on small cases).  With
     * auto, by the asymptotic method (within 1e-9 of the exact one): the
     * search plans at up to 2^25 bits some thirty times */
    rbf_plan_options fo = *o;
    if (fo.method == RBF_MODEL_AUTO)
        fo.method = RBF_MODEL_ASYMPTOTIC;
    o = &fo;
    rbf_plan_remember_result r;
    uint64_t lo = bits, hi = bits, done = 1;
    /* progress: one step per memory planned; the total is what the
     * doubling could still take, then the bisection's steps left */
    unsigned lb = 0;
    while (lb < 64 && (((uint64_t)1 << lb) < bits))
        lb++;
    for (;;) {
        if (hi > ((uint64_t)1 << 24))
            return RBF_OK; /* not found below 2^25 bits: *least_bits = 0 */
        hi *= 2;
        unsigned left = lb < 25 ? 25 - lb : 1;
        if (o->progress && o->progress(o->progress_ctx, done, done + left + (lb > 1 ? lb : 1)))
            return RBF_ECANCELED;
        if ((rc = plan_at(hi, eps, remember, miss, 0, o, &r)))
            return rc;
        done++;
        lb++;
        if (r.feasible)
            break;
        lo = hi;
    }
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        unsigned left = 0;
        while (left < 64 && (((uint64_t)1 << left) < hi - lo))
            left++;
        if (o->progress && o->progress(o->progress_ctx, done, done + left))
            return RBF_ECANCELED;
        if ((rc = plan_at(mid, eps, remember, miss, 0, o, &r)))
            return rc;
        done++;
        if (r.feasible)
            hi = mid;
        else
            lo = mid;
    }
    *least_bits = hi;
    return RBF_OK;
}
