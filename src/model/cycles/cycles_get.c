/*
 * cycles_get.c -- the accessors of a cycle-length distribution that follow
 * the header's rule: a status, the value through a pointer
 * (include/rbf_model.h).  The bare-double accessors they replace
 * (rbf_model_cycles_fp & co., 0 on NULL) stay as deprecated wrappers.
 */
#include "rbf_model.h"

int rbf_model_cycles_get_pmf(const rbf_model_cycles *c, uint64_t n, double *out)
{
    if (!c || !out)
        return RBF_EINVAL;
    *out = rbf_model_cycles_pmf(c, n);
    return RBF_OK;
}

int rbf_model_cycles_get_max(const rbf_model_cycles *c, uint64_t *out)
{
    if (!c || !out)
        return RBF_EINVAL;
    *out = rbf_model_cycles_max(c);
    return RBF_OK;
}

int rbf_model_cycles_get_mean(const rbf_model_cycles *c, double *out)
{
    if (!c || !out)
        return RBF_EINVAL;
    *out = rbf_model_cycles_mean(c);
    return RBF_OK;
}

int rbf_model_cycles_get_fp(const rbf_model_cycles *c, double *out)
{
    if (!c || !out)
        return RBF_EINVAL;
    *out = rbf_model_cycles_fp(c);
    return RBF_OK;
}
