/*
 * twophase.c -- the two-phase sigma-bounded model (MODEL.md 3, paper IV-G):
 * the frozen filter's rate and the two-phase curve by the renewal pass
 * (one sigma: rates.c).
 *
 * Each of the two filters has M' bits.  The frozen filter holds the state
 * from which the previous cycle ended: F_i is proportional to
 * g_i P(i -> beyond sigma) for sigma-k+1 <= i <= sigma, where
 * P(i -> beyond sigma) is the tail of the one-message step distribution
 * from i bits, and
 *
 *   f_sigma^2 = 1 - (1 - f_sigma^1) (1 - sum_i F_i rho(i)).
 *
 * (In the renewal view exactly one message per cycle crosses sigma, so
 * sum_i g_i P(i -> beyond sigma) = 1; we still normalise, as the paper
 * does, so that rounding cannot leak into the result.)
 */
#include <stdlib.h>
#include <string.h>

#include "model_sigma.h"
#include "rbf_alloc.h"

double rbf__model_frozen_rate(uint64_t bits, unsigned hashes, int non_colliding, int retaining,
                         uint64_t sigma, const double *gwin)
{
    const unsigned k = hashes;
    double *dist = rbf__malloc((k + 1) * sizeof *dist);
    if (!dist)
        return -1.0;
    model_sum f, fr;
    msum_init(&f);
    msum_init(&fr);
    uint64_t first = retaining ? 1 : 0;
    for (unsigned t = 0; t < k; t++) {
        /* i = sigma - k + 1 + t, skipping levels below 0 (or 1) */
        if (sigma + 1 + t < (uint64_t)k + first)
            continue;
        uint64_t i = sigma + 1 + t - k;
        if (gwin[t] <= 0.0)
            continue;
        rbf__model_step_dist(bits, k, non_colliding, i, dist);
        /* P(d > sigma - i): the message would pass sigma */
        model_sum tail;
        msum_init(&tail);
        for (uint64_t d = sigma - i + 1; d <= k; d++)
            msum_add(&tail, dist[d]);
        double w = gwin[t] * msum_get(&tail);
        msum_add(&f, w);
        msum_add(&fr, w * rbf__model_rho(bits, k, non_colliding, i));
    }
    rbf__free(dist);
    double den = msum_get(&f);
    return den > 0.0 ? model_clamp01(msum_get(&fr) / den) : 0.0;
}

int rbf_model_two_phase_curve(const rbf_model_params *p, uint64_t sigma_max,
                              rbf_model_two_phase_result *rows)
{
    int rc = rbf__model_check_params(p);
    if (rc)
        return rc;
    if (!rows || sigma_max >= p->bits)
        return RBF_EINVAL;
    const unsigned k = p->hashes;
    const uint64_t first = (p->recycle == RBF_RETAINING) ? 1 : 0;
    model_pass ps;
    rc = rbf__model_pass_init(&ps, p->bits, k, (p->hashing == RBF_NON_COLLIDING));
    if (rc)
        return rc;
    /* ring slot i % k: g_i, rho(i) and the tail P(d > m), m = 0..k-1, of
     * the step distribution from i */
    double *g = rbf__calloc(k, sizeof *g), *rh = rbf__calloc(k, sizeof *rh);
    double *tails = rbf__calloc((size_t)k * k, sizeof *tails);
    double *dist = rbf__calloc((size_t)k + 1, sizeof *dist);
    if (!g || !rh || !tails || !dist) {
        rc = RBF_ENOMEM;
        goto out;
    }
    for (uint64_t b = 0; b <= sigma_max; b++) {
        if ((b & 0xfff) == 0 && b && model_progress(p, b, sigma_max + 1)) {
            rc = RBF_ECANCELED;
            goto out;
        }
        rbf__model_pass_step(&ps);
        size_t slot = (size_t)(b % k);
        g[slot] = ps.g;
        rh[slot] = ps.rho;
        rbf__model_step_dist(p->bits, k, (p->hashing == RBF_NON_COLLIDING), b, dist);
        double acc = 0.0;
        for (unsigned m = k; m-- > 0;) { /* tail[m] = sum_{d > m} dist[d] */
            acc += dist[m + 1];
            tails[slot * k + m] = acc;
        }
        model_sum f, fr;
        msum_init(&f);
        msum_init(&fr);
        for (unsigned t = 0; t < k && t <= b; t++) {
            uint64_t i = b - t;
            if (i < first)
                break;
            size_t si = (size_t)(i % k);
            double w = g[si] * tails[si * k + t];
            msum_add(&f, w);
            msum_add(&fr, w * rh[si]);
        }
        double den = msum_get(&f);
        double ff = den > 0.0 ? model_clamp01(msum_get(&fr) / den) : 0.0;
        double f1 = rbf__model_pass_fp(&ps, (p->recycle == RBF_RETAINING));
        rows[b].fp_active = f1;
        rows[b].fp_frozen = ff;
        rows[b].fp = model_clamp01(f1 + ff * (1.0 - f1));
        rows[b].expected_messages = ps.en0;
    }
    rc = RBF_OK;
out:
    rbf__free(g);
    rbf__free(rh);
    rbf__free(tails);
    rbf__free(dist);
    rbf__model_pass_free(&ps);
    return rc;
}
