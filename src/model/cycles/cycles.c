/*
 * cycles.c -- the distribution of ticks per cycle, the forgetting
 * probabilities that follow from it by renewal arguments, and the average
 * false-positive rate of the two-phase N-bounded filter (docs/models.md 8).
 *
 * A tick is an arrival that the active filter does not hold (false
 * positives included): the renewal chain of the sigma-bounded model moves
 * on ticks (g_b counts them), and so does a real-user N-bounded cycle (N
 * bit-setting ticks plus the false positives between them).
 *
 * sigma-bounded.  A_b(n) = P(the chain is at level b just before its n-th
 * tick); A_0(1) = 1 and, with tau(b, d) the one-message step distribution,
 *
 *     A_b(n) = tau(b, 0) A_b(n-1) + sum_{d>=1} A_{b-d}(n-1) tau(b-d, d),
 *
 * restricted to b + d <= sigma; the mass with b + d > sigma ends the cycle
 * at its n-th tick: P(L = n) += A_b(n) sum_{d > sigma-b} tau(b, d).  A
 * retaining cycle starts with the retained message (the model's fresh
 * arrival at b = 0) and does not contain its trigger, so L = n - 1.  Levels
 * are processed in increasing order; a ring of k + 1 inflow rows, each kept
 * to the window of n where it has mass above 1e-28, so the cost is
 * O(k sigma W) with W the window (about 25 standard deviations of the
 * ticks needed to reach a level).
 *
 * real-user N-bounded.  Q_c(b, f) = P(B'_c = b, f false positives so far)
 * after c bit-setting messages.  At level b the number of false positives
 * before the next bit-setting message is geometric (P(j) = rho^j (1-rho)),
 * and the bit-setting message moves b -> b+d with tau(b,d)/(1-rho); the two
 * factors (1-rho) cancel:
 *
 *     S(f) = rho S(f-1) + Q_c(b, f),   Q_{c+1}(b+d, f) += S(f) tau(b, d),
 *
 * and L = N + f at c = N.  The marginal pass (f summed) gives the expected
 * false positives E_fp = sum_c E[rho/(1-rho)] and the frozen filter's rate
 * E[rho(B'_N)], hence the two-phase real-user rate
 *
 *     f^2_N = (E_fp + N E[rho(B'_N)]) / (N + E_fp)
 *
 * (each of the N bit-setting arrivals is a false positive through the
 * frozen filter with probability E[rho(B'_N)], independently of the active
 * filter: the same independence as f_sigma^2).  The oracle's cycle is N
 * ticks exactly and its two-phase rate 1 - (1 - exact_oracle)(1 - exact_worst).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_cycles.h"
#include "rbf_alloc.h"

#define CYC_TINY 1e-28
#define CYC_LOST 1e-13
#define CYC_MAX_LEN ((uint64_t)1 << 26)
#define CYC_MAX_CONV ((uint64_t)1 << 17) /* two-phase convolution is O(len^2) */

struct rbf_model_cycles {
    rbf_model_params p;
    rbf_model_cycle_spec s;
    double *pmf;   /* pmf[n], n = 0..len */
    uint64_t len;
    double mean, fp;
    double *ft, *fm;   /* P(R_tick <= g), P(R_mid <= g), g = 0..len */
    double *ft2, *fm2; /* two-phase: P(R + L' <= g), g = 0..2 len */
    double trig;       /* two-phase non-retaining sigma: the trigger, held nowhere */
    /* false positives by age (rbf_model_miss): phil[j] = P(L > j and the
     * cycle's (j+1)-th tick is a false positive), j = 0..len; xt, xm (and
     * xt2, xm2) the sums like ft, fm (ft2, fm2) weighted by them; rho_frozen
     * the frozen filter's rate; act_fp the active filter's average */
    double *phil, *xt, *xm, *xt2, *xm2;
    double rho_frozen, act_fp;
};

void rbf_model_cycle_spec_init(rbf_model_cycle_spec *s)
{
    if (!s)
        return;
    memset(s, 0, sizeof *s);
    s->phases = 1;
}

/* ---- sigma-bounded cycles */

typedef struct {
    double *v;
    uint64_t lo, hi; /* window with mass; lo > hi when empty */
} cyc_row;

static int sigma_pmf(const rbf_model_params *p, uint64_t sigma, uint64_t nmax, double *pmf,
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
static double *step_table(const rbf_model_params *p, uint64_t bmax)
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
static int nreal_marginal(const rbf_model_params *p, uint64_t N, const double *tau, uint64_t bmax,
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

/* Joint pass: P(f false positives in a cycle), f = 0..F, into out. */
static int nreal_joint(const rbf_model_params *p, uint64_t N, const double *tau, uint64_t bmax,
                       uint64_t F, double *out, double *phi, double *lost)
{
    const unsigned k = p->hashes;
    const uint64_t W = F + 1;
    if ((bmax + 1) > CYC_MAX_LEN / W * 4)
        return RBF_ENOMEM;
    double *q = rbf__calloc((bmax + 1) * W, sizeof *q), *q2 = rbf__calloc((bmax + 1) * W, sizeof *q2);
    double *sv = rbf__malloc(W * sizeof *sv);
    uint64_t *fhi = rbf__calloc(bmax + 1, sizeof *fhi), *fhi2 = rbf__calloc(bmax + 1, sizeof *fhi2);
    int rc = RBF_OK;
    if (!q || !q2 || !sv || !fhi || !fhi2) {
        rc = RBF_ENOMEM;
        goto out;
    }
    q[0] = 1.0;
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
            uint64_t top = fhi[b];
            const double *t = tau + b * (k + 1);
            double rho = t[0];
            double any = 0.0;
            for (uint64_t f = 0; f <= top; f++)
                any += row[f];
            if (any < CYC_TINY) {
                memset(row, 0, (top + 1) * sizeof *row);
                fhi[b] = 0;
                continue;
            }
            if (rho >= 1.0) {
                msum_add(&lostsum, any);
                memset(row, 0, (top + 1) * sizeof *row);
                fhi[b] = 0;
                continue;
            }
            /* S(f) = rho S(f-1) + row(f), extended past top while it matters */
            double prev = 0.0;
            uint64_t f;
            for (f = 0; f <= F; f++) {
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
            uint64_t stop = f;
            /* the tick after c bit-setting ones and f false positives (its
             * (c + f + 1)-th) is a false positive with rho */
            for (uint64_t g = 0; g <= stop; g++)
                phi[c + g] += rho * sv[g];
            for (unsigned d = 1; d <= k; d++) {
                if (t[d] <= 0.0)
                    continue;
                if (b + d > bmax) {
                    continue;
                }
                double *dst = q2 + (b + d) * W;
                for (uint64_t g = 0; g <= stop; g++)
                    dst[g] += sv[g] * t[d];
                if (stop > fhi2[b + d])
                    fhi2[b + d] = stop;
                if (b + d < nlo)
                    nlo = b + d;
                if (b + d > nhi)
                    nhi = b + d;
            }
            memset(row, 0, (top + 1) * sizeof *row);
            fhi[b] = 0;
        }
        double *sw = q;
        q = q2;
        q2 = sw;
        uint64_t *sf = fhi;
        fhi = fhi2;
        fhi2 = sf;
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
        for (uint64_t f = 0; f <= fhi[b]; f++)
            out[f] += q[b * W + f];
    *lost = msum_get(&lostsum);
out:
    rbf__free(q);
    rbf__free(q2);
    rbf__free(sv);
    rbf__free(fhi);
    rbf__free(fhi2);
    return rc;
}

/* ---- building the object */

/* The oracle's false positives by age: E[rho(B_j)], j < N, to second
 * order in the occupancy's spread (E[B_j], Var(B_j) exact), scaled so that
 * they average to the exact exact_oracle.  They only weigh the forgotten
 * repeats (rbf_model_miss): 1e-4 of rho is far below that model's error. */
static void oracle_phi(const rbf_model_params *p, uint64_t N, double oracle, double *phi)
{
    const double M = (double)p->bits, k = (double)p->hashes;
    const int nc = (p->hashing == RBF_NON_COLLIDING);
    const double l1 = nc ? log1p(-k / M) : k * log1p(-1.0 / M);
    const double l2 = nc ? log1p(-k / M) + log1p(-k / (M - 1.0)) : k * log1p(-2.0 / M);
    model_sum tot;
    msum_init(&tot);
    for (uint64_t j = 0; j < N; j++) {
        double c1 = exp((double)j * l1), c2 = exp((double)j * l2);
        double mu = M * -expm1((double)j * l1);
        double var = M * c1 + M * (M - 1.0) * c2 - M * M * c1 * c1;
        if (!(var > 0.0))
            var = 0.0;
        double r = 0.0;
        if (mu > k) {
            double s1 = 0.0, s2 = 0.0, lr = 0.0;
            for (unsigned i = 0; i < p->hashes; i++) {
                double x = nc ? mu - (double)i : mu, d = nc ? M - (double)i : M;
                lr += log(x / d);
                s1 += 1.0 / x;
                s2 += 1.0 / (x * x);
            }
            double rho = exp(lr);
            r = rho * (1.0 + 0.5 * (s1 * s1 - s2) * var);
        }
        phi[j] = r > 0.0 ? r : 0.0;
        msum_add(&tot, phi[j]);
    }
    double sum = msum_get(&tot);
    if (sum > 0.0) {
        double f = oracle * (double)N / sum;
        for (uint64_t j = 0; j < N; j++)
            phi[j] *= f;
    }
}

static int check_spec(const rbf_model_params *p, const rbf_model_cycle_spec *s)
{
    int rc = rbf__model_check_params(p);
    if (rc)
        return rc;
    if (!s || (s->phases != 1 && s->phases != 2) || (s->oracle != 0 && s->oracle != 1))
        return RBF_EINVAL;
    for (size_t i = 0; i < sizeof s->reserved_ / sizeof s->reserved_[0]; i++)
        if (s->reserved_[i])
            return RBF_EINVAL;
    if ((s->sigma == 0) == (s->messages == 0))
        return RBF_EINVAL;
    if (s->sigma) {
        if (s->sigma >= p->bits || s->oracle)
            return RBF_EINVAL;
        if ((p->recycle == RBF_RETAINING) && s->sigma < p->hashes)
            return RBF_EINVAL;
    } else if ((p->recycle == RBF_RETAINING)) {
        return RBF_EINVAL;
    }
    return RBF_OK;
}

static int fill_pmf(rbf_model_cycles *c)
{
    const rbf_model_params *p = &c->p;
    const rbf_model_cycle_spec *s = &c->s;
    int rc;
    if (s->sigma) {
        rbf_model_sigma_result sr;
        rbf_model_params q = *p;
        q.method = RBF_MODEL_FAST;
        q.progress = NULL;
        /* E[ticks to pass sigma] <= E[N_0] + g_sigma + 1: start from it */
        if ((rc = rbf_model_sigma(&q, s->sigma, &sr)))
            return rc;
        uint64_t nmax = (uint64_t)(3.0 * sr.expected_messages) + 200;
        for (;;) {
            if (nmax > CYC_MAX_LEN)
                return RBF_ENOMEM;
            double *pm = rbf__malloc((nmax + 1) * sizeof *pm);
            double *ph = rbf__malloc((nmax + 2) * sizeof *ph);
            if (!pm || !ph) {
                rbf__free(pm);
                rbf__free(ph);
                return RBF_ENOMEM;
            }
            double lost = 0.0, rend = 0.0;
            rc = sigma_pmf(p, s->sigma, nmax, pm, ph, &rend, &lost);
            if (rc) {
                rbf__free(pm);
                rbf__free(ph);
                return rc;
            }
            /* tail beyond nmax must be negligible */
            double tailmass = lost;
            if (tailmass < CYC_LOST) {
                const unsigned ret = (p->recycle == RBF_RETAINING);
                if (ret) { /* L = n - 1 */
                    memmove(pm, pm + 1, nmax * sizeof *pm);
                    pm[nmax] = 0.0;
                }
                /* P(L > j) is P(tick 1 + ret + j reached) */
                memmove(ph, ph + 1 + ret, (nmax + 1 - ret) * sizeof *ph);
                memset(ph + nmax + 1 - ret, 0, (1 + ret) * sizeof *ph);
                c->pmf = pm;
                c->phil = ph;
                c->rho_frozen = rend;
                c->len = nmax;
                break;
            }
            rbf__free(pm);
            rbf__free(ph);
            nmax *= 2;
        }
        if (s->phases == 1) {
            c->fp = sr.fp;
        } else {
            rbf_model_two_phase_result tr;
            if ((rc = rbf_model_two_phase(&q, s->sigma, &tr)))
                return rc;
            c->fp = tr.fp;
        }
    } else if (s->oracle) {
        const uint64_t N = s->messages;
        if (N > CYC_MAX_LEN)
            return RBF_ENOMEM;
        c->pmf = rbf__calloc(N + 1, sizeof *c->pmf);
        if (!c->pmf)
            return RBF_ENOMEM;
        c->pmf[N] = 1.0;
        c->len = N;
        rbf_model_n_result nr;
        rbf_model_params q = *p;
        q.progress = NULL;
        if ((rc = rbf_model_nbounded(&q, N, &nr)))
            return rc;
        c->fp = s->phases == 1 ? nr.exact_oracle
                               : model_clamp01(1.0 - (1.0 - nr.exact_oracle) * (1.0 - nr.exact_worst));
        c->rho_frozen = nr.exact_worst;
        if (!(c->phil = rbf__calloc(N + 2, sizeof *c->phil)))
            return RBF_ENOMEM;
        oracle_phi(p, N, nr.exact_oracle, c->phil);
    } else {
        const uint64_t N = s->messages;
        uint64_t bmax = p->bits;
        if (N <= UINT64_MAX / p->hashes && N * p->hashes < bmax)
            bmax = N * p->hashes;
        if (bmax > CYC_MAX_LEN)
            return RBF_ENOMEM;
        double *tau = step_table(p, bmax);
        if (!tau)
            return RBF_ENOMEM;
        double efp = 0.0, rhoF = 0.0;
        rc = nreal_marginal(p, N, tau, bmax, &efp, &rhoF);
        if (rc) {
            rbf__free(tau);
            return rc;
        }
        c->fp = s->phases == 1 ? model_clamp01(efp / ((double)N + efp))
                               : model_clamp01((efp + (double)N * rhoF) / ((double)N + efp));
        uint64_t F = (uint64_t)(2.0 * efp + 30.0 * sqrt(efp + 1.0)) + 30;
        for (;;) {
            if (N + F > CYC_MAX_LEN) {
                rbf__free(tau);
                return RBF_ENOMEM;
            }
            double *fd = rbf__malloc((F + 1) * sizeof *fd);
            double *ph = rbf__calloc(N + F + 2, sizeof *ph);
            if (!fd || !ph) {
                rbf__free(fd);
                rbf__free(ph);
                rbf__free(tau);
                return RBF_ENOMEM;
            }
            double lost = 0.0;
            rc = nreal_joint(p, N, tau, bmax, F, fd, ph, &lost);
            if (rc) {
                rbf__free(fd);
                rbf__free(ph);
                rbf__free(tau);
                return rc;
            }
            if (lost < CYC_LOST) {
                c->len = N + F;
                c->pmf = rbf__calloc(c->len + 1, sizeof *c->pmf);
                if (!c->pmf) {
                    rbf__free(fd);
                    rbf__free(tau);
                    return RBF_ENOMEM;
                }
                memcpy(c->pmf + N, fd, (F + 1) * sizeof *fd);
                rbf__free(fd);
                c->phil = ph;
                c->rho_frozen = rhoF;
                break;
            }
            rbf__free(fd);
            rbf__free(ph);
            F *= 2;
        }
        rbf__free(tau);
    }
    /* trim the zero tail, normalise (the truncated mass is < 1e-13) */
    while (c->len > 0 && !(c->pmf[c->len] > 0.0))
        c->len--;
    model_sum tot, mean;
    msum_init(&tot);
    msum_init(&mean);
    for (uint64_t n = 0; n <= c->len; n++) {
        msum_add(&tot, c->pmf[n]);
        msum_add(&mean, (double)n * c->pmf[n]);
    }
    double t = msum_get(&tot);
    if (!(t > 0.0))
        return RBF_EINVAL;
    for (uint64_t n = 0; n <= c->len; n++) {
        c->pmf[n] /= t;
        c->phil[n] /= t;
    }
    if (s->sigma)
        c->rho_frozen = model_clamp01(c->rho_frozen / t);
    c->mean = msum_get(&mean) / t;
    return RBF_OK;
}

/* cumulative sums in place */
static void cumsum(double *x, uint64_t n)
{
    model_sum s;
    msum_init(&s);
    for (uint64_t i = 0; i < n; i++) {
        msum_add(&s, x[i]);
        x[i] = model_clamp01(msum_get(&s));
    }
}

static int fill_forget(rbf_model_cycles *c)
{
    const uint64_t len = c->len;
    const int ret = c->s.sigma && (c->p.recycle == RBF_RETAINING);
    double *surv = rbf__malloc((len + 2) * sizeof *surv); /* surv[j] = P(L > j) */
    double *rt = rbf__calloc(len + 2, sizeof *rt), *rm = rbf__calloc(len + 2, sizeof *rm);
    c->ft = rbf__malloc((len + 2) * sizeof *c->ft);
    c->fm = rbf__malloc((len + 2) * sizeof *c->fm);
    c->xt = rbf__calloc(len + 2, sizeof *c->xt);
    c->xm = rbf__calloc(len + 2, sizeof *c->xm);
    if (!surv || !rt || !rm || !c->ft || !c->fm || !c->xt || !c->xm) {
        rbf__free(surv);
        rbf__free(rt);
        rbf__free(rm);
        return RBF_ENOMEM;
    }
    model_sum s;
    msum_init(&s);
    surv[len + 1] = 0.0;
    for (uint64_t j = len + 1; j-- > 0;) {
        surv[j] = msum_get(&s); /* P(L > j) */
        msum_add(&s, c->pmf[j]);
    }
    const double E = c->mean;
    /* R_tick: non-retaining / N: P(R = j) = P(L > j)/E, j = 0..len-1;
     * retaining: P(R = j) = P(L >= j)/E, j = 1..len.  R_mid: P(L >= j)/E. */
    /* the same with false positives: the repeat's age in its cycle has the
     * law of R (time reversal), and it is a false positive of a filter
     * that young with phil/surv at the same index */
    model_sum af;
    msum_init(&af);
    for (uint64_t j = 0; j <= len + 1; j++) {
        double ge = j == 0 ? 0.0 : surv[j - 1]; /* P(L >= j), j >= 1 */
        double pge = j == 0 ? 0.0 : c->phil[j - 1];
        double pgt = j <= len ? c->phil[j] : 0.0;
        rt[j] = (ret ? ge : (j <= len ? surv[j] : 0.0)) / E;
        rm[j] = ge / E;
        c->xt[j] = (ret ? pge : pgt) / E;
        c->xm[j] = pge / E;
        msum_add(&af, c->xt[j]);
    }
    c->act_fp = model_clamp01(msum_get(&af));
    memcpy(c->ft, rt, (len + 2) * sizeof *rt);
    memcpy(c->fm, rm, (len + 2) * sizeof *rm);
    cumsum(c->ft, len + 2);
    cumsum(c->fm, len + 2);
    int rc = RBF_OK;
    if (c->s.phases == 2) {
        if (len > CYC_MAX_CONV) {
            rc = RBF_ENOMEM;
            goto out;
        }
        const uint64_t n2 = 2 * len + 3;
        c->ft2 = rbf__calloc(n2, sizeof *c->ft2);
        c->fm2 = rbf__calloc(n2, sizeof *c->fm2);
        c->xt2 = rbf__calloc(n2, sizeof *c->xt2);
        c->xm2 = rbf__calloc(n2, sizeof *c->xm2);
        if (!c->ft2 || !c->fm2 || !c->xt2 || !c->xm2) {
            rc = RBF_ENOMEM;
            goto out;
        }
        if (c->s.sigma && !ret) {
            c->trig = rt[0]; /* R = 0 is the trigger: held by neither filter */
            rt[0] = 0.0;
        }
        for (uint64_t j = 0; j <= len + 1; j++) {
            double a = rt[j], b = rm[j], xa = c->xt[j], xb = c->xm[j];
            if (a == 0.0 && b == 0.0)
                continue;
            for (uint64_t l = 0; l <= len; l++) {
                double pl = c->pmf[l];
                if (pl == 0.0)
                    continue;
                c->ft2[j + l] += a * pl;
                c->fm2[j + l] += b * pl;
                c->xt2[j + l] += xa * pl;
                c->xm2[j + l] += xb * pl;
            }
        }
        cumsum(c->ft2, n2);
        cumsum(c->fm2, n2);
        cumsum(c->xt2, n2);
        cumsum(c->xm2, n2);
    }
out:
    cumsum(c->xt, len + 2);
    cumsum(c->xm, len + 2);
    rbf__free(surv);
    rbf__free(rt);
    rbf__free(rm);
    return rc;
}

/* ---- forgetting at one gap, from a tick
 *
 * The forgetting probabilities after g ticks depend on the cycle-length
 * law only through P(L = n) for n <= g + 1 and E[L].  The first come from
 * sigma_pmf truncated at n = g + 2 (its values there are the untruncated
 * ones: A_b(n) depends only on smaller n), so the window in n is at most
 * g + 2 wide and levels above k (g + 2) are never reached; E[L] is the
 * renewal sum sum_{b <= sigma} g_b = E[N_0](sigma + 1) of the
 * non-retaining chain (minus the retained message when retaining).  Cost
 * O(k min(sigma, k g) min(W, g)) instead of O(k sigma W) and the O(len^2)
 * two-phase convolution: the planner's screen (plan_fn.c). */
/* A bound on P(B_n > sigma), B_n the set bits after n messages: the bit
 * indicators are negatively associated (balls in bins; for non-colliding
 * hashing each message's k distinct bits form a permutation distribution),
 * so the Chernoff bound of independent bits holds:
 * P(B_n >= a) <= exp(-M D(a/M || p)), p = 1 - q^n the chance that a given
 * bit is set, for a/M > p; 1 otherwise. */
double rbf__model_fill_tail_bound(const rbf_model_params *p, uint64_t n, uint64_t sigma)
{
    const double M = (double)p->bits, k = (double)p->hashes;
    const double lq = p->hashing == RBF_NON_COLLIDING ? log1p(-k / M) : k * log1p(-1.0 / M);
    const double lnq = (double)n * lq;     /* log P(a given bit is clear) */
    const double x = ((double)sigma + 1.0) / M; /* < 1: the caller has sigma + 1 < M */
    const double pset = -expm1(lnq);
    if (!(x > pset))
        return 1.0;
    const double D = x * log(x / pset) + (1.0 - x) * (log1p(-x) - lnq);
    return exp(-M * D);
}

/* A bound on P(B_n <= sigma): the lower Chernoff tail of the same
 * negatively associated indicators, P(B_n <= a) <= exp(-M D(a/M || p)) for
 * a/M < p; 1 otherwise. */
double rbf__model_fill_low_bound(const rbf_model_params *p, uint64_t n, uint64_t sigma)
{
    const double M = (double)p->bits, k = (double)p->hashes;
    const double lq = p->hashing == RBF_NON_COLLIDING ? log1p(-k / M) : k * log1p(-1.0 / M);
    const double lnq = (double)n * lq;
    const double x = (double)sigma / M;
    const double pset = -expm1(lnq);
    if (!(x < pset))
        return 1.0;
    /* x log(x/p) + (1 - x) log((1 - x)/(1 - p)), with 0 log 0 = 0 */
    const double D = (x > 0.0 ? x * log(x / pset) : 0.0) + (1.0 - x) * (log1p(-x) - lnq);
    return exp(-M * D);
}

int rbf__model_forget_bounds(const rbf_model_params *p, uint64_t sigma, unsigned phases,
                             uint64_t g, double *mean, double *lo, double *hi)
{
    rbf_model_cycle_spec spec;
    rbf_model_cycle_spec_init(&spec);
    spec.phases = phases;
    spec.sigma = sigma;
    int rc = check_spec(p, &spec);
    if (rc)
        return rc;
    if (!mean || !lo || !hi || sigma + 1 >= p->bits)
        return RBF_EINVAL;
    const int ret = (p->recycle == RBF_RETAINING);
    rbf_model_params q = *p;
    q.recycle = RBF_NON_RETAINING;
    q.progress = NULL;
    rbf_model_sigma_result sr;
    if ((rc = rbf_model_sigma(&q, sigma + 1, &sr)))
        return rc;
    const double E = sr.expected_messages - (ret ? 1.0 : 0.0);
    *mean = E;
    /* Bounds from the Chernoff bounds on the fill, both tails: L <= n iff
     * B_{n+ret} > sigma (non-retaining: L is the tick that crosses;
     * retaining: L = n' - 1), so Fl(n) <= P(L <= n) <= Fu(n) with
     * Fu = min(1, upper tail), Fl = max(0, 1 - lower tail).  Then
     *   P(R = j) = P(L > j - ret)/E in [(1 - Fu)/E, (1 - Fl)/E] (j >= ret),
     *   one phase:  f = sum_{j<=g} P(R = j),
     *   two phases: f = trig + sum_{l<=g} P(L' = l) S(g - l),
     *               S(m) = P(0 < R <= m), nondecreasing, so L' between the
     *               laws with distribution functions Fu (stochastically
     *               smaller) and Fl (larger) bounds the sum;
     *   trig = 1/E non-retaining (the trigger is held nowhere), 0 retaining. */
    if (g > CYC_MAX_CONV) {
        /* Past 2^17 ticks: the same bounds, looser, in O(1) memory and
         * 4096 blocks (Fu and Fl are nondecreasing: a block's sum is
         * bracketed by its length times the values at its ends):
         *   one phase:  (g+1-ret - sum_{n<=g-ret} Fu(n))/E <= f <= (g+1-ret - sum Fl(n))/E
         *   two phases: trig <= f <= trig + sum_{n<g} Fu(n)/E.
         * Nothing exact is computed here: *lo < *hi may remain. */
        const uint64_t last = g - (uint64_t)ret; /* the n of P(L > n) in the one-phase sum */
        const uint64_t top = phases == 1 ? last : g - 1, step = top / 4096 + 1;
        model_sum su, sl;
        msum_init(&su);
        msum_init(&sl);
        for (uint64_t a = 0; a <= top; a += step) {
            uint64_t b = a + step - 1 < top ? a + step - 1 : top;
            double fu = rbf__model_fill_tail_bound(p, b + (ret ? 1 : 0), sigma);
            double fl = 1.0 - rbf__model_fill_low_bound(p, a + (ret ? 1 : 0), sigma);
            msum_add(&su, (double)(b - a + 1) * (fu < 1.0 ? fu : 1.0));
            msum_add(&sl, (double)(b - a + 1) * (fl > 0.0 ? fl : 0.0));
        }
        const double trig = ret ? 0.0 : 1.0 / E, cnt = (double)last + 1.0;
        if (phases == 1) {
            *lo = model_clamp01((cnt - msum_get(&su)) / E);
            *hi = model_clamp01((cnt - msum_get(&sl)) / E);
        } else {
            *lo = model_clamp01(trig);
            *hi = model_clamp01(trig + msum_get(&su) / E);
        }
        return RBF_OK;
    }
    const uint64_t gn = g + 1;
    double *Fu = rbf__malloc(gn * sizeof *Fu), *Fl = rbf__malloc(gn * sizeof *Fl);
    double *Su = rbf__malloc(gn * sizeof *Su), *Sl = rbf__malloc(gn * sizeof *Sl);
    if (!Fu || !Fl || !Su || !Sl) {
        rbf__free(Fu);
        rbf__free(Fl);
        rbf__free(Su);
        rbf__free(Sl);
        return RBF_ENOMEM;
    }
    /* Both bounds grow with n (the chance a bit is set does) and are 0 or
     * 1 exactly away from the crossing n* of E[fill] and sigma: the upper
     * tail underflows to 0 well below n* (found by bisection) and is 1 from
     * n*; the lower one's complement is 0 up to n* and 1 once it
     * underflows.  Only the window between is computed: some thousands of
     * ticks instead of 2 (g + 1) evaluations (the --remember least-memory
     * search calls this for every candidate) */
    const uint64_t r1 = ret ? 1 : 0;
    uint64_t z0 = 0; /* Fu[n] = 0 for n < z0 */
    if (rbf__model_fill_tail_bound(p, r1, sigma) == 0.0) {
        uint64_t a = 0, b = g + 1; /* tail(a) == 0; b: tail != 0 or past g */
        while (b - a > 1) {
            uint64_t m = a + (b - a) / 2;
            if (rbf__model_fill_tail_bound(p, m + r1, sigma) == 0.0)
                a = m;
            else
                b = m;
        }
        z0 = b;
    }
    uint64_t o0 = 0; /* Fl[n] = 0 (the lower tail bound is 1) for n < o0 */
    if (rbf__model_fill_low_bound(p, r1, sigma) >= 1.0) {
        uint64_t a = 0, b = g + 1;
        while (b - a > 1) {
            uint64_t m = a + (b - a) / 2;
            if (rbf__model_fill_low_bound(p, m + r1, sigma) >= 1.0)
                a = m;
            else
                b = m;
        }
        o0 = b;
    }
    int uone = 0, lone = 0;
    for (uint64_t n = 0; n <= g; n++) {
        double u = n < z0 ? 0.0 : uone ? 1.0 : rbf__model_fill_tail_bound(p, n + r1, sigma);
        double v = n < o0 ? 1.0 : lone ? 0.0 : rbf__model_fill_low_bound(p, n + r1, sigma);
        Fu[n] = u < 1.0 ? u : 1.0;
        Fl[n] = v < 1.0 ? 1.0 - v : 0.0;
        if (n && Fu[n] < Fu[n - 1]) /* distribution functions: nondecreasing */
            Fu[n] = Fu[n - 1];
        if (n && Fl[n] < Fl[n - 1])
            Fl[n] = Fl[n - 1];
        uone = Fu[n] >= 1.0;
        lone = Fl[n] >= 1.0;
    }
    /* P(R = j) bounds, j = 0..g, and S(m) = sum_{1<=j<=m} */
    model_sum r_lo, r_hi, s_lo, s_hi;
    msum_init(&r_lo);
    msum_init(&r_hi);
    msum_init(&s_lo);
    msum_init(&s_hi);
    for (uint64_t j = 0; j <= g; j++) {
        double rl = 0.0, rh = 0.0;
        if (j >= (uint64_t)ret) {
            uint64_t i = j - (uint64_t)ret;
            rl = (1.0 - Fu[i]) / E;
            rh = (1.0 - Fl[i]) / E;
        }
        msum_add(&r_lo, rl);
        msum_add(&r_hi, rh);
        if (j >= 1) {
            msum_add(&s_lo, rl);
            msum_add(&s_hi, rh);
        }
        Sl[j] = msum_get(&s_lo);
        Su[j] = msum_get(&s_hi);
    }
    const double trig = ret ? 0.0 : 1.0 / E;
    if (phases == 1) {
        *lo = model_clamp01(msum_get(&r_lo));
        *hi = model_clamp01(msum_get(&r_hi));
    } else {
        model_sum a, b;
        msum_init(&a);
        msum_init(&b);
        for (uint64_t l = 0; l <= g; l++) {
            double du = Fu[l] - (l ? Fu[l - 1] : 0.0), dl = Fl[l] - (l ? Fl[l - 1] : 0.0);
            msum_add(&a, du * Su[g - l]); /* L' as small as Fu lets it be: the upper bound */
            msum_add(&b, dl * Sl[g - l]); /* as large as Fl lets it be: the lower bound */
        }
        *lo = model_clamp01(trig + msum_get(&b));
        *hi = model_clamp01(trig + msum_get(&a));
    }
    rbf__free(Fu);
    rbf__free(Fl);
    rbf__free(Su);
    rbf__free(Sl);
    return RBF_OK;
}

int rbf__model_forget_law(const rbf_model_params *p, uint64_t sigma, unsigned phases, uint64_t g,
                          double E, double *out)
{
    if (!out || g > CYC_MAX_CONV || (phases != 1 && phases != 2))
        return RBF_EINVAL;
    const int ret = (p->recycle == RBF_RETAINING);
    int rc;
    const uint64_t nmax = g + 2;
    double *pm = rbf__malloc((nmax + 1) * sizeof *pm);
    double *rt = rbf__calloc(nmax + 2, sizeof *rt); /* sigma_pmf's phi first */
    if (!pm || !rt) {
        rbf__free(pm);
        rbf__free(rt);
        return RBF_ENOMEM;
    }
    double lost = 0.0, rend = 0.0;
    if ((rc = sigma_pmf(p, sigma, nmax, pm, rt, &rend, &lost)))
        goto done;
    memset(rt, 0, (nmax + 2) * sizeof *rt);
    if (ret) { /* L = n - 1 */
        memmove(pm, pm + 1, nmax * sizeof *pm);
        pm[nmax] = 0.0;
    }
    /* rt[j] = P(R_tick = j), j = 0..g: non-retaining P(L > j)/E,
     * retaining P(L >= j)/E for j >= 1 */
    model_sum cdf;
    msum_init(&cdf);
    for (uint64_t j = 0; j <= g; j++) {
        double ge = 1.0 - msum_get(&cdf); /* P(L >= j) */
        msum_add(&cdf, pm[j]);
        double gt = 1.0 - msum_get(&cdf); /* P(L > j) */
        rt[j] = (ret ? (j ? ge : 0.0) : gt) / E;
    }
    model_sum f;
    msum_init(&f);
    if (phases == 1) {
        for (uint64_t j = 0; j <= g; j++)
            msum_add(&f, rt[j]);
        *out = model_clamp01(msum_get(&f));
    } else {
        /* the message is forgotten when the active cycle ends (R) and the
         * next one ends too (L'): P(R + L' <= g); a non-retaining trigger
         * (R = 0) is held nowhere */
        const double trig0 = rt[0];
        if (!ret)
            rt[0] = 0.0;
        cumsum(rt, g + 1); /* rt[m] = P(0 < R <= m) */
        for (uint64_t l = 0; l <= g; l++)
            if (pm[l] != 0.0)
                msum_add(&f, pm[l] * rt[g - l]);
        *out = model_clamp01((ret ? 0.0 : trig0) + msum_get(&f));
    }
done:
    rbf__free(pm);
    rbf__free(rt);
    return rc;
}

int rbf__model_forget_sigma(const rbf_model_params *p, uint64_t sigma, unsigned phases,
                            uint64_t g, double *lo, double *hi, int exact)
{
    double E;
    int rc = rbf__model_forget_bounds(p, sigma, phases, g, &E, lo, hi);
    if (rc || !exact || g > CYC_MAX_CONV || *hi - *lo <= 1e-12 * *hi)
        return rc;
    double f;
    if ((rc = rbf__model_forget_law(p, sigma, phases, g, E, &f)))
        return rc;
    *lo = *hi = f;
    return RBF_OK;
}

int rbf_model_cycles_new(const rbf_model_params *p, const rbf_model_cycle_spec *s,
                         rbf_model_cycles **out)
{
    if (!out)
        return RBF_EINVAL;
    *out = NULL;
    int rc = check_spec(p, s);
    if (rc)
        return rc;
    rbf_model_cycles *c = rbf__calloc(1, sizeof *c);
    if (!c)
        return RBF_ENOMEM;
    c->p = *p;
    c->s = *s;
    if ((rc = fill_pmf(c)) || (rc = fill_forget(c))) {
        rbf_model_cycles_free(c);
        return rc;
    }
    *out = c;
    return RBF_OK;
}

void rbf_model_cycles_free(rbf_model_cycles *c)
{
    if (!c)
        return;
    rbf__free(c->pmf);
    rbf__free(c->ft);
    rbf__free(c->fm);
    rbf__free(c->ft2);
    rbf__free(c->fm2);
    rbf__free(c->phil);
    rbf__free(c->xt);
    rbf__free(c->xm);
    rbf__free(c->xt2);
    rbf__free(c->xm2);
    rbf__free(c);
}

double rbf_model_cycles_pmf(const rbf_model_cycles *c, uint64_t n)
{
    return c && n <= c->len ? c->pmf[n] : 0.0;
}

uint64_t rbf_model_cycles_max(const rbf_model_cycles *c) { return c ? c->len : 0; }

double rbf_model_cycles_mean(const rbf_model_cycles *c) { return c ? c->mean : 0.0; }

double rbf_model_cycles_fp(const rbf_model_cycles *c) { return c ? c->fp : 0.0; }

double rbf_model_forget(const rbf_model_cycles *c, uint64_t g, rbf_model_from from, int active_only)
{
    if (!c)
        return 0.0;
    if (c->s.phases == 1 || active_only) {
        const double *f = from == RBF_MODEL_FROM_HELD ? c->fm : c->ft;
        return g <= c->len + 1 ? f[g] : 1.0;
    }
    if (from == RBF_MODEL_FROM_HELD)
        return g <= 2 * c->len + 2 ? c->fm2[g] : 1.0;
    return model_clamp01(c->trig + (g <= 2 * c->len + 2 ? c->ft2[g] : 1.0 - c->trig));
}

double rbf_model_miss(const rbf_model_cycles *c, uint64_t g, rbf_model_from from)
{
    if (!c)
        return 0.0;
    const uint64_t len = c->len;
    if (c->s.phases == 1) {
        const double *f = from == RBF_MODEL_FROM_HELD ? c->fm : c->ft;
        const double *x = from == RBF_MODEL_FROM_HELD ? c->xm : c->xt;
        double F = g <= len + 1 ? f[g] : 1.0, X = g <= len + 1 ? x[g] : x[len + 1];
        return model_clamp01(F - X);
    }
    const double *f = from == RBF_MODEL_FROM_HELD ? c->fm2 : c->ft2;
    const double *x = from == RBF_MODEL_FROM_HELD ? c->xm2 : c->xt2;
    const uint64_t n2 = 2 * len + 2;
    double F = g <= n2 ? f[g] : f[n2], X = g <= n2 ? x[g] : x[n2];
    double m = (1.0 - c->rho_frozen) * (F - X);
    if (from == RBF_MODEL_FROM_TICK) /* the trigger, held nowhere (its false positives are in X:
                                        the ages' law, time-reversed, includes it) */
        m += c->trig * (1.0 - c->rho_frozen);
    return model_clamp01(m);
}

void rbf__model_cycles_tables(const rbf_model_cycles *c, const double **pmf, const double **phil,
                              uint64_t *len, double *rho_frozen)
{
    *pmf = c->pmf;
    *phil = c->phil;
    *len = c->len;
    *rho_frozen = c->rho_frozen;
}
