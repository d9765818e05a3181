/*
 * predict.c -- rbf_predict: which model answers for a filter configuration,
 * and what it says (include/rbf_predict.h).  The one place that turns an
 * rbf_config into model parameters; the simulator, the CLI, reproduce,
 * dedup, the Redis module and the Python package all call it.
 */
#include <math.h>
#include <string.h>

#include "rbf_predict.h"
#include "rbf_abi.h"

void rbf_predict_options_init(rbf_predict_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->method = RBF_MODEL_AUTO;
}

int rbf_predict_params(const rbf_config *cfg, const rbf_predict_options *o, rbf_model_params *p)
{
    if (!cfg || !p)
        return RBF_EINVAL;
    rbf_model_params_init(p);
    p->bits = cfg->phases == 2 ? cfg->bits / 2 : cfg->bits;
    p->hashes = cfg->hashes;
    p->hashing = (cfg->hashing == RBF_NON_COLLIDING) ? RBF_NON_COLLIDING : RBF_COLLIDING;
    p->recycle = (cfg->recycle == RBF_RETAINING) ? RBF_RETAINING : RBF_NON_RETAINING;
    p->layout = cfg->layout == RBF_LAYOUT_BLOCKED ? RBF_LAYOUT_BLOCKED
                                                  : RBF_LAYOUT_FLAT;
    if (o) {
        p->method = o->method;
        p->progress = o->progress;
        p->progress_ctx = o->progress_ctx;
    }
    return RBF_OK;
}

/* sigma-bounded, either layout, one or two phases */
static int predict_sigma(const rbf_config *c, const rbf_model_params *p, rbf_prediction *out)
{
    int blocked = c->layout == RBF_LAYOUT_BLOCKED, rc;
    if (c->phases == 2) {
        out->model = RBF_PREDICT_SIGMA_TWO_PHASE;
        if (blocked) {
            rbf_model_blocked_two_phase_result r;
            out->name = "blocked f_sigma^2";
            out->method = "rbf_model_blocked_two_phase";
            rc = rbf_model_blocked_two_phase(p, c->sigma, &r);
            out->fp = r.fp;
            out->messages_per_cycle = r.expected_messages;
        } else {
            rbf_model_two_phase_result r;
            out->name = "f_sigma^2";
            out->method = "rbf_model_two_phase";
            rc = rbf_model_two_phase(p, c->sigma, &r);
            out->fp = r.fp;
            out->messages_per_cycle = r.expected_messages;
        }
        return rc;
    }
    out->model = RBF_PREDICT_SIGMA;
    if (blocked) {
        rbf_model_blocked_sigma_result r;
        out->name = "blocked f_sigma^1";
        out->method = "rbf_model_blocked_sigma";
        rc = rbf_model_blocked_sigma(p, c->sigma, &r);
        out->fp = r.fp;
        out->messages_per_cycle = r.expected_messages;
    } else {
        rbf_model_sigma_result r;
        out->name = "f_sigma^1";
        out->method = "rbf_model_sigma";
        rc = rbf_model_sigma(p, c->sigma, &r);
        out->fp = r.fp;
        out->messages_per_cycle = r.expected_messages;
    }
    return rc;
}

/* N-bounded two-phase, flat layout: the frozen filter holds the previous
 * cycle's N (docs/models.md 9.1) */
static int predict_n_two_phase(const rbf_config *c, const rbf_model_params *p, int oracle,
                               rbf_prediction *out)
{
    rbf_model_cycle_spec s;
    rbf_model_cycle_spec_init(&s);
    s.phases = 2;
    s.messages = c->messages;
    s.oracle = oracle;
    out->model = RBF_PREDICT_NBOUNDED_TWO_PHASE;
    out->name = oracle ? "f_N^2_oracle" : "f_N^2_real";
    out->method = "rbf_model_cycles";
    rbf_model_cycles *cy = NULL;
    int rc = rbf_model_cycles_new(p, &s, &cy);
    if (rc == RBF_OK)
        rc = rbf_model_cycles_get_fp(cy, &out->fp);
    rbf_model_cycles_free(cy);
    return rc;
}

/* N-bounded, either layout (non-retaining: no message triggers a recycle) */
static int predict_n(const rbf_config *c, rbf_model_params *p, int oracle, rbf_prediction *out)
{
    int blocked = c->layout == RBF_LAYOUT_BLOCKED;
    out->messages_per_cycle = (double)c->messages;
    p->recycle = RBF_NON_RETAINING;
    if (c->phases == 2) {
        if (!blocked)
            return predict_n_two_phase(c, p, oracle, out);
        out->reason = "no model of the two-phase N-bounded blocked filter";
        return RBF_ENOMODEL;
    }
    out->model = RBF_PREDICT_NBOUNDED;
    int rc;
    if (blocked) {
        rbf_model_blocked_n_result r;
        out->name = oracle ? "blocked exact_oracle" : "blocked exact_real";
        out->method = "rbf_model_blocked_nbounded";
        rc = rbf_model_blocked_nbounded(p, c->messages, &r);
        out->fp = oracle ? r.exact_oracle : r.exact_real;
    } else {
        rbf_model_n_result r;
        out->name = oracle ? "exact_oracle" : "exact_real";
        out->method = "rbf_model_nbounded";
        rc = rbf_model_nbounded(p, c->messages, &r);
        out->fp = oracle ? r.exact_oracle : r.exact_real;
    }
    return rc;
}

int rbf_predict(const rbf_config *cfg, const rbf_predict_options *o, rbf_prediction *out)
{
    if (!out)
        return RBF_EINVAL;
    memset(out, 0, sizeof *out);
    out->fp = NAN;
    out->messages_per_cycle = NAN;
    if (!cfg) {
        out->reason = "no configuration";
        return RBF_EINVAL;
    }
    if (o && (o->oracle < 0 || o->oracle > 1)) {
        out->reason = "oracle must be 0 or 1";
        return RBF_EINVAL;
    }
    if (o && !RBF_RESERVED_ZERO(o)) {
        out->reason = "a field this version of the library does not know is set";
        return RBF_EINVAL;
    }
    rbf_model_params p;
    rbf_predict_params(cfg, o, &p);
    out->layout = cfg->layout == RBF_LAYOUT_BLOCKED ? RBF_LAYOUT_BLOCKED : RBF_LAYOUT_FLAT;
    out->bits_per_filter = p.bits;
    int oracle = o ? o->oracle : 0, rc;
    if (cfg->phases != 1 && cfg->phases != 2) {
        out->reason = "phases must be 1 or 2";
        return RBF_ENOMODEL;
    }
    if (cfg->sigma)
        rc = predict_sigma(cfg, &p, out);
    else if (cfg->messages)
        rc = predict_n(cfg, &p, oracle, out);
    else {
        out->reason = "neither sigma nor messages is set";
        return RBF_ENOMODEL;
    }
    if (rc != RBF_OK) {
        out->fp = NAN;
        if (!out->reason)
            out->reason = rc == RBF_EINVAL ? "outside the model's domain" : rbf_strerror(rc);
    }
    return rc;
}
