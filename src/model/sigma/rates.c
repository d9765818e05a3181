/*
 * rates.c -- the sigma-bounded rates of one sigma, one- and two-phase, and
 * the whole curve: the one place that checks a sigma and chooses the
 * method (the paper's, the asymptotic one or the exact renewal pass).
 */
#include <stdlib.h>
#include <string.h>

#include "model_sigma.h"
#include "rbf_alloc.h"

int rbf__model_use_asym(const rbf_model_params *p)
{
    return p->method == RBF_MODEL_ASYMPTOTIC ||
           (p->method == RBF_MODEL_AUTO && p->bits > RBF_MODEL_AUTO_EXACT_BITS);
}

int rbf__model_check_sigma(const rbf_model_params *p, uint64_t sigma)
{
    int rc = rbf__model_check_params(p);
    if (rc)
        return rc;
    if (sigma < 1 || sigma >= p->bits)
        return RBF_EINVAL;
    if ((p->recycle == RBF_RETAINING) && sigma < p->hashes)
        return RBF_EINVAL;
    return RBF_OK;
}

/* Progress is reported every this many levels (a power of two). */
#define PASS_PROGRESS_EVERY ((uint64_t)1 << 16)

/* f^1 and E[N_0] at sigma by the renewal pass and, when ff is not NULL,
 * the two-phase frozen rate from the last k levels' g. */
static int exact_sigma(const rbf_model_params *p, uint64_t sigma, double *f1, double *en0,
                       double *ff)
{
    const unsigned k = p->hashes;
    model_pass ps;
    int rc = rbf__model_pass_init(&ps, p->bits, k, (p->hashing == RBF_NON_COLLIDING));
    if (rc)
        return rc;
    double *ring = NULL, *gwin = NULL; /* g_b at b % k; the window for ff */
    if (ff) {
        ring = rbf__calloc(k, sizeof *ring);
        gwin = rbf__calloc(k, sizeof *gwin);
        if (!ring || !gwin) {
            rc = RBF_ENOMEM;
            goto out;
        }
    }
    for (uint64_t b = 0; b <= sigma; b++) {
        if ((b & (PASS_PROGRESS_EVERY - 1)) == 0 && b && model_progress(p, b, sigma + 1)) {
            rc = RBF_ECANCELED;
            goto out;
        }
        rbf__model_pass_step(&ps);
        if (ring)
            ring[b % k] = ps.g;
    }
    *f1 = rbf__model_pass_fp(&ps, (p->recycle == RBF_RETAINING));
    *en0 = ps.en0;
    if (ff) {
        for (unsigned t = 0; t < k; t++) {
            uint64_t i1 = sigma + 1 + t; /* i + k */
            gwin[t] = i1 >= k ? ring[(i1 - k) % k] : 0.0;
        }
        *ff = rbf__model_frozen_rate(p->bits, k, (p->hashing == RBF_NON_COLLIDING),
                                     (p->recycle == RBF_RETAINING), sigma, gwin);
        if (*ff < 0.0)
            rc = RBF_ENOMEM;
    }
out:
    rbf__free(ring);
    rbf__free(gwin);
    rbf__model_pass_free(&ps);
    return rc;
}

/* f^1, E[N_0] and (ff != NULL) the frozen rate at a checked sigma by the
 * method p asks for: the paper's, else the asymptotic one where it
 * applies, else the renewal pass. */
static int sigma_rates(const rbf_model_params *p, uint64_t sigma, double *f1, double *en0,
                       double *ff)
{
    if (p->method == RBF_MODEL_PAPER)
        return rbf__model_paper_sigma(p, sigma, f1, en0, ff);
    if (rbf__model_use_asym(p)) {
        int rc = rbf__model_sigma_asym(p, sigma, f1, en0, ff);
        if (rc <= 0)
            return rc;
    }
    return exact_sigma(p, sigma, f1, en0, ff);
}

int rbf_model_sigma(const rbf_model_params *p, uint64_t sigma, rbf_model_sigma_result *out)
{
    int rc = rbf__model_check_sigma(p, sigma);
    if (rc)
        return rc;
    if (!out)
        return RBF_EINVAL;
    double fp, en0;
    if ((rc = sigma_rates(p, sigma, &fp, &en0, NULL)) != RBF_OK)
        return rc;
    out->fp = fp;
    out->expected_messages = en0;
    return RBF_OK;
}

int rbf_model_two_phase(const rbf_model_params *p, uint64_t sigma, rbf_model_two_phase_result *out)
{
    int rc = rbf__model_check_sigma(p, sigma);
    if (rc)
        return rc;
    if (!out)
        return RBF_EINVAL;
    double f1, en0, ff;
    if ((rc = sigma_rates(p, sigma, &f1, &en0, &ff)) != RBF_OK)
        return rc;
    out->fp_active = f1;
    out->fp_frozen = ff;
    /* 1 - (1-a)(1-b) = a + b - ab, written without cancellation */
    out->fp = model_clamp01(f1 + ff * (1.0 - f1));
    out->expected_messages = en0;
    return RBF_OK;
}

int rbf_model_sigma_curve(const rbf_model_params *p, uint64_t sigma_max, double *fp, double *en0)
{
    int rc = rbf__model_check_params(p);
    if (rc)
        return rc;
    if (sigma_max >= p->bits)
        return RBF_EINVAL;
    model_pass ps;
    rc = rbf__model_pass_init(&ps, p->bits, p->hashes, (p->hashing == RBF_NON_COLLIDING));
    if (rc)
        return rc;
    for (uint64_t b = 0; b <= sigma_max; b++) {
        if ((b & (PASS_PROGRESS_EVERY - 1)) == 0 && b && model_progress(p, b, sigma_max + 1)) {
            rbf__model_pass_free(&ps);
            return RBF_ECANCELED;
        }
        rbf__model_pass_step(&ps);
        if (fp)
            fp[b] = rbf__model_pass_fp(&ps, (p->recycle == RBF_RETAINING));
        if (en0)
            en0[b] = ps.en0;
    }
    rbf__model_pass_free(&ps);
    if (p->method == RBF_MODEL_PAPER) {
        /* The paper's method has no curve: one O(k^2 sigma) solve per
         * point.  Points where the model is undefined (sigma = 0; retaining
         * with sigma < k) keep the renewal formula's value from above. */
        rbf_model_sigma_result r;
        rbf_model_params q = *p;
        q.progress = NULL;
        for (uint64_t s = 1; s <= sigma_max; s++) {
            if (model_progress(p, s, sigma_max + 1))
                return RBF_ECANCELED;
            if (rbf__model_check_sigma(&q, s) != RBF_OK)
                continue;
            if ((rc = rbf_model_sigma(&q, s, &r)) != RBF_OK)
                return rc;
            if (fp)
                fp[s] = r.fp;
            if (en0)
                en0[s] = r.expected_messages;
        }
    }
    return RBF_OK;
}
