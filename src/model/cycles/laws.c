/*
 * laws.c -- the cycle-length laws P(L = n) the cycle object is built from
 * (cycles.c): sigma-bounded cycles by the fill chain stopped at the
 * threshold, and the real user's N-bounded cycles (marginal and joint
 * with the false positives).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_cycles.h"
#include "rbf_alloc.h"

/* The next tick's window of levels with mass, [nlo, nhi] (nlo =
 * UINT64_MAX: none, and the window left empty, lo > hi).  Returns 0 when
 * no level has mass any more. */
static int window_next(uint64_t *lo, uint64_t *hi, uint64_t nlo, uint64_t nhi)
{
    if (nlo == UINT64_MAX) {
        *lo = 1;
        *hi = 0;
        return 0;
    }
    *lo = nlo;
    *hi = nhi;
    return 1;
}

/* ---- sigma-bounded cycles */

typedef struct {
    double *v;
    uint64_t lo, hi; /* window with mass; lo > hi when empty */
} cyc_row;

/* The k + 1 rows of levels b..b+k (row b % (k + 1)), each nmax + 2
 * entries, the first tick at level 0; pmf and phi zeroed.  NULL: out of
 * memory. */
static cyc_row *sig_ring_new(unsigned k, uint64_t nmax, double *pmf, double *phi)
{
    cyc_row *ring = rbf__calloc(k + 1, sizeof *ring);
    if (!ring)
        return NULL;
    for (unsigned r = 0; r <= k; r++) {
        ring[r].v = rbf__calloc(nmax + 2, sizeof *ring[r].v);
        if (!ring[r].v) {
            for (unsigned u = 0; u < r; u++)
                rbf__free(ring[u].v);
            rbf__free(ring);
            return NULL;
        }
        ring[r].lo = 1;
        ring[r].hi = 0;
    }
    memset(pmf, 0, (nmax + 1) * sizeof *pmf);
    memset(phi, 0, (nmax + 2) * sizeof *phi);
    ring[0].v[1] = 1.0;
    ring[0].lo = ring[0].hi = 1;
    return ring;
}

static void sig_ring_free(cyc_row *ring, unsigned k)
{
    if (ring)
        for (unsigned r = 0; r <= k; r++)
            rbf__free(ring[r].v);
    rbf__free(ring);
}

/* The plain form, a level at a time: the chain, then phi, then the k
 * pushes, each its own loop.  The reference rbf__cyc_sigma_pmf is checked
 * against (test_sigma_fused_vs_plain in test_fn_model), value for value. */
int rbf__cyc_sigma_pmf_plain(const rbf_model_params *p, uint64_t sigma, uint64_t nmax,
                             double *pmf, double *phi, double *rend, double *lost)
{
    const unsigned k = p->hashes;
    const uint64_t M = p->bits;
    cyc_row *ring = sig_ring_new(k, nmax, pmf, phi);
    double *tau = rbf__malloc((k + 1) * sizeof *tau);
    double *a = rbf__malloc((nmax + 2) * sizeof *a);
    int rc = RBF_OK;
    if (!ring || !tau || !a) {
        rc = RBF_ENOMEM;
        goto out;
    }
    model_sum lostsum, endsum;
    msum_init(&lostsum);
    msum_init(&endsum);
    for (uint64_t b = 0; b <= sigma; b++) {
        cyc_row *in = &ring[b % (k + 1)];
        if ((b & 4095) == 0 && b && model_progress(p, b, sigma + 1)) {
            rc = RBF_ECANCELED;
            goto out;
        }
        if (in->lo > in->hi)
            continue;
        rbf__model_step_dist(M, k, (p->hashing == RBF_NON_COLLIDING), b, tau);
        const double stay = tau[0];
        /* A_b(n) = stay A_b(n-1) + in(n) */
        uint64_t lo = in->lo, hi = in->hi, n;
        double prev = 0.0;
        for (n = lo; n <= nmax; n++) {
            double x = stay * prev + (n <= hi ? in->v[n] : 0.0);
            a[n] = x;
            prev = x;
            if (n >= hi && x < CYC_TINY)
                break;
        }
        if (n > nmax) {
            /* the stay chain ran past nmax: what it would still emit is lost */
            msum_add(&lostsum, stay < 1.0 ? prev * stay / (1.0 - stay) : prev);
            n = nmax;
        }
        uint64_t ahi = n;
        /* trim the trailing tiny values too (the inflow's upper tail: left,
         * it widens the window by a message at every level) */
        while (ahi > lo && a[ahi] < CYC_TINY)
            ahi--;
        /* the n-th tick at level b is a false positive with tau(b, 0) */
        if (stay > 0.0)
            for (uint64_t m = lo; m <= ahi; m++)
                phi[m] += a[m] * stay;
        /* trim the leading tiny values */
        while (lo < ahi && a[lo] < CYC_TINY)
            lo++;
        /* clear the consumed inflow row */
        memset(in->v + in->lo, 0, (in->hi - in->lo + 1) * sizeof *in->v);
        in->lo = 1;
        in->hi = 0;
        /* push */
        for (unsigned d = 1; d <= k; d++) {
            double t = tau[d];
            if (t <= 0.0)
                continue;
            if (b + d > sigma) {
                double e = 0.0;
                for (uint64_t m = lo; m <= ahi; m++) {
                    pmf[m] += a[m] * t;
                    e += a[m] * t;
                }
                msum_add(&endsum, e * stay); /* the frozen filter: level b */
            } else {
                cyc_row *to = &ring[(b + d) % (k + 1)];
                uint64_t top = ahi + 1;
                if (top > nmax) {
                    msum_add(&lostsum, a[nmax] * t);
                    top = nmax;
                }
                for (uint64_t m = lo; m + 1 <= top; m++)
                    to->v[m + 1] += a[m] * t;
                if (lo + 1 <= top) {
                    if (to->lo > to->hi) {
                        to->lo = lo + 1;
                        to->hi = top;
                    } else {
                        if (lo + 1 < to->lo)
                            to->lo = lo + 1;
                        if (top > to->hi)
                            to->hi = top;
                    }
                }
            }
        }
    }
    *lost = msum_get(&lostsum);
    *rend = msum_get(&endsum);
out:
    sig_ring_free(ring, k);
    rbf__free(tau);
    rbf__free(a);
    return rc;
}

/* The fused form.  A level's chain A_b(n) = stay A_b(n-1) + in(n) is a
 * dependency chain (a multiply and an add of latency each step), while
 * its k pushes and its phi are independent work: here they are put off
 * to the next level and done inside its chain, at the step that reads
 * what they add.  Level b's pushes at m go to rows b+1..b+k at m + 1 and
 * the next chain (level b+1) reads in(m + 1) at step m + 1, so each push
 * is done at that step just before the read.  Every cell still gets its
 * terms in the same order (ascending source level; within a level,
 * ascending d), every sum runs over m in ascending order, and the
 * compensated sums (lost, end) take their terms in the same order, so
 * the values are those of the plain form to the last bit. */
typedef struct {
    int on;
    const double *a; /* the level's chain values */
    uint64_t lo0, lo, hi; /* phi over [lo0, hi], pushes over [lo, hi] */
    double stay;
    unsigned nrow, nend;
    double *rv[MODEL_MAX_HASHES]; /* row pushes: rv[i][m + 1] += a[m] t, m <= rhi[i] */
    double rt[MODEL_MAX_HASHES];
    uint64_t rhi[MODEL_MAX_HASHES];
    unsigned nlost;
    double lostv[MODEL_MAX_HASHES]; /* the rows' lost tails, in d order */
    double et[MODEL_MAX_HASHES], e[MODEL_MAX_HASHES]; /* past sigma: pmf, and its sum */
} sig_pend;

static inline void pend_at(sig_pend *q, uint64_t m, double *pmf, double *phi)
{
    const double v = q->a[m];
    if (q->stay > 0.0 && m >= q->lo0)
        phi[m] += v * q->stay;
    if (m < q->lo)
        return;
    for (unsigned i = 0; i < q->nrow; i++)
        if (m <= q->rhi[i])
            q->rv[i][m + 1] += v * q->rt[i];
    for (unsigned i = 0; i < q->nend; i++) {
        pmf[m] += v * q->et[i];
        q->e[i] += v * q->et[i];
    }
}

/* the put-off level's pushes from m0 to its end, then its sums */
static void pend_finish(sig_pend *q, uint64_t m0, double *pmf, double *phi, model_sum *lostsum,
                        model_sum *endsum)
{
    if (!q->on)
        return;
    for (uint64_t m = m0; m <= q->hi; m++)
        pend_at(q, m, pmf, phi);
    /* in d order: the rows' lost tails, the frozen filter's ends */
    for (unsigned i = 0; i < q->nlost; i++)
        msum_add(lostsum, q->lostv[i]);
    for (unsigned i = 0; i < q->nend; i++)
        msum_add(endsum, q->e[i] * q->stay);
    q->on = 0;
}

int rbf__cyc_sigma_pmf(const rbf_model_params *p, uint64_t sigma, uint64_t nmax, double *pmf,
                       double *phi, double *rend, double *lost)
{
    const unsigned k = p->hashes;
    const uint64_t M = p->bits;
    cyc_row *ring = sig_ring_new(k, nmax, pmf, phi);
    double *tau = rbf__malloc((k + 1) * sizeof *tau);
    double *abuf[2] = {rbf__malloc((nmax + 2) * sizeof(double)),
                       rbf__malloc((nmax + 2) * sizeof(double))};
    sig_pend *q = rbf__calloc(1, sizeof *q);
    int rc = RBF_OK, cur = 0;
    if (!ring || !tau || !abuf[0] || !abuf[1] || !q || k > MODEL_MAX_HASHES) {
        rc = RBF_ENOMEM;
        goto out;
    }
    model_sum lostsum, endsum;
    msum_init(&lostsum);
    msum_init(&endsum);
    for (uint64_t b = 0; b <= sigma; b++) {
        cyc_row *in = &ring[b % (k + 1)];
        if ((b & 4095) == 0 && b && model_progress(p, b, sigma + 1)) {
            rc = RBF_ECANCELED;
            goto out;
        }
        if (in->lo > in->hi) {
            pend_finish(q, q->lo0, pmf, phi, &lostsum, &endsum);
            continue;
        }
        rbf__model_step_dist(M, k, (p->hashing == RBF_NON_COLLIDING), b, tau);
        const double stay = tau[0];
        /* not restrict: the put-off pushes write in->v (d = 1) */
        double *a = abuf[cur];
        uint64_t lo = in->lo, hi = in->hi, n;
        /* the put-off pushes below the chain's start (their targets are
         * below lo: no read of this chain waits on them) */
        uint64_t mnext = q->lo0; /* the next put-off m not done */
        if (q->on)
            for (; mnext + 1 < lo && mnext <= q->hi; mnext++)
                pend_at(q, mnext, pmf, phi);
        double prev = 0.0;
        double *iv = in->v;
        n = lo;
        int brk = 0;
#define CHAIN_STEP                                                                                 \
    {                                                                                              \
        double x = stay * prev + (n <= hi ? iv[n] : 0.0);                                          \
        a[n] = x;                                                                                  \
        prev = x;                                                                                  \
        if (n >= hi && x < CYC_TINY) {                                                             \
            brk = 1;                                                                               \
            break;                                                                                 \
        }                                                                                          \
    }
        if (q->on && mnext <= q->hi && mnext + 1 > n) {
            /* the put-off level starts above this chain's start: the
             * steps below read nothing it adds */
            for (; n <= nmax && n < mnext + 1; n++)
                CHAIN_STEP
        }
        if (!brk && q->on && mnext <= q->hi && mnext + 1 == n) {
            /* the put-off level in segments of m = n - 1: phi alone below
             * its pushes, then phi and every push (the common case: all
             * rows end at the same m), then what is left one m at a time */
            const double *pa = q->a, ps = q->stay;
            const uint64_t plo = q->lo, phi_hi = q->hi;
            uint64_t rcommon = phi_hi;
            for (unsigned i = 0; i < q->nrow; i++)
                if (q->rhi[i] < rcommon)
                    rcommon = q->rhi[i];
            for (; n <= nmax && n - 1 < plo && n - 1 <= phi_hi; n++) {
                if (ps > 0.0)
                    phi[n - 1] += pa[n - 1] * ps;
                CHAIN_STEP
            }
            if (!brk && q->nend == 0) {
                const unsigned nr = q->nrow;
                double *r0 = nr > 0 ? q->rv[0] : NULL, *r1 = nr > 1 ? q->rv[1] : NULL;
                double *r2 = nr > 2 ? q->rv[2] : NULL, *r3 = nr > 3 ? q->rv[3] : NULL;
                const double t0 = nr > 0 ? q->rt[0] : 0.0, t1 = nr > 1 ? q->rt[1] : 0.0;
                const double t2 = nr > 2 ? q->rt[2] : 0.0, t3 = nr > 3 ? q->rt[3] : 0.0;
                if (nr <= 4) {
                    for (; n <= nmax && n - 1 <= rcommon; n++) {
                        const uint64_t m = n - 1;
                        const double v = pa[m];
                        if (ps > 0.0)
                            phi[m] += v * ps;
                        if (nr > 0)
                            r0[m + 1] += v * t0;
                        if (nr > 1)
                            r1[m + 1] += v * t1;
                        if (nr > 2)
                            r2[m + 1] += v * t2;
                        if (nr > 3)
                            r3[m + 1] += v * t3;
                        CHAIN_STEP
                    }
                } else {
                    for (; n <= nmax && n - 1 <= rcommon; n++) {
                        const uint64_t m = n - 1;
                        const double v = pa[m];
                        if (ps > 0.0)
                            phi[m] += v * ps;
                        for (unsigned i = 0; i < nr; i++)
                            q->rv[i][m + 1] += v * q->rt[i];
                        CHAIN_STEP
                    }
                }
            }
            if (!brk) {
                /* the rest, one m at a time */
                for (mnext = n - 1; n <= nmax; n++) {
                    if (mnext <= phi_hi && n - 1 == mnext) {
                        pend_at(q, mnext, pmf, phi);
                        mnext++;
                    }
                    CHAIN_STEP
                }
            } else {
                mnext = n; /* the step that broke did m = n - 1 */
            }
        } else if (!brk) {
            for (; n <= nmax; n++)
                CHAIN_STEP
        }
#undef CHAIN_STEP
        double chain_lost = 0.0;
        int has_chain_lost = 0;
        if (n > nmax) {
            chain_lost = stay < 1.0 ? prev * stay / (1.0 - stay) : prev;
            has_chain_lost = 1;
            n = nmax;
        }
        /* the rest of the put-off level, and its sums before this chain's */
        pend_finish(q, mnext, pmf, phi, &lostsum, &endsum);
        if (has_chain_lost)
            msum_add(&lostsum, chain_lost);
        uint64_t ahi = n;
        while (ahi > lo && a[ahi] < CYC_TINY)
            ahi--;
        const uint64_t lo0 = lo;
        while (lo < ahi && a[lo] < CYC_TINY)
            lo++;
        memset(in->v + in->lo, 0, (in->hi - in->lo + 1) * sizeof *in->v);
        in->lo = 1;
        in->hi = 0;
        /* put this level off */
        q->on = 1;
        q->a = a;
        q->lo0 = stay > 0.0 ? lo0 : lo;
        q->lo = lo;
        q->hi = ahi;
        q->stay = stay;
        q->nrow = q->nend = q->nlost = 0;
        for (unsigned d = 1; d <= k; d++) {
            double t = tau[d];
            if (t <= 0.0)
                continue;
            if (b + d > sigma) {
                q->et[q->nend] = t;
                q->e[q->nend] = 0.0;
                q->nend++;
                continue;
            }
            cyc_row *to = &ring[(b + d) % (k + 1)];
            uint64_t top = ahi + 1;
            if (top > nmax) {
                q->lostv[q->nlost++] = a[nmax] * t;
                top = nmax;
            }
            /* m + 1 <= top: none when top < lo + 1 */
            if (lo + 1 <= top) {
                unsigned i = q->nrow++;
                q->rv[i] = to->v;
                q->rt[i] = t;
                q->rhi[i] = top - 1;
                if (to->lo > to->hi) {
                    to->lo = lo + 1;
                    to->hi = top;
                } else {
                    if (lo + 1 < to->lo)
                        to->lo = lo + 1;
                    if (top > to->hi)
                        to->hi = top;
                }
            }
        }
        cur ^= 1;
    }
    pend_finish(q, q->lo0, pmf, phi, &lostsum, &endsum);
    *lost = msum_get(&lostsum);
    *rend = msum_get(&endsum);
out:
    sig_ring_free(ring, k);
    rbf__free(tau);
    rbf__free(abuf[0]);
    rbf__free(abuf[1]);
    rbf__free(q);
    return rc;
}

/* ---- real-user N-bounded cycles */

/* tau(b, .) for b = 0..bmax, (k+1) each. */
double *rbf__cyc_step_table(const rbf_model_params *p, uint64_t bmax)
{
    const unsigned k = p->hashes;
    double *t = rbf__malloc((bmax + 1) * (k + 1) * sizeof *t);
    if (!t)
        return NULL;
    for (uint64_t b = 0; b <= bmax; b++)
        rbf__model_step_dist(p->bits, k, (p->hashing == RBF_NON_COLLIDING), b, t + b * (k + 1));
    return t;
}

/* Marginal pass: E_fp, E[rho(B'_N)].  Returns EINVAL if mass reaches a full
 * filter (the cycle never ends). */
int rbf__cyc_nreal_marginal(const rbf_model_params *p, uint64_t N, const double *tau, uint64_t bmax,
                          double *efp, double *rhoF, uint64_t *levels)
{
    const unsigned k = p->hashes;
    double *q = rbf__calloc(bmax + 1, sizeof *q), *q2 = rbf__calloc(bmax + 1, sizeof *q2);
    if (!q || !q2) {
        rbf__free(q);
        rbf__free(q2);
        return RBF_ENOMEM;
    }
    q[0] = 1.0;
    uint64_t lo = 0, hi = 0, wmax = 1;
    model_sum e;
    msum_init(&e);
    int rc = RBF_OK;
    for (uint64_t c = 0; c < N; c++) {
        if ((c & 255) == 0 && c && model_progress(p, c, 2 * N)) {
            rc = RBF_ECANCELED;
            goto out;
        }
        uint64_t nlo = UINT64_MAX, nhi = 0;
        for (uint64_t b = lo; b <= hi; b++) {
            double w = q[b];
            if (w < CYC_TINY)
                continue;
            const double *t = tau + b * (k + 1);
            double rho = t[0];
            if (rho >= 1.0) {
                if (w > CYC_LOST) {
                    rc = RBF_EINVAL;
                    goto out;
                }
                continue;
            }
            msum_add(&e, w * rho / (1.0 - rho));
            double inv = 1.0 / (1.0 - rho);
            for (unsigned d = 1; d <= k; d++) {
                if (b + d > bmax || t[d] <= 0.0)
                    continue;
                q2[b + d] += w * t[d] * inv;
                if (b + d < nlo)
                    nlo = b + d;
                if (b + d > nhi)
                    nhi = b + d;
            }
        }
        memset(q + lo, 0, (hi - lo + 1) * sizeof *q);
        double *sw = q;
        q = q2;
        q2 = sw;
        if (!window_next(&lo, &hi, nlo, nhi))
            break;
        if (hi - lo + 1 > wmax)
            wmax = hi - lo + 1;
    }
    if (levels)
        *levels = wmax;
    model_sum r;
    msum_init(&r);
    for (uint64_t b = lo; b <= hi && b <= bmax; b++)
        msum_add(&r, q[b] * tau[b * (k + 1)]);
    *efp = msum_get(&e);
    *rhoF = model_clamp01(msum_get(&r));
out:
    rbf__free(q);
    rbf__free(q2);
    return rc;
}

/* The joint pass's rows: the law of f at each fill level with mass, in a
 * ring of R rows (R a power of two) indexed by level mod R.  Every tick
 * moves the fill up by 1 to k levels, so the levels with mass at tick c
 * lie in a window [lo, hi] that only moves up; two rings (this tick's and
 * the next's) of at least hi - lo + k + 1 rows hold it, however high the
 * fill goes.  Row r holds values on [flo[r], fhi[r]] (flo > fhi: empty). */
typedef struct {
    double *v;
    size_t bytes; /* of v */
    uint64_t *flo, *fhi;
} joint_ring;

static void ring_free(joint_ring *g)
{
    rbf__free_lines(g->v, g->bytes);
    rbf__free(g->flo);
    rbf__free(g->fhi);
    g->v = NULL;
    g->flo = g->fhi = NULL;
}

/* An empty ring of R rows of W values (zeroed; on huge pages where the
 * system gives them, since consecutive rows are W values apart). */
static int ring_new(joint_ring *g, uint64_t R, uint64_t W)
{
    g->bytes = (size_t)(R * W * sizeof *g->v);
    g->v = rbf__alloc_lines(g->bytes);
    g->flo = rbf__malloc(R * sizeof *g->flo);
    g->fhi = rbf__calloc(R, sizeof *g->fhi);
    if (!g->v || !g->flo || !g->fhi) {
        ring_free(g);
        return RBF_ENOMEM;
    }
    memset(g->flo, 0xff, R * sizeof *g->flo); /* UINT64_MAX: empty */
    return RBF_OK;
}

/* Empty row r of a ring (its values on [flo, fhi] set to zero). */
static void row_clear(joint_ring *g, uint64_t r, uint64_t W)
{
    if (g->flo[r] <= g->fhi[r])
        memset(g->v + r * W + g->flo[r], 0, (g->fhi[r] - g->flo[r] + 1) * sizeof *g->v);
    g->flo[r] = UINT64_MAX;
    g->fhi[r] = 0;
}

/* Move the levels [lo, hi] of ring *g (R rows) into a new empty ring of R2
 * rows, and make *g2 (the next tick's, empty) R2 rows too. */
static int ring_grow(joint_ring *g, joint_ring *g2, uint64_t R, uint64_t R2, uint64_t W, uint64_t lo,
                     uint64_t hi)
{
    joint_ring n, n2;
    if (ring_new(&n, R2, W))
        return RBF_ENOMEM;
    if (ring_new(&n2, R2, W)) {
        ring_free(&n);
        return RBF_ENOMEM;
    }
    for (uint64_t b = lo; b <= hi; b++) {
        uint64_t r = b & (R - 1), r2 = b & (R2 - 1);
        if (g->flo[r] > g->fhi[r])
            continue;
        memcpy(n.v + r2 * W + g->flo[r], g->v + r * W + g->flo[r],
               (g->fhi[r] - g->flo[r] + 1) * sizeof *g->v);
        n.flo[r2] = g->flo[r];
        n.fhi[r2] = g->fhi[r];
    }
    ring_free(g);
    ring_free(g2);
    *g = n;
    *g2 = n2;
    return RBF_OK;
}

/* The main loop of a row of the joint pass (rbf__cyc_nreal_joint) over
 * [f0, top]: the chain S(f) = rho S(f-1) + row(f), the row's mass, and
 * from the first S(f) >= CYC_TINY on (returned; UINT64_MAX if none) the
 * sends of S(f): rho S(f) to ph[f], dc[i] S(f) to dp[i][f].  Inlined with
 * nd a constant for the usual k, so that the sends' rows and factors stay
 * in registers. */
#if defined(__GNUC__)
#define CYC_INLINE inline __attribute__((always_inline))
#else
#define CYC_INLINE inline
#endif
static CYC_INLINE uint64_t row_pass_n(const double *row, uint64_t f0, uint64_t top, double rho,
                                      double *restrict ph, double *const *dp, const double *dc,
                                      unsigned nd, double *any_out, double *prev_out)
{
    double any = 0.0, prev = 0.0;
    uint64_t g0 = UINT64_MAX, f = f0;
    for (; f <= top; f++) {
        const double x = rho * prev + row[f];
        any += row[f];
        prev = x;
        if (!(x < CYC_TINY)) {
            g0 = f;
            break;
        }
    }
    if (g0 != UINT64_MAX) {
        ph[f] += rho * prev;
        for (unsigned i = 0; i < nd; i++)
            dp[i][f] += prev * dc[i];
        for (f++; f <= top; f++) {
            const double x = rho * prev + row[f];
            any += row[f];
            prev = x;
            ph[f] += rho * x;
            for (unsigned i = 0; i < nd; i++)
                dp[i][f] += x * dc[i];
        }
    }
    *any_out = any;
    *prev_out = prev;
    return g0;
}

static uint64_t row_pass(const double *row, uint64_t f0, uint64_t top, double rho, double *restrict ph,
                         double *const *dp, const double *dc, unsigned nd, double *any, double *prev)
{
#define ROW_CASE(n)                                                                                \
    case n:                                                                                        \
        return row_pass_n(row, f0, top, rho, ph, dp, dc, n, any, prev);
    switch (nd) {
        ROW_CASE(1)
        ROW_CASE(2)
        ROW_CASE(3)
        ROW_CASE(4)
        ROW_CASE(5)
        ROW_CASE(6)
        ROW_CASE(7)
        ROW_CASE(8)
    default:
        return row_pass_n(row, f0, top, rho, ph, dp, dc, nd, any, prev);
    }
#undef ROW_CASE
}

/* Joint pass: P(f false positives in a cycle), f = 0..F, into out.  Level
 * b's row holds the law of f on [flo, fhi]; values below CYC_TINY are
 * dropped at the low end of a row, as whole rows and the high end are. */
int rbf__cyc_nreal_joint(const rbf_model_params *p, uint64_t N, const double *tau, uint64_t bmax,
                       uint64_t F, double *out, double *phi, double *lost)
{
    const unsigned k = p->hashes;
    const uint64_t W = F + 1;
    uint64_t R = 64;
    while (R < 2 * ((uint64_t)k + 1))
        R *= 2;
    if (R > CYC_MAX_LEN / W * 4)
        return RBF_ENOMEM;
    joint_ring q = {0}, q2 = {0};
    double *dp[RBF_MAX_HASHES], dc[RBF_MAX_HASHES]; /* the sends of a row: rows, t[d] */
    uint64_t dl[RBF_MAX_HASHES];                    /* and their levels */
    int rc = RBF_OK;
    if (k > RBF_MAX_HASHES)
        return RBF_EINVAL;
    if (ring_new(&q, R, W) || ring_new(&q2, R, W)) {
        rc = RBF_ENOMEM;
        goto out;
    }
    q.v[0] = 1.0;
    q.flo[0] = 0;
    uint64_t lo = 0, hi = 0;
    model_sum lostsum;
    msum_init(&lostsum);
    for (uint64_t c = 0; c < N; c++) {
        if ((c & 63) == 0 && model_progress(p, N + c, 2 * N)) {
            rc = RBF_ECANCELED;
            goto out;
        }
        if (hi - lo + k + 1 > R) {
            uint64_t R2 = R;
            while (R2 < hi - lo + k + 1 + (hi - lo) / 4)
                R2 *= 2;
            if (R2 > CYC_MAX_LEN / W * 4) {
                rc = RBF_ENOMEM;
                goto out;
            }
            if (ring_grow(&q, &q2, R, R2, W, lo, hi)) {
                rc = RBF_ENOMEM;
                goto out;
            }
            R = R2;
        }
        const uint64_t mask = R - 1;
        uint64_t nlo = UINT64_MAX, nhi = 0;
        for (uint64_t b = lo; b <= hi; b++) {
            const uint64_t r = b & mask;
            const double *row = q.v + r * W;
            const uint64_t f0 = q.flo[r], top = q.fhi[r];
            if (f0 > top)
                continue; /* empty */
            const double *t = tau + b * (k + 1);
            const double rho = t[0];
            if (rho >= 1.0) {
                /* a full filter: the cycle never ends, the row is lost */
                double any = 0.0;
                for (uint64_t f = f0; f <= top; f++)
                    any += row[f];
                if (!(any < CYC_TINY))
                    msum_add(&lostsum, any);
                row_clear(&q, r, W);
                continue;
            }
            /* The law of f at the next bit-setting tick, S(f) = rho S(f-1)
             * + row(f) (the false positives before it), extended past top
             * while it matters, goes to the levels b + d with t[d]; and
             * the tick after c bit-setting ones and f false positives (its
             * (c + f + 1)-th) is a false positive with rho.  Every S(f)
             * from the first >= CYC_TINY (g0) to the end is sent, or only
             * the last if none is.  One pass does it all: the chain of S,
             * the row's mass and the sends are independent work for the
             * processor, which overlaps them. */
            unsigned nd = 0;
            for (unsigned d = 1; d <= k; d++) {
                if (t[d] <= 0.0 || b + d > bmax)
                    continue;
                dp[nd] = q2.v + ((b + d) & mask) * W;
                dc[nd] = t[d];
                dl[nd] = b + d;
                nd++;
            }
            double any = 0.0, prev = 0.0;
            uint64_t f;
            double *restrict ph = phi + c;
            uint64_t g0 = row_pass(row, f0, top, rho, ph, dp, dc, nd, &any, &prev);
            uint64_t stop = top;
            if (g0 == UINT64_MAX) {
                /* no S(f) reached CYC_TINY (and S(top) did not: no tail) */
                if (any < CYC_TINY) {
                    row_clear(&q, r, W);
                    continue;
                }
                g0 = top;
                ph[top] += rho * prev;
                for (unsigned i = 0; i < nd; i++)
                    dp[i][top] += prev * dc[i];
            } else if (!(prev < CYC_TINY)) {
                for (f = top + 1; f <= F; f++) {
                    const double x = rho * prev + 0.0;
                    prev = x;
                    ph[f] += rho * x;
                    for (unsigned i = 0; i < nd; i++)
                        dp[i][f] += x * dc[i];
                    if (x < CYC_TINY)
                        break;
                }
                if (f > F) {
                    msum_add(&lostsum, prev * rho / (1.0 - rho));
                    f = F;
                }
                stop = f;
            }
            for (unsigned i = 0; i < nd; i++) {
                const uint64_t r2 = dl[i] & mask;
                if (stop > q2.fhi[r2])
                    q2.fhi[r2] = stop;
                if (g0 < q2.flo[r2])
                    q2.flo[r2] = g0;
                if (dl[i] < nlo)
                    nlo = dl[i];
                if (dl[i] > nhi)
                    nhi = dl[i];
            }
            row_clear(&q, r, W);
        }
        joint_ring sw = q;
        q = q2;
        q2 = sw;
        if (!window_next(&lo, &hi, nlo, nhi))
            break;
    }
    memset(out, 0, W * sizeof *out);
    for (uint64_t b = lo; b <= hi; b++) {
        const uint64_t r = b & (R - 1);
        for (uint64_t f = q.flo[r]; f <= q.fhi[r]; f++)
            out[f] += q.v[r * W + f];
    }
    *lost = msum_get(&lostsum);
out:
    ring_free(&q);
    ring_free(&q2);
    return rc;
}

/* ---- the real user's N-bounded cycles by moments
 *
 * The joint pass costs N x (levels with mass) x (false-positive counts
 * with mass), about N^2.5.  Here each level keeps only its mass and the
 * first two moments of the count f of false positives so far, which the
 * geometric run of false positives before each bit-setting tick moves
 * exactly (G ~ Geom: E G = rho/(1-rho), E G^2 = rho(1+rho)/(1-rho)^2).
 * The laws are then drawn from their moments: the count at the end (L -
 * N) and, at each of the N steps, the ticks that are false positives, each
 * as a negative binomial with its exact mass, mean and variance (a sum of
 * geometric counts, which the negative binomial is when rho is fixed; a
 * Poisson law where the variance is the mean).  O(N x levels + N x the
 * count's spread).  docs/models.md 9.5 gives its error against the joint
 * pass. */

/* The cells of a negative binomial of mean mu and variance var (at least
 * mu; Poisson where they are equal): [a, b], 14 standard deviations and 30
 * cells each side, its mode's cell x0, and r = mu^2 / (var - mu), q = 1 -
 * mu / var.  0, or 1 if it reaches past F. */
typedef struct {
    uint64_t a, b, x0;
    int poisson;
    double mu, r, q;
} nb_law;

static int nb_law_of(double mu, double var, uint64_t F, nb_law *L)
{
    if (var < mu)
        var = mu;
    const double sd = sqrt(var);
    const double hi = mu + 14.0 * sd + 30.0;
    if (hi > (double)F)
        return 1;
    const double lo = mu - 14.0 * sd - 30.0;
    L->a = lo > 0.0 ? (uint64_t)lo : 0;
    L->b = (uint64_t)hi;
    L->poisson = var - mu <= 1e-6 * mu;
    L->mu = mu;
    L->r = L->poisson ? 0.0 : mu * mu / (var - mu);
    L->q = L->poisson ? 0.0 : 1.0 - mu / var;
    L->x0 = (uint64_t)mu;
    if (L->x0 < L->a)
        L->x0 = L->a;
    if (L->x0 > L->b)
        L->x0 = L->b;
    return 0;
}

/* No mass (nothing to add), or a count surely 0 (all of w at x = 0):
 * 1 when done, 0 when the law is to be laid out. */
static int nb_trivial(double *out, uint64_t off, double w, double mu)
{
    if (!(w > 0.0))
        return 1;
    if (!(mu > 1e-300)) {
        out[off] += w;
        return 1;
    }
    return 0;
}

/* Add mass `w` spread as a negative binomial of mean mu and variance var
 * over x = 0..F to out[off + x] (renormalised to w over the cells kept;
 * tmp has F + 1 doubles).  The pmf from its value at the mode by the ratios
 * P(x+1)/P(x) = (x + r)/(x + 1) q (Poisson: mu/(x + 1)).  Returns 1 if the
 * law reaches past F (the caller widens F). */
static int nb_spread(double *out, uint64_t off, uint64_t F, double w, double mu, double var,
                     double *tmp)
{
    nb_law L;
    if (nb_trivial(out, off, w, mu))
        return 0;
    if (nb_law_of(mu, var, F, &L))
        return 1;
    const uint64_t a = L.a, b = L.b, x0 = L.x0;
    const int poisson = L.poisson;
    const double r = L.r, q = L.q;
    tmp[x0] = 1.0; /* relative to P(x0) */
    for (uint64_t x = x0; x < b; x++)
        tmp[x + 1] = tmp[x] * (poisson ? mu / ((double)x + 1.0) : ((double)x + r) / ((double)x + 1.0) * q);
    for (uint64_t x = x0; x > a; x--)
        tmp[x - 1] = tmp[x] * (poisson ? (double)x / mu : (double)x / (((double)x - 1.0 + r) * q));
    double tot = 0.0;
    for (uint64_t x = a; x <= b; x++)
        tot += tmp[x];
    const double scale = w / tot;
    for (uint64_t x = a; x <= b; x++)
        out[off + x] += scale * tmp[x];
    return 0;
}

/* log P(x) - log P(x0) of the law */
static double nb_logratio(const nb_law *L, uint64_t x, uint64_t x0)
{
    const double a = (double)x, b = (double)x0;
    if (L->poisson)
        return (a - b) * log(L->mu) - lgamma(a + 1.0) + lgamma(b + 1.0);
    return lgamma(a + L->r) - lgamma(b + L->r) - lgamma(a + 1.0) + lgamma(b + 1.0) +
           (a - b) * log(L->q);
}

/* nb_spread for the large-filter law (laws_asym.c), whose steps are many
 * and whose laws are wide: the same law over the same cells, laid out
 * upward from both its left end (started from lgamma) and its mode, two
 * chains at once, by the ratios P(x+1)/P(x) with inv[x] = 1/(x + 1): no
 * division a cell.  The values agree with nb_spread's to rounding (about
 * width x 1e-16 relative). */
static int nb_spread_fast(double *out, uint64_t off, uint64_t F, double w, double mu, double var,
                          double *tmp, const double *inv)
{
    nb_law L;
    if (nb_trivial(out, off, w, mu))
        return 0;
    if (nb_law_of(mu, var, F, &L))
        return 1;
    uint64_t a = L.a;
    const uint64_t b = L.b, x0 = L.x0;
    const int poisson = L.poisson;
    const double r = L.r, q = L.q;
    /* the left end where the law is still representable relative to the
     * mode (below e^-700 it is zero to nb_spread too) */
    double la = nb_logratio(&L, a, x0);
    if (la < -700.0) {
        uint64_t l = a, h = x0; /* la(l) < -700 <= la(h) */
        while (h - l > 1) {
            uint64_t m = l + (h - l) / 2;
            if (nb_logratio(&L, m, x0) < -700.0)
                l = m;
            else
                h = m;
        }
        for (uint64_t x = a; x < h; x++)
            tmp[x] = 0.0;
        a = h;
        la = nb_logratio(&L, a, x0);
    }
    const double pq = poisson ? mu : q, pr = poisson ? 0.0 : r;
    double u = exp(la), t = 1.0;
    const uint64_t n1 = x0 - a, n2 = b - x0;
    /* the two chains and their sums side by side (each a chain of
     * multiplies and adds: together they overlap) */
    double su = a < x0 ? u : 0.0, st = 1.0;
    tmp[a] = u;
    tmp[x0] = 1.0;
    const uint64_t nc = n1 < n2 ? n1 : n2;
    for (uint64_t i = 0; i < nc; i++) {
        const uint64_t x = a + i, y = x0 + i;
        u *= (poisson ? pq : ((double)x + pr) * pq) * inv[x];
        t *= (poisson ? pq : ((double)y + pr) * pq) * inv[y];
        tmp[y + 1] = t;
        st += t;
        if (x + 1 < x0) {
            tmp[x + 1] = u;
            su += u;
        }
    }
    for (uint64_t i = nc; i < n1; i++) {
        const uint64_t x = a + i;
        u *= (poisson ? pq : ((double)x + pr) * pq) * inv[x];
        if (x + 1 < x0) {
            tmp[x + 1] = u;
            su += u;
        }
    }
    for (uint64_t i = nc; i < n2; i++) {
        const uint64_t y = x0 + i;
        t *= (poisson ? pq : ((double)y + pr) * pq) * inv[y];
        tmp[y + 1] = t;
        st += t;
    }
    const double scale = w / (su + st);
    double *o = out + off;
    for (uint64_t x = a; x <= b; x++)
        o[x] += scale * tmp[x];
    return 0;
}

/* One level b of the moments' step (rho = t[0] < 1, mass w >= CYC_TINY,
 * first and second moments s1, s2 of its false positives so far): the
 * false-positive ticks it adds to T[0..2], and its pushes to the next
 * step's levels (m2, a1n, a2n) and their window [*nlo, *nhi].  The
 * moments' pass and the fused pass both take their levels here. */
static CYC_INLINE void mom_level(const double *t, unsigned k, uint64_t b, uint64_t bmax, double w,
                                 double s1, double s2, double *T, double *m2, double *a1n,
                                 double *a2n, uint64_t *nlo, uint64_t *nhi)
{
    const double rho = t[0];
    const double eg = rho / (1.0 - rho), eg2 = rho * (1.0 + rho) / ((1.0 - rho) * (1.0 - rho));
    /* the ticks c + f + i + 1 (i = 0..G-1) are false positives:
     * mass w EG, f + i with i of weights rho^(i+1) */
    T[0] += w * eg;
    T[1] += eg * (s1 + w * eg);
    T[2] += eg * (s2 + 2.0 * s1 * eg + w * eg2);
    const double n1 = s1 + w * eg, n2 = s2 + 2.0 * s1 * eg + w * eg2;
    const double inv = 1.0 / (1.0 - rho);
    for (unsigned d = 1; d <= k; d++) {
        if (t[d] <= 0.0 || b + d > bmax)
            continue;
        const double q = t[d] * inv;
        m2[b + d] += w * q;
        a1n[b + d] += n1 * q;
        a2n[b + d] += n2 * q;
        if (b + d < *nlo)
            *nlo = b + d;
        if (b + d > *nhi)
            *nhi = b + d;
    }
}

/* a and b trade places (a step's tables and the next's) */
static void swap_tables(double **a, double **b)
{
    double *t = *a;
    *a = *b;
    *b = t;
}

int rbf__cyc_nreal_moments(const rbf_model_params *p, uint64_t N, const double *tau, uint64_t bmax,
                         uint64_t F, double *out, double *phi, double *lost)
{
    const unsigned k = p->hashes;
    double *tmp = rbf__malloc((F + 1) * sizeof *tmp);
    double *m = rbf__calloc(bmax + 1, sizeof *m), *m2 = rbf__calloc(bmax + 1, sizeof *m2);
    double *a1 = rbf__calloc(bmax + 1, sizeof *a1), *a1n = rbf__calloc(bmax + 1, sizeof *a1n);
    double *a2 = rbf__calloc(bmax + 1, sizeof *a2), *a2n = rbf__calloc(bmax + 1, sizeof *a2n);
    int rc = RBF_OK;
    if (!tmp || !m || !m2 || !a1 || !a1n || !a2 || !a2n) {
        rc = RBF_ENOMEM;
        goto out;
    }
    m[0] = 1.0;
    uint64_t lo = 0, hi = 0;
    model_sum lostsum;
    msum_init(&lostsum);
    int wide = 0;
    for (uint64_t c = 0; c < N && !wide; c++) {
        if ((c & 255) == 0 && model_progress(p, N + c, 2 * N)) {
            rc = RBF_ECANCELED;
            goto out;
        }
        uint64_t nlo = UINT64_MAX, nhi = 0;
        double T[3] = {0.0, 0.0, 0.0}; /* the false-positive ticks of this step */
        for (uint64_t b = lo; b <= hi; b++) {
            const double w = m[b], s1 = a1[b], s2 = a2[b];
            m[b] = a1[b] = a2[b] = 0.0;
            if (w < CYC_TINY)
                continue;
            const double *t = tau + b * (k + 1);
            const double rho = t[0];
            if (rho >= 1.0) {
                msum_add(&lostsum, w);
                continue;
            }
            mom_level(t, k, b, bmax, w, s1, s2, T, m2, a1n, a2n, &nlo, &nhi);
        }
        if (T[0] > 0.0) {
            const double mu = T[1] / T[0], var = T[2] / T[0] - mu * mu;
            /* phi[c + x] for the false-positive ticks: their count so far
             * x has mean mu; nb_spread puts mass T0 on x */
            if (nb_spread(phi, c, F, T[0], mu, var, tmp))
                wide = 1;
        }
        swap_tables(&m, &m2);
        swap_tables(&a1, &a1n);
        swap_tables(&a2, &a2n);
        if (!window_next(&lo, &hi, nlo, nhi))
            break;
    }
    memset(out, 0, (F + 1) * sizeof *out);
    if (!wide) {
        double W0 = 0.0, W1 = 0.0, W2 = 0.0;
        for (uint64_t b = lo; b <= hi; b++) {
            W0 += m[b];
            W1 += a1[b];
            W2 += a2[b];
        }
        if (W0 > 0.0) {
            const double mu = W1 / W0;
            wide = nb_spread(out, 0, F, W0, mu, W2 / W0 - mu * mu, tmp);
        }
    }
    /* a law wider than F: report it lost, so that the caller doubles F */
    *lost = wide ? 1.0 : msum_get(&lostsum);
out:
    rbf__free(tmp);
    rbf__free(m);
    rbf__free(m2);
    rbf__free(a1);
    rbf__free(a1n);
    rbf__free(a2);
    rbf__free(a2n);
    return rc;
}

/* The marginal pass (q, its sum e) and the moments' pass (m, a1, a2) in
 * one walk over the levels: each keeps its own window, its own skips and
 * its own expressions, as in rbf__cyc_nreal_marginal and
 * rbf__cyc_nreal_moments, so each gives what it gave alone; the walk and
 * the step table's rows are shared.  The moments' T0, T1,
 * T2 of each step are kept for rbf__cyc_nreal_spread. */
int rbf__cyc_nreal_fused(const rbf_model_params *p, uint64_t N, const double *tau, uint64_t bmax,
                         double *efp, double *rhoF, uint64_t *levels, rbf_cyc_mstats *st)
{
    const unsigned k = p->hashes;
    memset(st, 0, sizeof *st);
    double *q = rbf__calloc(bmax + 1, sizeof *q), *q2 = rbf__calloc(bmax + 1, sizeof *q2);
    double *m = rbf__calloc(bmax + 1, sizeof *m), *m2 = rbf__calloc(bmax + 1, sizeof *m2);
    double *a1 = rbf__calloc(bmax + 1, sizeof *a1), *a1n = rbf__calloc(bmax + 1, sizeof *a1n);
    double *a2 = rbf__calloc(bmax + 1, sizeof *a2), *a2n = rbf__calloc(bmax + 1, sizeof *a2n);
    st->T = rbf__malloc((N ? 3 * N : 1) * sizeof *st->T);
    int rc = RBF_OK;
    if (!q || !q2 || !m || !m2 || !a1 || !a1n || !a2 || !a2n || !st->T) {
        rc = RBF_ENOMEM;
        goto out;
    }
    q[0] = 1.0;
    m[0] = 1.0;
    /* the marginal's window [lo, hi] (on while qon), the moments' [mlo, mhi] */
    uint64_t lo = 0, hi = 0, mlo = 0, mhi = 0, wmax = 1;
    int qon = 1, mon = 1;
    model_sum e, lostsum;
    msum_init(&e);
    msum_init(&lostsum);
    for (uint64_t c = 0; c < N && (qon || mon); c++) {
        /* the first half of the progress: the joint pass, when it follows,
         * reports the second (N + c of 2N) */
        if ((c & 255) == 0 && c && model_progress(p, c, 2 * N)) {
            rc = RBF_ECANCELED;
            goto out;
        }
        uint64_t nlo = UINT64_MAX, nhi = 0, mnlo = UINT64_MAX, mnhi = 0;
        double T[3] = {0.0, 0.0, 0.0};
        const uint64_t ulo = !qon ? mlo : !mon ? lo : (lo < mlo ? lo : mlo);
        const uint64_t uhi = !qon ? mhi : !mon ? hi : (hi > mhi ? hi : mhi);
        for (uint64_t b = ulo; b <= uhi; b++) {
            const double wq = q[b], w = m[b], s1 = a1[b], s2 = a2[b];
            q[b] = m[b] = a1[b] = a2[b] = 0.0;
            const int doq = qon && wq >= CYC_TINY, dom = mon && w >= CYC_TINY;
            if (!doq && !dom)
                continue;
            const double *t = tau + b * (k + 1);
            const double rho = t[0];
            if (rho >= 1.0) {
                if (doq && wq > CYC_LOST) {
                    rc = RBF_EINVAL;
                    goto out;
                }
                if (dom)
                    msum_add(&lostsum, w);
                continue;
            }
            if (doq) {
                msum_add(&e, wq * rho / (1.0 - rho));
                const double inv = 1.0 / (1.0 - rho);
                for (unsigned d = 1; d <= k; d++) {
                    if (b + d > bmax || t[d] <= 0.0)
                        continue;
                    q2[b + d] += wq * t[d] * inv;
                    if (b + d < nlo)
                        nlo = b + d;
                    if (b + d > nhi)
                        nhi = b + d;
                }
            }
            if (dom)
                mom_level(t, k, b, bmax, w, s1, s2, T, m2, a1n, a2n, &mnlo, &mnhi);
        }
        if (mon) {
            memcpy(st->T + 3 * c, T, sizeof T);
            st->steps = c + 1;
        }
        swap_tables(&q, &q2);
        swap_tables(&m, &m2);
        swap_tables(&a1, &a1n);
        swap_tables(&a2, &a2n);
        if (qon) {
            qon = window_next(&lo, &hi, nlo, nhi);
            if (qon && hi - lo + 1 > wmax)
                wmax = hi - lo + 1;
        }
        if (mon)
            mon = window_next(&mlo, &mhi, mnlo, mnhi);
    }
    if (levels)
        *levels = wmax;
    model_sum r;
    msum_init(&r);
    for (uint64_t b = lo; b <= hi && b <= bmax; b++)
        msum_add(&r, q[b] * tau[b * (k + 1)]);
    *efp = msum_get(&e);
    *rhoF = model_clamp01(msum_get(&r));
    double W0 = 0.0, W1 = 0.0, W2 = 0.0;
    for (uint64_t b = mlo; b <= mhi; b++) {
        W0 += m[b];
        W1 += a1[b];
        W2 += a2[b];
    }
    st->W0 = W0;
    st->W1 = W1;
    st->W2 = W2;
    st->lost = msum_get(&lostsum);
out:
    if (rc)
        rbf__cyc_mstats_free(st);
    rbf__free(q);
    rbf__free(q2);
    rbf__free(m);
    rbf__free(m2);
    rbf__free(a1);
    rbf__free(a1n);
    rbf__free(a2);
    rbf__free(a2n);
    return rc;
}

void rbf__cyc_mstats_free(rbf_cyc_mstats *st)
{
    rbf__free(st->T);
    st->T = NULL;
    st->steps = 0;
}

int rbf__cyc_nreal_spread(const rbf_cyc_mstats *st, uint64_t F, double *out, double *phi,
                          double *lost, int fast)
{
    double *tmp = rbf__malloc((F + 1) * sizeof *tmp);
    double *inv = fast ? rbf__malloc((F + 1) * sizeof *inv) : NULL;
    if (!tmp || (fast && !inv)) {
        rbf__free(tmp);
        rbf__free(inv);
        return RBF_ENOMEM;
    }
    if (fast)
        for (uint64_t x = 0; x <= F; x++)
            inv[x] = 1.0 / ((double)x + 1.0);
    int wide = 0;
    /* The large-filter law (fast) has many steps and wide counts: there
     * the steps go by blocks of m (a power of 3, at most a quarter of the
     * count's spread), each laid out once at its middle step with m times
     * its mass.  phi[t] sums a smooth function of the step, T0_c
     * P(count_c = t - c), whose width in c is the count's spread: on a
     * lattice of step m that sum is the same as on every step up to
     * terms of order exp(-2 pi^2 (spread/m)^2) (Poisson summation), except
     * where the lattice changes or ends: so the steps whose counts reach
     * past the cycle's last step are laid out one by one, and m changes a
     * few times only. */
    uint64_t tail = st->steps;
    if (fast && st->steps) {
        const double sdN = st->W0 > 0.0 ? sqrt(fmax(st->W2 / st->W0 - (st->W1 / st->W0) * (st->W1 / st->W0), 0.0)) : 0.0;
        const double back = 14.0 * sdN + 60.0;
        tail = back < (double)st->steps ? st->steps - (uint64_t)back : 0;
    }
    for (uint64_t c = 0; c < st->steps && !wide;) {
        uint64_t m = 1;
        if (fast && c < tail) {
            const double T0 = st->T[3 * c];
            if (T0 > 0.0) {
                const double mu = st->T[3 * c + 1] / T0, v = st->T[3 * c + 2] / T0 - mu * mu;
                const double sd = v > mu ? sqrt(v) : sqrt(fmax(mu, 0.0));
                while (3 * m <= sd / 4.0 && c + 3 * m <= tail)
                    m *= 3;
            }
        }
        const uint64_t cc = c + (m - 1) / 2;
        const double T0 = st->T[3 * cc], T1 = st->T[3 * cc + 1], T2 = st->T[3 * cc + 2];
        if (T0 > 0.0) {
            const double mu = T1 / T0, var = T2 / T0 - mu * mu;
            if (fast ? nb_spread_fast(phi, cc, F, (double)m * T0, mu, var, tmp, inv)
                     : nb_spread(phi, cc, F, T0, mu, var, tmp))
                wide = 1;
        }
        c += m;
    }
    memset(out, 0, (F + 1) * sizeof *out);
    if (!wide && st->W0 > 0.0) {
        const double mu = st->W1 / st->W0;
        wide = nb_spread(out, 0, F, st->W0, mu, st->W2 / st->W0 - mu * mu, tmp);
    }
    *lost = wide ? 1.0 : st->lost;
    rbf__free(tmp);
    rbf__free(inv);
    return RBF_OK;
}
