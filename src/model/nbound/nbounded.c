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

#include "model_nbound.h"
#include "rbf_alloc.h"

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
     * 1 - rho, and the hash factors hx and hmove: colliding, b/M and
     * (M - b)/M, one row; non-colliding, xrows = k rows, row q for the
     * q-th hash of a message ((b - q)/(M - q) and (M - b)/(M - q)), or
     * xrows = 0 where those rows would pass rbf__nb_qtab_max (hash_step then
     * divides as it goes). */
    uint64_t cb;
    size_t ccap, xcap;
    unsigned xrows;
    double *crho, *comr, *cx, *cy;
    double *crw; /* rho / (1 - rho), 0 on a full filter (bdist_mean_rho_k) */
    /* The heavy-load chain (bdist_message_k): the whole message's kernel
     * per level over [kb, kb + kcap), row r (d = r new bits) at
     * kt[r * (kcap + 2k) + k + b - kb] between k zeros either side;
     * conditioned on d >= 1 when kcond. */
    uint64_t kb;
    size_t kcap;
    double *kt;
    int kcond;
    double *kpad; /* the window padded with zeros (bdist_message_k) */
    size_t kpcap;
} bdist;

#define BDIST_TINY 1e-30
/* At most this many doubles in each of the non-colliding factor tables
 * (cx, cy: 16 MiB each); tests lower it to compare the two paths */
size_t rbf__nb_qtab_max = (size_t)1 << 21;

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
    rbf__free(d->crw);
    rbf__free(d->kt);
    rbf__free(d->kpad);
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
        if (!(a = rbf__realloc(d->crw, want * sizeof *a)))
            return RBF_ENOMEM;
        d->crw = a;
        d->ccap = want;
    }
    unsigned rows = 1;
    if (d->nc)
        rows = (size_t)d->hashes * d->ccap <= rbf__nb_qtab_max ? d->hashes : 0;
    if ((size_t)rows * d->ccap > d->xcap) {
        size_t n = (size_t)rows * d->ccap;
        double *a = rbf__realloc(d->cx, n * sizeof *a);
        if (!a)
            return RBF_ENOMEM;
        d->cx = a;
        if (!(a = rbf__realloc(d->cy, n * sizeof *a)))
            return RBF_ENOMEM;
        d->cy = a;
        d->xcap = n;
    }
    d->xrows = rows;
    d->cb = d->lo;
    for (size_t i = 0; i < d->ccap; i++) {
        uint64_t b = d->cb + i;
        if (b > d->bits)
            b = d->bits; /* never read past M */
        d->crho[i] = rbf__model_rho(d->bits, d->hashes, d->nc, b);
        d->comr[i] = rbf__model_one_minus_rho(d->bits, d->hashes, d->nc, b);
        for (unsigned q = 0; q < rows; q++) {
            d->cx[q * d->ccap + i] = hx(d, q, b);
            d->cy[q * d->ccap + i] = hmove(d, q, b);
        }
        d->crw[i] = d->comr[i] > 0.0 ? d->crho[i] / d->comr[i] : 0.0;
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

/* The cached factors hx and hmove of hash q, indexed from lo (needs
 * d->xrows: row 0 colliding, where they do not depend on q; row q
 * non-colliding) */
static inline void hash_factors(const bdist *d, unsigned q, const double **x, const double **y)
{
    const size_t at = (d->nc ? q * d->ccap : 0) + (size_t)(d->lo - d->cb);
    *x = d->cx + at;
    *y = d->cy + at;
}

/* One hash (phase q) on array a over [lo, hi] -> [lo, hi+1] (capped at M). */
static void hash_step(const bdist *d, double *a, uint64_t hi, unsigned q)
{
    if (d->xrows) {
        /* the factors from the cache (row 0 colliding, where they do not
         * depend on q; row q non-colliding); the same products and sums
         * as below (a is zero past hi) */
        uint64_t top = hi < d->bits ? hi + 1 : hi;
        const double *x, *y;
        hash_factors(d, q, &x, &y);
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
    for (unsigned q = 0; q < d->hashes; q++) {
        /* p: ordinary step; then add the aux messages that now move */
        uint64_t top = hi < d->bits ? hi + 1 : hi;
        hash_step(d, d->p, hi, q);
        if (d->xrows) { /* the factors from the cache, as hash_step */
            const double *x, *y;
            hash_factors(d, q, &x, &y);
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

/* Where nbounded_core steps by the kernel (tests lower it). */
double rbf__nb_heavy_chain = RBF__NB_AUTO_CHAIN;
/* Tests and benchmarks: skip the fast paths, always propagate. */
int rbf__nb_chain_only = 0;

/* ---- the heavy-load chain: a message in one pass.
 *
 * The hash-by-hash steps above cost about 2k (unconditioned) or 4k
 * (conditioned) multiply-adds per level and message, over 2k to 3k passes
 * through the window.  A whole message is a band of k + 1 transitions per
 * level, K(b, d) = P(d new bits | b set), which does not change from one
 * message to the next: computed once per level (the same k hash steps on
 * a point mass, O(k^2)) and kept while the window moves through, a
 * message costs k + 1 multiply-adds per level, in one pass that sums
 * each output over the k + 1 rows in registers (kernel_apply).  The same law, summed in another
 * order: the values agree with the hash-by-hash chain to rounding
 * (test_model_nexact checks 1e-12).  Used where the chain is heavy
 * (nbounded_core); --method exact keeps the hash-by-hash chain. */

/* K(b, .) for one level: v[0..k]. */
static void kernel_level(const bdist *d, uint64_t b, double *v)
{
    const unsigned k = d->hashes;
    v[0] = 1.0;
    for (unsigned j = 1; j <= k; j++)
        v[j] = 0.0;
    for (unsigned q = 0; q < k; q++) {
        for (unsigned j = q + 1; j >= 1; j--)
            v[j] = v[j] * hx(d, q, b + j) + v[j - 1] * hmove(d, q, b + j - 1);
        v[0] *= hx(d, q, b);
    }
}

/* The kernel table covers [lo, hi] (levels never pass M): rebuilt twice as
 * wide as needed when the window leaves it, keeping the levels it had, so
 * every level's kernel is computed once.  Row r holds k zeros on either
 * side (kernel_apply reads k levels past each end of the window). */
static int bdist_kernel(bdist *d, int cond)
{
    const unsigned k = d->hashes;
    if (d->kt && d->kcond == cond && d->lo >= d->kb && d->hi < d->kb + d->kcap)
        return RBF_OK;
    size_t ncap = 2 * (size_t)(d->hi - d->lo + 1) + 64 + 8 * (size_t)k;
    if (ncap < d->kcap)
        ncap = d->kcap;
    const size_t nstride = ncap + 2 * (size_t)k, ostride = d->kcap + 2 * (size_t)k;
    double *nt = rbf__calloc((size_t)(k + 1) * nstride, sizeof *nt);
    if (!nt)
        return RBF_ENOMEM;
    double v[MODEL_MAX_HASHES + 1];
    for (size_t i = 0; i < ncap; i++) {
        uint64_t b = d->lo + i;
        if (d->kt && d->kcond == cond && b >= d->kb && b < d->kb + d->kcap) {
            for (unsigned r = 0; r <= k; r++)
                nt[r * nstride + k + i] = d->kt[r * ostride + k + (b - d->kb)];
            continue;
        }
        if (b > d->bits) /* never reached: zeros */
            continue;
        kernel_level(d, b, v);
        if (cond) {
            /* conditioned on setting a bit: d = 0 drops out, the rest
             * divided by 1 - rho(b) (the value the hash-by-hash chain
             * uses; 0 on a full filter, which carries no mass here) */
            double om = rbf__model_one_minus_rho(d->bits, d->hashes, d->nc, b);
            v[0] = 0.0;
            for (unsigned r = 1; r <= k; r++)
                v[r] = om > 0.0 ? v[r] / om : 0.0;
        }
        for (unsigned r = 0; r <= k; r++)
            nt[r * nstride + k + i] = v[r];
    }
    rbf__free(d->kt);
    d->kt = nt;
    d->kb = d->lo;
    d->kcap = ncap;
    d->kcond = cond;
    return RBF_OK;
}

/* out[j] = sum_{r = r0..k} a[j - r] t_r[j - r], j < n + k, where a has k
 * zeros before and after its n values and t_r = t + r stride (k zeros of
 * pad on either side too).  KA outputs at a time, each summed over r in
 * registers and stored once; KA independent sums hide the adder's latency,
 * and the compiler turns the lanes into vector code at -O2. */
#define KA 16
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
/* a second copy for AVX2 + FMA processors, picked at load time */
#define RBF_NB_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define RBF_NB_CLONES
#endif
RBF_NB_CLONES
static void kernel_apply(double *restrict out, const double *restrict a, const double *restrict t,
                         size_t stride, size_t n, unsigned r0, unsigned k)
{
    const size_t m = n + k;
    size_t j = 0;
    for (; j + KA <= m; j += KA) {
        double s[KA] = {0};
        for (unsigned r = r0; r <= k; r++) {
            const double *x = a + j - r, *y = t + r * stride + j - r;
#pragma GCC unroll 16
            for (unsigned l = 0; l < KA; l++)
                s[l] += x[l] * y[l];
        }
#pragma GCC unroll 16
        for (unsigned l = 0; l < KA; l++)
            out[j + l] = s[l];
    }
    for (; j < m; j++) {
        double s0 = 0;
        for (unsigned r = r0; r <= k; r++)
            s0 += a[j - r] * t[r * stride + j - r];
        out[j] = s0;
    }
}

/* One message (cond: one bit-setting message) by the kernel table. */
static int bdist_message_k(bdist *d, int cond)
{
    if (bdist_reserve(d) || bdist_cache(d) || bdist_kernel(d, cond))
        return RBF_ENOMEM;
    const unsigned k = d->hashes;
    const size_t n = (size_t)(d->hi - d->lo) + 1;
    if (d->kpcap < n + 2 * (size_t)k) {
        size_t c = 2 * (n + 2 * (size_t)k);
        double *np = rbf__realloc(d->kpad, c * sizeof *np);
        if (!np)
            return RBF_ENOMEM;
        d->kpad = np;
        d->kpcap = c;
    }
    /* the window with k zeros either side */
    double *a = d->kpad;
    memset(a, 0, k * sizeof *a);
    memcpy(a + k, d->p, n * sizeof *a);
    memset(a + k + n, 0, k * sizeof *a);
    const size_t stride = d->kcap + 2 * (size_t)k;
    /* level lo + j - r moves to lo + j; levels past M have K = 0 */
    kernel_apply(d->p, a + k, d->kt + k + (d->lo - d->kb), stride, n, cond ? 1u : 0u, k);
    d->hi = d->hi + k < d->bits ? d->hi + k : d->bits;
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

/* bdist_mean_rho for the heavy chain: plain sums in four lanes (positive
 * terms: relative error below W ulps, W the window) that the compiler
 * vectorises, rho / (1 - rho) from the level cache. */
RBF_NB_CLONES
static double bdist_mean_rho_k(const bdist *d, double *w)
{
    const double *P = d->p, *R = d->crho + (d->lo - d->cb), *Q = d->crw + (d->lo - d->cb);
    size_t n = (size_t)(d->hi - d->lo) + 1;
    int inf = 0;
    if (d->hi >= d->bits) { /* a full filter: rho = 1 */
        inf = P[n - 1] > 0.0;
        n--;
    }
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0, t0 = 0, t1 = 0, t2 = 0, t3 = 0;
    size_t o = 0;
    for (; o + 4 <= n; o += 4) {
        s0 += P[o] * R[o];
        s1 += P[o + 1] * R[o + 1];
        s2 += P[o + 2] * R[o + 2];
        s3 += P[o + 3] * R[o + 3];
        t0 += P[o] * Q[o];
        t1 += P[o + 1] * Q[o + 1];
        t2 += P[o + 2] * Q[o + 2];
        t3 += P[o + 3] * Q[o + 3];
    }
    for (; o < n; o++) {
        s0 += P[o] * R[o];
        t0 += P[o] * Q[o];
    }
    double s = (s0 + s1) + (s2 + s3);
    if (d->hi >= d->bits)
        s += P[n] * R[n];
    if (w)
        *w = inf ? INFINITY : (t0 + t1) + (t2 + t3);
    return model_clamp01(s);
}

/* The core: rows n = 1..N of every measure at once (each is a prefix
 * quantity).  If `curve` is not NULL it receives N rows; `last` receives
 * row N.  Progress units: one per message of each of the two
 * propagations. */
/* The paper's N-bounded rates f_w, f_o, f_a at N (last) or at every
 * n <= N (curve): a scan of f_w, or Euler-Maclaurin for one value at
 * large N. */
static int nb_bounds(const rbf_model_params *p, uint64_t N, rbf_model_n_result *curve,
                     rbf_model_n_result *last)
{
    const uint64_t M = p->bits;
    const unsigned k = p->hashes;
    rbf_model_n_result row;
    memset(&row, 0, sizeof row);
    /* f_w(n) is the rate of the message after n */
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
    return RBF_OK;
}

/* The real user's rates by the propagated chain: steps conditioned on
 * setting a bit (heavy: a message at a time by its kernel table). */
static int nb_real_chain(const rbf_model_params *p, uint64_t N, int heavy,
                         rbf_model_n_result *curve, rbf_model_n_result *last)
{
    const uint64_t M = p->bits;
    const unsigned k = p->hashes;
    double (*const mean_rho)(const bdist *, double *) = heavy ? bdist_mean_rho_k : bdist_mean_rho;
    bdist d;
    int rc;
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
            (void)mean_rho(&d, &w);
            if (isinf(w))
                inf = 1; /* mass on a full filter: every new message is a false positive */
            else
                msum_add(&sfp, w);
        }
        double E = msum_get(&sfp);
        double v = inf ? 1.0 : model_clamp01(E / ((double)(c + 1) + E));
        if (!inf && (rc = heavy ? bdist_message_k(&d, 1) : bdist_message_cond(&d)) != RBF_OK) {
            bdist_free(&d);
            return rc;
        }
        /* the next row's first call reads the same law: only where used */
        double rw = inf ? 1.0 : curve || c + 1 == N ? mean_rho(&d, NULL) : 0.0;
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
    /* the paper's bounds */
    if ((rc = nb_bounds(p, N, curve, last)) != RBF_OK)
        return rc;

    /* exact worst and oracle: one value above RBF_MODEL_AUTO_EXACT_BITS
     * bits or messages, or where the propagation would cost more than
     * about a second (N k sqrt(M) > RBF__NB_AUTO_CHAIN) (auto), or always
     * (asymptotic) by the fast method (nexact.c); the propagation below
     * when its error estimate says no.
     * Above 2^22 messages the propagation costs N k W steps, seconds to
     * hours, and past saturation the fast method's closed form is exact */
    /* Heavy chains (one value, auto or fast, N k sqrt(M) above the
     * threshold) step a message at a time by its kernel table */
    const double chain_cost = (double)N * (double)k * sqrt((double)M);
    const int heavy = !curve && p->method != RBF_MODEL_EXACT && chain_cost > rbf__nb_heavy_chain;
    double (*const mean_rho)(const bdist *, double *) = heavy ? bdist_mean_rho_k : bdist_mean_rho;
    bdist d;
    if (!curve && !rbf__nb_chain_only && (rbf__model_use_asym(p) ||
                   (p->method == RBF_MODEL_AUTO &&
                    (N > RBF_MODEL_AUTO_EXACT_BITS || chain_cost > RBF__NB_AUTO_CHAIN)))) {
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
            /* any load: the potentials of the fill chain (nreal.c) */
            double rr, rw;
            const int force = chain_cost > RBF__NB_CHAIN_MAX ? 2 : chain_cost > RBF__NB_CHAIN_SOFT;
            rc = rbf__nreal_fast_ex(p, N, force, &rr, NULL, &rw);
            if (rc < 0)
                return rc;
            if (rc == RBF_OK) {
                last->exact_real = rr;
                last->exact_real_worst = rw;
                return RBF_OK;
            }
            return nb_real_chain(p, N, heavy, curve, last);
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
        if ((rc = heavy ? bdist_message_k(&d, 0) : bdist_message(&d)) != RBF_OK) {
            bdist_free(&d);
            return rc;
        }
        double e = mean_rho(&d, NULL); /* E[rho(B_n)] */
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

    return nb_real_chain(p, N, heavy, curve, last);
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
