/*
 * nbounded.c -- the N-bounded models (MODEL.md 4, paper section III) and
 * their exact counterparts.
 *
 * Bounds (the paper's, colliding formula):
 *   f_w(n) = (1 - (1 - 1/M)^{kn})^k,  f_i = f_w(i-1),
 *   f_o(N) = sum_{i=1..N} f_i / N,
 *   f_a(N) = sum r_i / sum (1 + r_i),  r_i = f_i / (1 - f_i).
 * Exact (beyond the paper): the distribution of the number of set bits B
 * is propagated message by message, hash by hash, over the window of b
 * where it has mass above 1e-30 (total mass is 1):
 *   exact_worst  = E[rho(B_N)],
 *   exact_oracle = sum_{n<N} E[rho(B_n)] / N,
 *   exact_real   = E_fp / (N + E_fp), E_fp = sum_{c<N} E[rho(B'_c)/(1-rho(B'_c))]
 * where B'_c are the bits after c bit-setting messages (each step
 * conditioned on d >= 1).  Cost O(N k W), W the window width (about 25
 * standard deviations of B, O(sqrt(M)) wide).
 */
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "nbounded_internal.h"
#include "rbf_alloc.h"

/* ---- the f_w sequence f_w(0), f_w(1), ... in O(1) per term */

void rbf__fw_iter_init(fw_iter *it, uint64_t bits, unsigned hashes)
{
    it->bits = bits;
    it->hashes = hashes;
    it->L = bits > 1 ? (double)hashes * log1p(-1.0 / (double)bits) : 0.0;
    it->a = bits > 1 ? -expm1(it->L) : 1.0; /* 1 - q, q = (1 - 1/M)^k */
    it->q = 1.0 - it->a;
    it->i = 0;
    it->z = 1.0;
    it->y = 0.0;
}

static inline double ipow(double x, unsigned e)
{
    double r = 1.0;
    while (e) {
        if (e & 1u)
            r *= x;
        x *= x;
        e >>= 1;
    }
    return r;
}

double rbf__fw_iter_next(fw_iter *it)
{
    double f;
    if (it->bits <= 1)
        f = it->i == 0 ? 0.0 : 1.0;
    else {
        if ((it->i & 63) == 0 && it->i) {
            /* resynchronise: the recurrences below drift by ~1 ulp a step */
            double t = (double)it->i * it->L;
            it->z = exp(t);
            it->y = -expm1(t);
        }
        f = ipow(it->y, it->hashes);
        /* y_{i+1} = 1 - q^{i+1} = y_i + q^i (1 - q): a sum of positive terms */
        it->y += it->z * it->a;
        it->z *= it->q;
    }
    it->i++;
    return model_clamp01(f);
}

/* ---- the window of the distribution of B */

typedef struct bdist {
    uint64_t bits;
    unsigned hashes;
    int nc;
    uint64_t lo, hi; /* live range [lo, hi] */
    double *p;       /* p[b - lo] */
    double *aux;     /* second array for the conditioned step */
    size_t cap;
    /* Per-level values over [cb, cb + ccap), computed once and reused while
     * the window moves through (the same calls, so the same doubles): rho,
     * 1 - rho, and (colliding) the hash factors b/M and (M - b)/M. */
    uint64_t cb;
    size_t ccap;
    double *crho, *comr, *cx, *cy;
} bdist;

#define BDIST_TINY 1e-30

static int bdist_cache(bdist *d);
static void bdist_free(bdist *d);

/* B_0 = 0, with the level cache built (bdist_mean_rho reads it). */
static int bdist_init(bdist *d, uint64_t bits, unsigned hashes, int nc)
{
    memset(d, 0, sizeof *d);
    d->bits = bits;
    d->hashes = hashes;
    d->nc = nc;
    d->cap = 64 + 2 * (size_t)hashes;
    d->p = rbf__calloc(d->cap, sizeof *d->p);
    d->aux = rbf__calloc(d->cap, sizeof *d->aux);
    if (!d->p || !d->aux) {
        rbf__free(d->p);
        rbf__free(d->aux);
        return RBF_ENOMEM;
    }
    d->p[0] = 1.0; /* B_0 = 0 */
    if (bdist_cache(d)) {
        bdist_free(d);
        return RBF_ENOMEM;
    }
    return RBF_OK;
}

static void bdist_free(bdist *d)
{
    rbf__free(d->p);
    rbf__free(d->aux);
    rbf__free(d->crho);
    rbf__free(d->comr);
    rbf__free(d->cx);
    rbf__free(d->cy);
}

static inline double hx(const bdist *d, unsigned q, uint64_t b);
static inline double hmove(const bdist *d, unsigned q, uint64_t b);

/* The per-level cache covers [lo, min(hi + k, M)]: rebuilt, twice as wide
 * as needed, when the window leaves it (amortised O(k) levels a message). */
static int bdist_cache(bdist *d)
{
    uint64_t to = d->hi + d->hashes + 1;
    if (to > d->bits)
        to = d->bits;
    if (d->crho && d->lo >= d->cb && to < d->cb + d->ccap)
        return RBF_OK;
    size_t want = 2 * (size_t)(to - d->lo + 1) + 64;
    if (want > d->ccap) {
        double *a = rbf__realloc(d->crho, want * sizeof *a);
        if (!a)
            return RBF_ENOMEM;
        d->crho = a;
        if (!(a = rbf__realloc(d->comr, want * sizeof *a)))
            return RBF_ENOMEM;
        d->comr = a;
        if (!(a = rbf__realloc(d->cx, want * sizeof *a)))
            return RBF_ENOMEM;
        d->cx = a;
        if (!(a = rbf__realloc(d->cy, want * sizeof *a)))
            return RBF_ENOMEM;
        d->cy = a;
        d->ccap = want;
    }
    d->cb = d->lo;
    for (size_t i = 0; i < d->ccap; i++) {
        uint64_t b = d->cb + i;
        if (b > d->bits)
            b = d->bits; /* never read past M */
        d->crho[i] = rbf__model_rho(d->bits, d->hashes, d->nc, b);
        d->comr[i] = rbf__model_one_minus_rho(d->bits, d->hashes, d->nc, b);
        d->cx[i] = hx(d, 0, b);
        d->cy[i] = hmove(d, 0, b);
    }
    return RBF_OK;
}

/* Make room for hi + k. */
static int bdist_reserve(bdist *d)
{
    size_t need = (size_t)(d->hi - d->lo) + d->hashes + 2;
    if (need <= d->cap)
        return RBF_OK;
    size_t nc = d->cap * 2 > need ? d->cap * 2 : need;
    double *np = rbf__realloc(d->p, nc * sizeof *np);
    if (!np)
        return RBF_ENOMEM;
    d->p = np;
    double *na = rbf__realloc(d->aux, nc * sizeof *na);
    if (!na)
        return RBF_ENOMEM;
    d->aux = na;
    memset(d->p + d->cap, 0, (nc - d->cap) * sizeof *np);
    memset(d->aux + d->cap, 0, (nc - d->cap) * sizeof *na);
    d->cap = nc;
    return RBF_OK;
}

static inline double hx(const bdist *d, unsigned q, uint64_t b)
{
    if (b >= d->bits)
        return 1.0;
    if (!d->nc)
        return (double)b / (double)d->bits;
    return b >= q ? (double)(b - q) / (double)(d->bits - q) : 0.0;
}

static inline double hmove(const bdist *d, unsigned q, uint64_t b)
{
    if (b >= d->bits)
        return 0.0;
    return (double)(d->bits - b) / (double)(d->nc ? d->bits - q : d->bits);
}

/* One hash (phase q) on array a over [lo, hi] -> [lo, hi+1] (capped at M). */
static void hash_step(const bdist *d, double *a, uint64_t hi, unsigned q)
{
    if (!d->nc) {
        /* colliding: the factors do not depend on q, from the cache; the
         * same products and sums as below (a is zero past hi) */
        uint64_t top = hi < d->bits ? hi + 1 : hi;
        const double *x = d->cx + (d->lo - d->cb), *y = d->cy + (d->lo - d->cb);
        for (size_t o = (size_t)(top - d->lo); o > 0; o--)
            a[o] = a[o] * x[o] + a[o - 1] * y[o - 1];
        a[0] = a[0] * x[0] + 0.0;
        return;
    }
    uint64_t top = hi < d->bits ? hi + 1 : hi;
    for (uint64_t b = top;; b--) {
        size_t o = (size_t)(b - d->lo);
        double stay = b <= hi ? a[o] * hx(d, q, b) : 0.0;
        double up = b > d->lo ? a[o - 1] * hmove(d, q, b - 1) : 0.0;
        a[o] = stay + up;
        if (b == d->lo)
            break;
    }
}

/* Drop the tails with mass below BDIST_TINY and move the window to 0. */
static void bdist_trim(bdist *d)
{
    size_t n = (size_t)(d->hi - d->lo) + 1, s = 0, e = n - 1;
    while (s < e && d->p[s] < BDIST_TINY)
        s++;
    while (e > s && d->p[e] < BDIST_TINY)
        e--;
    if (s > 0) {
        memmove(d->p, d->p + s, (e - s + 1) * sizeof *d->p);
        memset(d->p + (e - s + 1), 0, s * sizeof *d->p);
    }
    d->lo += s;
    d->hi = d->lo + (e - s);
    for (size_t t = e - s + 1; t < n; t++)
        d->p[t] = 0.0;
}

/* One message, unconditioned. */
static int bdist_message(bdist *d)
{
    if (bdist_reserve(d) || bdist_cache(d))
        return RBF_ENOMEM;
    for (unsigned q = 0; q < d->hashes; q++) {
        hash_step(d, d->p, d->hi, q);
        if (d->hi < d->bits)
            d->hi++;
    }
    bdist_trim(d);
    return RBF_OK;
}

/* One bit-setting message: the step conditioned on d >= 1.  The caller
 * guarantees rho(b) < 1 on the window. */
static int bdist_message_cond(bdist *d)
{
    if (bdist_reserve(d) || bdist_cache(d))
        return RBF_ENOMEM;
    size_t n = (size_t)(d->hi - d->lo) + 1;
    const double *omr = d->comr + (d->lo - d->cb);
    /* aux: messages that have not set a bit yet (still at their level),
     * p: messages that have.  Start with P(b) / (1 - rho(b)) in aux. */
    for (size_t o = 0; o < n; o++) {
        d->aux[o] = d->p[o] / omr[o];
        d->p[o] = 0.0;
    }
    uint64_t hi = d->hi;
    const double *x = d->cx + (d->lo - d->cb), *y = d->cy + (d->lo - d->cb);
    for (unsigned q = 0; q < d->hashes; q++) {
        /* p: ordinary step; then add the aux messages that now move */
        uint64_t top = hi < d->bits ? hi + 1 : hi;
        hash_step(d, d->p, hi, q);
        if (!d->nc) { /* the factors from the cache (colliding: no q) */
            for (size_t o = (size_t)(top - d->lo); o > 0; o--)
                d->p[o] += d->aux[o - 1] * y[o - 1];
            for (size_t o = 0; o < n; o++)
                d->aux[o] *= x[o];
        } else {
            for (uint64_t b = top; b > d->lo; b--) {
                size_t o = (size_t)(b - d->lo);
                d->p[o] += d->aux[o - 1] * hmove(d, q, b - 1);
            }
            for (size_t o = 0; o < n; o++)
                d->aux[o] *= hx(d, q, d->lo + o);
        }
        hi = top;
    }
    d->hi = hi;
    for (size_t o = 0; o < n; o++)
        d->aux[o] = 0.0;
    bdist_trim(d);
    return RBF_OK;
}

/* E[rho(B)] and, if w != NULL, E[rho/(1-rho)] (inf if mass sits at rho = 1).
 * The window is in the level cache (bdist_cache after every step and at
 * the start), so the loop makes no call and its sums stay in registers. */
static double bdist_mean_rho(const bdist *d, double *w)
{
    model_sum s, t;
    msum_init(&s);
    msum_init(&t);
    int inf = 0;
    const double *P = d->p, *R = d->crho + (d->lo - d->cb), *O = d->comr + (d->lo - d->cb);
    const size_t n = (size_t)(d->hi - d->lo) + 1;
    for (size_t o = 0; o < n; o++) {
        double pb = P[o];
        if (pb == 0.0)
            continue;
        double r = R[o];
        msum_add(&s, pb * r);
        if (w) {
            double om = O[o];
            if (om > 0.0)
                msum_add(&t, pb * r / om);
            else
                inf = 1;
        }
    }
    if (w)
        *w = inf ? INFINITY : msum_get(&t);
    return model_clamp01(msum_get(&s));
}

/* The core: rows n = 1..N of every measure at once (each is a prefix
 * quantity).  If `curve` is not NULL it receives N rows; `last` receives
 * row N.  Progress units: one per message of each of the two
 * propagations. */
static int nbounded_core(const rbf_model_params *p, uint64_t messages, rbf_model_n_result *curve,
                         rbf_model_n_result *last)
{
    int rc = rbf__model_check_params(p);
    if (rc)
        return rc;
    if (messages < 1 || (!curve && !last))
        return RBF_EINVAL;
    const uint64_t M = p->bits, N = messages;
    const unsigned k = p->hashes;
    rbf_model_n_result row;
    memset(&row, 0, sizeof row);

    /* the paper's bounds (f_w(n) is the rate of the message after n) */
    fw_iter it;
    rbf__fw_iter_init(&it, M, k);
    model_sum so, sr;
    msum_init(&so);
    msum_init(&sr);
    int r_inf = 0;
    /* one value at large N: Euler-Maclaurin (nfast.c) instead of the scan
     * (auto: above RBF_MODEL_AUTO_EXACT_BITS messages) */
    const int fast_bounds =
        !curve && N > 65536 &&
        (p->method == RBF_MODEL_ASYMPTOTIC ||
         (p->method == RBF_MODEL_AUTO && (N > RBF_MODEL_AUTO_EXACT_BITS || rbf__model_use_asym(p))));
    if (fast_bounds) {
        last->f_w = rbf__model_f_w(M, k, N);
        last->f_o = rbf__fo_fast(M, k, N);
        last->f_a = rbf__fa_fast(M, k, N);
    }
    for (uint64_t i = 1; i <= N && !fast_bounds; i++) {
        if ((i & 0xfffff) == 0 && model_progress(p, 0, 2 * N))
            return RBF_ECANCELED;
        double f = rbf__fw_iter_next(&it); /* f_i = f_w(i - 1) */
        msum_add(&so, f);
        if (f >= 1.0)
            r_inf = 1;
        else
            msum_add(&sr, f / (1.0 - f));
        if (curve || i == N) {
            row.f_w = rbf__model_f_w(M, k, i);
            row.f_o = model_clamp01(msum_get(&so) / (double)i);
            double R = msum_get(&sr);
            row.f_a = r_inf ? 1.0 : model_clamp01(R / ((double)i + R));
            rbf_model_n_result *dst = curve ? &curve[i - 1] : last;
            dst->f_w = row.f_w;
            dst->f_o = row.f_o;
            dst->f_a = row.f_a;
        }
    }

    /* exact worst and oracle: one value above RBF_MODEL_AUTO_EXACT_BITS
     * bits or messages, or where the propagation would cost more than
     * about a second (N k sqrt(M) > RBF__NB_AUTO_CHAIN) (auto), or always
     * (asymptotic) by the fast method (nexact.c); the propagation below
     * when its error estimate says no.
     * Above 2^22 messages the propagation costs N k W steps, seconds to
     * hours, and past saturation the fast method's closed form is exact */
    bdist d;
    if (!curve && (rbf__model_use_asym(p) ||
                   (p->method == RBF_MODEL_AUTO &&
                    (N > RBF_MODEL_AUTO_EXACT_BITS ||
                     (double)N * (double)k * sqrt((double)M) > RBF__NB_AUTO_CHAIN)))) {
        rc = rbf__nexact_fast(p, N, &last->exact_worst, &last->exact_oracle, &last->saturated_at,
                              NULL);
        if (rc < 0)
            return rc;
        if (rc == RBF_OK) {
            /* Real user, light load.  With T_N the messages of a cycle and
             * C_n the bit-setting ones among the first n, optional stopping
             * gives E_fp = sum_n E[rho(B_n); C_n < N] = N exact_oracle + D,
             * D = E[sum_{N <= n < T_N} rho(B_n)].  Every message before the
             * N-th bit-setting one finds at most min(M, (N-1)k) bits set, so
             * 0 <= D <= rmax E_fp, rmax = rho(min(M, (N-1)k)):
             * N o <= E_fp <= N o / (1 - rmax).  The midpoint is within
             * rmax/2 (relative) of E_fp, and exact_real = E_fp/(N + E_fp)
             * moves less than E_fp does. */
            if (last->saturated_at) {
                /* M q1^(N-1) < 1e-30: the chain conditioned on setting
                 * bits is ahead of the unconditioned one (B'_c >= B_c on
                 * the same messages), so its mass on a full filter is
                 * above 1 - 1e-30 before N: every new message from there
                 * on is a false positive, as the propagation says */
                last->exact_real = 1.0;
                last->exact_real_worst = 1.0;
                return RBF_OK;
            }
            const int nc = p->hashing == RBF_NON_COLLIDING;
            uint64_t top = N - 1 > (M - 1) / k ? M : (N - 1) * k;
            double rmax = rbf__model_rho(M, k, nc, top);
            if (rmax <= RBF__NEXACT_REAL_RMAX) {
                double E = (double)N * last->exact_oracle;
                double Eup = E / (1.0 - rmax);
                E *= 1.0 + 0.5 * rmax / (1.0 - rmax);
                /* B'_N = B_{N+F}, F the false positives before the N-th
                 * bit-setting message (E[F] = E_fp <= Eup): E[rho(B_N)] <=
                 * E[rho(B'_N)] <= E[rho(B_N)] + E[F rho(B_{N+F})], and with
                 * E[F] <= 1e-3 almost all of it is F = 1, rho <= rho((N+1)k):
                 * twice that bounds the second term */
                uint64_t top2 = N + 1 > (M - 1) / k ? M : (N + 1) * k;
                double gap = 2.0 * Eup * rbf__model_rho(M, k, nc, top2);
                if (Eup <= 1e-3 && gap <= RBF__NEXACT_REAL_RMAX * last->exact_worst) {
                    last->exact_real = model_clamp01(E / ((double)N + E));
                    last->exact_real_worst = model_clamp01(last->exact_worst + 0.5 * gap);
                    return RBF_OK;
                }
            }
            /* any load: the potentials of the fill chain (nexact.c) */
            double rr, rw;
            rc = rbf__nreal_fast(p, N, &rr, NULL, &rw);
            if (rc < 0)
                return rc;
            if (rc == RBF_OK) {
                last->exact_real = rr;
                last->exact_real_worst = rw;
                return RBF_OK;
            }
            goto real_user;
        }
    }
    rc = bdist_init(&d, M, k, (p->hashing == RBF_NON_COLLIDING));
    if (rc)
        return rc;
    model_sum se;
    msum_init(&se);
    msum_add(&se, bdist_mean_rho(&d, NULL)); /* n = 0 */
    if (last)
        last->saturated_at = 0;
    for (uint64_t n = 1; n <= N; n++) {
        if (!curve && d.lo >= M) {
            /* every bit is set: E[rho(B_m)] = 1 for every m >= n - 1, so
             * sum_{m<N} = sum_{m<n} + (N - n) in closed form */
            last->saturated_at = n - 1;
            last->exact_worst = 1.0;
            last->exact_oracle = model_clamp01((msum_get(&se) + (double)(N - n)) / (double)N);
            break;
        }
        if ((n & 0xff) == 0 && model_progress(p, n, 2 * N)) {
            bdist_free(&d);
            return RBF_ECANCELED;
        }
        if ((rc = bdist_message(&d)) != RBF_OK) {
            bdist_free(&d);
            return rc;
        }
        double e = bdist_mean_rho(&d, NULL); /* E[rho(B_n)] */
        rbf_model_n_result *dst = curve ? &curve[n - 1] : (n == N ? last : NULL);
        if (dst) {
            dst->exact_worst = e;
            dst->exact_oracle = model_clamp01(msum_get(&se) / (double)n);
        }
        msum_add(&se, e);
    }
    if (curve && last)
        *last = curve[N - 1];
    bdist_free(&d);

real_user:
    /* exact real user: steps conditioned on setting a bit.  Row c (N =
     * c + 1) takes the false positives at B'_0 .. B'_c and E[rho(B'_{c+1})],
     * the rate at the end of such a cycle */
    rc = bdist_init(&d, M, k, (p->hashing == RBF_NON_COLLIDING));
    if (rc)
        return rc;
    model_sum sfp;
    msum_init(&sfp);
    int inf = 0;
    for (uint64_t c = 0; c < N; c++) {
        if ((c & 0xff) == 0 && c && model_progress(p, N + c, 2 * N)) {
            bdist_free(&d);
            return RBF_ECANCELED;
        }
        if (!inf) {
            double w;
            (void)bdist_mean_rho(&d, &w);
            if (isinf(w))
                inf = 1; /* mass on a full filter: every new message is a false positive */
            else
                msum_add(&sfp, w);
        }
        double E = msum_get(&sfp);
        double v = inf ? 1.0 : model_clamp01(E / ((double)(c + 1) + E));
        if (!inf && (rc = bdist_message_cond(&d)) != RBF_OK) {
            bdist_free(&d);
            return rc;
        }
        double rw = inf ? 1.0 : bdist_mean_rho(&d, NULL);
        if (curve) {
            curve[c].exact_real = v;
            curve[c].exact_real_worst = rw;
        }
        if (last && (c + 1 == N || (inf && !curve))) {
            last->exact_real = v;
            last->exact_real_worst = rw;
        }
        if (inf && !curve)
            break; /* from here on every new message is a false positive */
    }
    bdist_free(&d);
    return RBF_OK;
}

int rbf_model_nbounded(const rbf_model_params *p, uint64_t messages, rbf_model_n_result *out)
{
    if (!out)
        return RBF_EINVAL;
    return nbounded_core(p, messages, NULL, out);
}

int rbf_model_nbounded_curve(const rbf_model_params *p, uint64_t messages, rbf_model_n_result *rows)
{
    if (!rows)
        return RBF_EINVAL;
    return nbounded_core(p, messages, rows, NULL);
}
