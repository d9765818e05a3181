/*
 * points.c -- sampled sigma-bounded curves (rbf_model_sigma_points,
 * rbf_model_two_phase_points): the points in increasing order, one renewal
 * pass for the small ones and one asymptotic prefix for the rest.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_sigma.h"
#include "rbf_alloc.h"

typedef struct spt {
    uint64_t s;
    size_t i;
} spt;

static int cmp_spt(const void *x, const void *y)
{
    const spt *a = x, *b = y;
    return a->s < b->s ? -1 : (a->s > b->s);
}

/* Sampled curve, one- (two = 0) or two-phase.  out1/out2 by index. */
static int points_core(const rbf_model_params *p, const uint64_t *sig, size_t n, int two,
                       rbf_model_sigma_result *out1, rbf_model_two_phase_result *out2)
{
    int rc = rbf__model_check_params(p);
    if (rc)
        return rc;
    if (!sig || (!out1 && !out2))
        return RBF_EINVAL;
    if (n == 0)
        return RBF_OK;
    const uint64_t M = p->bits;
    const unsigned k = p->hashes;
    for (size_t i = 0; i < n; i++)
        if ((rc = rbf__model_check_sigma(p, sig[i])) != RBF_OK)
            return rc;
    if (p->method == RBF_MODEL_PAPER) {
        for (size_t i = 0; i < n; i++) {
            if (two)
                rc = rbf_model_two_phase(p, sig[i], &out2[i]);
            else
                rc = rbf_model_sigma(p, sig[i], &out1[i]);
            if (rc)
                return rc;
        }
        return RBF_OK;
    }
    spt *ord = rbf__malloc(n * sizeof *ord);
    if (!ord)
        return RBF_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        ord[i].s = sig[i];
        ord[i].i = i;
    }
    qsort(ord, n, sizeof *ord, cmp_spt);
    size_t nexact = n; /* points [0, nexact) by the exact pass */
    model_asym a;
    memset(&a, 0, sizeof a);
    a.b1 = UINT64_MAX;
    if (rbf__model_use_asym(p)) {
        /* the smallest point the asymptotic method can take: build the
         * prefix for the first point where it applies */
        for (size_t j = 0; j < n; j++) {
            if (ord[j].s < 8192)
                continue;
            if ((rc = rbf__asym_init(&a, M, k, (p->hashing == RBF_NON_COLLIDING), ord[j].s, p)) != RBF_OK)
                goto out;
            if (a.b1 != UINT64_MAX && ord[j].s >= a.b1) {
                nexact = j;
                break;
            }
            rbf__asym_free(&a);
            a.b1 = UINT64_MAX;
            /* try a larger first point: skip ahead by a factor 2 */
            uint64_t want = ord[j].s * 2;
            while (j + 1 < n && ord[j + 1].s < want)
                j++;
        }
    }
    for (size_t j = nexact; j < n; j++) {
        double f1, en0, ff = 0.0;
        if ((rc = rbf__asym_eval(&a, ord[j].s, (p->recycle == RBF_RETAINING), &f1, &en0)) != RBF_OK)
            goto out;
        if (two && (rc = rbf__asym_frozen(&a, (p->recycle == RBF_RETAINING), ord[j].s, &ff)) != RBF_OK)
            goto out;
        size_t i = ord[j].i;
        if (two) {
            out2[i].fp_active = f1;
            out2[i].fp_frozen = ff;
            out2[i].fp = model_clamp01(f1 + ff * (1.0 - f1));
            out2[i].expected_messages = en0;
        } else {
            out1[i].fp = f1;
            out1[i].expected_messages = en0;
        }
    }
    if (nexact > 0) {
        model_pass ps;
        if ((rc = rbf__model_pass_init(&ps, M, k, (p->hashing == RBF_NON_COLLIDING))) != RBF_OK)
            goto out;
        double *ring = two ? rbf__calloc(k, sizeof *ring) : NULL;
        double *gwin = two ? rbf__calloc(k, sizeof *gwin) : NULL;
        if (two && (!ring || !gwin)) {
            rbf__free(ring);
            rbf__free(gwin);
            rbf__model_pass_free(&ps);
            rc = RBF_ENOMEM;
            goto out;
        }
        size_t j = 0;
        uint64_t last = ord[nexact - 1].s;
        for (uint64_t b = 0; b <= last && j < nexact; b++) {
            if ((b & 0xffff) == 0 && b && model_progress(p, b, last + 1)) {
                rc = RBF_ECANCELED;
                break;
            }
            rbf__model_pass_step(&ps);
            if (two)
                ring[b % k] = ps.g;
            while (j < nexact && ord[j].s == b) {
                size_t i = ord[j].i;
                double f1 = rbf__model_pass_fp(&ps, (p->recycle == RBF_RETAINING));
                if (two) {
                    for (unsigned t = 0; t < k; t++) {
                        uint64_t i1 = b + 1 + t;
                        gwin[t] = i1 >= k ? ring[(i1 - k) % k] : 0.0;
                    }
                    double ff = rbf__model_frozen_rate(M, k, (p->hashing == RBF_NON_COLLIDING), (p->recycle == RBF_RETAINING), b, gwin);
                    if (ff < 0.0) {
                        rc = RBF_ENOMEM;
                        break;
                    }
                    out2[i].fp_active = f1;
                    out2[i].fp_frozen = ff;
                    out2[i].fp = model_clamp01(f1 + ff * (1.0 - f1));
                    out2[i].expected_messages = ps.en0;
                } else {
                    out1[i].fp = f1;
                    out1[i].expected_messages = ps.en0;
                }
                j++;
            }
            if (rc)
                break;
        }
        rbf__free(ring);
        rbf__free(gwin);
        rbf__model_pass_free(&ps);
    }
out:
    rbf__asym_free(&a);
    rbf__free(ord);
    return rc;
}

int rbf_model_sigma_points(const rbf_model_params *p, const uint64_t *sigmas, size_t n,
                           rbf_model_sigma_result *out)
{
    if (!out)
        return RBF_EINVAL;
    return points_core(p, sigmas, n, 0, out, NULL);
}

int rbf_model_two_phase_points(const rbf_model_params *p, const uint64_t *sigmas, size_t n,
                               rbf_model_two_phase_result *out)
{
    if (!out)
        return RBF_EINVAL;
    return points_core(p, sigmas, n, 1, NULL, out);
}

size_t rbf_model_curve_points(uint64_t first, uint64_t last, uint64_t points, uint64_t *out)
{
    if (!out || points == 0 || last < first)
        return 0;
    const uint64_t span = last - first;
    const uint64_t P = points > span ? span + 1 : points;
    size_t m = 0;
    for (uint64_t i = 0; i < P; i++) {
        uint64_t x = last;
        if (P > 1) {
            /* the offset rounded to nearest (llround, up to 2^63) */
            double t = (double)span * (double)i / (double)(P - 1);
            uint64_t off = t < 0x1p63 ? (uint64_t)llround(t) : t < 0x1p64 ? (uint64_t)t : span;
            x = off >= span ? last : first + off;
        }
        if (m == 0 || x > out[m - 1])
            out[m++] = x;
    }
    return m;
}
