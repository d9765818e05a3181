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

/* ---- sigma-bounded cycles */

typedef struct {
    double *v;
    uint64_t lo, hi; /* window with mass; lo > hi when empty */
} cyc_row;

int rbf__cyc_sigma_pmf(const rbf_model_params *p, uint64_t sigma, uint64_t nmax, double *pmf,
                     double *phi, double *rend, double *lost)
{
    const unsigned k = p->hashes;
    const uint64_t M = p->bits;
    cyc_row *ring = rbf__calloc(k + 1, sizeof *ring);
    double *tau = rbf__malloc((k + 1) * sizeof *tau);
    double *a = rbf__malloc((nmax + 2) * sizeof *a);
    int rc = RBF_OK;
    if (!ring || !tau || !a) {
        rc = RBF_ENOMEM;
        goto out;
    }
    for (unsigned r = 0; r <= k; r++) {
        ring[r].v = rbf__calloc(nmax + 2, sizeof *ring[r].v);
        if (!ring[r].v) {
            rc = RBF_ENOMEM;
            goto out;
        }
        ring[r].lo = 1;
        ring[r].hi = 0;
    }
    memset(pmf, 0, (nmax + 1) * sizeof *pmf);
    memset(phi, 0, (nmax + 2) * sizeof *phi);
    model_sum lostsum, endsum;
    msum_init(&lostsum);
    msum_init(&endsum);
    /* the first tick at level 0 */
    ring[0].v[1] = 1.0;
    ring[0].lo = ring[0].hi = 1;
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
    if (ring)
        for (unsigned r = 0; r <= k; r++)
            rbf__free(ring[r].v);
    rbf__free(ring);
    rbf__free(tau);
    rbf__free(a);
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
                          double *efp, double *rhoF)
{
    const unsigned k = p->hashes;
    double *q = rbf__calloc(bmax + 1, sizeof *q), *q2 = rbf__calloc(bmax + 1, sizeof *q2);
    if (!q || !q2) {
        rbf__free(q);
        rbf__free(q2);
        return RBF_ENOMEM;
    }
    q[0] = 1.0;
    uint64_t lo = 0, hi = 0;
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
        if (nlo == UINT64_MAX) {
            lo = 1;
            hi = 0;
            break;
        }
        lo = nlo;
        hi = nhi;
    }
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

/* Empty a row of the joint pass (its values on [*flo, *fhi] set to zero). */
static void row_clear(double *row, uint64_t *flo, uint64_t *fhi)
{
    memset(row + *flo, 0, (*fhi - *flo + 1) * sizeof *row);
    *flo = UINT64_MAX;
    *fhi = 0;
}

/* Joint pass: P(f false positives in a cycle), f = 0..F, into out.  Level
 * b's row holds the law of f on [flo[b], fhi[b]] (flo > fhi: empty);
 * values below CYC_TINY are dropped at the low end of a row, as whole rows
 * and the high end are. */
int rbf__cyc_nreal_joint(const rbf_model_params *p, uint64_t N, const double *tau, uint64_t bmax,
                       uint64_t F, double *out, double *phi, double *lost)
{
    const unsigned k = p->hashes;
    const uint64_t W = F + 1;
    if ((bmax + 1) > CYC_MAX_LEN / W * 4)
        return RBF_ENOMEM;
    double *q = rbf__calloc((bmax + 1) * W, sizeof *q), *q2 = rbf__calloc((bmax + 1) * W, sizeof *q2);
    double *sv = rbf__malloc(W * sizeof *sv);
    uint64_t *fhi = rbf__calloc(bmax + 1, sizeof *fhi), *fhi2 = rbf__calloc(bmax + 1, sizeof *fhi2);
    uint64_t *flo = rbf__malloc((bmax + 1) * sizeof *flo);
    uint64_t *flo2 = rbf__malloc((bmax + 1) * sizeof *flo2);
    int rc = RBF_OK;
    if (!q || !q2 || !sv || !fhi || !fhi2 || !flo || !flo2) {
        rc = RBF_ENOMEM;
        goto out;
    }
    memset(flo, 0xff, (bmax + 1) * sizeof *flo); /* UINT64_MAX */
    memset(flo2, 0xff, (bmax + 1) * sizeof *flo2);
    q[0] = 1.0;
    flo[0] = 0;
    uint64_t lo = 0, hi = 0;
    model_sum lostsum;
    msum_init(&lostsum);
    for (uint64_t c = 0; c < N; c++) {
        if ((c & 63) == 0 && model_progress(p, N + c, 2 * N)) {
            rc = RBF_ECANCELED;
            goto out;
        }
        uint64_t nlo = UINT64_MAX, nhi = 0;
        for (uint64_t b = lo; b <= hi; b++) {
            double *row = q + b * W;
            const uint64_t f0 = flo[b], top = fhi[b];
            if (f0 > top)
                continue; /* empty */
            const double *t = tau + b * (k + 1);
            double rho = t[0];
            double any = 0.0;
            for (uint64_t f = f0; f <= top; f++)
                any += row[f];
            if (rho >= 1.0 && !(any < CYC_TINY))
                msum_add(&lostsum, any);
            if (any < CYC_TINY || rho >= 1.0) {
                row_clear(row, &flo[b], &fhi[b]);
                continue;
            }
            /* S(f) = rho S(f-1) + row(f), extended past top while it matters */
            double prev = 0.0;
            uint64_t f;
            for (f = f0; f <= F; f++) {
                double x = rho * prev + (f <= top ? row[f] : 0.0);
                sv[f] = x;
                prev = x;
                if (f >= top && x < CYC_TINY)
                    break;
            }
            if (f > F) {
                msum_add(&lostsum, prev * rho / (1.0 - rho));
                f = F;
            }
            uint64_t stop = f, g0 = f0;
            while (g0 < stop && sv[g0] < CYC_TINY)
                g0++;
            /* the tick after c bit-setting ones and f false positives (its
             * (c + f + 1)-th) is a false positive with rho */
            for (uint64_t g = g0; g <= stop; g++)
                phi[c + g] += rho * sv[g];
            for (unsigned d = 1; d <= k; d++) {
                if (t[d] <= 0.0)
                    continue;
                if (b + d > bmax) {
                    continue;
                }
                double *dst = q2 + (b + d) * W;
                for (uint64_t g = g0; g <= stop; g++)
                    dst[g] += sv[g] * t[d];
                if (stop > fhi2[b + d])
                    fhi2[b + d] = stop;
                if (g0 < flo2[b + d])
                    flo2[b + d] = g0;
                if (b + d < nlo)
                    nlo = b + d;
                if (b + d > nhi)
                    nhi = b + d;
            }
            row_clear(row, &flo[b], &fhi[b]);
        }
        double *sw = q;
        q = q2;
        q2 = sw;
        uint64_t *sf = fhi;
        fhi = fhi2;
        fhi2 = sf;
        sf = flo;
        flo = flo2;
        flo2 = sf;
        if (nlo == UINT64_MAX) {
            lo = 1;
            hi = 0;
            break;
        }
        lo = nlo;
        hi = nhi;
    }
    memset(out, 0, W * sizeof *out);
    for (uint64_t b = lo; b <= hi; b++)
        for (uint64_t f = flo[b]; f <= fhi[b]; f++)
            out[f] += q[b * W + f];
    *lost = msum_get(&lostsum);
out:
    rbf__free(q);
    rbf__free(q2);
    rbf__free(sv);
    rbf__free(fhi);
    rbf__free(fhi2);
    rbf__free(flo);
    rbf__free(flo2);
    return rc;
}
