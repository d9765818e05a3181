/*
 * model_util.h -- small helpers shared by the model tests (header-only).
 */
#ifndef MODEL_UTIL_H
#define MODEL_UTIL_H

#include <stdint.h>

#include "rbf_model.h"

/* Model parameters from rbf_model_params_init with the filter and method set. */
static inline rbf_model_params tu_model_params(uint64_t M, unsigned k, int nc, int ret,
                                               rbf_model_method m)
{
    rbf_model_params p;
    rbf_model_params_init(&p);
    p.bits = M;
    p.hashes = k;
    p.hashing = (nc) ? RBF_NON_COLLIDING : RBF_COLLIDING;
    p.recycle = (ret) ? RBF_RETAINING : RBF_NON_RETAINING;
    p.method = m;
    return p;
}

#endif
