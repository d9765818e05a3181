/*
 * plan_trace.c -- sizing for a log (rbf plan --fn trace:FILE --miss D,
 * docs/models.md 9.6): among one- and two-phase sigma-bounded filters of a
 * given memory whose average false-positive rate is <= eps, the one holding
 * the most messages per cycle whose false-negative rate on the trace (the
 * cycle law replayed on it from an empty filter, fn_trace.c) is <= miss.
 * For each (phases, k) the largest sigma meeting eps is the only candidate
 * (it holds the most and, clearing later, forgets least), as for
 * rbf plan --remember (plan_fn.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"
#include "rbf_alloc.h"

/* The screen of a candidate before its full replay (pt_at): this many
 * replicas, where they replay fewer arrivals than the full replay would
 * (its automatic replicas replay up to about 4e7) */
#define PT_SCREEN 4u
#define PT_SCREEN_MAX 1e7

/* top: try at most that many candidates (the memory search: the one
 * holding most forgets least, nearly always), 0 all */
static int pt_at(uint64_t bits, double eps, const rbf_model_trace *t, double miss, size_t top,
                 const rbf_plan_options *o, rbf_plan_trace_result *out)
{
    memset(out, 0, sizeof *out);
    out->bits = bits;
    rbf__plan_cand *cs = NULL;
    size_t n = 0;
    int rc = rbf__plan_candidates(bits, eps, o, &cs, &n);
    if (rc)
        return rc;
    if (top && n > top)
        n = top;
    for (size_t i = 0; i < n && !rc; i++) {
        rbf_model_params p;
        rbf_model_params_init(&p);
        p.method = o->method;
        p.bits = cs[i].phases == 2 ? bits / 2 : bits;
        p.hashes = cs[i].k;
        p.hashing = o->hashing;
        p.recycle = o->recycle;
        rbf_model_cycle_spec s;
        rbf_model_cycle_spec_init(&s);
        s.phases = cs[i].phases;
        s.sigma = cs[i].sigma;
        rbf_model_trace_result r;
        rbf_model_cycles *c = NULL;
        if (t->replicas == 0 && t->arrivals <= PT_SCREEN_MAX / PT_SCREEN) {
            /* with automatic replicas (up to 32): a screen first, with
             * PT_SCREEN replicas of the fast cycle law (the large-filter
             * law from 2^12 bits, docs/models.md 9.7), and a candidate
             * whose fn is over miss by more than four of its standard
             * errors is passed over there (most are: the fn of the
             * candidates spans decades) */
            rbf_model_params fp = p;
            fp.method = RBF_MODEL_ASYMPTOTIC;
            rbf_model_trace ts = *t;
            ts.replicas = PT_SCREEN;
            rc = rbf_model_cycles_new(&fp, &s, &c);
            if (!rc)
                rc = rbf_model_fn_trace_with(c, &fp, &s, &ts, &r);
            rbf_model_cycles_free(c);
            c = NULL;
            if (rc == RBF_ENOMEM) { /* the law too long for this candidate: passed over */
                rc = RBF_OK;
                continue;
            }
            if (rc)
                break;
            if (r.whole.fn - 4.0 * r.whole.fn_se > miss) {
                out->candidates++;
                continue;
            }
        }
        rc = rbf_model_fn_trace(&p, &s, t, &r);
        if (rc == RBF_ENOMEM) { /* the law too long for this candidate: passed over */
            rc = RBF_OK;
            continue;
        }
        if (rc)
            break;
        out->candidates++;
        if (r.whole.fn <= miss) {
            out->feasible = 1;
            out->phases = cs[i].phases;
            out->hashes = cs[i].k;
            out->sigma = cs[i].sigma;
            out->expected_messages = cs[i].en0;
            out->fp = cs[i].fp;
            out->fn = r.whole.fn;
            out->fn_se = r.whole.fn_se;
            out->fp_trace = r.whole.fp;
            break;
        }
    }
    rbf__free(cs);
    return rc;
}

int rbf_plan_trace(uint64_t bits, double eps, const rbf_model_trace *t, double miss,
                   const rbf_plan_options *o, rbf_plan_trace_result *out, uint64_t *least_bits)
{
    rbf_plan_options def;
    if (!o) {
        rbf_plan_options_init(&def);
        o = &def;
    }
    if (!out || !t || bits < 2 || !(eps > 0.0 && eps < 1.0) || !(miss >= 0.0 && miss < 1.0) ||
        o->max_hashes > MODEL_MAX_HASHES)
        return RBF_EINVAL;
    if (least_bits)
        *least_bits = 0;
    /* the ids once here (each trace model checks those it replays, but a
     * candidate whose law is too long is passed over unreplayed) */
    if (!t->ids || t->distinct == 0)
        return RBF_EINVAL;
    for (uint64_t i = 0; i < t->arrivals; i++)
        if (t->ids[i] >= t->distinct)
            return RBF_EINVAL;
    int rc = pt_at(bits, eps, t, miss, 0, o, out);
    if (rc || out->feasible || !least_bits)
        return rc;
    /* least memory: double until feasible, then bisect to 1% (assumes
     * feasibility monotone in memory: more memory, longer cycles), each
     * memory judged by its two candidates holding the most messages, one
     * replica */
    rbf_plan_trace_result r;
    rbf_model_trace ts = *t; /* one replica a memory */
    ts.replicas = 1;
    /* and with method auto, the fast methods: the rates' asymptotic
     * method (within 1e-9) and the large-filter cycle laws from 2^12 bits
     * (docs/models.md 9.7), far inside the search's 1% */
    rbf_plan_options fo = *o;
    if (fo.method == RBF_MODEL_AUTO)
        fo.method = RBF_MODEL_ASYMPTOTIC;
    o = &fo;
    uint64_t lo = bits, hi = bits;
    unsigned done = 1;
    for (;;) {
        if (hi > ((uint64_t)1 << 30))
            return RBF_OK; /* not found up to 2^31 bits */
        hi *= 2;
        if (o->progress && o->progress(o->progress_ctx, done, done + 8))
            return RBF_ECANCELED;
        if ((rc = pt_at(hi, eps, &ts, miss, 2, o, &r)))
            return rc;
        done++;
        if (r.feasible)
            break;
        lo = hi;
    }
    while (hi - lo > 1 && (double)(hi - lo) > 0.01 * (double)lo) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (o->progress && o->progress(o->progress_ctx, done, done + 8))
            return RBF_ECANCELED;
        if ((rc = pt_at(mid, eps, &ts, miss, 2, o, &r)))
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
