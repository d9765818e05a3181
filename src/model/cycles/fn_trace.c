/*
 * fn_trace.c -- false negatives and false positives of a filter on a given
 * trace (docs/models.md 9.5): the cycle law replayed on the trace.
 *
 * The analytic model (fn.c) summarises a workload by its gap law and
 * assumes the gaps independent of the filter's state; a real stream is
 * bursty, and the number of ticks between two arrivals of a message is
 * not a function of their gap in arrivals.  Here the trace itself is the
 * workload: each arrival is replayed in order, with the ground-truth
 * bookkeeping of rbf simulate (a message is held iff it arrived in the
 * current cycle, or the previous one with two phases), and the filter
 * replaced by its model -- the cycle-length law L in ticks (cycles.c), the
 * false-positive rate phi(u) of a cycle u ticks old, and the frozen
 * filter's rate rho_F.  A cycle ends after a draw of L ticks; a new arrival
 * is a false positive with probability phi(u) (two phases: 1 - (1 -
 * phi(u))(1 - rho_F)), and a repeat held by no filter is a false negative
 * unless it is one.  Only the cycle boundaries are random; every other
 * quantity is an expectation, so a few replicas (independent draws of the
 * boundaries) give the answer and its standard error.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fn_trace_internal.h"
#include "model_cycles.h"
#include "rbf_alloc.h"
#include "rbf_abi.h"

/* a cycle's length in ticks, by inversion of the law's distribution */
static uint64_t tr_draw(const tr_law *w, uint64_t *rng)
{
    double u = (double)(rbf_splitmix64(rng) >> 11) * 0x1.0p-53; /* the cycle draws */
    size_t lo = 0, hi = (size_t)w->len; /* cdf[hi] >= u */
    if (u >= w->cdf[hi])
        return w->len ? w->len : 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->cdf[mid] >= u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo ? (uint64_t)lo : 1;
}

int rbf__tr_law_new(const rbf_model_cycles *c, const rbf_model_params *p,
                    const rbf_model_cycle_spec *s, tr_law *w)
{
    memset(w, 0, sizeof *w);
    const double *pmf, *phil;
    uint64_t len;
    double rhoF;
    rbf__model_cycles_tables(c, &pmf, &phil, &len, &rhoF);
    w->len = len;
    w->rho_f = s->phases == 2 ? rhoF : 0.0;
    w->two = s->phases == 2;
    w->oracle = s->oracle != 0;
    w->after = s->sigma ? (p->recycle == RBF_RETAINING ? TR_AFTER_NEXT : TR_AFTER_KEEP)
                        : TR_AFTER_SAME;
    w->k = (double)p->hashes;
    const double Md = (double)p->bits;
    w->fF = w->rho_f > 0.0 ? pow(w->rho_f, 1.0 / w->k) : 0.0;
    w->lM = w->k * log1p(-1.0 / Md);
    w->Md = Md;
    w->lF = w->fF * Md > 1.0 ? w->k * log1p(-1.0 / (w->fF * Md)) : 0.0;
    w->cdf = rbf__malloc((len + 1) * sizeof *w->cdf);
    w->phi = rbf__malloc((len + 2) * sizeof *w->phi);
    if (!w->cdf || !w->phi) {
        rbf__tr_law_free(w);
        return RBF_ENOMEM;
    }
    model_sum a;
    msum_init(&a);
    for (uint64_t n = 0; n <= len; n++) {
        msum_add(&a, pmf[n]);
        w->cdf[n] = msum_get(&a);
    }
    double tot = w->cdf[len] > 0.0 ? w->cdf[len] : 1.0;
    for (uint64_t n = 0; n <= len; n++)
        w->cdf[n] /= tot;
    /* phi(u) = P(the (u+1)-th tick is a false positive | L > u) */
    for (uint64_t u = 0; u <= len; u++) {
        double surv = 1.0 - w->cdf[u]; /* P(L > u) */
        w->phi[u] = surv > 1e-300 ? model_clamp01(phil[u] / (surv * tot)) : (u ? w->phi[u - 1] : 0.0);
    }
    w->phi[len + 1] = w->phi[len];
    return RBF_OK;
}

void rbf__tr_law_free(tr_law *w)
{
    rbf__free(w->cdf);
    rbf__free(w->phi);
    memset(w, 0, sizeof *w);
}

/* x^k for a whole number k (the replay's k = w->k): by squaring, cheaper
 * than pow() and within a few units in the last place of it */
#if defined(__GNUC__)
#define TR_INLINE inline __attribute__((always_inline))
#else
#define TR_INLINE inline
#endif

static inline double kpow(double x, unsigned k)
{
    double r = 1.0;
    while (k) {
        if (k & 1)
            r *= x;
        x *= x;
        k >>= 1;
    }
    return r;
}

/* The oracle's active filter with two phases: the fraction of the frozen
 * filter's set bits (fF of all, lamF = -log(1 - fF)) that it has set, after
 * re of the frozen filter's nF words were re-inserted (eU = e^(-lamF re/nF)
 * while re < nF) and fresh words left the unset fraction eF = e^LF there. */
static double oracle_alpha(double eF, double re, double eU, double nF, double fF, double lamF)
{
    double U = 1.0; /* unset by the re-inserted words */
    if (nF > 0.0 && fF > 0.0) {
        const int all = re >= nF;
        U = isinf(lamF) ? (all ? 0.0 : 1.0) : all ? 0.0 : (eU - (1.0 - fF)) / fF;
        U = U < 0.0 ? 0.0 : U > 1.0 ? 1.0 : U;
    }
    return model_clamp01(1.0 - eF * U);
}

/* Replay arrivals [from, to) from an empty filter; st (nd distinct words)
 * zeroed by the caller.  Whole: everything; steady: from the first recycle
 * to the last.  cv (may be NULL, with at: each message's last arrival):
 * the repeats, forgotten and false negatives by gap in arrivals.
 * RBF_EINVAL at an id >= nd (the tallies are then partial). */
static TR_INLINE int replay_body(const tr_law *w, const uint32_t *ids, uint64_t from, uint64_t to,
                                 uint32_t nd, uint32_t *st, uint64_t *rng, tr_tally *whole,
                                 tr_tally *steady, uint32_t *at, tr_curve *cv, const int two,
                                 const int oracle)
{
    const uint32_t lag = two ? 1u : 0u;
    const unsigned kk = (unsigned)w->k;
    uint32_t cyc = 2;
    uint64_t u = 0, L = tr_draw(w, rng), cycles = 0;
    tr_tally t, first, last;
    memset(&t, 0, sizeof t);
    memset(&first, 0, sizeof first);
    memset(&last, 0, sizeof last);
    double keepF = 1.0; /* the frozen filter is empty until the first recycle */
    /* the frozen filter's set fraction (the oracle's: the active filter's
     * at its recycle) and, but for the oracle, its log-decrement per
     * re-inserted repeat */
    double fF = w->fF;
    const double lF = w->lF;
    /* two phases: log of the unset fractions of the active filter over the
     * frozen filter's set bits (LF), over the rest (LN), and without the
     * re-inserted repeats (L0) */
    /* kept as the fractions themselves, e^LF, e^LN, e^L0, each event a
     * multiply (the steps' exponentials xM = e^lM, xF = e^lF once) */
    double eF = 1.0, eN = 1.0, e0 = 1.0;
    const double xM = exp(w->lM), xF = exp(lF);
    /* the oracle's re-inserted repeats are words of the frozen filter: r of
     * its nF words leave a bit it has set unset in the active filter with
     * (e^(-lamF r/nF) - e^(-lamF)) / (1 - e^(-lamF)), lamF = -log(1 - fF)
     * (a set bit is covered by J >= 1 of its words, J Poisson given
     * J >= 1); ins counts the words inserted into the active filter */
    double re = 0.0, ins = 0.0, nF = 0.0, lamF = fF < 1.0 ? -log1p(-fF) : INFINITY;
    double eU = 1.0, xU = 1.0; /* e^(-lamF re/nF), and its factor a re-insertion */
    for (uint64_t i = from; i < to; i++) {
        const uint32_t id = ids[i];
        if (id >= nd)
            return RBF_EINVAL;
        const uint32_t v = st[id];
        const int before = v != 0;
        const int held_act = v >= cyc, held_any = v + lag >= cyc;
        t.arrivals += 1.0;
        t.repeats += before;
        uint32_t nhc = cyc;
        unsigned bin = 0;
        if (cv) {
            if (before) {
                uint32_t g = (uint32_t)i - at[id];
                bin = g ? 31u - (unsigned)__builtin_clz(g) : 0u;
                cv->rep[bin] += 1.0;
            }
            at[id] = (uint32_t)i;
        }
        if (!held_any) {
            double ph = w->phi[u <= w->len ? u : w->len + 1];
            double q = ph;
            if (two && cycles) {
                /* a new message is a false positive of both filters with
                 * (F/M alpha)^k, more often than independent filters */
                const double al = oracle ? oracle_alpha(eF, re, eU, nF, fF, lamF) : 1.0 - eF;
                const double be = 1.0 - eN;
                const double pA = fF * al + (1.0 - fF) * be;
                if (oracle) /* re-inserted repeats are no ticks, but set bits */
                    ph = model_clamp01(ph + kpow(pA, kk) - kpow(1.0 - e0, kk));
                double dd = kpow(fF * al, kk) - kpow(pA * fF, kk);
                q = model_clamp01(1.0 - ((1.0 - ph) * keepF + (dd > 0.0 ? dd : 0.0)));
            } else if (two) {
                q = ph;
            }
            t.fresh += 1.0;
            t.fp += q;
            if (before) {
                t.forgotten += 1.0;
                t.fn += 1.0 - q;
                if (cv) {
                    cv->forg[bin] += 1.0;
                    cv->fn[bin] += 1.0 - q;
                }
            }
        }
        if (oracle && (!held_any || (two && cycles && !held_act)))
            ins += 1.0;
        if (two && cycles && !held_act) {
            if (held_any) { /* re-inserted from the frozen filter */
                if (oracle) {
                    re += 1.0;
                    eU *= xU;
                } else {
                    eF *= xF;
                    e0 *= xM;
                }
            } else {
                eF *= xM;
                eN *= xM;
                e0 *= xM;
            }
        }
        if (oracle ? !held_any : !held_act) { /* a tick */
            t.ticks += 1.0;
            int recycle = 0;
            if (w->after == TR_AFTER_NEXT) {
                if (u >= L) { /* the trigger: it opens the next cycle */
                    cyc++;
                    nhc = cyc;
                    u = 0;
                    recycle = 1;
                }
                u++;
            } else if (++u >= L) {
                nhc = w->after == TR_AFTER_KEEP ? v : cyc;
                cyc++;
                u = 0;
                recycle = 1;
            }
            if (recycle) { /* counted with the arrival that recycled, as rbf simulate */
                L = tr_draw(w, rng);
                keepF = 1.0 - w->rho_f;
                if (two && oracle && cycles) {
                    /* the oracle's re-inserted repeats filled the closing
                     * filter beyond the law's N messages: it is frozen so */
                    const double pA = fF * oracle_alpha(eF, re, eU, nF, fF, lamF) +
                                      (1.0 - fF) * (1.0 - eN);
                    const double rf = model_clamp01(w->rho_f + kpow(pA, kk) - kpow(1.0 - e0, kk));
                    keepF = 1.0 - rf;
                    fF = rf > 0.0 ? pow(rf, 1.0 / w->k) : 0.0;
                    lamF = fF < 1.0 ? -log1p(-fF) : INFINITY;
                }
                nF = ins;
                ins = re = 0.0;
                eF = eN = e0 = eU = 1.0;
                xU = nF > 0.0 && !isinf(lamF) ? exp(-lamF / nF) : 1.0;
                if (++cycles == 1)
                    first = t;
                last = t;
            }
        }
        st[id] = nhc;
    }
    whole->arrivals += t.arrivals;
    whole->repeats += t.repeats;
    whole->fresh += t.fresh;
    whole->ticks += t.ticks;
    whole->fp += t.fp;
    whole->fn += t.fn;
    whole->forgotten += t.forgotten;
    whole->cycles += (double)cycles;
    if (cycles >= 2) {
        steady->arrivals += last.arrivals - first.arrivals;
        steady->repeats += last.repeats - first.repeats;
        steady->fresh += last.fresh - first.fresh;
        steady->ticks += last.ticks - first.ticks;
        steady->fp += last.fp - first.fp;
        steady->fn += last.fn - first.fn;
        steady->forgotten += last.forgotten - first.forgotten;
        steady->cycles += (double)(cycles - 1);
    }
    return RBF_OK;
}

int rbf__tr_replay(const tr_law *w, const uint32_t *ids, uint64_t from, uint64_t to, uint32_t nd,
                   uint32_t *st, uint64_t *rng, tr_tally *whole, tr_tally *steady, uint32_t *at,
                   tr_curve *cv)
{
    /* the loop once for each policy, its flags constants (the same
     * arithmetic: the same values) */
#define TR_CASE(T, O)                                                                              \
    (cv ? replay_body(w, ids, from, to, nd, st, rng, whole, steady, at, cv, T, O)                 \
        : replay_body(w, ids, from, to, nd, st, rng, whole, steady, NULL, NULL, T, O))
    if (w->two)
        return w->oracle ? TR_CASE(1, 1) : TR_CASE(1, 0);
    return w->oracle ? TR_CASE(0, 1) : TR_CASE(0, 0);
#undef TR_CASE
}

static void tr_rates(const tr_tally *t, unsigned R, double per, double fp2, double fn2,
                     rbf_model_trace_rates *r)
{
    memset(r, 0, sizeof *r);
    r->fp = t->fresh > 0.0 ? t->fp / t->fresh : 0.0;
    r->fn = t->repeats > 0.0 ? t->fn / t->repeats : 0.0;
    r->forgotten = t->repeats > 0.0 ? t->forgotten / t->repeats : 0.0;
    r->tick_fraction = t->arrivals > 0.0 ? t->ticks / t->arrivals : 0.0;
    r->arrivals = t->arrivals / per;
    r->repeats = t->repeats / per;
    r->cycles = t->cycles / per;
    r->fp_se = r->fn_se = NAN;
    if (R >= 2) {
        /* fp2, fn2: sums over replicas of the replica's rate squared */
        double mfp = fp2 / R - r->fp * r->fp, mfn = fn2 / R - r->fn * r->fn;
        r->fp_se = sqrt((mfp > 0.0 ? mfp : 0.0) * R / (R - 1) / R);
        r->fn_se = sqrt((mfn > 0.0 ? mfn : 0.0) * R / (R - 1) / R);
    }
}

int rbf_model_fn_trace(const rbf_model_params *p, const rbf_model_cycle_spec *s,
                       const rbf_model_trace *t, rbf_model_trace_result *out)
{
    return rbf_model_fn_trace_with(NULL, p, s, t, out);
}

int rbf_model_fn_trace_with(const rbf_model_cycles *given, const rbf_model_params *p,
                            const rbf_model_cycle_spec *s, const rbf_model_trace *t,
                            rbf_model_trace_result *out)
{
    if (!p || !s || !t || !out || !t->ids || t->arrivals == 0 || t->distinct == 0)
        return RBF_EINVAL;
    if (!RBF_RESERVED_ZERO(t))
        return RBF_EINVAL;
    memset(out, 0, sizeof *out);
    const uint64_t A = t->window ? t->window : t->arrivals;
    const uint64_t nw = t->arrivals / A;
    if (nw == 0)
        return RBF_EINVAL; /* a window longer than the trace */
    if (t->arrivals > UINT32_MAX - 4)
        return RBF_EINVAL; /* cycles are numbered in 32 bits */
    /* the ids are checked (< distinct) as the replay reads them: one pass
     * over them fewer, where each is 4 bytes of a trace of 10^8; the tail
     * past the last whole window, which no replay reads, here */
    for (uint64_t i = nw * A; i < t->arrivals; i++)
        if (t->ids[i] >= t->distinct)
            return RBF_EINVAL;
    rbf_model_cycles *c = NULL;
    int rc = given ? RBF_OK : rbf_model_cycles_new(p, s, &c);
    if (rc)
        return rc;
    const rbf_model_cycles *law = given ? given : c;
    out->fp_law = rbf_model_cycles_fp(law);
    out->cycle_mean = rbf_model_cycles_mean(law);
    tr_law w;
    rc = rbf__tr_law_new(law, p, s, &w);
    rbf_model_cycles_free(c);
    if (rc)
        return rc;
    unsigned R = t->replicas;
    if (R == 0) {
        double r = 4e7 / (double)(nw * A);
        R = r >= 32.0 ? 32u : r >= 1.0 ? (unsigned)r : 1u;
    }
    uint32_t *st = rbf__malloc((size_t)t->distinct * sizeof *st);
    uint32_t *at = t->curve ? rbf__malloc((size_t)t->distinct * sizeof *at) : NULL;
    tr_curve cv;
    memset(&cv, 0, sizeof cv);
    if (!st || (t->curve && !at)) {
        rbf__free(at);
        rbf__free(st);
        rbf__tr_law_free(&w);
        return RBF_ENOMEM;
    }
    tr_tally whole, steady;
    memset(&whole, 0, sizeof whole);
    memset(&steady, 0, sizeof steady);
    double wfp2 = 0.0, wfn2 = 0.0, sfp2 = 0.0, sfn2 = 0.0;
    for (unsigned r = 0; r < R && !rc; r++) {
        uint64_t rng = t->seed ^ (0xD1B54A32D192ED03ull * (r + 1));
        tr_tally w1, s1;
        memset(&w1, 0, sizeof w1);
        memset(&s1, 0, sizeof s1);
        for (uint64_t j = 0; j < nw; j++) {
            if (model_progress(p, (uint64_t)r * nw + j, (uint64_t)R * nw)) {
                rc = RBF_ECANCELED;
                break;
            }
            memset(st, 0, (size_t)t->distinct * sizeof *st);
            if ((rc = rbf__tr_replay(&w, t->ids, j * A, (j + 1) * A, t->distinct, st, &rng, &w1,
                                     &s1, at, t->curve ? &cv : NULL)))
                break;
        }
        double f;
        f = w1.fresh > 0.0 ? w1.fp / w1.fresh : 0.0;
        wfp2 += f * f;
        f = w1.repeats > 0.0 ? w1.fn / w1.repeats : 0.0;
        wfn2 += f * f;
        f = s1.fresh > 0.0 ? s1.fp / s1.fresh : 0.0;
        sfp2 += f * f;
        f = s1.repeats > 0.0 ? s1.fn / s1.repeats : 0.0;
        sfn2 += f * f;
        whole.arrivals += w1.arrivals, whole.repeats += w1.repeats, whole.fresh += w1.fresh;
        whole.ticks += w1.ticks, whole.fp += w1.fp, whole.fn += w1.fn;
        whole.forgotten += w1.forgotten, whole.cycles += w1.cycles;
        steady.arrivals += s1.arrivals, steady.repeats += s1.repeats, steady.fresh += s1.fresh;
        steady.ticks += s1.ticks, steady.fp += s1.fp, steady.fn += s1.fn;
        steady.forgotten += s1.forgotten, steady.cycles += s1.cycles;
    }
    rbf__free(st);
    rbf__free(at);
    rbf__tr_law_free(&w);
    if (rc)
        return rc;
    for (unsigned b = 0; t->curve && b < RBF_MODEL_TRACE_BINS; b++) {
        rbf_model_trace_bin *o = &t->curve[b];
        o->gap_lo = (uint64_t)1 << b;
        o->gap_hi = ((uint64_t)1 << (b + 1)) - 1;
        o->repeats = cv.rep[b] / ((double)R * (double)nw);
        o->forgotten = cv.rep[b] > 0.0 ? cv.forg[b] / cv.rep[b] : 0.0;
        o->fn = cv.rep[b] > 0.0 ? cv.fn[b] / cv.rep[b] : 0.0;
    }
    tr_rates(&whole, R, (double)R * (double)nw, wfp2, wfn2, &out->whole);
    tr_rates(&steady, R, (double)R * (double)nw, sfp2, sfn2, &out->steady);
    out->windows = nw;
    out->replicas = R;
    return RBF_OK;
}
