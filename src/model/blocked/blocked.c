/*
 * blocked.c -- the models of the blocked layout (docs/models.md, "Blocked
 * layout"): M bits = B blocks of W = 512 bits, every message picks one block
 * uniformly and puts its k positions inside it.
 *
 * 1. One block.  A block that has received L messages holds b bits with the
 *    flat occupancy chain on W bits (colliding or non-colliding, k hashes);
 *    the chain below also follows f, the messages that set no bit (false
 *    positives), so that c = L - f is the block's bit-setting count.  The
 *    per-load distributions P_L(b), h_L(f) and a_L = E[rho_W(b_L)] are kept
 *    for L = 0, 1, ... as far as needed (tails below 1e-30 dropped).
 *
 * 2. Oracle N-bounded (every new message counts): after n messages the
 *    loads are Binomial(n, 1/B); the next message's block has load
 *    Bin(n, 1/B), so
 *       exact_worst  = sum_L Bin(N, 1/B)(L) a_L,
 *       exact_oracle = (1/N) sum_{n<N} sum_L Bin(n, 1/B)(L) a_L
 *                    = (B/N) sum_L P(Bin(N, 1/B) > L) a_L
 *    (sum_{n<N} P(Bin(n,p) = L) = P(Bin(N,p) > L) / p: the negative
 *    binomial identity).  Exact.
 *
 * 3. Everything else counts messages up to a random stopping time that
 *    depends on all blocks at once.  Poissonise: let the messages arrive by
 *    a Poisson clock of rate B (block loads at time t are independent
 *    Poisson(t)); the sequence of messages, hence every count per cycle, is
 *    unchanged.  With A(t) the arrivals and tau a stopping time,
 *    E[A(tau)] = B E[tau] = B int_0^inf P(tau > t) dt, and an event of rate
 *    r(S) has E[count up to tau] = int E[r(S(t)) 1{t < tau}] dt.  The block
 *    states at time t are independent with law y_t = sum_L Pois_t(L) P_L,
 *    so every such expectation is a sum over one block's state against the
 *    distribution of the sum of the other B - 1 blocks (or B - 2):
 *      real user:   E[T_N] = B int P(C(t) <= N-1) dt, C = sum of the blocks'
 *                   bit-setting counts; E[FP] = E[T_N] - N;
 *      sigma:       E[arrivals] = B int P(G(t) <= sigma) dt,
 *                   E[N_0] = B int P(G(t) <= sigma - 1) dt,
 *                   E[FP] = B int E[rho_W(b_1) 1{b_1 + G' <= sigma}] dt;
 *      two-phase:   the frozen rate E[rho(S) at the crossing]
 *                   = int (T1 + (B-1) T2) dt / int B X dt with the crossing
 *                   terms below.
 *    The law of a sum of m independent block counts is computed exactly by
 *    an FFT convolution power on a window that holds all but a negligible part of it
 *    (checked), or by a 4-cumulant Edgeworth expansion.  The time integral
 *    is split at t_lo (before which the sum is below the threshold but for
 *    14 standard deviations: closed form) and t_hi (after which it is above
 *    it), and [t_lo, t_hi] is integrated by composite 16-point
 *    Gauss-Legendre.
 */
#include <complex.h>
#include <stdlib.h>
#include <string.h>

#include "model_blocked.h"
#include "rbf_alloc.h"

#define BLK_TINY 1e-30
#define BLK_PI 3.14159265358979323846
#define BLK_Z 14.0          /* time window: sum's mean -/+ Z standard deviations */
#define BLK_LCAP 65536u     /* largest block load followed */
#define BLK_FULL_FFT 2048u /* sums with at most this support: no window */

/* ------------------------------------------------------------------ */
/* One block: the joint chain of (f, b) after L messages.              */

typedef struct blk_chain {
    unsigned W, k;
    int nc, need_f;
    double *T;   /* T[b (k+1) + d]: P(a message into a block at b sets d new bits) */
    double *rho; /* rho_W(b) = T[b (k+1)] */
    unsigned L;  /* loads processed */
    unsigned blo, bn, flo, fn; /* the live rectangle of J */
    double *J;   /* J[(f - flo) bn + (b - blo)] */
    /* records of loads 0..L */
    size_t cap;
    unsigned *pb_lo, *pb_n, *h_lo, *h_n;
    size_t *pb_off, *h_off;
    double *a, *mb, *m2b, *mc, *m2c;
    double *pool_b, *pool_h;
    size_t pool_b_len, pool_b_cap, pool_h_len, pool_h_cap;
} blk_chain;

static double hit_prob(unsigned W, int nc, unsigned q, unsigned lv)
{
    if (lv >= W)
        return 1.0;
    if (!nc)
        return (double)lv / (double)W;
    return lv >= q ? (double)(lv - q) / (double)(W - q) : 0.0;
}

/* out[d], d = 0..k: new bits set by one message into a block at b bits. */
static void step_dist(unsigned W, unsigned k, int nc, unsigned b, double *out)
{
    memset(out, 0, ((size_t)k + 1) * sizeof *out);
    out[0] = 1.0;
    for (unsigned q = 0; q < k; q++) {
        for (unsigned d = q + 1;; d--) {
            unsigned lv = b + d;
            double v = 0.0;
            if (d <= q && lv <= W)
                v += out[d] * hit_prob(W, nc, q, lv);
            if (d >= 1 && lv - 1 < W)
                v += out[d - 1] * (1.0 - hit_prob(W, nc, q, lv - 1));
            out[d] = v;
            if (d == 0)
                break;
        }
    }
}

static void chain_free(blk_chain *c)
{
    rbf__free(c->T);
    rbf__free(c->J);
    rbf__free(c->pb_lo);
    rbf__free(c->pb_n);
    rbf__free(c->h_lo);
    rbf__free(c->h_n);
    rbf__free(c->pb_off);
    rbf__free(c->h_off);
    rbf__free(c->a);
    rbf__free(c->mb);
    rbf__free(c->m2b);
    rbf__free(c->mc);
    rbf__free(c->m2c);
    rbf__free(c->pool_b);
    rbf__free(c->pool_h);
    memset(c, 0, sizeof *c);
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 1024;
    while (nc < need)
        nc *= 2;
    void *np = rbf__realloc(*p, nc * elem);
    if (!np)
        return -1;
    *p = np;
    *cap = nc;
    return 0;
}

static int chain_reserve_records(blk_chain *c, size_t n)
{
    if (n <= c->cap)
        return 0;
    size_t nc = c->cap ? c->cap * 2 : 256;
    while (nc < n)
        nc *= 2;
#define GROWA(f)                                                                                   \
    do {                                                                                           \
        void *np_ = rbf__realloc(c->f, nc * sizeof *c->f);                                              \
        if (!np_)                                                                                  \
            return -1;                                                                             \
        c->f = np_;                                                                                \
    } while (0)
    GROWA(pb_lo);
    GROWA(pb_n);
    GROWA(h_lo);
    GROWA(h_n);
    GROWA(pb_off);
    GROWA(h_off);
    GROWA(a);
    GROWA(mb);
    GROWA(m2b);
    GROWA(mc);
    GROWA(m2c);
#undef GROWA
    c->cap = nc;
    return 0;
}

/* Record load c->L from the marginals cs (b over [blo, blo+bn)) and rs
 * (f over [flo, flo+fn)). */
static int chain_record(blk_chain *c, const double *cs, const double *rs)
{
    size_t L = c->L;
    if (chain_reserve_records(c, L + 1))
        return RBF_ENOMEM;
    if (grow((void **)&c->pool_b, &c->pool_b_cap, c->pool_b_len + c->bn, sizeof(double)) ||
        grow((void **)&c->pool_h, &c->pool_h_cap, c->pool_h_len + c->fn, sizeof(double)))
        return RBF_ENOMEM;
    c->pb_lo[L] = c->blo;
    c->pb_n[L] = c->bn;
    c->pb_off[L] = c->pool_b_len;
    c->h_lo[L] = c->flo;
    c->h_n[L] = c->fn;
    c->h_off[L] = c->pool_h_len;
    memcpy(c->pool_b + c->pool_b_len, cs, c->bn * sizeof *cs);
    memcpy(c->pool_h + c->pool_h_len, rs, c->fn * sizeof *rs);
    c->pool_b_len += c->bn;
    c->pool_h_len += c->fn;
    model_sum sa, s1, s2;
    msum_init(&sa);
    msum_init(&s1);
    msum_init(&s2);
    for (unsigned j = 0; j < c->bn; j++) {
        double b = (double)(c->blo + j);
        msum_add(&sa, cs[j] * c->rho[c->blo + j]);
        msum_add(&s1, cs[j] * b);
        msum_add(&s2, cs[j] * b * b);
    }
    c->a[L] = model_clamp01(msum_get(&sa));
    c->mb[L] = msum_get(&s1);
    c->m2b[L] = msum_get(&s2);
    msum_init(&s1);
    msum_init(&s2);
    for (unsigned r = 0; r < c->fn; r++) {
        double cc = (double)L - (double)(c->flo + r);
        msum_add(&s1, rs[r] * cc);
        msum_add(&s2, rs[r] * cc * cc);
    }
    c->mc[L] = msum_get(&s1);
    c->m2c[L] = msum_get(&s2);
    return RBF_OK;
}

static int chain_init(blk_chain *c, unsigned W, unsigned k, int nc, int need_f)
{
    memset(c, 0, sizeof *c);
    c->W = W;
    c->k = k;
    c->nc = nc;
    c->need_f = need_f;
    c->T = rbf__malloc(((size_t)W + 1) * ((size_t)k + 1) * sizeof *c->T);
    c->rho = rbf__malloc(((size_t)W + 1) * sizeof *c->rho);
    c->J = rbf__malloc(sizeof *c->J);
    if (!c->T || !c->rho || !c->J) {
        rbf__free(c->rho);
        chain_free(c);
        return RBF_ENOMEM;
    }
    for (unsigned b = 0; b <= W; b++) {
        step_dist(W, k, nc, b, c->T + (size_t)b * (k + 1));
        c->rho[b] = c->T[(size_t)b * (k + 1)];
    }
    c->J[0] = 1.0;
    c->blo = c->flo = 0;
    c->bn = c->fn = 1;
    c->L = 0;
    double one = 1.0;
    int rc = chain_record(c, &one, &one);
    if (rc) {
        rbf__free(c->rho);
        chain_free(c);
    }
    return rc;
}

static void chain_destroy(blk_chain *c)
{
    rbf__free(c->rho);
    chain_free(c);
}

static int chain_step(blk_chain *c)
{
    const unsigned W = c->W, k = c->k;
    unsigned bhi = c->blo + c->bn - 1;
    unsigned nbhi = bhi + k > W ? W : bhi + k;
    unsigned nbn = nbhi - c->blo + 1, nfn = c->need_f ? c->fn + 1 : 1;
    double *N = rbf__calloc((size_t)nfn * nbn, sizeof *N);
    double *cs = rbf__calloc(nbn, sizeof *cs), *rs = rbf__calloc(nfn, sizeof *rs);
    if (!N || !cs || !rs) {
        rbf__free(N);
        rbf__free(cs);
        rbf__free(rs);
        return RBF_ENOMEM;
    }
    for (unsigned r = 0; r < c->fn; r++) {
        const double *row = c->J + (size_t)r * c->bn;
        double *same = N + (size_t)r * nbn;
        double *up = c->need_f ? N + (size_t)(r + 1) * nbn : same;
        for (unsigned j = 0; j < c->bn; j++) {
            double m = row[j];
            if (m == 0.0)
                continue;
            unsigned b = c->blo + j;
            const double *t = c->T + (size_t)b * (k + 1);
            up[j] += m * t[0];
            unsigned dmax = W - b < k ? W - b : k;
            for (unsigned d = 1; d <= dmax; d++)
                same[j + d] += m * t[d];
        }
    }
    for (unsigned r = 0; r < nfn; r++)
        for (unsigned j = 0; j < nbn; j++) {
            double v = N[(size_t)r * nbn + j];
            rs[r] += v;
            cs[j] += v;
        }
    unsigned r0 = 0, r1 = nfn - 1, j0 = 0, j1 = nbn - 1;
    while (r0 < r1 && rs[r0] < BLK_TINY)
        r0++;
    while (r1 > r0 && rs[r1] < BLK_TINY)
        r1--;
    while (j0 < j1 && cs[j0] < BLK_TINY)
        j0++;
    while (j1 > j0 && cs[j1] < BLK_TINY)
        j1--;
    unsigned fn = r1 - r0 + 1, bn = j1 - j0 + 1;
    double *J = rbf__malloc((size_t)fn * bn * sizeof *J);
    if (!J) {
        rbf__free(N);
        rbf__free(cs);
        rbf__free(rs);
        return RBF_ENOMEM;
    }
    for (unsigned r = 0; r < fn; r++)
        memcpy(J + (size_t)r * bn, N + (size_t)(r + r0) * nbn + j0, bn * sizeof *J);
    rbf__free(N);
    rbf__free(c->J);
    c->J = J;
    c->flo += r0;
    c->fn = fn;
    c->blo += j0;
    c->bn = bn;
    c->L++;
    int rc = chain_record(c, cs + j0, rs + r0);
    rbf__free(cs);
    rbf__free(rs);
    return rc;
}

static int chain_extend(blk_chain *c, uint64_t L)
{
    if (L > BLK_LCAP)
        return RBF_EINVAL;
    while (c->L < L) {
        int rc = chain_step(c);
        if (rc)
            return rc;
    }
    return RBF_OK;
}

/* ------------------------------------------------------------------ */
/* Poisson and binomial weights on the window where they matter.       */

typedef struct wwin {
    uint64_t lo;
    size_t n, cap;
    double *w;
} wwin;

static int wwin_put(wwin *ww, size_t i, double v)
{
    if (grow((void **)&ww->w, &ww->cap, i + 1, sizeof(double)))
        return -1;
    ww->w[i] = v;
    return 0;
}

/* Weights of a unimodal pmf from its mode: pmf(mode) given, ratio(L) =
 * pmf(L+1)/pmf(L); [0, top]. */
static int wwin_fill(wwin *ww, uint64_t mode, double pm, double (*ratio)(const void *, uint64_t),
                     const void *ctx, uint64_t top)
{
    const double cut = 1e-34;
    uint64_t lo = mode;
    double v = pm;
    while (lo > 0) {
        double nv = v / ratio(ctx, lo - 1);
        if (!(nv > cut))
            break;
        v = nv;
        lo--;
    }
    ww->lo = lo;
    /* recompute upwards from lo so the array is in order */
    double start = v;
    size_t i = 0;
    uint64_t L = lo;
    v = start;
    for (;;) {
        if (wwin_put(ww, i, v))
            return RBF_ENOMEM;
        i++;
        if (L >= top)
            break;
        double nv = v * ratio(ctx, L);
        if (L >= mode && !(nv > cut))
            break;
        v = nv;
        L++;
    }
    ww->n = i;
    /* the mode's value comes from lgamma (relative error ~1e-16 of its
     * argument's size); the ratios are exact: normalise */
    model_sum t;
    msum_init(&t);
    for (size_t j = 0; j < i; j++)
        msum_add(&t, ww->w[j]);
    double tot = msum_get(&t);
    if (tot > 0.0)
        for (size_t j = 0; j < i; j++)
            ww->w[j] /= tot;
    return RBF_OK;
}

static double pois_ratio(const void *ctx, uint64_t L)
{
    return *(const double *)ctx / (double)(L + 1);
}

static int pois_window(wwin *ww, double t)
{
    if (!(t > 0.0)) {
        ww->lo = 0;
        ww->n = 1;
        return wwin_put(ww, 0, 1.0) ? RBF_ENOMEM : RBF_OK;
    }
    uint64_t mode = (uint64_t)floor(t);
    double pm = exp(-t + (double)mode * log(t) - lgamma((double)mode + 1.0));
    return wwin_fill(ww, mode, pm, pois_ratio, &t, UINT64_MAX);
}

typedef struct binom_ctx {
    uint64_t n;
    double odds;
} binom_ctx;

static double binom_ratio(const void *ctx, uint64_t L)
{
    const binom_ctx *b = ctx;
    return (double)(b->n - L) / (double)(L + 1) * b->odds;
}

static int binom_window(wwin *ww, uint64_t n, uint64_t B)
{
    if (B == 1) {
        ww->lo = n;
        ww->n = 1;
        return wwin_put(ww, 0, 1.0) ? RBF_ENOMEM : RBF_OK;
    }
    double p = 1.0 / (double)B;
    uint64_t mode = (uint64_t)floor((double)(n + 1) * p);
    if (mode > n)
        mode = n;
    double lpm = lgamma((double)n + 1.0) - lgamma((double)mode + 1.0) -
                 lgamma((double)(n - mode) + 1.0) + (double)mode * log(p) +
                 (double)(n - mode) * log1p(-p);
    binom_ctx bc = {n, p / (1.0 - p)};
    return wwin_fill(ww, mode, exp(lpm), binom_ratio, &bc, n);
}

/* ------------------------------------------------------------------ */
/* FFT and the law of a sum of independent block counts.              */

/* In place, unscaled; tw[j * ts] = exp(-2 pi i j / n) for j < n / 2. */
static void fft(double complex *a, size_t n, int inverse, const double complex *tw, size_t ts)
{
    for (size_t i = 1, j = 0; i < n; i++) {
        size_t bit = n >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j ^= bit;
        if (i < j) {
            double complex t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
    }
    /* the butterflies in real arithmetic: the same products and sums as
     * the complex ones, without the library's checks for infinities */
    double *ar = (double *)a; /* C11 6.2.5: a complex is an array of two reals */
    const double *tr = (const double *)tw;
    const double sgn = inverse ? -1.0 : 1.0;
    for (size_t len = 2; len <= n; len <<= 1) {
        size_t step = n / len, half = len / 2;
        for (size_t i = 0; i < n; i += len)
            for (size_t j = 0; j < half; j++) {
                double wr = tr[2 * (j * step * ts)], wi = sgn * tr[2 * (j * step * ts) + 1];
                double *x = ar + 2 * (i + j), *y = ar + 2 * (i + j + half);
                double vr = y[0] * wr - y[1] * wi, vi = y[0] * wi + y[1] * wr;
                double ur = x[0], ui = x[1];
                x[0] = ur + vr;
                x[1] = ui + vi;
                y[0] = ur - vr;
                y[1] = ui - vi;
            }
    }
}

/* The transform of a real sequence x[0..n) (n even, >= 4) by one of
 * length n/2 (even samples in the real parts, odd in the imaginary):
 * X[0..n/2], the rest being conj(X[n - j]).  tw: the length-n twiddles;
 * s: n/2 scratch values. */
static void rfft_fwd(const double *x, size_t n, double complex *X, double complex *s,
                     const double complex *tw)
{
    const size_t h = n / 2;
    for (size_t j = 0; j < h; j++)
        s[j] = x[2 * j] + I * x[2 * j + 1];
    fft(s, h, 0, tw, 2);
    for (size_t k = 0; k <= h; k++) {
        double complex zk = s[k % h], zc = conj(s[(h - k) % h]);
        double complex e = 0.5 * (zk + zc), o = -0.5 * I * (zk - zc);
        X[k] = e + (k < h ? tw[k] : -1.0) * o;
    }
}

/* The inverse: x[0..n) times n/2 (unscaled) from X[0..n/2] of a real
 * sequence. */
static void rfft_inv(const double complex *X, size_t n, double *x, double complex *s,
                     const double complex *tw)
{
    const size_t h = n / 2;
    for (size_t k = 0; k < h; k++) {
        double complex a = X[k], b = conj(X[h - k]);
        s[k] = 0.5 * (a + b) + I * (0.5 * (a - b) * conj(tw[k]));
    }
    fft(s, h, 1, tw, 2);
    for (size_t j = 0; j < h; j++) {
        x[2 * j] = creal(s[j]);
        x[2 * j + 1] = cimag(s[j]);
    }
}

static double complex cpow_int(double complex z, uint64_t m)
{
    if (m == 0)
        return 1.0;
    if (m <= 64) {
        /* few factors (the exact sums' B - 2 or B - 1 <= 63, but near the
         * top of the support): binary powering, a dozen complex products
         * at most (relative rounding ~1e-15) instead of log, atan2, hypot
         * and sincos; the products in real arithmetic, like the FFT's */
        double xr = creal(z), xi = cimag(z), pr = 1.0, pi = 0.0;
        for (;;) {
            if (m & 1) {
                double t = pr * xr - pi * xi;
                pi = pr * xi + pi * xr;
                pr = t;
            }
            m >>= 1;
            if (!m)
                break;
            double t = xr * xr - xi * xi;
            xi = 2.0 * xr * xi;
            xr = t;
        }
        return pr + I * pi;
    }
    double r = cabs(z);
    if (r == 0.0)
        return 0.0;
    double lr = (double)m * log(r);
    if (lr < -740.0)
        return 0.0;
    double th = (double)m * carg(z);
    return exp(lr) * (cos(th) + I * sin(th));
}

enum { SD_POINT = 0, SD_ARRAY = 1, SD_EDGE = 2 };

typedef struct sdist {
    int kind;
    int64_t s0;               /* SD_POINT */
    int64_t c0;               /* SD_ARRAY: pmf[s - c0], s in [c0, c0 + n) */
    size_t n;
    double *pmf, *cdf;
    double mu, sd, g3, g4;    /* SD_EDGE */
    double scale;             /* total mass (1 except for the tilted sum) */
} sdist;

static double sd_pmf(const sdist *s, int64_t x)
{
    switch (s->kind) {
    case SD_POINT:
        return x == s->s0 ? s->scale : 0.0;
    case SD_ARRAY:
        if (x < s->c0 || x >= s->c0 + (int64_t)s->n)
            return 0.0;
        return s->pmf[x - s->c0];
    default: {
        double z = ((double)x - s->mu) / s->sd;
        if (fabs(z) > 40.0)
            return 0.0;
        double z2 = z * z;
        double he3 = z * (z2 - 3.0), he4 = z2 * z2 - 6.0 * z2 + 3.0;
        double he6 = z2 * z2 * z2 - 15.0 * z2 * z2 + 45.0 * z2 - 15.0;
        double v = exp(-0.5 * z2) / (sqrt(2.0 * BLK_PI) * s->sd) *
                   (1.0 + s->g3 / 6.0 * he3 + s->g4 / 24.0 * he4 + s->g3 * s->g3 / 72.0 * he6);
        return v > 0.0 ? v * s->scale : 0.0;
    }
    }
}

/* P(S <= x) (a probability law: scale 1). */
static double sd_cdf(const sdist *s, int64_t x)
{
    switch (s->kind) {
    case SD_POINT:
        return x >= s->s0 ? 1.0 : 0.0;
    case SD_ARRAY:
        if (x < s->c0)
            return 0.0;
        if (x >= s->c0 + (int64_t)s->n)
            return 1.0;
        return model_clamp01(s->cdf[x - s->c0]);
    default: {
        double z = ((double)x + 0.5 - s->mu) / s->sd;
        if (z < -40.0)
            return 0.0;
        if (z > 40.0)
            return 1.0;
        double z2 = z * z;
        double he2 = z2 - 1.0, he3 = z * (z2 - 3.0), he5 = z * (z2 * z2 - 10.0 * z2 + 15.0);
        double phi = exp(-0.5 * z2) / sqrt(2.0 * BLK_PI);
        double v = 0.5 * erfc(-z / sqrt(2.0)) -
                   phi * (s->g3 / 6.0 * he2 + s->g4 / 24.0 * he3 + s->g3 * s->g3 / 72.0 * he5);
        return model_clamp01(v);
    }
    }
}

/* Cumulants k1..k4 of a (possibly unnormalised) vector on 0..W; returns its mass. */
static double cumulants(const double *y, unsigned W, double kap[4])
{
    model_sum s0, s1;
    msum_init(&s0);
    msum_init(&s1);
    for (unsigned b = 0; b <= W; b++) {
        msum_add(&s0, y[b]);
        msum_add(&s1, y[b] * (double)b);
    }
    double m0 = msum_get(&s0);
    double mu = m0 > 0.0 ? msum_get(&s1) / m0 : 0.0;
    double c2 = 0.0, c3 = 0.0, c4 = 0.0;
    for (unsigned b = 0; b <= W; b++) {
        double d = (double)b - mu, w = y[b] / (m0 > 0.0 ? m0 : 1.0);
        c2 += w * d * d;
        c3 += w * d * d * d;
        c4 += w * d * d * d * d;
    }
    kap[0] = mu;
    kap[1] = c2;
    kap[2] = c3;
    kap[3] = c4 - 3.0 * c2 * c2;
    return m0;
}

/* Edgeworth law of sum of m copies of y plus (if ztil) one copy of z. */
static void sd_edgeworth(sdist *s, const double *y, uint64_t m, const double *z, unsigned W)
{
    double ky[4], kz[4] = {0, 0, 0, 0}, K[4];
    cumulants(y, W, ky);
    double mass = 1.0;
    if (z)
        mass = cumulants(z, W, kz);
    for (int i = 0; i < 4; i++)
        K[i] = (double)m * ky[i] + kz[i];
    s->scale = mass;
    if (!(K[1] > 1e-12)) {
        s->kind = SD_POINT;
        s->s0 = (int64_t)llround(K[0]);
        return;
    }
    s->kind = SD_EDGE;
    s->mu = K[0];
    s->sd = sqrt(K[1]);
    s->g3 = K[2] / (K[1] * s->sd);
    s->g4 = K[3] / (K[1] * K[1]);
}

/* Workspace of the exact sums. */
typedef struct fftws {
    size_t cap;
    double complex *a, *p, *q, *tw;
    double *pm1, *cd1, *pm2;
    size_t dcap;
    size_t twn; /* the transform length tw holds (0: none) */
} fftws;

static void fftws_free(fftws *w)
{
    rbf__free(w->a);
    rbf__free(w->p);
    rbf__free(w->q);
    rbf__free(w->tw);
    rbf__free(w->pm1);
    rbf__free(w->cd1);
    rbf__free(w->pm2);
    memset(w, 0, sizeof *w);
}

/* Exact laws: sy = m copies of y; if z, sz = z * (m - 1 copies of y).
 * m >= 1.  Arrays in sy/sz point into the workspace. */
static int sd_exact(fftws *w, const double *y, const double *z, unsigned W, uint64_t m, sdist *sy,
                    sdist *sz)
{
    double ky[4];
    cumulants(y, W, ky);
    uint64_t full = m * W + 1;
    double zz = BLK_Z + 8.0;
    for (;;) {
        int64_t c0 = 0;
        uint64_t need = full;
        int windowed = 0;
        if (full > BLK_FULL_FFT) {
            double half = zz * sqrt((double)m * (ky[1] > 0 ? ky[1] : 0)) + (double)W + 2.0;
            double lo = floor((double)m * ky[0] - half), hi = ceil((double)m * ky[0] + half);
            if (lo < 0.0)
                lo = 0.0;
            if (hi > (double)(full - 1))
                hi = (double)(full - 1);
            c0 = (int64_t)lo;
            need = (uint64_t)(hi - lo) + 1;
            windowed = need < full;
        }
        size_t nf = 64;
        while (nf < need)
            nf *= 2;
        if (nf > ((size_t)1 << 24))
            return RBF_EINVAL;
        if (nf > w->cap) {
            rbf__free(w->a);
            rbf__free(w->p);
            rbf__free(w->q);
            rbf__free(w->tw);
            w->a = rbf__malloc(nf * sizeof *w->a);
            w->p = rbf__malloc(2 * nf * sizeof *w->p); /* the spectrum, then scratch */
            w->q = rbf__malloc(nf * sizeof *w->q);
            w->tw = rbf__malloc(nf / 2 * sizeof *w->tw);
            rbf__free(w->pm1);
            rbf__free(w->cd1);
            rbf__free(w->pm2);
            w->pm1 = rbf__malloc(nf * sizeof *w->pm1);
            w->cd1 = rbf__malloc(nf * sizeof *w->cd1);
            w->pm2 = rbf__malloc(nf * sizeof *w->pm2);
            if (!w->a || !w->p || !w->q || !w->tw || !w->pm1 || !w->cd1 || !w->pm2) {
                fftws_free(w);
                return RBF_ENOMEM;
            }
            w->cap = nf;
            w->twn = 0;
        }
        if (w->twn != nf) { /* the same length as the last call: the same twiddles */
            for (size_t j = 0; j < nf / 2; j++) {
                double ang = -2.0 * BLK_PI * (double)j / (double)nf;
                w->tw[j] = cos(ang) + I * sin(ang);
            }
            w->twn = nf;
        }
        /* y and z are real: their transforms by half-length ones, and of
         * the Hermitian spectra only the lower half (half the complex
         * powers); the laws come back as real sequences */
        const size_t h = nf / 2;
        double *ry = (double *)w->a, *rz = ry + nf; /* a: 2 nf doubles */
        double complex *sc = w->p + nf;
        memset(ry, 0, nf * sizeof *ry);
        if (z)
            memset(rz, 0, nf * sizeof *rz);
        for (unsigned b = 0; b <= W; b++) {
            ry[b % nf] += y[b];
            if (z)
                rz[b % nf] += z[b];
        }
        rfft_fwd(ry, nf, w->p, sc, w->tw);
        if (z)
            rfft_fwd(rz, nf, w->q, sc, w->tw);
        for (size_t j = 0; j <= h; j++) {
            double complex pm = cpow_int(w->p[j], m - 1);
            w->p[j] *= pm;
            if (z)
                w->q[j] *= pm;
        }
        rfft_inv(w->p, nf, ry, sc, w->tw);
        if (z)
            rfft_inv(w->q, nf, rz, sc, w->tw);
        double inv = 1.0 / (double)h;
        model_sum cs;
        msum_init(&cs);
        for (size_t i = 0; i < nf; i++) {
            size_t idx = (size_t)(((uint64_t)c0 + i) % nf);
            double v = ry[idx] * inv;
            w->pm1[i] = v;
            msum_add(&cs, v);
            w->cd1[i] = msum_get(&cs);
            if (z)
                w->pm2[i] = rz[idx] * inv;
        }
        if (windowed) {
            /* the window must hold the law: its edges carry nothing */
            double edge = 0.0;
            for (size_t i = 0; i < 32 && i < nf; i++) {
                edge = fmax(edge, fabs(w->pm1[i]));
                edge = fmax(edge, fabs(w->pm1[nf - 1 - i]));
            }
            if (edge > 1e-13 && zz < 80.0) {
                zz += 12.0;
                continue;
            }
        }
        sy->kind = SD_ARRAY;
        sy->c0 = c0;
        sy->n = nf;
        sy->pmf = w->pm1;
        sy->cdf = w->cd1;
        sy->scale = 1.0;
        if (z && sz) {
            sz->kind = SD_ARRAY;
            sz->c0 = c0;
            sz->n = nf;
            sz->pmf = w->pm2;
            sz->cdf = NULL;
            sz->scale = 1.0;
        }
        return RBF_OK;
    }
}

/* ------------------------------------------------------------------ */
/* The Poissonised model.                                              */

typedef struct blk_ctx {
    blk_chain ch;
    uint64_t B;
    int exact;
    int use_c; /* the block variable: 1 bit-setting count c, 0 set bits b */
    wwin pw;
    double *y, *z;
    double *cdf; /* W + 2 values of the others' distribution function (in z's allocation) */
    fftws ws;
    const rbf_model_params *p;
} blk_ctx;

static void ctx_free(blk_ctx *x)
{
    chain_destroy(&x->ch);
    rbf__free(x->pw.w);
    rbf__free(x->y);
    rbf__free(x->z);
    fftws_free(&x->ws);
}

/* Mean and variance of the block variable at time t (O(window)). */
static int block_moments(blk_ctx *x, double t, double *mean, double *var)
{
    int rc = pois_window(&x->pw, t);
    if (rc)
        return rc;
    if ((rc = chain_extend(&x->ch, x->pw.lo + x->pw.n - 1)))
        return rc;
    model_sum s1, s2;
    msum_init(&s1);
    msum_init(&s2);
    for (size_t i = 0; i < x->pw.n; i++) {
        size_t L = (size_t)x->pw.lo + i;
        double w = x->pw.w[i];
        msum_add(&s1, w * (x->use_c ? x->ch.mc[L] : x->ch.mb[L]));
        msum_add(&s2, w * (x->use_c ? x->ch.m2c[L] : x->ch.m2b[L]));
    }
    *mean = msum_get(&s1);
    double v = msum_get(&s2) - *mean * *mean;
    *var = v > 0.0 ? v : 0.0;
    return RBF_OK;
}

/* y = the block variable's law at time t. */
static int block_law(blk_ctx *x, double t)
{
    int rc = pois_window(&x->pw, t);
    if (rc)
        return rc;
    if ((rc = chain_extend(&x->ch, x->pw.lo + x->pw.n - 1)))
        return rc;
    const unsigned W = x->ch.W;
    memset(x->y, 0, ((size_t)W + 1) * sizeof *x->y);
    for (size_t i = 0; i < x->pw.n; i++) {
        size_t L = (size_t)x->pw.lo + i;
        double w = x->pw.w[i];
        if (!x->use_c) {
            const double *pb = x->ch.pool_b + x->ch.pb_off[L];
            for (unsigned j = 0; j < x->ch.pb_n[L]; j++)
                x->y[x->ch.pb_lo[L] + j] += w * pb[j];
        } else {
            const double *h = x->ch.pool_h + x->ch.h_off[L];
            for (unsigned r = 0; r < x->ch.h_n[L]; r++) {
                size_t f = (size_t)x->ch.h_lo[L] + r;
                size_t c = L - f;
                if (c <= W)
                    x->y[c] += w * h[r];
            }
        }
    }
    return RBF_OK;
}

/* A time before which the sum is at most v but for 1e-30, rigorously: the
 * sum is at most `per` times the Poisson(B t) number of messages (a
 * message sets at most k bits and counts at most once), and
 * P(Pois(l) >= n) <= pmf(n) (n + 1) / (n + 1 - l) for l < n + 1. */
static double time_safe(uint64_t B, double per, double v)
{
    double n = floor(v / per) + 1.0; /* messages needed to pass v */
    double a = 0.0, b = n / (double)B;
    for (int it = 0; it < 200 && b - a > 1e-12 * (1.0 + b); it++) {
        double t = 0.5 * (a + b), l = (double)B * t;
        double lp = -l + n * log(l) - lgamma(n + 1.0) + log((n + 1.0) / (n + 1.0 - l));
        if (lp < log(1e-30))
            a = t;
        else
            b = t;
    }
    return a;
}

/* t_lo in [0, hi]: the sum is below v_lo but for Z standard deviations. */
static int time_window_lo(blk_ctx *x, double v_lo, double hi, double *t_lo)
{
    const double B = (double)x->B;
    double mean, var, a = 0.0, b = hi;
    for (int it = 0; it < 200 && b - a > 1e-9 * (1.0 + b); it++) {
        double mid = 0.5 * (a + b);
        int rc = block_moments(x, mid, &mean, &var);
        if (rc)
            return rc;
        if (B * mean + BLK_Z * sqrt(B * var) + 1.0 <= v_lo)
            a = mid;
        else
            b = mid;
    }
    *t_lo = a;
    return RBF_OK;
}

/* t_lo: sum below v for all but Z sd before it; t_hi: above v after it. */
static int time_window(blk_ctx *x, double v_lo, double v_hi, double *t_lo, double *t_hi)
{
    const double B = (double)x->B;
    double mean, var;
    int rc;
    /* bracket: double t until the sum is surely above v_hi */
    double hi = 1.0, prev = -1.0;
    for (;;) {
        if (hi > (double)BLK_LCAP * 0.8)
            return RBF_EINVAL;
        if ((rc = block_moments(x, hi, &mean, &var)))
            return rc;
        if (B * mean - BLK_Z * sqrt(B * var) > v_hi + 0.5)
            break;
        /* the blocks have saturated (their law no longer moves) with the
         * sum not surely above v_hi: the caller decides (return 1) */
        if (hi >= 64.0 && fabs(mean - prev) <= 1e-10 * mean) {
            *t_lo = 0.0;
            *t_hi = hi;
            return 1;
        }
        prev = mean;
        hi *= 2.0;
    }
    if ((rc = time_window_lo(x, v_lo, hi, t_lo)))
        return rc;
    double a = 0.0, b = hi;
    for (int it = 0; it < 200 && b - a > 1e-9 * (1.0 + b); it++) {
        double mid = 0.5 * (a + b);
        if ((rc = block_moments(x, mid, &mean, &var)))
            return rc;
        if (B * mean - BLK_Z * sqrt(B * var) > v_hi + 0.5)
            b = mid;
        else
            a = mid;
    }
    *t_hi = b > *t_lo ? b : *t_lo;
    return RBF_OK;
}

#define GL_N 16 /* Gauss-Legendre points per panel */

/* Integrand evaluator: fills vals[0..nv) at time t. */
typedef int (*blk_integrand)(blk_ctx *x, double t, const void *arg, double *vals);

static int integrate(blk_ctx *x, double t0, double t1, unsigned panels, blk_integrand fn,
                     const void *arg, double *acc, unsigned nv)
{
    double xs[GL_N], ws[GL_N], vals[8];
    rbf__model_gauss_legendre(GL_N, xs, ws);
    model_sum s[8];
    for (unsigned j = 0; j < nv; j++)
        msum_init(&s[j]);
    double h = (t1 - t0) / panels;
    uint64_t total = (uint64_t)panels * GL_N, done = 0;
    for (unsigned pnl = 0; pnl < panels && h > 0.0; pnl++) {
        double a = t0 + h * pnl, c = a + 0.5 * h;
        for (int i = 0; i < GL_N; i++) {
            int rc = fn(x, c + 0.5 * h * xs[i], arg, vals);
            if (rc)
                return rc;
            for (unsigned j = 0; j < nv; j++)
                msum_add(&s[j], 0.5 * h * ws[i] * vals[j]);
            if (model_progress(x->p, ++done, total))
                return RBF_ECANCELED;
        }
    }
    for (unsigned j = 0; j < nv; j++)
        acc[j] = msum_get(&s[j]);
    return RBF_OK;
}

/* Integrate [t0, t1] and then onwards, panel groups of doubling length,
 * until the first value (the dominating probability) is below 1e-13
 * at the end: the normal-based t_hi can be too early when the sums are far
 * from normal (few, small blocks at short times). */
static int integrate_on(blk_ctx *x, double t0, double t1, unsigned panels, blk_integrand fn,
                        const void *arg, double *acc, unsigned nv)
{
    int rc = integrate(x, t0, t1, panels, fn, arg, acc, nv);
    if (rc)
        return rc;
    double len = t1 - t0, vals[8], more[8];
    if (!(len > 0.0))
        len = 1.0;
    for (int it = 0; it < 64; it++) {
        if ((rc = fn(x, t1, arg, vals)))
            return rc;
        if (vals[0] < 1e-13) /* above the FFT noise floor (~1e-16 x sqrt(n)) */
            return RBF_OK;
        if ((rc = integrate(x, t1, t1 + len, panels, fn, arg, more, nv)))
            return rc;
        for (unsigned j = 0; j < nv; j++)
            acc[j] += more[j];
        t1 += len;
        len *= 2.0; /* the integrand decays: coarser and coarser */
    }
    return RBF_EINVAL;
}

/* Law of the other blocks: m = B - 1 copies (and z * (B - 2 copies) if z). */
static int others(blk_ctx *x, const double *z, sdist *sy, sdist *sz)
{
    uint64_t m = x->B - 1;
    const unsigned W = x->ch.W;
    memset(sy, 0, sizeof *sy);
    if (sz)
        memset(sz, 0, sizeof *sz);
    if (m == 0) {
        sy->kind = SD_POINT;
        sy->s0 = 0;
        sy->scale = 1.0;
        return RBF_OK; /* sz unused: its factor is B - 1 = 0 */
    }
    if (x->exact)
        return sd_exact(&x->ws, x->y, z, W, m, sy, sz);
    sd_edgeworth(sy, x->y, m, NULL, W);
    if (z && sz)
        sd_edgeworth(sz, x->y, m - 1, z, W);
    return RBF_OK;
}

static int ctx_init(blk_ctx *x, const rbf_model_params *p, unsigned W, uint64_t B, int mode,
                    int use_c, int near_top)
{
    memset(x, 0, sizeof *x);
    x->p = p;
    x->B = B;
    x->use_c = use_c;
    /* near the top of the sums' support (sigma within 4 bits per block of
     * M) the Edgeworth expansion is poor (1e-3 at sigma = M - 1), and the
     * block laws there are narrow, so the exact sums are cheap */
    x->exact = mode == RBF__BLK_AUTO ? (B <= RBF__BLK_EXACT_MAX || near_top)
                                     : mode == RBF__BLK_EXACT;
    x->y = rbf__calloc((size_t)W + 1, sizeof *x->y);
    x->z = rbf__calloc(2 * ((size_t)W + 1) + 1, sizeof *x->z);
    if (!x->y || !x->z) {
        rbf__free(x->y);
        rbf__free(x->z);
        return RBF_ENOMEM;
    }
    x->cdf = x->z + W + 1;
    int rc = chain_init(&x->ch, W, p->hashes, (p->hashing == RBF_NON_COLLIDING), use_c);
    if (rc) {
        rbf__free(x->y);
        rbf__free(x->z);
    }
    return rc;
}

static int check_blocked(const rbf_model_params *p, unsigned W)
{
    int rc = rbf__model_check_params(p);
    if (rc)
        return rc;
    if (W < 1 || p->bits < W || p->bits % W != 0 || ((p->hashing == RBF_NON_COLLIDING) && p->hashes > W))
        return RBF_EINVAL;
    if (p->layout != RBF_MODEL_LAYOUT_FLAT && p->layout != RBF_MODEL_LAYOUT_BLOCKED)
        return RBF_EINVAL;
    return RBF_OK;
}

/* ---- N-bounded ---- */

static int real_integrand(blk_ctx *x, double t, const void *arg, double *vals)
{
    uint64_t v = *(const uint64_t *)arg; /* N - 1 */
    int rc = block_law(x, t);
    if (rc)
        return rc;
    sdist sy;
    if ((rc = others(x, NULL, &sy, NULL)))
        return rc;
    model_sum s;
    msum_init(&s);
    for (unsigned c = 0; c <= x->ch.W; c++)
        if (x->y[c] != 0.0)
            msum_add(&s, x->y[c] * sd_cdf(&sy, (int64_t)v - (int64_t)c));
    vals[0] = msum_get(&s);
    return RBF_OK;
}

/* tl[i] = P(X > lo + i) = sum_{j > i} w_j over a window of weights, from
 * the top (NULL when out of memory). */
static double *window_tails(const wwin *bw)
{
    double *tl = rbf__malloc(bw->n * sizeof *tl);
    if (!tl)
        return NULL;
    double tail = 0.0;
    for (size_t i = bw->n; i-- > 0;) {
        tl[i] = tail;
        tail += bw->w[i];
    }
    return tl;
}

int rbf__model_blocked_n_w(const rbf_model_params *p, unsigned W, uint64_t messages, int mode,
                           unsigned panels, rbf_model_blocked_n_result *out)
{
    int rc = check_blocked(p, W);
    if (rc)
        return rc;
    if (!out || messages < 1)
        return RBF_EINVAL;
    if (!panels)
        panels = 8;
    const uint64_t B = p->bits / W, N = messages;
    blk_ctx x;
    if ((rc = ctx_init(&x, p, W, B, mode, 1, 0)))
        return rc;
    memset(out, 0, sizeof *out);
    out->exact_convolution = x.exact;

    /* oracle and worst: binomial loads */
    wwin bw;
    memset(&bw, 0, sizeof bw);
    if ((rc = binom_window(&bw, N, B)))
        goto done;
    if (bw.lo + bw.n - 1 > BLK_LCAP) {
        /* Loads past what the chain follows: from the load Lf on, a block
         * is full but for 1e-30 (the chain's window is the single level
         * W), so E[rho | L] = 1 for L >= Lf and the sums close:
         *   worst  = sum_L P(X = L) a[min(L, Lf)],
         *   oracle = (sum_{L<Lf} P(X > L) a[L] + sum_{L>=Lf} P(X > L)) B/N,
         *   sum_{L>=Lf} P(X > L) = E[X] - sum_{L<Lf} P(X > L),  E[X] = N/B. */
        uint64_t Lf = x.ch.L;
        for (;;) {
            if ((rc = chain_extend(&x.ch, Lf)))
                goto done;
            if (x.ch.pb_lo[Lf] == W && x.ch.pb_n[Lf] == 1)
                break;
            Lf++;
        }
        model_sum sw, so, below;
        msum_init(&sw);
        msum_init(&so);
        msum_init(&below);
        double *tl = window_tails(&bw); /* P(X > L) inside the window */
        if (!tl) {
            rc = RBF_ENOMEM;
            goto done;
        }
        for (size_t i = 0; i < bw.n; i++) {
            uint64_t L = bw.lo + i;
            msum_add(&sw, bw.w[i] * x.ch.a[L < Lf ? L : Lf]);
        }
        for (uint64_t L = 0; L < Lf; L++) {
            double gt = L < bw.lo ? 1.0 : L - bw.lo < bw.n ? tl[L - bw.lo] : 0.0;
            msum_add(&so, gt * x.ch.a[L]);
            msum_add(&below, gt);
        }
        rbf__free(tl);
        msum_add(&so, (double)N / (double)B - msum_get(&below));
        out->exact_worst = model_clamp01(msum_get(&sw));
        out->exact_oracle = model_clamp01(msum_get(&so) * (double)B / (double)N);
    } else {
    if ((rc = chain_extend(&x.ch, bw.lo + bw.n - 1)))
        goto done;
    {
        model_sum sw, so;
        msum_init(&sw);
        msum_init(&so);
        for (uint64_t L = 0; L < bw.lo; L++)
            msum_add(&so, x.ch.a[L]); /* P(Bin > L) = 1 below the window */
        double *tl = window_tails(&bw);
        if (!tl) {
            rc = RBF_ENOMEM;
            goto done;
        }
        for (size_t i = 0; i < bw.n; i++) {
            uint64_t L = bw.lo + i;
            msum_add(&sw, bw.w[i] * x.ch.a[L]);
            msum_add(&so, tl[i] * x.ch.a[L]);
        }
        rbf__free(tl);
        out->exact_worst = model_clamp01(msum_get(&sw));
        out->exact_oracle = model_clamp01(msum_get(&so) * (double)B / (double)N);
    }
    }

    /* real user */
    if (N > p->bits) {
        out->exact_real = 1.0;
        out->messages_per_cycle_real = INFINITY;
        rc = RBF_OK;
        goto done;
    }
    {
        double t_lo, t_hi, acc, acc0 = 0.0;
        uint64_t v = N - 1;
        rc = time_window(&x, (double)v, (double)v, &t_lo, &t_hi);
        if (rc == 1) {
            /* saturated blocks: if the count may stay below N for ever, the
             * expected cycle is infinite and every new message ends up a
             * false positive (as the flat model's full filter) */
            uint64_t Lf = x.ch.L;
            for (;;) { /* the load after which a block is full but for 1e-30 */
                if ((rc = chain_extend(&x.ch, Lf)))
                    goto done;
                if (x.ch.pb_lo[Lf] == W && x.ch.pb_n[Lf] == 1)
                    break;
                Lf++;
            }
            /* a time after which every block is full: the law of C is final */
            double t_full = (double)Lf + 40.0 * sqrt((double)Lf) + 100.0;
            double never;
            if ((rc = real_integrand(&x, t_full, &v, &never)))
                goto done;
            /* threshold: the flat model's 1e-30 (one block: computed
             * exactly), above the FFT's noise floor for several blocks */
            if (never > (B == 1 ? 1e-25 : 1e-12)) {
                out->exact_real = 1.0;
                out->messages_per_cycle_real = INFINITY;
                rc = RBF_OK;
                goto done;
            }
            if ((rc = time_window_lo(&x, (double)v, t_full, &t_lo)))
                goto done;
            t_hi = t_lo + 1.0; /* integrate_on extends it */
        } else if (rc) {
            goto done;
        }
        double t_safe = time_safe(B, 1.0, (double)v);
        if (t_safe > t_lo)
            t_safe = t_lo;
        if ((rc = integrate(&x, t_safe, t_lo, 4, real_integrand, &v, &acc0, 1)))
            goto done;
        if ((rc = integrate_on(&x, t_lo, t_hi, panels, real_integrand, &v, &acc, 1)))
            goto done;
        double ET = (double)B * (t_safe + acc0 + acc);
        double efp = ET - (double)N;
        if (efp < 0.0)
            efp = 0.0;
        out->messages_per_cycle_real = (double)N + efp;
        out->exact_real = model_clamp01(efp / ((double)N + efp));
    }
    rc = RBF_OK;
done:
    rbf__free(bw.w);
    ctx_free(&x);
    return rc;
}

int rbf_model_blocked_nbounded(const rbf_model_params *p, uint64_t messages,
                               rbf_model_blocked_n_result *out)
{
    return rbf__model_blocked_n_w(p, RBF_MODEL_BLOCK_BITS, messages, RBF__BLK_AUTO, 0, out);
}

/* ---- sigma-bounded, one and two phases ---- */

typedef struct sig_arg {
    uint64_t sigma;
    int two_phase;
    const double *tails; /* (W+1) k: P(d > m | b) */
} sig_arg;

/* vals: 0 P(G <= sigma), 1 P(G <= sigma-1), 2 E[rho(b_1) 1{G <= sigma}],
 * 3 crossing X, 4 frozen numerator T1 + (B-1) T2. */
static int sigma_integrand(blk_ctx *x, double t, const void *argp, double *vals)
{
    const sig_arg *arg = argp;
    const unsigned W = x->ch.W, k = x->ch.k;
    const int64_t S = (int64_t)arg->sigma;
    int rc = block_law(x, t);
    if (rc)
        return rc;
    for (unsigned b = 0; b <= W; b++)
        x->z[b] = x->y[b] * x->ch.rho[b];
    sdist sy, sz;
    if ((rc = others(x, arg->two_phase ? x->z : NULL, &sy, &sz)))
        return rc;
    model_sum s[5];
    for (int j = 0; j < 5; j++)
        msum_init(&s[j]);
    /* cdf[j] = P(others <= S - j): c1 at b is cdf[b], c0 is cdf[b + 1] */
    double *cdf = x->cdf;
    for (unsigned j = 0; j <= W + 1; j++)
        cdf[j] = j == 0 || x->y[j - 1] != 0.0 || (j <= W && x->y[j] != 0.0)
                     ? sd_cdf(&sy, S - (int64_t)j)
                     : 0.0;
    for (unsigned b = 0; b <= W; b++) {
        double yb = x->y[b];
        if (yb == 0.0)
            continue;
        double c1 = cdf[b], c0 = cdf[b + 1];
        msum_add(&s[0], yb * c1);
        msum_add(&s[1], yb * c0);
        msum_add(&s[2], yb * x->ch.rho[b] * c1);
        if (arg->two_phase) {
            double cr = 0.0, t2 = 0.0;
            for (unsigned m = 0; m < k; m++) {
                double tl = arg->tails[(size_t)b * k + m];
                if (tl == 0.0)
                    continue;
                int64_t at = S - (int64_t)b - (int64_t)m;
                cr += tl * sd_pmf(&sy, at);
                if (x->B >= 2)
                    t2 += tl * sd_pmf(&sz, at);
            }
            msum_add(&s[3], yb * cr);
            msum_add(&s[4], yb * x->ch.rho[b] * cr + (double)(x->B - 1) * yb * t2);
        }
    }
    for (int j = 0; j < 5; j++)
        vals[j] = msum_get(&s[j]);
    return RBF_OK;
}

int rbf__model_blocked_sigma_w(const rbf_model_params *p, unsigned W, uint64_t sigma,
                               int two_phase, int mode, unsigned panels,
                               rbf_model_blocked_two_phase_result *out)
{
    int rc = check_blocked(p, W);
    if (rc)
        return rc;
    if (!out || sigma < 1 || sigma >= p->bits || ((p->recycle == RBF_RETAINING) && sigma < p->hashes))
        return RBF_EINVAL;
    if (!panels)
        panels = 8;
    const uint64_t B = p->bits / W;
    const unsigned k = p->hashes;
    blk_ctx x;
    if ((rc = ctx_init(&x, p, W, B, mode, 0, sigma + 4 * B > p->bits)))
        return rc;
    memset(out, 0, sizeof *out);
    out->exact_convolution = x.exact;
    double *tails = NULL;
    if (two_phase) {
        tails = rbf__calloc(((size_t)W + 1) * k, sizeof *tails);
        if (!tails) {
            rc = RBF_ENOMEM;
            goto done;
        }
        for (unsigned b = 0; b <= W; b++) {
            const double *T = x.ch.T + (size_t)b * (k + 1);
            double acc = 0.0;
            for (unsigned m = k; m-- > 0;) {
                acc += T[m + 1];
                /* the crossing needs the message to pass sigma: d > m */
                tails[(size_t)b * k + m] = acc;
            }
        }
    }
    {
        sig_arg arg = {sigma, two_phase, tails};
        double t_lo, t_hi, acc[5], acc0[5];
        unsigned nv = two_phase ? 5u : 3u;
        rc = time_window(&x, (double)(sigma - 1), (double)sigma, &t_lo, &t_hi);
        if (rc == 1) {
            rc = time_window_lo(&x, (double)(sigma - 1), t_hi, &t_lo);
            t_hi = t_lo + 1.0; /* integrate_on extends it */
        }
        if (rc)
            goto done;
        double t_safe = time_safe(B, (double)k, (double)(sigma - 1));
        if (t_safe > t_lo)
            t_safe = t_lo;
        if ((rc = integrate(&x, t_safe, t_lo, 4, sigma_integrand, &arg, acc0, nv)))
            goto done;
        if ((rc = integrate_on(&x, t_lo, t_hi, panels, sigma_integrand, &arg, acc, nv)))
            goto done;
        for (unsigned j = 0; j < nv; j++)
            acc[j] += acc0[j];
        t_lo = t_safe;
        /* [0, t_lo]: the threshold is not reached; int E[rho] = sum_L a_L P(Pois(t_lo) > L) */
        if ((rc = pois_window(&x.pw, t_lo)))
            goto done;
        if ((rc = chain_extend(&x.ch, x.pw.lo + x.pw.n - 1)))
            goto done;
        model_sum sfp;
        msum_init(&sfp);
        for (uint64_t L = 0; L < x.pw.lo; L++)
            msum_add(&sfp, x.ch.a[L]);
        double tail = 0.0;
        for (size_t i = x.pw.n; i-- > 0;) {
            msum_add(&sfp, tail * x.ch.a[x.pw.lo + i]);
            tail += x.pw.w[i];
        }
        const double Bd = (double)B;
        double arrivals = Bd * (t_lo + acc[0]);
        double en0 = Bd * (t_lo + acc[1]);
        double efp = Bd * (msum_get(&sfp) + acc[2]);
        double den = (p->recycle == RBF_RETAINING) ? arrivals - 1.0 : arrivals;
        out->fp_active = den > 0.0 ? model_clamp01(efp / den) : 0.0;
        out->expected_messages = en0;
        out->messages_per_cycle = den;
        if (two_phase) {
            double cross = Bd * acc[3];
            out->fp_frozen = cross > 0.0 ? model_clamp01(acc[4] / cross) : 0.0;
            out->fp = model_clamp01(out->fp_active + out->fp_frozen * (1.0 - out->fp_active));
        } else {
            out->fp = out->fp_active;
        }
    }
    rc = RBF_OK;
done:
    rbf__free(tails);
    ctx_free(&x);
    return rc;
}

int rbf_model_blocked_sigma(const rbf_model_params *p, uint64_t sigma,
                            rbf_model_blocked_sigma_result *out)
{
    if (!out)
        return RBF_EINVAL;
    rbf_model_blocked_two_phase_result r;
    int rc = rbf__model_blocked_sigma_w(p, RBF_MODEL_BLOCK_BITS, sigma, 0, RBF__BLK_AUTO, 0, &r);
    if (rc)
        return rc;
    out->fp = r.fp;
    out->expected_messages = r.expected_messages;
    out->messages_per_cycle = r.messages_per_cycle;
    out->exact_convolution = r.exact_convolution;
    return RBF_OK;
}

int rbf_model_blocked_two_phase(const rbf_model_params *p, uint64_t sigma,
                                rbf_model_blocked_two_phase_result *out)
{
    return rbf__model_blocked_sigma_w(p, RBF_MODEL_BLOCK_BITS, sigma, 1, RBF__BLK_AUTO, 0, out);
}

/* ---- the mean-field limit (the planner's first guess) ----
 *
 * As B grows the block states at a time t become a law of large numbers:
 * the global set-bit count is B mu(t) (mu the mean bits of one block at
 * Poisson load t) and the rate of a new message is r(t) = E[rho_W(b_t)]
 * (src/plan/plan_blocked.c uses it). */

struct rbf__blk_mf {
    rbf_model_params p;
    blk_ctx x; /* the block chain and a Poisson window */
};

int rbf__blk_mf_new(const rbf_model_params *p, rbf__blk_mf **out)
{
    rbf__blk_mf *m = rbf__malloc(sizeof *m);
    if (!m)
        return RBF_ENOMEM;
    m->p = *p;
    int rc = ctx_init(&m->x, &m->p, RBF_MODEL_BLOCK_BITS, 1, RBF__BLK_EDGEWORTH, 0, 0);
    if (rc) {
        rbf__free(m);
        return rc;
    }
    *out = m;
    return RBF_OK;
}

void rbf__blk_mf_free(rbf__blk_mf *m)
{
    if (!m)
        return;
    ctx_free(&m->x);
    rbf__free(m);
}

/* mu(t) and int_0^t r. */
static int mf_at(blk_ctx *x, double t, double *mu, double *irho)
{
    int rc = pois_window(&x->pw, t);
    if (rc)
        return rc;
    if ((rc = chain_extend(&x->ch, x->pw.lo + x->pw.n - 1)))
        return rc;
    model_sum sm, sr;
    msum_init(&sm);
    msum_init(&sr);
    for (uint64_t L = 0; L < x->pw.lo; L++)
        msum_add(&sr, x->ch.a[L]);
    double tail = 0.0;
    for (size_t i = x->pw.n; i-- > 0;) {
        size_t L = (size_t)x->pw.lo + i;
        msum_add(&sr, tail * x->ch.a[L]);
        msum_add(&sm, x->pw.w[i] * x->ch.mb[L]);
        tail += x->pw.w[i];
    }
    *mu = msum_get(&sm);
    *irho = msum_get(&sr);
    return RBF_OK;
}

#define MF_TMAX 30000.0 /* loads the chain follows (below BLK_LCAP) */

/* The t where g(t) = v for g increasing: which = 0 F(t), 1 mu(t).
 * Returns 1 (and *t = MF_TMAX) when g stays below v. */
static int mf_solve(blk_ctx *x, int which, double v, double *t)
{
    double a = 0.0, b = 1.0, mu, ir;
    int rc;
    for (;;) {
        if ((rc = mf_at(x, b, &mu, &ir)))
            return rc;
        double g = which ? mu : ir / b;
        if (g > v)
            break;
        a = b;
        if (b >= MF_TMAX) {
            *t = MF_TMAX;
            return 1;
        }
        b = b * 2.0 > MF_TMAX ? MF_TMAX : b * 2.0;
    }
    for (int it = 0; it < 200 && b - a > 1e-10 * b; it++) {
        double m = 0.5 * (a + b);
        if ((rc = mf_at(x, m, &mu, &ir)))
            return rc;
        double g = which ? mu : (m > 0.0 ? ir / m : 0.0);
        if (g > v)
            b = m;
        else
            a = m;
    }
    *t = 0.5 * (a + b);
    return RBF_OK;
}

int rbf__blk_mf_at(rbf__blk_mf *m, double t, double *mu, double *irho)
{
    return mf_at(&m->x, t, mu, irho);
}

int rbf__blk_mf_solve(rbf__blk_mf *m, int which, double v, double *t)
{
    return mf_solve(&m->x, which, v, t);
}
