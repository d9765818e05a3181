/*
 * policy.c -- a recycling policy's average rate and mean cycle in one call
 * (rbf_model_policy): what `rbf model` gives for --oracle, two-phase
 * --messages, --fn and --forget, for programs and bindings that do not run
 * the command (the Python package's rbf.model).
 *
 * The rules are the command's (src/cli/cmd_model_fn.c):
 *   - N-bounded without a workload: the rate and the mean cycle follow from
 *     the N-bounded rates (milliseconds at any N), without the cycle-length
 *     law, which would be N entries long: the oracle's cycle is N ticks
 *     (two phases: held by neither filter); the two-phase real user's
 *     cycle is N bit-setting ticks plus E_fp = N f/(1-f) false positives of
 *     the active filter, each tick also a false positive of the frozen
 *     filter with probability exact_real_worst;
 *   - a real user whose active filter can fill before its N-th bit-setting
 *     message (exact_real = 1) is stuck when the filling is sure (every bit
 *     set before N, or N > 2^20): rate 1, no cycle, no false negative;
 *     otherwise the cycle-length law decides (a law that cannot be built
 *     then means stuck too);
 *   - everything else (sigma-bounded, a workload, forgetting gaps) comes
 *     from the cycle-length law (rbf_model_cycles_*) and rbf_model_fn.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rbf_model.h"

int rbf_model_policy(const rbf_model_params *p, const rbf_model_cycle_spec *s,
                     const rbf_model_workload *w, const uint64_t *gaps, size_t ngaps,
                     double *forgotten, double *false_negative, rbf_model_policy_result *out)
{
    if (!p || !s || !out || (ngaps && (!gaps || !forgotten || !false_negative)))
        return RBF_EINVAL;
    memset(out, 0, sizeof *out);
    double fp = 0.0, mean = 0.0;
    uint64_t saturated = 0;
    int direct = 0, stuck = 0, filled = 0, rc = RBF_OK;
    rbf_model_n_result nr;
    memset(&nr, 0, sizeof nr);
    if (s->messages && (!w || !s->oracle)) {
        rbf_model_params q = *p;
        if (!s->oracle && s->phases == 1 && p->method == RBF_MODEL_AUTO)
            q.method = RBF_MODEL_ASYMPTOTIC; /* only whether the filter can fill, which the
                                                fast method decides conservatively */
        if ((rc = rbf_model_nbounded(&q, s->messages, &nr)))
            return rc;
        if (!w)
            saturated = nr.saturated_at;
        filled = !s->oracle && nr.exact_real >= 1.0;
        if (filled && (nr.saturated_at || s->messages > ((uint64_t)1 << 20))) {
            stuck = 1;
            direct = 1;
        } else if (w || ngaps || filled) {
            /* the cycle law below */
        } else if (s->oracle) {
            fp = s->phases == 2 ? 1.0 - (1.0 - nr.exact_oracle) * (1.0 - nr.exact_worst)
                                : nr.exact_oracle;
            mean = (double)s->messages;
            direct = 1;
        } else if (s->phases == 2) {
            double n = (double)s->messages;
            double efp = n * nr.exact_real / (1.0 - nr.exact_real);
            fp = (efp + n * nr.exact_real_worst) / (n + efp);
            if (fp > 1.0)
                fp = 1.0;
            mean = n + efp;
            direct = 1;
        }
    }
    rbf_model_cycles *c = NULL;
    rbf_model_fn_result fr;
    memset(&fr, 0, sizeof fr);
    if (!direct) {
        rc = rbf_model_cycles_new(p, s, &c);
        if (!rc && w)
            rc = rbf_model_fn_with(c, p, s, w, &fr);
        if (!rc) {
            fp = rbf_model_cycles_fp(c);
            mean = rbf_model_cycles_mean(c);
        } else if (filled && rc != RBF_ECANCELED) {
            rc = RBF_OK;
            stuck = 1;
        }
    }
    if (rc) {
        rbf_model_cycles_free(c);
        return rc;
    }
    if (stuck) {
        fp = 1.0;
        mean = 0.0;
        saturated = nr.saturated_at;
        memset(&fr, 0, sizeof fr);
    }
    out->fp = fp;
    out->cycle_mean = mean;
    out->saturated_at = saturated;
    out->stuck = stuck;
    out->fn = fr.fn;
    out->forgotten = fr.forgotten;
    out->tick_fraction = fr.tick_fraction;
    out->has_cycles = c != NULL && !stuck;
    rbf_model_law law = RBF_MODEL_LAW_NONE;
    if (c)
        rbf_model_cycles_get_law(c, &law);
    out->cycle_law = (uint64_t)law;
    for (size_t i = 0; i < ngaps; i++) {
        forgotten[i] = out->has_cycles ? rbf_model_forget(c, gaps[i], RBF_MODEL_FROM_TICK, 0) : 0.0;
        false_negative[i] = out->has_cycles ? rbf_model_miss(c, gaps[i], RBF_MODEL_FROM_TICK) : 0.0;
    }
    rbf_model_cycles_free(c);
    return RBF_OK;
}
