/*
 * results.c -- what a simulation is compared with: the steady state (the
 * rates over each epoch's complete cycles after the first, so that a short
 * run is compared with the steady-state models on equal terms:
 * rbf_sim_steady_of) and the models' prediction for its configuration
 * (rbf_sim_model, through rbf_predict).
 */
#include <string.h>

#include "rbf_alloc.h"
#include "rbf_predict.h"
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

/* ---- the model's prediction */

int rbf_sim_model(const rbf_sim_config *cfg, double *fp, const char **name)
{
    if (!cfg || !fp)
        return RBF_EINVAL;
    rbf_predict_options o;
    rbf_predict_options_init(&o);
    o.oracle = cfg->oracle ? 1 : 0;
    rbf_prediction pr;
    int rc = rbf_predict(&cfg->filter, &o, &pr);
    if (name)
        *name = pr.name;
    if (rc == RBF_OK)
        *fp = pr.fp;
    return rc;
}

int rbf_sim_model_inside_ci99(const rbf_sim_result *r, double model)
{
    if (!r || !r->fp.has_ci || !(model * (double)r->total.new_arrivals >= 10.0))
        return -1;
    return model >= r->fp.ci_low && model <= r->fp.ci_high;
}
