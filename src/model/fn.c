/*
 * fn.c -- steady-state false-negative rate of a workload (docs/models.md 9.3).
 *
 * A repeat whose previous arrival was t arrivals earlier sees G ticks in
 * between; each of the t - 1 arrivals between is a tick with probability nu
 * (the tick fraction), independently (mean field): G ~ Binomial(t-1, nu), or
 * geometric when t is.  The repeat is held (by the active filter) unless
 * G >= R, R the residual of its holding (rbf_model_forget), and it is a
 * false negative when it is held by no filter and is not a false positive
 * (probability 1 - f, f the policy's average rate).  The previous arrival
 * was itself a tick (RBF_MODEL_FROM_TICK) or a held repeat
 * (RBF_MODEL_FROM_HELD); repeats that are ticks make more ticks, so the
 * tick fraction is the fixed point
 *
 *     nu = r + (1 - r) psi(nu),   psi(nu) = P(a repeat is not held by the active filter),
 *
 * r the fraction of first arrivals, solved by bisection on [r, 1].
 *
 * Gaps.  uniform:P and zipf:P:S: each message's gaps are geometric with its
 * own arrival probability q (ranks merged into 4096 log-spaced classes of q
 * beyond 4096 ranks), and its previous arrival is a tick with the class's own
 * probability psi_q = A_m / (1 - A_t + A_m) (A_t, A_m: not held from a tick /
 * from a held repeat).  fading:R:L: the gap and whether the previous arrival
 * was the message's birth come from the workload's law walked backwards
 * (each earlier arrival a birth with probability R, otherwise a repeat that
 * picks the message with probability p^a / Z at age a), exactly up to the
 * gap beyond which every repeat is forgotten; a previous repeat is a tick
 * with probability psi.  gaps:FILE: the given distribution; the previous
 * arrival is a tick with probability nu.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "rbf_alloc.h"

typedef struct {
    const rbf_model_cycles *c;
    uint64_t gmax; /* F(g) = 1 for g > gmax, every F */
    int tick_act;  /* a tick is an arrival not held by the active filter (1), or, for the
                      oracle, not held at all (0: the oracle counts new arrivals only) */
} fn_ctx;

/* E[F(G)] for G ~ Binomial(n, nu), F = forget(., from, active_only) */
static double bin_expect(const fn_ctx *x, uint64_t n, double nu, rbf_model_from from, int act)
{
    if (n == 0 || nu <= 0.0)
        return rbf_model_forget(x->c, 0, from, act);
    if (nu >= 1.0)
        return rbf_model_forget(x->c, n, from, act);
    double mu = (double)n * nu, sd = sqrt((double)n * nu * (1.0 - nu));
    double lo_d = mu - 13.0 * sd - 10.0, hi_d = mu + 13.0 * sd + 10.0;
    uint64_t lo = lo_d <= 0.0 ? 0 : (uint64_t)lo_d;
    uint64_t hi = hi_d >= (double)n ? n : (uint64_t)hi_d;
    if (lo > x->gmax)
        return 1.0;
    if (hi > x->gmax + 1)
        hi = x->gmax + 1;
    double lp = lgamma((double)n + 1.0) - lgamma((double)lo + 1.0) - lgamma((double)(n - lo) + 1.0) +
                (double)lo * log(nu) + (double)(n - lo) * log1p(-nu);
    double pm = exp(lp), ratio = nu / (1.0 - nu);
    model_sum s, m;
    msum_init(&s);
    msum_init(&m);
    for (uint64_t g = lo; g <= hi; g++) {
        if (g == x->gmax + 1) {
            /* everything from here on is forgotten: P(G > gmax) */
            double below = msum_get(&m);
            double rest = 1.0 - below;
            /* mass below lo is negligible (13 sd) */
            msum_add(&s, rest > 0.0 ? rest : 0.0);
            return model_clamp01(msum_get(&s));
        }
        msum_add(&s, pm * rbf_model_forget(x->c, g, from, act));
        msum_add(&m, pm);
        pm *= (double)(n - g) / (double)(g + 1) * ratio;
    }
    return model_clamp01(msum_get(&s));
}

/* E[F(G)] for G geometric, P(G = g) = q'(1-q')^g */
static double geo_expect(const fn_ctx *x, double qp, rbf_model_from from, int act)
{
    double z = 1.0 - qp;
    model_sum s;
    msum_init(&s);
    double w = qp;
    for (uint64_t g = 0; g <= x->gmax; g++) {
        msum_add(&s, w * rbf_model_forget(x->c, g, from, act));
        w *= z;
        if (w < 1e-300)
            return model_clamp01(msum_get(&s));
    }
    msum_add(&s, pow(z, (double)(x->gmax + 1))); /* P(G > gmax), F = 1 there */
    return model_clamp01(msum_get(&s));
}

/* ---- gap descriptions */

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

static void gap_free(gapdesc *d)
{
    rbf__free(d->q);
    rbf__free(d->w);
    rbf__free(d->t);
    rbf__free(d->hb);
    rbf__free(d->hr);
}

static int gaps_geometric(const rbf_model_workload *w, gapdesc *d)
{
    const uint64_t P = w->pool;
    const double S = w->kind == RBF_MODEL_WL_ZIPF ? w->exponent : 0.0;
    if (P == 0 || !(S >= 0.0) || S > 100.0)
        return RBF_EINVAL;
    d->r = 0.0;
    if (S == 0.0) {
        d->ncls = 1;
        d->q = rbf__malloc(sizeof *d->q);
        d->w = rbf__malloc(sizeof *d->w);
        if (!d->q || !d->w)
            return RBF_ENOMEM;
        d->q[0] = 1.0 / (double)P;
        d->w[0] = 1.0;
        return RBF_OK;
    }
    model_sum H;
    msum_init(&H);
    for (uint64_t r = P; r >= 1; r--)
        msum_add(&H, pow((double)r, -S));
    const double h = msum_get(&H);
    const size_t EXACT = 4096, BUCKETS = 4096;
    size_t n = P <= EXACT ? (size_t)P : EXACT + BUCKETS;
    d->q = rbf__calloc(n, sizeof *d->q);
    d->w = rbf__calloc(n, sizeof *d->w);
    if (!d->q || !d->w)
        return RBF_ENOMEM;
    uint64_t head = P <= EXACT ? P : EXACT;
    for (uint64_t r = 1; r <= head; r++) {
        d->q[r - 1] = pow((double)r, -S) / h;
        d->w[r - 1] = d->q[r - 1];
    }
    d->ncls = (size_t)head;
    if (P > EXACT) {
        /* ranks EXACT+1..P in BUCKETS log-spaced rank ranges */
        double l0 = log((double)EXACT + 1.0), l1 = log((double)P + 1.0);
        uint64_t r = EXACT + 1;
        for (size_t bk = 0; bk < BUCKETS && r <= P; bk++) {
            uint64_t end = (uint64_t)exp(l0 + (l1 - l0) * (double)(bk + 1) / (double)BUCKETS);
            if (end < r)
                end = r;
            if (end > P || bk == BUCKETS - 1)
                end = P;
            double sw = 0.0;
            for (uint64_t j = r; j <= end; j++)
                sw += pow((double)j, -S) / h;
            double cnt = (double)(end - r + 1);
            d->q[d->ncls] = sw / cnt; /* the class's average arrival probability */
            d->w[d->ncls] = sw;
            d->ncls++;
            r = end + 1;
        }
    }
    return RBF_OK;
}

/* The fading law walked backwards from a repeat (docs/simulator.md 3). */
static int gaps_fading(const rbf_model_workload *w, uint64_t tcut, gapdesc *d)
{
    const double R = w->new_fraction, L = w->lifetime;
    if (!(R > 0.0 && R <= 1.0) || !(L > 0.0) || !isfinite(L))
        return RBF_EINVAL;
    d->r = R;
    if (R >= 1.0)
        return RBF_OK; /* no repeats */
    double need = 40.0 * L * R;
    uint64_t W = 1;
    while ((double)W < need && W < ((uint64_t)1 << 22))
        W <<= 1;
    const double lp = -1.0 / (L * R), p = exp(lp);
    const double Z = -expm1((double)W * lp) / -expm1(lp);
    uint64_t amax = (uint64_t)(log(1e-13) / lp) + 1;
    if (amax > W - 1)
        amax = W - 1;
    double *m = rbf__malloc((amax + 1) * sizeof *m), *pick = rbf__malloc((amax + 1) * sizeof *pick);
    d->t = rbf__malloc(tcut * sizeof *d->t);
    d->hb = rbf__calloc(tcut, sizeof *d->hb);
    d->hr = rbf__calloc(tcut, sizeof *d->hr);
    if (!m || !pick || !d->t || !d->hb || !d->hr) {
        rbf__free(m);
        rbf__free(pick);
        return RBF_ENOMEM;
    }
    model_sum tot;
    msum_init(&tot);
    for (uint64_t a = 0; a <= amax; a++) {
        pick[a] = exp((double)a * lp) / Z;
        m[a] = pick[a];
        msum_add(&tot, m[a]);
    }
    double t0 = msum_get(&tot);
    for (uint64_t a = 0; a <= amax; a++)
        m[a] /= t0;
    (void)p;
    uint64_t hi = amax;
    double remaining = 1.0;
    for (uint64_t t = 1; t <= tcut; t++) {
        /* one arrival back: a birth (R) or a repeat (1 - R) */
        double found_b = R * m[0];
        model_sum fr;
        msum_init(&fr);
        for (uint64_t a = 0; a <= hi; a++) {
            double x = m[a];
            double f = (1.0 - R) * pick[a] * x;
            msum_add(&fr, f);
            /* stays with (1-R)(1-pick); a birth shifts it to a-1 */
            double stay = (1.0 - R) * (1.0 - pick[a]) * x;
            double next = a < hi ? R * m[a + 1] : 0.0;
            m[a] = stay + next;
        }
        while (hi > 0 && m[hi] < 1e-30)
            hi--;
        d->t[t - 1] = t;
        d->hb[t - 1] = found_b;
        d->hr[t - 1] = msum_get(&fr);
        remaining -= found_b + d->hr[t - 1];
        d->ngap = (size_t)t;
        if (remaining < 1e-13)
            break;
    }
    d->tail = remaining > 0.0 ? remaining : 0.0;
    rbf__free(m);
    rbf__free(pick);
    return RBF_OK;
}

static int gaps_file(const rbf_model_workload *w, gapdesc *d)
{
    if (!w->gaps || !w->gap_prob || w->gap_count == 0 || !(w->new_fraction >= 0.0) ||
        !(w->new_fraction < 1.0))
        return RBF_EINVAL;
    d->r = w->new_fraction;
    d->prev_nu = 1;
    d->ngap = w->gap_count;
    d->t = rbf__malloc(d->ngap * sizeof *d->t);
    d->hr = rbf__malloc(d->ngap * sizeof *d->hr);
    d->hb = rbf__calloc(d->ngap, sizeof *d->hb);
    if (!d->t || !d->hr || !d->hb)
        return RBF_ENOMEM;
    double s = 0.0;
    for (size_t i = 0; i < d->ngap; i++) {
        if (w->gaps[i] < 1 || !(w->gap_prob[i] >= 0.0) || !isfinite(w->gap_prob[i]))
            return RBF_EINVAL;
        s += w->gap_prob[i];
    }
    if (!(s > 0.0))
        return RBF_EINVAL;
    for (size_t i = 0; i < d->ngap; i++) {
        d->t[i] = w->gaps[i];
        d->hr[i] = w->gap_prob[i] / s;
    }
    return RBF_OK;
}

/* One evaluation at tick fraction nu: psi (not held by the active filter)
 * and, if fn is not NULL, the probability of being held by no filter. */
static double evaluate(const fn_ctx *x, const gapdesc *d, double nu, double *forgot)
{
    model_sum ps, fs;
    msum_init(&ps);
    msum_init(&fs);
    if (d->ncls) {
        for (size_t i = 0; i < d->ncls; i++) {
            double q = d->q[i];
            double qp = q / (q + nu * (1.0 - q));
            double At = geo_expect(x, qp, RBF_MODEL_FROM_TICK, x->tick_act);
            double Am = geo_expect(x, qp, RBF_MODEL_FROM_HELD, x->tick_act);
            double den = 1.0 - At + Am;
            double psi = den > 0.0 ? Am / den : 1.0;
            msum_add(&ps, d->w[i] * psi);
            if (forgot) {
                double Bt = geo_expect(x, qp, RBF_MODEL_FROM_TICK, 0);
                double Bm = geo_expect(x, qp, RBF_MODEL_FROM_HELD, 0);
                msum_add(&fs, d->w[i] * (psi * Bt + (1.0 - psi) * Bm));
            }
        }
    } else {
        double psi_in = d->prev_nu ? nu : (d->r < 1.0 ? (nu - d->r) / (1.0 - d->r) : 1.0);
        if (psi_in < 0.0)
            psi_in = 0.0;
        for (size_t i = 0; i < d->ngap; i++) {
            double hb = d->hb[i], hr = d->hr[i];
            if (hb == 0.0 && hr == 0.0)
                continue;
            uint64_t n = d->t[i] - 1;
            double At = bin_expect(x, n, nu, RBF_MODEL_FROM_TICK, x->tick_act);
            double Am = bin_expect(x, n, nu, RBF_MODEL_FROM_HELD, x->tick_act);
            msum_add(&ps, hb * At + hr * (psi_in * At + (1.0 - psi_in) * Am));
            if (forgot) {
                double Bt = bin_expect(x, n, nu, RBF_MODEL_FROM_TICK, 0);
                double Bm = bin_expect(x, n, nu, RBF_MODEL_FROM_HELD, 0);
                msum_add(&fs, hb * Bt + hr * (psi_in * Bt + (1.0 - psi_in) * Bm));
            }
        }
        msum_add(&ps, d->tail);
        msum_add(&fs, d->tail);
    }
    if (forgot)
        *forgot = model_clamp01(msum_get(&fs));
    return model_clamp01(msum_get(&ps));
}

int rbf_model_fn(const rbf_model_params *p, const rbf_model_cycle_spec *s,
                 const rbf_model_workload *w, rbf_model_fn_result *out)
{
    if (!w || !out)
        return RBF_EINVAL;
    for (size_t i = 0; i < sizeof w->reserved_ / sizeof w->reserved_[0]; i++)
        if (w->reserved_[i])
            return RBF_EINVAL;
    memset(out, 0, sizeof *out);
    rbf_model_cycles *c = NULL;
    int rc = rbf_model_cycles_new(p, s, &c);
    if (rc)
        return rc;
    fn_ctx x = {c, 2 * rbf_model_cycles_max(c) + 2, s->oracle ? 0 : 1};
    gapdesc d;
    memset(&d, 0, sizeof d);
    switch (w->kind) {
    case RBF_MODEL_WL_UNIFORM:
    case RBF_MODEL_WL_ZIPF:
        rc = gaps_geometric(w, &d);
        break;
    case RBF_MODEL_WL_FADING: {
        /* beyond tcut every repeat has more than gmax ticks behind it, with
         * probability 1 - 1e-15 even at the least tick fraction (R) */
        double g = (double)x.gmax + 1.0, R = w->new_fraction;
        double tc = R > 0.0 ? (g + 9.0 * sqrt(g / R) + 60.0) / R + 10.0 : 0.0;
        if (!(tc < 5e7)) {
            rc = RBF_ENOMEM;
            break;
        }
        rc = gaps_fading(w, (uint64_t)tc, &d);
        break;
    }
    case RBF_MODEL_WL_GAPS:
        rc = gaps_file(w, &d);
        break;
    default:
        rc = RBF_EINVAL;
    }
    if (rc)
        goto done;
    out->fp = rbf_model_cycles_fp(c);
    out->cycle_mean = rbf_model_cycles_mean(c);
    if (d.r >= 1.0) {
        out->tick_fraction = 1.0;
        goto done; /* no repeats: fn 0 */
    }
    /* bisection on nu in [r, 1]: Phi(nu) = r + (1-r) psi(nu) */
    double lo = d.r, hi = 1.0;
    unsigned it = 0;
    for (; it < 60 && hi - lo > 1e-13; it++) {
        if (model_progress(p, it, 60)) {
            rc = RBF_ECANCELED;
            goto done;
        }
        double mid = 0.5 * (lo + hi);
        double phi = d.r + (1.0 - d.r) * evaluate(&x, &d, mid, NULL);
        if (phi > mid)
            lo = mid;
        else
            hi = mid;
    }
    double nu = 0.5 * (lo + hi), forgot = 0.0;
    evaluate(&x, &d, nu, &forgot);
    out->tick_fraction = nu;
    out->forgotten = forgot;
    out->fn = model_clamp01(forgot * (1.0 - out->fp));
    out->iterations = it;
done:
    gap_free(&d);
    rbf_model_cycles_free(c);
    return rc;
}
