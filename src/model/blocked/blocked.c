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
#include <stdlib.h>
#include <string.h>

#include "blk_internal.h"
#include "rbf_alloc.h"

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
    rbf__blk_chain_destroy(&x->ch);
    rbf__free(x->pw.w);
    rbf__free(x->y);
    rbf__free(x->z);
    rbf__blk_fftws_free(&x->ws);
}

/* Mean and variance of the block variable at time t (O(window)). */
static int block_moments(blk_ctx *x, double t, double *mean, double *var)
{
    int rc = rbf__blk_pois_window(&x->pw, t);
    if (rc)
        return rc;
    if ((rc = rbf__blk_chain_extend(&x->ch, x->pw.lo + x->pw.n - 1)))
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
    int rc = rbf__blk_pois_window(&x->pw, t);
    if (rc)
        return rc;
    if ((rc = rbf__blk_chain_extend(&x->ch, x->pw.lo + x->pw.n - 1)))
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
        return rbf__blk_sd_exact(&x->ws, x->y, z, W, m, sy, sz);
    rbf__blk_sd_edgeworth(sy, x->y, m, NULL, W);
    if (z && sz)
        rbf__blk_sd_edgeworth(sz, x->y, m - 1, z, W);
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
    int rc = rbf__blk_chain_init(&x->ch, W, p->hashes, (p->hashing == RBF_NON_COLLIDING), use_c);
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
    if ((rc = rbf__blk_binom_window(&bw, N, B)))
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
            if ((rc = rbf__blk_chain_extend(&x.ch, Lf)))
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
    if ((rc = rbf__blk_chain_extend(&x.ch, bw.lo + bw.n - 1)))
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
                if ((rc = rbf__blk_chain_extend(&x.ch, Lf)))
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
        if ((rc = rbf__blk_pois_window(&x.pw, t_lo)))
            goto done;
        if ((rc = rbf__blk_chain_extend(&x.ch, x.pw.lo + x.pw.n - 1)))
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
    int rc = rbf__blk_pois_window(&x->pw, t);
    if (rc)
        return rc;
    if ((rc = rbf__blk_chain_extend(&x->ch, x->pw.lo + x->pw.n - 1)))
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
