/*
 * chain.c -- one block of the blocked layout: the joint chain of (f, b),
 * the false positives and the set bits of a block after L messages, kept
 * load by load as far as needed; and the Poisson and binomial weights of
 * the loads on the window where they matter (docs/models.md, "Blocked
 * layout"; the models themselves: blocked.c).
 */
#include <stdlib.h>
#include <string.h>

#include "blk_internal.h"
#include "rbf_alloc.h"

/* ------------------------------------------------------------------ */
/* One block: the joint chain of (f, b) after L messages.              */


/* hash q at lv set bits of a block of W, lv < W, on a clear bit: the
 * complement of rbf__step_stay, rounded so (rbf__step_law) */
static double blk_move(uint64_t W, int nc, unsigned q, uint64_t lv)
{
    return 1.0 - rbf__step_stay(W, nc, q, lv);
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

int rbf__blk_chain_init(blk_chain *c, unsigned W, unsigned k, int nc, int need_f)
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
        rbf__step_law(W, k, nc, b, rbf__step_stay, blk_move, c->T + (size_t)b * (k + 1));
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

void rbf__blk_chain_destroy(blk_chain *c)
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

int rbf__blk_chain_extend(blk_chain *c, uint64_t L)
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

int rbf__blk_pois_window(wwin *ww, double t)
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

int rbf__blk_binom_window(wwin *ww, uint64_t n, uint64_t B)
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

