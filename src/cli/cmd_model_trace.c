/*
 * cmd_model_trace.c -- rbf model ... --fn trace:FILE [--arrivals A]: the
 * cycle law replayed on a trace (rbf_model_fn_trace, docs/models.md 9.5).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "model_fn.h"
#include "rbf_model.h"
#include "rbf_sim.h"

static const char *const CMD = "model";

int cli_trace_read(const char *cmd, const char *path, uint32_t **ids, struct rbf_model_trace *t)
{
    memset(t, 0, sizeof *t);
    int rc = rbf_sim_trace_read(path, ids, &t->arrivals, &t->distinct);
    if (rc == RBF_EIO)
        return cli_fail(cmd, "--fn trace: cannot read '%s': %s", path, strerror(errno));
    if (rc == RBF_EINVAL)
        return cli_usage(cmd, "--fn trace: '%s' is empty or has 2^32 - 1 distinct lines or more",
                         path);
    if (rc)
        return cli_fail(cmd, "out of memory reading '%s'", path);
    return 0;
}

static void json_rates(const char *name, const rbf_model_trace_rates *r)
{
    printf(", \"%s\": {\"fp\": ", name);
    cli_json_double(stdout, r->fp);
    cli_json_field(stdout, "fn", r->fn);
    cli_json_field(stdout, "forgotten", r->forgotten);
    cli_json_field(stdout, "tick_fraction", r->tick_fraction);
    cli_json_field(stdout, "fp_se", r->fp_se); /* null when not estimated */
    cli_json_field(stdout, "fn_se", r->fn_se);
    cli_json_field(stdout, "arrivals", r->arrivals);
    cli_json_field(stdout, "repeats", r->repeats);
    cli_json_field(stdout, "cycles", r->cycles);
    printf("}");
}

static void text_rates(const char *name, const rbf_model_trace_rates *r)
{
    printf("%-18s fp %.6g", name, r->fp);
    if (!isnan(r->fp_se))
        printf(" (se %.2g)", r->fp_se);
    printf("  fn %.6g", r->fn);
    if (!isnan(r->fn_se))
        printf(" (se %.2g)", r->fn_se);
    printf("\n%-18s forgotten %.6g  tick_fraction %.6g  cycles %.6g per window\n", "",
           r->forgotten, r->tick_fraction, r->cycles);
}

int cli_model_trace(const cli_model_fn_args *a, const rbf_model_params *p,
                    const rbf_model_cycle_spec *s)
{
    const char *path = a->fn + 6;
    if (!*path)
        return cli_usage(CMD, "--fn trace:FILE needs a file name");
    if (a->have_new_fraction)
        return cli_usage(CMD, "--new-fraction: applies to --fn gaps:FILE only (a trace has its own)");
    if (a->forget)
        return cli_usage(CMD, "--forget: not with --fn trace:FILE (ask it without --fn)");
    double t0 = cli_wall_seconds();
    rbf_model_trace t;
    uint32_t *ids = NULL;
    int rc = cli_trace_read(CMD, path, &ids, &t);
    if (rc)
        return rc;
    double t1 = cli_wall_seconds();
    if (a->arrivals > t.arrivals) {
        free(ids);
        return cli_usage(CMD, "--arrivals: %llu is more than the trace's %llu lines",
                         (unsigned long long)a->arrivals, (unsigned long long)t.arrivals);
    }
    t.ids = ids;
    t.window = a->arrivals;
    t.replicas = a->replicas;
    t.seed = 1;
    rbf_model_trace_bin curve[RBF_MODEL_TRACE_BINS];
    t.curve = curve;
    rbf_model_trace_result r;
    cli_progress_begin("model", 60);
    rc = rbf_model_fn_trace(p, s, &t, &r);
    cli_progress_end();
    free(ids);
    double t2 = cli_wall_seconds();
    if (rc == RBF_ENOMEM)
        return cli_fail(CMD, "out of memory (or a cycle distribution too long for this model)");
    if (rc == RBF_ECANCELED)
        return cli_fail(CMD, "cancelled");
    if (rc)
        return cli_fail(CMD, "the model rejected these parameters");
    const char *policy = a->sigma ? "sigma-bounded" : a->oracle ? "N-bounded oracle"
                                                                : "N-bounded real user";
    if (a->json) {
        cli_model_fn_json_head(a);
        printf(", \"workload\": ");
        cli_json_string(stdout, a->fn);
        printf(", \"method\": \"replay\", \"lines\": %llu, \"distinct\": %llu",
               (unsigned long long)t.arrivals, (unsigned long long)t.distinct);
        printf(", \"window\": %llu, \"windows\": %llu, \"replicas\": %u",
               (unsigned long long)(a->arrivals ? a->arrivals : t.arrivals),
               (unsigned long long)r.windows, r.replicas);
        cli_json_field(stdout, "new_fraction", r.whole.arrivals > 0.0 ? 1.0 - r.whole.repeats / r.whole.arrivals : 0.0);
        cli_json_field(stdout, "fp_law", r.fp_law);
        cli_json_field(stdout, "cycle_mean", r.cycle_mean);
        cli_json_field(stdout, "fp", r.whole.fp);
        cli_json_field(stdout, "fn", r.whole.fn);
        json_rates("whole", &r.whole);
        json_rates("steady", &r.steady);
        printf(", \"forget_curve\": [");
        for (unsigned b = 0, first = 1; b < RBF_MODEL_TRACE_BINS; b++) {
            if (!(curve[b].repeats > 0.0))
                continue;
            printf("%s{\"gap_lo\": %llu, \"gap_hi\": %llu, \"repeats\": ", first ? "" : ", ",
                   (unsigned long long)curve[b].gap_lo, (unsigned long long)curve[b].gap_hi);
            cli_json_double(stdout, curve[b].repeats);
            cli_json_field(stdout, "forgotten", curve[b].forgotten);
            cli_json_field(stdout, "fn", curve[b].fn);
            printf("}");
            first = 0;
        }
        printf("]");
        cli_json_field(stdout, "read_seconds", t1 - t0);
        cli_json_field(stdout, "model_seconds", t2 - t1);
        printf("}\n");
    } else {
        printf("model              %s, %s-phase, %s%s%s\n", policy, a->phases == 2 ? "two" : "one",
               cli_hashing_name(a->nc), a->sigma ? ", " : "", a->sigma ? cli_recycle_name(a->ret) : "");
        printf("bits               %llu\n", (unsigned long long)a->bits);
        printf("hashes             %u\n", a->hashes);
        if (a->sigma)
            printf("sigma              %llu\n", (unsigned long long)a->sigma);
        else
            printf("messages           %llu\n", (unsigned long long)a->messages);
        printf("workload           %s (%llu lines, %llu distinct)\n", a->fn,
               (unsigned long long)t.arrivals, (unsigned long long)t.distinct);
        printf("method             replay (the cycle law replayed on the trace; %u replica%s)\n",
               r.replicas, r.replicas == 1 ? "" : "s");
        printf("windows            %llu of %llu arrivals, each from an empty filter\n",
               (unsigned long long)r.windows,
               (unsigned long long)(a->arrivals ? a->arrivals : t.arrivals));
        printf("new_fraction       %.12g   (first arrivals in their window / arrivals)\n",
               r.whole.arrivals > 0.0 ? 1.0 - r.whole.repeats / r.whole.arrivals : 0.0);
        printf("fp_law             %.12g   (the policy's average rate, cycle law)\n", r.fp_law);
        printf("cycle_mean         %.12g   (ticks per cycle)\n", r.cycle_mean);
        printf("fp                 %.12g   (false positives / new arrivals, whole windows)\n",
               r.whole.fp);
        printf("fn                 %.12g   (false negatives / repeats, whole windows)\n", r.whole.fn);
        text_rates("whole", &r.whole);
        text_rates("steady", &r.steady);
        printf("forget curve       by the repeat's gap in arrivals (whole windows):\n"
               "                   %-22s %-12s %-12s %s\n",
               "gap", "repeats", "forgotten", "fn");
        for (unsigned b = 0; b < RBF_MODEL_TRACE_BINS; b++) {
            if (!(curve[b].repeats > 0.0))
                continue;
            char g[48];
            snprintf(g, sizeof g, "%llu-%llu", (unsigned long long)curve[b].gap_lo,
                     (unsigned long long)curve[b].gap_hi);
            printf("                   %-22s %-12.6g %-12.6g %.6g\n", g, curve[b].repeats,
                   curve[b].forgotten, curve[b].fn);
        }
        printf("seconds            %.3g reading, %.3g model\n", t1 - t0, t2 - t1);
    }
    return cli_finish_stdout(CMD);
}
