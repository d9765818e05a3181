/*
 * paper.c -- the paper's own method for the sigma-bounded model (paper
 * sections IV-C to IV-G), kept as an independent second implementation of
 * the renewal pass in renewal.c: tests hold the two equal, and the benchmark
 * compares their speed.
 *
 * 1. Transition probabilities tau_k(i, j) of one message from i to j bits,
 *    by the paper's recursion over hashes: hash h (0-based) lands on a set
 *    bit with probability x_h(j) (j/M colliding, (j-h)/(M-h) non-colliding)
 *    and otherwise adds one bit; mass that would pass sigma is the paper's
 *    backward transition (to 0 non-retaining; retaining: to the states of a
 *    fresh filter holding the retained message).  O(k^2) per state.
 * 2. Non-retaining: the paper's forward recursion (its equation 12) from a
 *    guess pi_0 = 1, then normalisation.
 *    Retaining: the paper's linear system (its equations 12 and 13),
 *    lower-banded with bandwidth k plus a border: the columns of the states
 *    sigma-k+1..sigma, whose backward transitions feed states 1..k.  The
 *    system is singular (a stationary distribution); we fix the gauge
 *    pi_sigma = 1, drop its (redundant) equation, and eliminate top-down
 *    without pivoting: the matrix is a column diagonally dominant M-matrix
 *    (diagonal 1 - tau(i,i) = sum of the other transitions out of i,
 *    off-diagonals -tau(j,i) <= 0), for which Gaussian elimination without
 *    pivoting is stable and keeps every quantity of one sign (no
 *    cancellation).  Each of the O(M) band rows is reduced by k pivot rows
 *    at O(k) each: O(k^2 M), the paper's count.  The final border block
 *    (k-1 unknowns) is solved densely.  Instead of back-substituting row by
 *    row we accumulate the two linear functionals we need (sum of pi, sum
 *    of pi rho), so no row has to be stored.
 * 3. f_sigma^1 = sum pi_i rho(i) (paper's equation 15), E[N_0] by the
 *    paper's backward recursion (section IV-F), and for two-phase the
 *    frozen distribution F_i proportional to pi_i tau(i, beyond sigma).
 *
 * The denominators 1 - tau(i,i) are computed as the sum of the other
 * transitions out of i, never by subtraction.
 */
#include <stdlib.h>
#include <string.h>

#include "model_sigma.h"
#include "rbf_alloc.h"

typedef struct paper_ctx {
    uint64_t M;
    unsigned k;
    int nc;
    uint64_t sigma;
} paper_ctx;

/* Probability that hash h stays on the level: x_h(j). */
static inline double px(const paper_ctx *c, unsigned h, uint64_t j)
{
    if (!c->nc)
        return (double)j / (double)c->M;
    return j >= h ? (double)(j - h) / (double)(c->M - h) : 0.0;
}

/* Probability that hash h adds a bit at level j: 1 - x_h(j). */
static inline double pmove(const paper_ctx *c, unsigned h, uint64_t j)
{
    if (!c->nc)
        return (double)(c->M - j) / (double)c->M;
    return (double)(c->M - j) / (double)(c->M - h);
}

/* The paper's tau recursion for the row of state i with threshold `lim`:
 * row[d] = tau_k(i, i+d) for d = 0..k with i+d <= lim, *back = probability
 * the message would pass lim, *leave = 1 - tau_k(i, i) as a sum. */
static void tau_row(const paper_ctx *c, uint64_t i, uint64_t lim, double *row, double *back,
                    double *leave)
{
    const unsigned k = c->k;
    const uint64_t room = lim - i; /* levels the message may add */
    memset(row, 0, (k + 1) * sizeof *row);
    row[0] = 1.0;
    double bk = 0.0;
    for (unsigned h = 0; h < k; h++) {
        /* after h hashes the support is d = 0..min(h, room) */
        uint64_t top = h < room ? h : room;
        if (room <= h)
            bk += row[room] * pmove(c, h, lim); /* tau_{h}(i, lim) -> beyond */
        uint64_t newtop = (uint64_t)h + 1 < room ? (uint64_t)h + 1 : room;
        for (uint64_t d = newtop;; d--) {
            double stay = d <= top ? row[d] * px(c, h, i + d) : 0.0;
            double up = d >= 1 && d - 1 <= top ? row[d - 1] * pmove(c, h, i + d - 1) : 0.0;
            row[d] = stay + up;
            if (d == 0)
                break;
        }
    }
    *back = bk;
    model_sum s;
    msum_init(&s);
    msum_add(&s, bk);
    for (unsigned d = 1; d <= k; d++)
        msum_add(&s, row[d]);
    *leave = msum_get(&s);
}

/* rho(i) the paper's way: (i/M)^k, or C(i,k)/C(M,k) by the running
 * product C(i+1,k) = C(i,k) (i+1)/(i+1-k). */
typedef struct rho_iter {
    const paper_ctx *c;
    double cur;
    uint64_t i;
} rho_iter;

static double rho_at(rho_iter *it, uint64_t i)
{
    const paper_ctx *c = it->c;
    if (!c->nc)
        return pow((double)i / (double)c->M, (double)c->k);
    if (i < c->k)
        return 0.0;
    if (i == c->k || it->i + 1 != i) {
        double r = 1.0;
        for (unsigned q = 0; q < c->k; q++)
            r *= (double)(i - q) / (double)(c->M - q);
        it->cur = r;
    } else {
        it->cur *= (double)i / (double)(i - c->k);
    }
    it->i = i;
    return it->cur;
}

/* E[N_0] by the paper's backward recursion (section IV-F):
 * E[N_b] = (1 + sum_{j=1..k} tau(b,b+j) E[N_{b+j}]) / (1 - tau(b,b)) for
 * b < sigma, 0 for b >= sigma. */
static int paper_en0(const paper_ctx *c, const rbf_model_params *p, double *en0)
{
    const unsigned k = c->k;
    double *row = rbf__malloc((k + 1) * sizeof *row);
    double *ring = rbf__calloc(k + 1, sizeof *ring); /* E[N_{b+j}] at ring[(b+j) % (k+1)] */
    if (!row || !ring) {
        rbf__free(row);
        rbf__free(ring);
        return RBF_ENOMEM;
    }
    double en = 0.0;
    for (uint64_t b = c->sigma; b-- > 0;) {
        if ((b & 0xfff) == 0 && model_progress(p, c->sigma - b, 2 * c->sigma + 2)) {
            rbf__free(row);
            rbf__free(ring);
            return RBF_ECANCELED;
        }
        double back, leave;
        tau_row(c, b, c->sigma, row, &back, &leave);
        double acc = 1.0;
        for (unsigned d = 1; d <= k; d++)
            if (b + d < c->sigma)
                acc += row[d] * ring[(b + d) % (k + 1)];
        en = acc / leave;
        ring[b % (k + 1)] = en;
    }
    rbf__free(row);
    rbf__free(ring);
    *en0 = en;
    return RBF_OK;
}

/* Non-retaining: forward recursion pi_i = sum_j pi_j tau(j,i) / (1 - tau(i,i)). */
static int paper_pi_nonret(const paper_ctx *c, const rbf_model_params *p, double *fp,
                           double *fp_frozen)
{
    const unsigned k = c->k;
    const size_t w = k + 1;
    double *rows = rbf__calloc(w * w, sizeof *rows); /* row of state j at (j % w) */
    double *pis = rbf__calloc(w, sizeof *pis);
    if (!rows || !pis) {
        rbf__free(rows);
        rbf__free(pis);
        return RBF_ENOMEM;
    }
    model_sum sp, spr, sf, sfr;
    msum_init(&sp);
    msum_init(&spr);
    msum_init(&sf);
    msum_init(&sfr);
    rho_iter it = {c, 0.0, 0};
    for (uint64_t i = 0; i <= c->sigma; i++) {
        if ((i & 0xfff) == 0 && i && model_progress(p, c->sigma + i, 2 * c->sigma + 2)) {
            rbf__free(rows);
            rbf__free(pis);
            return RBF_ECANCELED;
        }
        double *row = rows + (i % w) * w;
        double back, leave;
        tau_row(c, i, c->sigma, row, &back, &leave);
        double pi;
        if (i == 0) {
            pi = 1.0; /* the paper's guess g_0 */
        } else {
            double acc = 0.0;
            uint64_t j0 = i >= k ? i - k : 0;
            for (uint64_t j = j0; j < i; j++)
                acc += pis[j % w] * rows[(j % w) * w + (i - j)];
            pi = acc / leave;
        }
        pis[i % w] = pi;
        double r = rho_at(&it, i);
        msum_add(&sp, pi);
        msum_add(&spr, pi * r);
        if (back > 0.0) {
            msum_add(&sf, pi * back);
            msum_add(&sfr, pi * back * r);
        }
    }
    *fp = model_clamp01(msum_get(&spr) / msum_get(&sp));
    if (fp_frozen) {
        double den = msum_get(&sf);
        *fp_frozen = den > 0.0 ? model_clamp01(msum_get(&sfr) / den) : 0.0;
    }
    rbf__free(rows);
    rbf__free(pis);
    return RBF_OK;
}

/* Dense Gaussian elimination with partial pivoting on an n x n system
 * (row-major a, right-hand side b), solution into b.  n <= k. */
static int dense_solve(double *a, double *b, size_t n)
{
    for (size_t col = 0; col < n; col++) {
        size_t piv = col;
        for (size_t r = col + 1; r < n; r++)
            if (fabs(a[r * n + col]) > fabs(a[piv * n + col]))
                piv = r;
        if (!(fabs(a[piv * n + col]) > 0.0))
            return RBF_EINVAL;
        if (piv != col) {
            for (size_t q = 0; q < n; q++) {
                double t = a[col * n + q];
                a[col * n + q] = a[piv * n + q];
                a[piv * n + q] = t;
            }
            double t = b[col];
            b[col] = b[piv];
            b[piv] = t;
        }
        for (size_t r = col + 1; r < n; r++) {
            double f = a[r * n + col] / a[col * n + col];
            if (f == 0.0)
                continue;
            for (size_t q = col; q < n; q++)
                a[r * n + q] -= f * a[col * n + q];
            b[r] -= f * b[col];
        }
    }
    for (size_t col = n; col-- > 0;) {
        double s = b[col];
        for (size_t q = col + 1; q < n; q++)
            s -= a[col * n + q] * b[q];
        b[col] = s / a[col * n + col];
    }
    return RBF_OK;
}

/* Retaining: the banded system with a border (see the file comment). */
static int paper_pi_ret(const paper_ctx *c, const rbf_model_params *p, double *fp,
                        double *fp_frozen)
{
    const unsigned k = c->k;
    const uint64_t sigma = c->sigma;
    const size_t w = k + 1;
    /* border columns: B0..sigma-1 as unknowns (pi_sigma = 1 is the gauge) */
    const uint64_t B0 = sigma >= k ? sigma - k + 1 : 1;
    const size_t nb = (size_t)(sigma - B0);
    const size_t rl = nb + 2; /* a pivot row: diag, nb border entries, rhs */
    int rc = RBF_ENOMEM;

    double *rows = rbf__calloc(w * w, sizeof *rows);   /* tau rows, ring by state */
    double *piv = rbf__calloc(w * rl, sizeof *piv);    /* pivot rows, ring by state */
    double *fresh = rbf__calloc(w, sizeof *fresh);     /* tau(0, d) without threshold */
    double *bback = rbf__calloc(nb + 1, sizeof *bback); /* back prob of states B0..sigma */
    double *brho = rbf__calloc(nb + 1, sizeof *brho);
    double *bsys = rbf__calloc(nb * nb + 1, sizeof *bsys); /* the border block */
    double *brhs = rbf__calloc(nb + 1, sizeof *brhs);
    double *cur = rbf__calloc(rl, sizeof *cur);
    double *acc1 = rbf__calloc(nb + 1, sizeof *acc1);  /* sum_c (-border_c)/d_c */
    double *accr = rbf__calloc(nb + 1, sizeof *accr);  /* sum_c rho(c) (-border_c)/d_c */
    if (!rows || !piv || !fresh || !bback || !brho || !bsys || !brhs || !cur || !acc1 || !accr)
        goto out;

    {
        double back, leave;
        tau_row(c, 0, sigma + (uint64_t)k, fresh, &back, &leave);
        /* the backward transition probabilities of the border states */
        double *tmp = rows; /* scratch, overwritten below */
        for (uint64_t j = B0; j <= sigma; j++) {
            tau_row(c, j, sigma, tmp, &back, &leave);
            bback[j - B0] = back;
        }
        rho_iter it0 = {c, 0.0, 0};
        for (uint64_t j = B0; j <= sigma; j++)
            brho[j - B0] = rho_at(&it0, j);
        memset(rows, 0, w * w * sizeof *rows);
    }

    model_sum s1, sr;
    msum_init(&s1);
    msum_init(&sr);
    rho_iter it = {c, 0.0, 0};
    for (uint64_t r = 1; r < sigma; r++) {
        if ((r & 0xfff) == 0 && model_progress(p, sigma + r, 2 * sigma + 2)) {
            rc = RBF_ECANCELED;
            goto out;
        }
        double *row = rows + (r % w) * w;
        double back, leave;
        tau_row(c, r, sigma, row, &back, &leave);
        /* equation of state r: leave*pi_r - sum_{j<r} tau(j,r) pi_j
         *   - fresh(r) sum_{j in border} back_j pi_j = 0.
         * Build it in `cur` over (diag | border B0..sigma-1 | rhs); the band
         * entries are eliminated as they are met. */
        memset(cur, 0, rl * sizeof *cur);
        if (r < B0)
            cur[0] = leave;
        else
            cur[1 + (r - B0)] += leave;
        if (r <= k) {
            double f = fresh[r];
            for (size_t q = 0; q < nb; q++)
                cur[1 + q] -= f * bback[q];
            cur[rl - 1] += f * bback[nb]; /* pi_sigma = 1 moved to the right */
        }
        uint64_t j0 = r > k ? r - k : 1;
        for (uint64_t j = j0; j < r; j++) {
            double t = rows[(j % w) * w + (r - j)]; /* tau(j, r) */
            if (t == 0.0)
                continue;
            if (j >= B0) {
                cur[1 + (j - B0)] -= t;
            } else {
                /* eliminate column j with pivot row j: cur -= (-t/d_j) row_j */
                const double *pr = piv + (j % w) * rl;
                double f = t / pr[0];
                for (size_t q = 0; q < nb; q++)
                    cur[1 + q] += f * pr[1 + q];
                cur[rl - 1] += f * pr[rl - 1];
            }
        }
        if (r < B0) {
            memcpy(piv + (r % w) * rl, cur, rl * sizeof *cur);
            /* pi_r = (rhs - border . z) / d: accumulate the functionals */
            double rho = rho_at(&it, r);
            double base = cur[rl - 1] / cur[0];
            msum_add(&s1, base);
            msum_add(&sr, base * rho);
            for (size_t q = 0; q < nb; q++) {
                double coef = -cur[1 + q] / cur[0];
                acc1[q] += coef;
                accr[q] += coef * rho;
            }
        } else {
            size_t br = (size_t)(r - B0);
            for (size_t q = 0; q < nb; q++)
                bsys[br * nb + q] = cur[1 + q];
            brhs[br] = cur[rl - 1];
        }
    }
    if (nb > 0 && dense_solve(bsys, brhs, nb) != RBF_OK) {
        rc = RBF_EINVAL;
        goto out;
    }
    {
        /* brhs now holds pi_{B0..sigma-1}; pi_sigma = 1 */
        model_sum t1 = s1, tr = sr;
        for (size_t q = 0; q < nb; q++) {
            msum_add(&t1, acc1[q] * brhs[q] + brhs[q]);
            msum_add(&tr, accr[q] * brhs[q] + brhs[q] * brho[q]);
        }
        msum_add(&t1, 1.0);
        msum_add(&tr, brho[nb]);
        *fp = model_clamp01(msum_get(&tr) / msum_get(&t1));
        if (fp_frozen) {
            model_sum f, fr;
            msum_init(&f);
            msum_init(&fr);
            for (size_t q = 0; q <= nb; q++) {
                double pi = q < nb ? brhs[q] : 1.0;
                msum_add(&f, pi * bback[q]);
                msum_add(&fr, pi * bback[q] * brho[q]);
            }
            double den = msum_get(&f);
            *fp_frozen = den > 0.0 ? model_clamp01(msum_get(&fr) / den) : 0.0;
        }
    }
    rc = RBF_OK;
out:
    rbf__free(rows);
    rbf__free(piv);
    rbf__free(fresh);
    rbf__free(bback);
    rbf__free(brho);
    rbf__free(bsys);
    rbf__free(brhs);
    rbf__free(cur);
    rbf__free(acc1);
    rbf__free(accr);
    return rc;
}

int rbf__model_paper_sigma(const rbf_model_params *p, uint64_t sigma, double *fp, double *en0,
                      double *fp_frozen)
{
    paper_ctx c = {p->bits, p->hashes, (p->hashing == RBF_NON_COLLIDING), sigma};
    int rc = paper_en0(&c, p, en0);
    if (rc)
        return rc;
    if ((p->recycle == RBF_RETAINING))
        return paper_pi_ret(&c, p, fp, fp_frozen);
    return paper_pi_nonret(&c, p, fp, fp_frozen);
}
