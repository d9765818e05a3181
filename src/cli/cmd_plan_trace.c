/*
 * cmd_plan_trace.c -- `rbf plan --bits M --fp EPS --fn trace:FILE --miss D`:
 * sizing for a log (rbf_plan_trace, docs/models.md 9.6).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "model_fn.h"
#include "rbf_model.h"
#include "rbf_sim.h"

static const char *const CMD = "plan";

int cli_plan_trace(uint64_t bits, double eps, const char *path, uint64_t arrivals, double miss,
                   struct rbf_plan_options *o, int json)
{
    rbf_model_trace t;
    uint32_t *ids = NULL;
    int rc = cli_trace_read(CMD, path, &ids, &t);
    if (rc)
        return rc;
    if (arrivals > t.arrivals) {
        free(ids);
        return cli_usage(CMD, "--arrivals: %llu is more than the trace's %llu lines",
                         (unsigned long long)arrivals, (unsigned long long)t.arrivals);
    }
    t.ids = ids;
    t.window = arrivals;
    t.seed = 1;
    rbf_plan_trace_result r;
    uint64_t least = 0;
    o->progress = cli_progress_cb;
    o->progress_ctx = NULL;
    cli_progress_begin("plan --fn", 1);
    rc = rbf_plan_trace(bits, eps, &t, miss, o, &r, &least);
    cli_progress_end();
    free(ids);
    if (rc == RBF_ENOMEM)
        return cli_fail(CMD, "out of memory");
    if (rc == RBF_ECANCELED)
        return cli_fail(CMD, "cancelled");
    if (rc)
        return cli_fail(CMD, "the model rejected these parameters");
    if (json) {
        printf("{\"bits\": %llu, \"target_fp\": ", (unsigned long long)bits);
        cli_json_double(stdout, eps);
        printf(", \"trace\": ");
        cli_json_string(stdout, path);
        printf(", \"lines\": %llu, \"distinct\": %llu, \"window\": %llu, \"miss_target\": ",
               (unsigned long long)t.arrivals, (unsigned long long)t.distinct,
               (unsigned long long)(arrivals ? arrivals : t.arrivals));
        cli_json_double(stdout, miss);
        cli_plan_fn_json_filter(bits, o, r.feasible, r.phases, r.hashes, r.sigma,
                                r.expected_messages, r.fp);
        if (r.feasible) {
            cli_json_field(stdout, "fp_trace", r.fp_trace);
            cli_json_field(stdout, "fn", r.fn);
        }
        cli_plan_fn_json_end(r.feasible, least);
    } else if (r.feasible) {
        printf("Memory %llu bits, average false-positive rate <= %g, false-negative rate\n"
               "<= %g on %s (%llu lines, %llu distinct, from an empty filter):\n\n",
               (unsigned long long)bits, eps, miss, path, (unsigned long long)t.arrivals,
               (unsigned long long)t.distinct);
        cli_plan_fn_text_filter(r.phases, r.hashes, r.sigma, r.expected_messages);
        printf("fp                 %.6g   (the average rate; on the trace %.6g)\n", r.fp,
               r.fp_trace);
        printf("fn                 %.6g   (false negatives / repeats on the trace)\n", r.fn);
    } else {
        printf("No one- or two-phase sigma-bounded filter of %llu bits meets both targets on\n"
               "%s.\n",
               (unsigned long long)bits, path);
        if (least)
            printf("Least memory that has one: %llu bits (%llu bytes), within 1%%.\n",
                   (unsigned long long)least, (unsigned long long)((least + 7) / 8));
        else
            printf("None found up to 2^31 bits.\n");
    }
    return cli_finish_stdout(CMD);
}
