/*
 * cmd_plan_fn.c -- `rbf plan --remember W [--miss D]`: sizing for both
 * errors (rbf_plan_remember, docs/models.md 9.4).
 */
#include "cli.h"
#include "model_fn.h"
#include "rbf_model.h"

static const char *const CMD = "plan";

void cli_plan_fn_json_filter(uint64_t bits, const struct rbf_plan_options *o, int feasible,
                             unsigned phases, unsigned hashes, uint64_t sigma, double expected,
                             double fp)
{
    printf(", \"hashing\": \"%s\", \"recycle\": \"%s\", \"feasible\": %s",
           cli_hashing_name(o->hashing == RBF_NON_COLLIDING),
           cli_recycle_name(o->recycle == RBF_RETAINING), feasible ? "true" : "false");
    if (!feasible) {
        printf(", \"phases\": null");
        return;
    }
    printf(", \"phases\": %u, \"hashes\": %u, \"sigma\": %llu, \"bits_per_filter\": %llu", phases,
           hashes, (unsigned long long)sigma, (unsigned long long)(phases == 2 ? bits / 2 : bits));
    cli_json_field(stdout, "expected_messages", expected);
    cli_json_field(stdout, "fp", fp);
}

void cli_plan_fn_json_end(int feasible, uint64_t least)
{
    if (feasible || !least)
        printf(", \"least_bits\": null}\n");
    else
        printf(", \"least_bits\": %llu}\n", (unsigned long long)least);
}

void cli_plan_fn_text_filter(unsigned phases, unsigned hashes, uint64_t sigma, double expected)
{
    printf("phases             %u%s\n", phases,
           phases == 2 ? " (two filters of half the memory)" : "");
    printf("hashes             %u\n", hashes);
    printf("sigma              %llu\n", (unsigned long long)sigma);
    printf("expected_messages  %.6g   (E[N_0] of one filter per cycle)\n", expected);
}

int cli_plan_remember(uint64_t bits, double eps, uint64_t remember, double miss,
                      struct rbf_plan_options *o, int json)
{
    rbf_plan_remember_result r;
    uint64_t least = 0;
    /* progress on a terminal: the least-memory search plans some thirty
     * memories (seconds to a minute for W near a cycle) */
    o->progress = cli_progress_cb;
    o->progress_ctx = NULL;
    cli_progress_begin("plan --remember", 1);
    int rc = rbf_plan_remember(bits, eps, remember, miss, o, &r, &least);
    cli_progress_end();
    if (rc == RBF_ENOMEM)
        return cli_fail(CMD, "out of memory (or a cycle distribution too long for this model)");
    if (rc)
        return cli_fail(CMD, "the model rejected these parameters");
    if (json) {
        printf("{\"bits\": %llu, \"target_fp\": ", (unsigned long long)bits);
        cli_json_double(stdout, eps);
        printf(", \"remember\": %llu, \"miss_target\": ", (unsigned long long)remember);
        cli_json_double(stdout, miss);
        cli_plan_fn_json_filter(bits, o, r.feasible, r.phases, r.hashes, r.sigma,
                                r.expected_messages, r.fp);
        if (r.feasible) {
            cli_json_field(stdout, "miss", r.miss);
            printf(", \"miss_is_bound\": %s", r.miss_is_bound ? "true" : "false");
        }
        cli_plan_fn_json_end(r.feasible, least);
    } else if (r.feasible) {
        printf("Memory %llu bits, average false-positive rate <= %g, a message repeated\n"
               "within %llu new messages forgotten with probability <= %g:\n\n",
               (unsigned long long)bits, eps, (unsigned long long)remember, miss);
        cli_plan_fn_text_filter(r.phases, r.hashes, r.sigma, r.expected_messages);
        printf("fp                 %.6g\n", r.fp);
        printf("miss               %s%.6g   (P(forgotten) after %llu new messages%s)\n",
               r.miss_is_bound ? "<= " : "", r.miss, (unsigned long long)remember,
               r.miss_is_bound ? "; a proven bound, the exact value was not computed" : "");
    } else {
        printf("No one- or two-phase sigma-bounded filter of %llu bits meets both targets.\n",
               (unsigned long long)bits);
        if (least)
            printf("Least memory that has one: %llu bits (%llu bytes).\n",
                   (unsigned long long)least, (unsigned long long)((least + 7) / 8));
        else
            printf("None found below 2^25 bits.\n");
    }
    return cli_finish_stdout(CMD);
}
