/*
 * stubs.c -- TEMPORARY: placeholders for the planner API so that code
 * calling it links while the planner is being written.  This file must be
 * gone before the models issue is called done.
 */
#include <string.h>

#include "rbf_model.h"

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
