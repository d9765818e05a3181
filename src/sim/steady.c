/*
 * steady.c -- the steady state of a simulation: the rates over each
 * epoch's complete cycles after the first, so that a short run is compared
 * with the steady-state models on equal terms (rbf_sim_steady_of).
 */
#include <string.h>

#include "rbf_alloc.h"
#include "rbf_sim.h"

int rbf_sim_steady_of(const rbf_sim_result *r, rbf_sim_steady *out)
{
    if (!out)
        return RBF_EINVAL;
    memset(out, 0, sizeof *out);
    if (!r)
        return RBF_EINVAL;
    if (!r->epoch_steady || r->epochs == 0)
        return RBF_OK;
    double *fp = rbf__calloc(r->epochs, sizeof *fp), *fn = rbf__calloc(r->epochs, sizeof *fn);
    if (!fp || !fn) {
        rbf__free(fp);
        rbf__free(fn);
        return RBF_ENOMEM;
    }
    unsigned nfp = 0, nfn = 0;
    for (unsigned i = 0; i < r->epochs; i++) {
        const rbf_sim_counts *c = &r->epoch_steady[i];
        if (c->cycles == 0)
            continue;
        out->epochs++;
        if (c->new_arrivals)
            fp[nfp++] = (double)c->fp_first / (double)c->new_arrivals;
        if (c->repeats)
            fn[nfn++] = (double)c->false_negatives / (double)c->repeats;
    }
    int rc = RBF_OK;
    if (nfp && (rc = rbf_sim_interval(fp, nfp, 0.99, &out->fp)) == RBF_OK)
        out->has_fp = 1;
    if (rc == RBF_OK && nfn && (rc = rbf_sim_interval(fn, nfn, 0.99, &out->fn)) == RBF_OK)
        out->has_fn = 1;
    rbf__free(fp);
    rbf__free(fn);
    return rc;
}
