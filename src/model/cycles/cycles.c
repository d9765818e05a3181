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
#include "rbf_abi.h"

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
    int law_moments; /* the real user's N-bounded law came from the moments */
    int law_asym;    /* the law came from the large-filter laws (laws_asym.c) */
    /* two-phase cycles longer than CYC_MAX_CONV: no ft2 .. xm2 tables; each
     * forgetting or miss is summed over the law's support [l0, len] when
     * asked (conv_at) */
    int lazy2;
    uint64_t l0;
};

int rbf__cyc_law_method = RBF_CYC_LAW_AUTO;

int rbf__cyc_law_is_moments(const rbf_model_cycles *c)
{
    return c && c->law_moments;
}

const char *rbf_model_law_name(rbf_model_law law)
{
    switch (law) {
    case RBF_MODEL_LAW_CHAIN: return "chain";
    case RBF_MODEL_LAW_MOMENTS: return "moments";
    case RBF_MODEL_LAW_LARGE: return "large-filter";
    default: return "";
    }
}

int rbf_model_cycles_get_law(const rbf_model_cycles *c, rbf_model_law *out)
{
    if (!c || !out)
        return RBF_EINVAL;
    *out = c->law_asym      ? RBF_MODEL_LAW_LARGE
           : c->law_moments ? RBF_MODEL_LAW_MOMENTS
                            : RBF_MODEL_LAW_CHAIN;
    return RBF_OK;
}

/* Whether the large-filter law (laws_asym.c) builds the cycles of a
 * filter whose chain would cost `cost` steps: with method fast from
 * CYC_FAST_MIN_BITS bits, with method auto from CYC_ASYM_MIN_BITS bits
 * past CYC_ASYM_BUDGET (or forced). */
static int use_asym(const rbf_model_params *p, double cost)
{
    if (rbf__cyc_law_method == RBF_CYC_LAW_ASYM)
        return 1;
    if (rbf__cyc_law_method != RBF_CYC_LAW_AUTO)
        return 0; /* the chain, the joint pass or the moments, forced */
    if (p->method == RBF_MODEL_ASYMPTOTIC)
        return p->bits >= CYC_FAST_MIN_BITS;
    return p->method == RBF_MODEL_AUTO && p->bits >= CYC_ASYM_MIN_BITS && cost > CYC_ASYM_BUDGET;
}

void rbf_model_cycle_spec_init(rbf_model_cycle_spec *s)
{
    if (!s)
        return;
    memset(s, 0, sizeof *s);
    s->phases = 1;
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

int rbf__cyc_check_spec(const rbf_model_params *p, const rbf_model_cycle_spec *s)
{
    int rc = rbf__model_check_params(p);
    if (rc)
        return rc;
    if (!s || (s->phases != 1 && s->phases != 2) || (s->oracle != 0 && s->oracle != 1))
        return RBF_EINVAL;
    if (!RBF_RESERVED_ZERO(s))
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

/* The cycle-length law of sigma-bounded cycles (tables grown until the
 * mass beyond them is negligible) and the rate. */
static int pmf_sigma(rbf_model_cycles *c)
{
    const rbf_model_params *p = &c->p;
    const rbf_model_cycle_spec *s = &c->s;
    int rc;
    rbf_model_sigma_result sr;
    rbf_model_params q = *p;
    c->law_asym = s->sigma + 1 < p->bits && use_asym(p, rbf__cyc_sigma_chain_cost(p, s->sigma));
    /* the rate: by the exact pass with the chain; with the large-filter
     * law by the caller's method, as `rbf model` gives it without --fn */
    if (!c->law_asym)
        q.method = RBF_MODEL_FAST;
    q.progress = NULL;
    /* E[ticks to pass sigma] <= E[N_0] + g_sigma + 1: start from it (the
     * large-filter law knows where its mass ends) */
    if ((rc = rbf_model_sigma(&q, s->sigma, &sr)))
        return rc;
    uint64_t nmax = c->law_asym ? rbf__cyc_sigma_asym_len(p, s->sigma)
                                : (uint64_t)(3.0 * sr.expected_messages) + 200;
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
        rc = c->law_asym ? rbf__cyc_sigma_pmf_asym(p, s->sigma, nmax, pm, ph, &rend, &lost)
                         : rbf__cyc_sigma_pmf(p, s->sigma, nmax, pm, ph, &rend, &lost);
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
    return RBF_OK;
}

/* The oracle's N-bounded cycles: exactly N ticks. */
static int pmf_oracle(rbf_model_cycles *c)
{
    const rbf_model_params *p = &c->p;
    const rbf_model_cycle_spec *s = &c->s;
    int rc;
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
    return RBF_OK;
}

/* The real user's N-bounded cycles: N bit-setting ticks and the false
 * positives among them (tables grown until the lost mass is negligible). */
static int pmf_nreal(rbf_model_cycles *c)
{
    const rbf_model_params *p = &c->p;
    const rbf_model_cycle_spec *s = &c->s;
    int rc;
    const uint64_t N = s->messages;
    uint64_t bmax = p->bits;
    if (N <= UINT64_MAX / p->hashes && N * p->hashes < bmax)
        bmax = N * p->hashes;
    if (N > CYC_MAX_LEN)
        return RBF_ENOMEM;
    double efp = 0.0, rhoF = 0.0;
    uint64_t levels = 1;
    rbf_cyc_mstats st;
    memset(&st, 0, sizeof st);
    /* A large filter: the law from the fill's cumulants (laws_asym.c), in
     * O(N), where the chain (N x levels x k, the levels about 24 spreads
     * of the fill wide) would cost more than the budget */
    if (use_asym(p, INFINITY)) {
        double sd = 0.0;
        rc = rbf__cyc_nreal_asym(p, N, &efp, &rhoF, &st, &sd);
        if (rc == RBF_ECANCELED)
            return rc;
        c->law_asym = rc == RBF_OK &&
                      use_asym(p, (double)N * (24.0 * sd + p->hashes) * (double)p->hashes);
        if (!c->law_asym) {
            rbf__cyc_mstats_free(&st);
            efp = rhoF = 0.0;
        }
        rc = RBF_OK;
    }
    double *tau = NULL;
    if (!c->law_asym) {
        if (bmax > CYC_MAX_LEN)
            return RBF_ENOMEM;
        if (!(tau = rbf__cyc_step_table(p, bmax)))
            return RBF_ENOMEM;
        /* Unless the joint pass is forced, the marginal pass and the
         * moments' in one (laws.c): the moments are then at hand if the
         * cost below picks them, and only spread again when F grows */
        const int fused = rbf__cyc_law_method != RBF_CYC_LAW_JOINT;
        rc = fused ? rbf__cyc_nreal_fused(p, N, tau, bmax, &efp, &rhoF, &levels, &st)
                   : rbf__cyc_nreal_marginal(p, N, tau, bmax, &efp, &rhoF, &levels);
        if (rc) {
            rbf__free(tau);
            return rc;
        }
    }
    c->fp = s->phases == 1 ? model_clamp01(efp / ((double)N + efp))
                           : model_clamp01((efp + (double)N * rhoF) / ((double)N + efp));
    uint64_t F = (uint64_t)(2.0 * efp + 30.0 * sqrt(efp + 1.0)) + 30;
    /* the joint pass where it is cheap enough, else the moments (laws.c) */
    const double cost = (double)N * (double)levels * (sqrt(efp) + 1.0);
    c->law_moments = !c->law_asym &&
                     (rbf__cyc_law_method == RBF_CYC_LAW_MOMENTS ||
                      ((rbf__cyc_law_method == RBF_CYC_LAW_AUTO ||
                        rbf__cyc_law_method == RBF_CYC_LAW_CHAIN) &&
                       cost > CYC_JOINT_BUDGET));
    if (!c->law_moments && !c->law_asym)
        rbf__cyc_mstats_free(&st);
    for (;;) {
        if (N + F > CYC_MAX_LEN) {
            rbf__cyc_mstats_free(&st);
            rbf__free(tau);
            return RBF_ENOMEM;
        }
        double *fd = rbf__malloc((F + 1) * sizeof *fd);
        double *ph = rbf__calloc(N + F + 2, sizeof *ph);
        if (!fd || !ph) {
            rbf__free(fd);
            rbf__free(ph);
            rbf__cyc_mstats_free(&st);
            rbf__free(tau);
            return RBF_ENOMEM;
        }
        double lost = 0.0;
        rc = c->law_moments || c->law_asym ? rbf__cyc_nreal_spread(&st, F, fd, ph, &lost, c->law_asym)
                                           : rbf__cyc_nreal_joint(p, N, tau, bmax, F, fd, ph, &lost);
        if (rc) {
            rbf__free(fd);
            rbf__free(ph);
            rbf__cyc_mstats_free(&st);
            rbf__free(tau);
            return rc;
        }
        if (lost < CYC_LOST) {
            c->len = N + F;
            c->pmf = rbf__calloc(c->len + 1, sizeof *c->pmf);
            if (!c->pmf) {
                rbf__free(fd);
                rbf__free(ph);
                rbf__cyc_mstats_free(&st);
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
    rbf__cyc_mstats_free(&st);
    rbf__free(tau);
    return RBF_OK;
}

static int fill_pmf(rbf_model_cycles *c)
{
    const rbf_model_cycle_spec *s = &c->s;
    int rc = s->sigma ? pmf_sigma(c) : s->oracle ? pmf_oracle(c) : pmf_nreal(c);
    if (rc)
        return rc;
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
void rbf__cyc_cumsum(double *x, uint64_t n)
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
    rbf__cyc_cumsum(c->ft, len + 2);
    rbf__cyc_cumsum(c->fm, len + 2);
    int rc = RBF_OK;
    if (c->s.phases == 2) {
        /* the cycle law's support is [l0, len] (fill_pmf trimmed its zero
         * tail, so it ends at len): outside it every term is zero.  Up to
         * CYC_MAX_CONV ticks the convolution is tabled, (len + 2) x
         * (support) terms; past it each value is summed over the support
         * when asked (conv_at), the same sum in another order */
        uint64_t l0 = 0;
        while (l0 < len && c->pmf[l0] == 0.0)
            l0++;
        c->l0 = l0;
        if (c->s.sigma && !ret)
            c->trig = rt[0]; /* R = 0 is the trigger: held by neither filter */
        if (len > CYC_MAX_CONV) {
            c->lazy2 = 1;
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
        if (c->s.sigma && !ret)
            rt[0] = 0.0;
        /* Each cell gets its terms in the order of j, as before; a zero
         * pl adds +0.0 to a nonnegative cell, which leaves it as it was,
         * so the loop has no test in it and vectorizes. */
        const double *restrict pm = c->pmf + l0;
        const uint64_t w = len - l0 + 1;
        for (uint64_t j = 0; j <= len + 1; j++) {
            const double a = rt[j], b = rm[j], xa = c->xt[j], xb = c->xm[j];
            if (a == 0.0 && b == 0.0)
                continue;
            double *restrict o1 = c->ft2 + j + l0, *restrict o2 = c->fm2 + j + l0;
            double *restrict o3 = c->xt2 + j + l0, *restrict o4 = c->xm2 + j + l0;
            for (uint64_t l = 0; l < w; l++) {
                const double pl = pm[l];
                o1[l] += a * pl;
                o2[l] += b * pl;
                o3[l] += xa * pl;
                o4[l] += xb * pl;
            }
        }
        rbf__cyc_cumsum(c->ft2, n2);
        rbf__cyc_cumsum(c->fm2, n2);
        rbf__cyc_cumsum(c->xt2, n2);
        rbf__cyc_cumsum(c->xm2, n2);
    }
out:
    rbf__cyc_cumsum(c->xt, len + 2);
    rbf__cyc_cumsum(c->xm, len + 2);
    rbf__free(surv);
    rbf__free(rt);
    rbf__free(rm);
    return rc;
}

int rbf_model_cycles_new(const rbf_model_params *p, const rbf_model_cycle_spec *s,
                         rbf_model_cycles **out)
{
    if (!out)
        return RBF_EINVAL;
    *out = NULL;
    int rc = rbf__cyc_check_spec(p, s);
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

/* Two-phase cycles past CYC_MAX_CONV ticks: P(R + L' <= g) and the like,
 * sum over l of P(L' = l) T(g - l), T the one-phase cumulative table (its
 * last value past its end, 0 before 0) less `shift` (the trigger, which
 * the two-phase table leaves out) -- what the tables of fill_forget hold
 * at g. */
static double conv_at(const rbf_model_cycles *c, const double *T, double shift, uint64_t g)
{
    model_sum s;
    msum_init(&s);
    const uint64_t end = c->len + 1;
    for (uint64_t l = c->l0; l <= c->len && l <= g; l++) {
        const uint64_t y = g - l;
        msum_add(&s, c->pmf[l] * ((y <= end ? T[y] : T[end]) - shift));
    }
    return model_clamp01(msum_get(&s));
}

double rbf_model_forget(const rbf_model_cycles *c, uint64_t g, rbf_model_from from, int active_only)
{
    if (!c)
        return 0.0;
    if (c->s.phases == 1 || active_only) {
        const double *f = from == RBF_MODEL_FROM_HELD ? c->fm : c->ft;
        return g <= c->len + 1 ? f[g] : 1.0;
    }
    if (c->lazy2)
        return from == RBF_MODEL_FROM_HELD
                   ? conv_at(c, c->fm, 0.0, g)
                   : model_clamp01(c->trig + conv_at(c, c->ft, c->trig, g));
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
    double F, X;
    if (c->lazy2) {
        const int held = from == RBF_MODEL_FROM_HELD;
        F = conv_at(c, held ? c->fm : c->ft, held ? 0.0 : c->trig, g);
        X = conv_at(c, held ? c->xm : c->xt, 0.0, g);
    } else {
        const double *f = from == RBF_MODEL_FROM_HELD ? c->fm2 : c->ft2;
        const double *x = from == RBF_MODEL_FROM_HELD ? c->xm2 : c->xt2;
        const uint64_t n2 = 2 * len + 2;
        F = g <= n2 ? f[g] : f[n2];
        X = g <= n2 ? x[g] : x[n2];
    }
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
