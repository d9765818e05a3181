/*
 * fn_gaps.c -- the gaps between a message's arrivals for the
 * false-negative model (fn.c): by class for the geometric workloads
 * (uniform, Zipf), explicit for fading and a gaps file, and the survival
 * function S(x) = P(T > x) of the gap of a repeat, in arrivals.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fn_gaps.h"
#include "rbf_alloc.h"

/* ---- gap descriptions */


void rbf__fn_gap_free(gapdesc *d)
{
    rbf__free(d->q);
    rbf__free(d->w);
    rbf__free(d->t);
    rbf__free(d->hb);
    rbf__free(d->hr);
}

int rbf__fn_gaps_geometric(const rbf_model_workload *w, gapdesc *d)
{
    const uint64_t P = w->pool;
    const double S = w->kind == RBF_WORKLOAD_ZIPF ? w->exponent : 0.0;
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
int rbf__fn_gaps_fading(const rbf_model_params *prm, const rbf_model_workload *w, uint64_t tcut,
                       gapdesc *d)
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
        if ((t & 1023) == 0 && model_progress(prm, t, tcut)) {
            rbf__free(m);
            rbf__free(pick);
            return RBF_ECANCELED;
        }
        /* one arrival back: a birth (R) or a repeat (1 - R) */
        double found_b = R * m[0];
        /* (a plain sum, in two halves: its rounding, 1e-16 of a sum of
         * positive terms, is far below what the gaps need) */
        double fr0 = 0.0, fr1 = 0.0;
        for (uint64_t a = 0; a <= hi; a++) {
            double x = m[a];
            double f = (1.0 - R) * pick[a] * x;
            if (a & 1)
                fr1 += f;
            else
                fr0 += f;
            /* stays with (1-R)(1-pick); a birth shifts it to a-1 */
            double stay = (1.0 - R) * (1.0 - pick[a]) * x;
            double next = a < hi ? R * m[a + 1] : 0.0;
            m[a] = stay + next;
        }
        while (hi > 0 && m[hi] < 1e-30)
            hi--;
        d->t[t - 1] = t;
        d->hb[t - 1] = found_b;
        d->hr[t - 1] = fr0 + fr1;
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

int rbf__fn_gaps_file(const rbf_model_workload *w, gapdesc *d)
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


/* ---- S(x) = P(T > x), T the gap of a repeat in arrivals */


void rbf__fn_surv_free(gap_surv *s)
{
    rbf__free(s->gx);
    rbf__free(s->gs);
    rbf__free(s->glr);
    rbf__free(s->gi);
    if (s->et)
        rbf__free_lines(s->et, s->eblk_bytes);
    if (s->dsuf)
        rbf__free_lines(s->dsuf, s->dblk_bytes);
}

/* The dense tables of P(T > n), n = 0..dmax (dmax the longest gap, at most
 * 2^22): esuf[i] for the first gap et[i] above n.  Without them (memory,
 * longer gaps) surv_int searches. */
static void surv_dense(gap_surv *s)
{
    if (!s->ne || s->et[s->ne - 1] > ((uint64_t)1 << 22))
        return;
    const uint64_t dmax = s->et[s->ne - 1];
    const size_t bytes = 2 * ((size_t)dmax + 1) * sizeof(double);
    double *a = rbf__alloc_lines(bytes);
    if (!a)
        return;
    double *b = a + dmax + 1;
    size_t i = 0;
    for (uint64_t n = 0; n <= dmax; n++) {
        while (i < s->ne && s->et[i] <= n)
            i++;
        a[n] = s->esuf[i];
        b[n] = s->esufb[i];
    }
    s->dsuf = a;
    s->dsufb = b;
    s->dmax = dmax;
    s->dblk_bytes = bytes;
}

typedef struct {
    uint64_t t;
    double p, b;
} gap_pt;

static int gap_pt_cmp(const void *a, const void *b)
{
    const gap_pt *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* The top bits of a positive double (sign, exponent, 8 bits of the
 * mantissa), and the smallest double with those bits. */
static inline uint64_t grid_key(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u >> 44;
}

static inline double grid_x(uint64_t key)
{
    const uint64_t u = key << 44;
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

int rbf__fn_surv_build(const gapdesc *d, gap_surv *s)
{
    memset(s, 0, sizeof *s);
    if (d->ncls) {
        size_t cap = 1024;
        for (double x = 1023.0; x < 1e17; x *= 1.02)
            cap++;
        s->gx = rbf__malloc(cap * sizeof *s->gx);
        s->gs = rbf__calloc(cap, sizeof *s->gs);
        if (!s->gx || !s->gs)
            return RBF_ENOMEM;
        size_t n = 0;
        for (; n < 1024; n++)
            s->gx[n] = (double)n;
        for (double x = 1023.0 * 1.02; n < cap; x *= 1.02)
            s->gx[n++] = x;
        s->ng = n;
        for (size_t c = 0; c < d->ncls; c++) {
            double l = log1p(-d->q[c]), w = d->w[c];
            for (size_t i = 0; i < n; i++) {
                double e = s->gx[i] * l;
                if (e < -745.0)
                    break;
                s->gs[i] += w * exp(e);
            }
        }
        if (!(s->glr = rbf__malloc(n * sizeof *s->glr)))
            return RBF_ENOMEM;
        for (size_t i = 0; i + 1 < n; i++) {
            const double a = s->gs[i], b = s->gs[i + 1];
            s->glr[i] = a > 0.0 && b > 0.0 ? log(b / a) : 0.0;
        }
        s->glr[n - 1] = 0.0;
        /* the interval index by the top bits of x, from gx[1023] up */
        s->gkey0 = grid_key(s->gx[1023]);
        s->gkeys = grid_key(s->gx[n - 1]) - s->gkey0 + 1;
        if (!(s->gi = rbf__malloc(s->gkeys * sizeof *s->gi)))
            return RBF_ENOMEM;
        size_t i = 1023;
        for (uint64_t key = 0; key < s->gkeys; key++) {
            /* the smallest x of this key: its bits with the rest zero */
            const double x0 = grid_x(s->gkey0 + key);
            while (i + 1 < n && s->gx[i + 1] <= x0)
                i++;
            s->gi[key] = (uint32_t)i;
        }
        return RBF_OK;
    }
    s->ne = d->ngap;
    s->tail = d->tail;
    if (d->ngap >= SIZE_MAX / 32)
        return RBF_ENOMEM;
    /* et: ngap + 1 (one spare), esuf and esufb: ngap + 1 each */
    s->eblk_bytes = 3 * (d->ngap + 1) * sizeof(double);
    void *blk = rbf__alloc_lines(s->eblk_bytes);
    if (!blk)
        return RBF_ENOMEM;
    s->et = blk;
    s->esuf = (double *)(s->et + d->ngap + 1);
    s->esufb = s->esuf + d->ngap + 1;
    /* the gaps in increasing order: as given when they already are (a
     * gaps file usually is), else sorted (equal gaps, which a file may
     * hold, then take qsort's order: glibc's merge sort keeps theirs) */
    size_t sorted = 1;
    for (size_t i = 1; i < d->ngap && sorted; i++)
        sorted = d->t[i - 1] <= d->t[i];
    gap_pt *pt = NULL;
    if (!sorted) {
        if (!(pt = rbf__malloc(d->ngap * sizeof *pt)))
            return RBF_ENOMEM;
        for (size_t i = 0; i < d->ngap; i++) {
            pt[i].t = d->t[i];
            pt[i].p = d->hb[i] + d->hr[i];
            pt[i].b = d->hb[i];
        }
        qsort(pt, d->ngap, sizeof *pt, gap_pt_cmp);
    }
    model_sum acc, accb;
    msum_init(&acc);
    msum_init(&accb);
    msum_add(&acc, s->tail);
    s->esuf[d->ngap] = s->tail;
    s->esufb[d->ngap] = 0.0;
    for (size_t i = d->ngap; i-- > 0;) {
        const double hb = pt ? pt[i].b : d->hb[i];
        msum_add(&acc, pt ? pt[i].p : hb + d->hr[i]);
        msum_add(&accb, hb);
        s->et[i] = pt ? pt[i].t : d->t[i];
        s->esuf[i] = msum_get(&acc);
        s->esufb[i] = msum_get(&accb);
    }
    rbf__free(pt);
    surv_dense(s);
    return RBF_OK;
}

/* P(T > n), n a whole number of arrivals (explicit gaps); with `birth`,
 * only the part whose previous arrival was a birth */
static double surv_int(const gap_surv *s, double n, int birth)
{
    if (s->dsuf && n <= (double)s->dmax)
        return (birth ? s->dsufb : s->dsuf)[n > 0.0 ? (size_t)n : 0];
    /* the first gap above n */
    size_t lo = 0, hi = s->ne;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((double)s->et[mid] > n)
            hi = mid;
        else
            lo = mid + 1;
    }
    return (birth ? s->esufb : s->esuf)[lo];
}

double rbf__fn_surv_at_full(const gap_surv *s, double x)
{
    if (!(x > 0.0))
        x = 0.0;
    if (s->ng) {
        if (x >= s->gx[s->ng - 1])
            return 0.0;
        size_t i;
        if (x < 1023.0) {
            i = (size_t)x;
        } else {
            /* gx[i] <= x < gx[i + 1]: from the interval of x's top bits
             * up (one or two steps); x < gx[ng - 1] above */
            uint64_t key = grid_key(x) - s->gkey0;
            i = s->gi[key < s->gkeys ? key : s->gkeys - 1];
            while (s->gx[i + 1] <= x)
                i++;
        }
        double a = s->gs[i], b = s->gs[i + 1];
        double f = (x - s->gx[i]) / (s->gx[i + 1] - s->gx[i]);
        if (a > 0.0 && b > 0.0)
            return a * exp(f * s->glr[i]); /* each class is geometric: log-linear */
        return a + f * (b - a);
    }
    double fl = floor(x), f = x - fl;
    double a = surv_int(s, fl, 0);
    return f > 0.0 ? a + f * (surv_int(s, fl + 1.0, 0) - a) : a;
}

/* The chance that a repeat's previous arrival was exactly the tick that
 * ended the last cycle, x + 1 arrivals back (x the arrivals since):
 * P(T = x + 1) weighted by P(that arrival was a tick | T)/nuend, since a
 * cycle ends on a tick, not on any arrival (nuend: the tick rate where
 * cycles end).  Births are ticks; a previous repeat is one with
 * probability psi = (nuend - r)/(1 - r) (geometric classes, fading), a
 * previous arrival of unknown kind with nuend (gaps:FILE: no change).
 * For a birth's message this is its next arrival's gap law, so summed
 * over a cycle it is the chance that the trigger's message comes back. */
double rbf__fn_surv_edge_full(const gap_surv *s, double x, double psi, double nubar)
{
    if (!(x > 0.0))
        x = 0.0;
    double all = rbf__fn_surv_at(s, x) - rbf__fn_surv_at(s, x + 1.0), birth = 0.0;
    if (!s->ng) {
        double fl = floor(x), f = x - fl;
        double b0 = surv_int(s, fl, 1), b1 = surv_int(s, fl + 1.0, 1), b2 = surv_int(s, fl + 2.0, 1);
        birth = (b0 + f * (b1 - b0)) - (b1 + f * (b2 - b1));
        if (birth < 0.0)
            birth = 0.0;
    }
    double v = (birth + psi * (all - birth)) / nubar;
    return v > 0.0 ? v : 0.0;
}

/* E[f(X)], X normal with mean mu and variance var (the arrival count of
 * whole periods of geometric length varies): five-point Gauss-Hermite,
 * f = surv_at (edge = 0) or surv_edge (edge = 1, with psi, nu) */
static double gh5(const gap_surv *s, int edge, double mu, double var, double psi, double nu)
{
    double v;
#define GH_F(x) (edge ? rbf__fn_surv_edge(s, (x), psi, nu) : rbf__fn_surv_at(s, (x)))
    v = GH_F(mu);
    if (!(var > 0.25))
        return v;
    static const double z[3] = {0.0, 1.355626179974266, 2.856970013872806};
    static const double w[3] = {0.533333333333333, 0.222075922005613, 0.011257411327721};
    double sd = sqrt(var);
    if (sd > mu / 3.0) /* a count is not negative: keep the nodes above 0 */
        sd = mu / 3.0;
    v *= w[0];
    for (int i = 1; i < 3; i++)
        v += w[i] * (GH_F(mu - z[i] * sd) + GH_F(mu + z[i] * sd));
#undef GH_F
    return v;
}

double rbf__fn_surv_sm(const gap_surv *s, double mu, double var)
{
    return gh5(s, 0, mu, var, 0.0, 1.0);
}

double rbf__fn_surv_edge_sm(const gap_surv *s, double mu, double var, double psi, double nu)
{
    return gh5(s, 1, mu, var, psi, nu);
}
