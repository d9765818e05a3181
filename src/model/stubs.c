/*
 * stubs.c -- TEMPORARY: placeholders for the model API so that code calling
 * it links while the models are being written.  Each function is deleted
 * from here as its real implementation lands; this file must be gone before
 * the models issue is called done.
 */
#include <string.h>

#include "rbf_model.h"

void rbf_model_params_init(rbf_model_params *p) { memset(p, 0, sizeof *p); }
double rbf_model_rho(uint64_t bits, unsigned hashes, int non_colliding, uint64_t b)
{
    (void)bits; (void)hashes; (void)non_colliding; (void)b;
    return 0;
}
int rbf_model_sigma(const rbf_model_params *p, uint64_t sigma, rbf_model_sigma_result *out)
{
    (void)p; (void)sigma; (void)out;
    return RBF_MODEL_EINVAL;
}
int rbf_model_sigma_curve(const rbf_model_params *p, uint64_t sigma_max, double *fp, double *en0)
{
    (void)p; (void)sigma_max; (void)fp; (void)en0;
    return RBF_MODEL_EINVAL;
}
int rbf_model_two_phase(const rbf_model_params *p, uint64_t sigma, rbf_model_two_phase_result *out)
{
    (void)p; (void)sigma; (void)out;
    return RBF_MODEL_EINVAL;
}
int rbf_model_k1_closed_form(uint64_t bits, uint64_t sigma, double *fp)
{
    (void)bits; (void)sigma; (void)fp;
    return RBF_MODEL_EINVAL;
}
int rbf_model_nbounded(const rbf_model_params *p, uint64_t messages, rbf_model_n_result *out)
{
    (void)p; (void)messages; (void)out;
    return RBF_MODEL_EINVAL;
}
double rbf_model_f_w(uint64_t bits, unsigned hashes, uint64_t n)
{
    (void)bits; (void)hashes; (void)n;
    return 0;
}
void rbf_plan_options_init(rbf_plan_options *o) { memset(o, 0, sizeof *o); o->max_hashes = 32; }
int rbf_plan_memory(uint64_t bits, double eps, const rbf_plan_options *o, rbf_plan *out)
{
    (void)bits; (void)eps; (void)o; (void)out;
    return RBF_MODEL_EINVAL;
}
int rbf_plan_messages(uint64_t messages, double eps, const rbf_plan_options *o, uint64_t *bits,
                      rbf_plan *out)
{
    (void)messages; (void)eps; (void)o; (void)bits; (void)out;
    return RBF_MODEL_EINVAL;
}
int rbf_plan_messages_two_phase(uint64_t messages, double eps, const rbf_plan_options *o,
                                uint64_t *bits, rbf_plan *out)
{
    (void)messages; (void)eps; (void)o; (void)bits; (void)out;
    return RBF_MODEL_EINVAL;
}
