/*
 * cmd_simulate.c -- `rbf simulate`: run the real filter on a workload and
 * report its measured rates with 99% confidence intervals beside the model.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rbf_predict.h"
#include "rbf_sim.h"

static const char *const CMD = "simulate";

static void help(void)
{
    printf(
        "Usage: rbf simulate --bits M --hashes K (--sigma S | --messages N [--oracle])\n"
        "                    [OPTIONS]\n"
        "\n"
        "Drive the library's filter with a workload of message arrivals, track which\n"
        "messages it truly holds, and measure its false-positive rate counted three\n"
        "ways and its false-negative rate, over independent epochs with a 99%%\n"
        "Student-t confidence interval, beside the model's prediction.\n"
        "\n"
        "Filter:\n"
        "  --bits M            memory in bits (two-phase: total of both filters)\n"
        "  --hashes K          hash positions per message\n"
        "  --sigma S           sigma-bounded: at most S set bits per filter\n"
        "  --messages N        N-bounded: recycle after N bit-setting messages\n"
        "  --oracle            N-bounded oracle: recycle after N truly new messages\n"
        "                      (the simulator recycles; the filter never does)\n"
        "  --hashing H         colliding (default) | non-colliding\n"
        "  --recycle R         non-retaining (default) | retaining\n"
        "  --phases P          1 (default) | 2\n"
        "  --layout L          flat (default) | blocked: all k positions of a message\n"
        "                      in one 512-bit block (M per filter a multiple of 512)\n"
        "Run:\n"
        "  --workload W        uniform:P (default uniform:1000): P messages, each arrival\n"
        "                      one of them at random; zipf:P:S: rank r with probability\n"
        "                      proportional to r^-S; fading:R:L: a fraction R of brand-new\n"
        "                      messages, each requested less and less (mean lifetime L\n"
        "                      arrivals); trace:FILE: one message per line, replayed and\n"
        "                      split into the epochs (docs/simulator.md)\n"
        "  --arrivals A        counted arrivals per epoch (default 100000; a usage error\n"
        "                      with a trace, which is replayed whole)\n"
        "  --warmup W          arrivals per epoch run before counting (default 0)\n"
        "  --epochs E          independent epochs (default 7; an interval needs 2)\n"
        "  --seed S            random seed (default 1)\n"
        "  --threads T         worker threads, 0 to 4096 (default 0 = every online processor)\n"
        "Output:\n"
        "  --json              one JSON object\n"
        "  --epochs-detail     include every epoch's counts and rates\n"
        "  --help              this text\n"
        "\n"
        "Rates: fp = count-instance (false-positive new arrivals / new arrivals, the\n"
        "models' measure), fp_first = false-positive new arrivals / all arrivals,\n"
        "fp_each = arrivals of false-positive messages / all arrivals, fn = repeats\n"
        "reported new / repeats.  The same seed gives the same numbers whatever the\n"
        "thread count.\n"
        "\n"
        "Example (the paper's setup):\n"
        "  rbf simulate --bits 1000 --hashes 3 --sigma 300 --epochs 7 --json\n");
}

enum {
    O_BITS = 256, O_HASHES, O_SIGMA, O_MESSAGES, O_ORACLE, O_HASHING, O_RECYCLE, O_PHASES, O_LAYOUT,
    O_WORKLOAD, O_ARRIVALS, O_WARMUP, O_EPOCHS, O_SEED, O_THREADS, O_JSON, O_DETAIL, O_HELP
};

static const struct option longopts[] = {
    {"bits", required_argument, NULL, O_BITS},
    {"hashes", required_argument, NULL, O_HASHES},
    {"sigma", required_argument, NULL, O_SIGMA},
    {"messages", required_argument, NULL, O_MESSAGES},
    {"oracle", no_argument, NULL, O_ORACLE},
    {"hashing", required_argument, NULL, O_HASHING},
    {"layout", required_argument, NULL, O_LAYOUT},
    {"recycle", required_argument, NULL, O_RECYCLE},
    {"phases", required_argument, NULL, O_PHASES},
    {"workload", required_argument, NULL, O_WORKLOAD},
    {"arrivals", required_argument, NULL, O_ARRIVALS},
    {"warmup", required_argument, NULL, O_WARMUP},
    {"epochs", required_argument, NULL, O_EPOCHS},
    {"seed", required_argument, NULL, O_SEED},
    {"threads", required_argument, NULL, O_THREADS},
    {"json", no_argument, NULL, O_JSON},
    {"epochs-detail", no_argument, NULL, O_DETAIL},
    {"help", no_argument, NULL, O_HELP},
    {NULL, 0, NULL, 0},
};

static void json_ci(FILE *fp, const char *name, const rbf_sim_stat *s, int observed)
{
    fprintf(fp, ", \"%s\": ", name);
    if (!observed) { /* nothing observed: no rate, no interval */
        fprintf(fp, "null, \"%s_ci99\": null", name);
        return;
    }
    cli_json_double(fp, s->mean);
    fprintf(fp, ", \"%s_ci99\": ", name);
    if (s->has_ci) {
        fputc('[', fp);
        cli_json_double(fp, s->ci_low);
        fputs(", ", fp);
        cli_json_double(fp, s->ci_high);
        fputc(']', fp);
    } else {
        fputs("null", fp);
    }
}

static void json_counts(FILE *fp, const rbf_sim_counts *c)
{
    fprintf(fp,
            "\"arrivals\": %llu, \"new_arrivals\": %llu, \"false_positives\": %llu, "
            "\"fp_each_arrivals\": %llu, \"repeats\": %llu, \"false_negatives\": %llu, "
            "\"cycles\": %llu",
            (unsigned long long)c->arrivals, (unsigned long long)c->new_arrivals,
            (unsigned long long)c->fp_first, (unsigned long long)c->fp_each,
            (unsigned long long)c->repeats, (unsigned long long)c->false_negatives,
            (unsigned long long)c->cycles);
}

static void print_json(const rbf_sim_config *cfg, const char *wspec, const rbf_sim_result *r,
                       int model_rc, double model, const char *model_name, int detail)
{
    const rbf_config *fc = &cfg->filter;
    printf("{\"bits\": %llu, \"hashes\": %u, ", (unsigned long long)fc->bits, fc->hashes);
    if (fc->sigma)
        printf("\"sigma\": %llu, \"messages\": null, ", (unsigned long long)fc->sigma);
    else
        printf("\"sigma\": null, \"messages\": %llu, ", (unsigned long long)fc->messages);
    printf("\"oracle\": %s, \"hashing\": \"%s\", \"recycle\": \"%s\", \"phases\": %u, "
           "\"layout\": \"%s\", ",
           cfg->oracle ? "true" : "false",
           cli_hashing_name(fc->hashing == RBF_NON_COLLIDING),
           cli_recycle_name(fc->recycle == RBF_RETAINING), fc->phases,
           cli_layout_name(fc->layout == RBF_LAYOUT_BLOCKED));
    printf("\"workload\": ");
    cli_json_string(stdout, wspec);
    printf(", \"seed\": %llu, \"epochs\": %u, \"warmup\": %llu, ", (unsigned long long)cfg->seed,
           r->epochs, (unsigned long long)cfg->warmup);
    json_counts(stdout, &r->total);
    json_ci(stdout, "fp", &r->fp, r->total.new_arrivals > 0);
    json_ci(stdout, "fp_first", &r->fp_first, r->total.arrivals > 0);
    json_ci(stdout, "fp_each", &r->fp_each, r->total.arrivals > 0);
    json_ci(stdout, "fn", &r->fn, r->total.repeats > 0);
    json_ci(stdout, "messages_per_cycle", &r->messages_per_cycle, r->total.cycles > 0);
    rbf_sim_steady st;
    rbf_sim_steady_of(r, &st);
    printf(", \"steady_epochs\": %u", st.epochs);
    json_ci(stdout, "steady_fp", &st.fp, st.has_fp);
    json_ci(stdout, "steady_fn", &st.fn, st.has_fn);
    printf(", \"model\": ");
    if (model_rc == RBF_OK) {
        cli_json_double(stdout, model);
        printf(", \"model_name\": ");
        cli_json_string(stdout, model_name);
        printf(", \"model_inside_ci99\": ");
        int inside = rbf_sim_model_inside_ci99(r, model);
        printf("%s", inside < 0 ? "null" : inside ? "true" : "false");
    } else {
        printf("null, \"model_name\": ");
        if (model_name)
            cli_json_string(stdout, model_name);
        else
            printf("null");
        printf(", \"model_inside_ci99\": null");
    }
    printf(", \"threads\": %u, \"elapsed_seconds\": ", r->threads);
    cli_json_double(stdout, r->elapsed_seconds);
    printf(", \"arrivals_per_second\": ");
    uint64_t run = r->total.arrivals + (uint64_t)r->epochs * cfg->warmup;
    cli_json_double(stdout, r->elapsed_seconds > 0 ? (double)run / r->elapsed_seconds : 0);
    if (detail) {
        printf(", \"per_epoch\": [");
        for (unsigned i = 0; i < r->epochs; i++) {
            const rbf_sim_rates *q = &r->epoch_rates[i];
            printf("%s{", i ? ", " : "");
            json_counts(stdout, &r->epoch_counts[i]);
            cli_json_field(stdout, "fp", q->fp);
            cli_json_field(stdout, "fp_first", q->fp_first);
            cli_json_field(stdout, "fp_each", q->fp_each);
            cli_json_field(stdout, "fn", q->fn);
            cli_json_field(stdout, "messages_per_cycle", q->messages_per_cycle);
            printf("}");
        }
        printf("]");
    }
    printf("}\n");
}

static void row(const char *name, const rbf_sim_stat *s, int observed, const char *none)
{
    if (!observed)
        printf("  %-22s %-14s (%s)\n", name, "n/a", none);
    else if (s->has_ci)
        printf("  %-22s %-14.6g [%.6g, %.6g]\n", name, s->mean, s->ci_low, s->ci_high);
    else
        printf("  %-22s %-14.6g (one epoch: no interval)\n", name, s->mean);
}

static void print_text(const rbf_sim_config *cfg, const char *wspec, const rbf_sim_result *r,
                       int model_rc, double model, const char *model_name, int detail)
{
    const rbf_config *fc = &cfg->filter;
    printf("filter    M=%llu%s k=%u ", (unsigned long long)fc->bits,
           fc->phases == 2 ? " (two filters of M/2)" : "", fc->hashes);
    if (fc->sigma)
        printf("sigma=%llu", (unsigned long long)fc->sigma);
    else
        printf("N=%llu %s", (unsigned long long)fc->messages, cfg->oracle ? "(oracle)" : "(real user)");
    printf(" %s %s%s\n", cli_hashing_name(fc->hashing == RBF_NON_COLLIDING),
           cli_recycle_name(fc->recycle == RBF_RETAINING),
           fc->layout == RBF_LAYOUT_BLOCKED ? " blocked" : "");
    printf("workload  %s, %u epochs x %llu counted arrivals (warm-up %llu), seed %llu\n", wspec,
           r->epochs, (unsigned long long)(r->epochs ? r->total.arrivals / r->epochs : 0),
           (unsigned long long)cfg->warmup, (unsigned long long)cfg->seed);
    uint64_t run = r->total.arrivals + (uint64_t)r->epochs * cfg->warmup;
    printf("run       %u threads, %.3f s, %.3g arrivals/s\n\n", r->threads, r->elapsed_seconds,
           r->elapsed_seconds > 0 ? (double)run / r->elapsed_seconds : 0.0);
    printf("  %-22s %-14s %s\n", "rate", "mean", "99% confidence interval");
    row("fp (count-instance)", &r->fp, r->total.new_arrivals > 0, "no new arrivals");
    row("fp_first (count-first)", &r->fp_first, r->total.arrivals > 0, "no arrivals");
    row("fp_each (count-each)", &r->fp_each, r->total.arrivals > 0, "no arrivals");
    row("fn (false negatives)", &r->fn, r->total.repeats > 0, "no repeats");
    row("messages per cycle", &r->messages_per_cycle, r->total.cycles > 0, "no completed cycle");
    rbf_sim_steady st;
    rbf_sim_steady_of(r, &st);
    printf("  steady state: the complete cycles after the first (%u epoch%s)\n", st.epochs,
           st.epochs == 1 ? "" : "s");
    row("fp (steady)", &st.fp, st.has_fp, "fewer than two recycles");
    row("fn (steady)", &st.fn, st.has_fn, "fewer than two recycles");
    printf("\n");
    if (model_rc == RBF_OK) {
        const int v = rbf_sim_model_inside_ci99(r, model);
        const char *inside = !r->fp.has_ci ? "n/a (one epoch)"
                             : v < 0       ? "too few events to judge (< 10 false "
                                             "positives expected)"
                             : v           ? "yes"
                                           : "NO";
        printf("  model %-16s %-14.6g inside the 99%% interval: %s\n", model_name, model, inside);
    } else if (model_rc == RBF_ENOMODEL) {
        printf("  model                  none for this configuration\n");
    } else {
        printf("  model %-16s unavailable (%s)\n", model_name ? model_name : "",
               rbf_strerror(model_rc));
    }
    const rbf_sim_counts *c = &r->total;
    printf("\n  arrivals %llu, new %llu, false positives %llu, repeats %llu, false negatives "
           "%llu, cycles %llu\n",
           (unsigned long long)c->arrivals, (unsigned long long)c->new_arrivals,
           (unsigned long long)c->fp_first, (unsigned long long)c->repeats,
           (unsigned long long)c->false_negatives, (unsigned long long)c->cycles);
    if (detail) {
        printf("\n  %-6s %-12s %-12s %-12s %-12s %s\n", "epoch", "fp", "fp_first", "fp_each",
               "fn", "msgs/cycle");
        for (unsigned i = 0; i < r->epochs; i++) {
            const rbf_sim_rates *q = &r->epoch_rates[i];
            printf("  %-6u %-12.6g %-12.6g %-12.6g %-12.6g %.6g\n", i, q->fp, q->fp_first,
                   q->fp_each, q->fn, q->messages_per_cycle);
        }
    }
}

/* What the models say about the simulated configuration (rbf_predict):
 * a status, the rate in *fp when there is one, the model's name */
static int predict(const rbf_sim_config *cfg, double *fp, const char **name)
{
    rbf_predict_options po;
    rbf_predict_options_init(&po);
    po.oracle = cfg->oracle ? 1 : 0;
    rbf_prediction pr;
    int rc = rbf_predict(&cfg->filter, &po, &pr);
    if (rc == RBF_OK)
        *fp = pr.fp;
    *name = pr.name;
    return rc;
}

int cmd_simulate(int argc, char **argv)
{
    rbf_sim_config cfg;
    rbf_sim_config_init(&cfg);
    cfg.filter.bits = 0;
    int json = 0, detail = 0, have_bits = 0, have_hashes = 0, have_arrivals = 0;
    const char *wspec = "uniform:1000";
    const char *err;
    uint64_t v;
    int opt, rc;
    cli_getopt_reset();
    while ((opt = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
        switch (opt) {
        case O_BITS:
            if ((rc = cli_opt_count(CMD, "--bits", optarg, 1, &cfg.filter.bits)))
                return rc;
            have_bits = 1;
            break;
        case O_HASHES:
            if ((rc = cli_opt_uint(CMD, "--hashes", optarg, 1, RBF_MAX_HASHES, &v)))
                return rc;
            cfg.filter.hashes = (unsigned)v;
            have_hashes = 1;
            break;
        case O_SIGMA:
            if ((rc = cli_opt_count(CMD, "--sigma", optarg, 1, &cfg.filter.sigma)))
                return rc;
            break;
        case O_MESSAGES:
            if ((rc = cli_opt_count(CMD, "--messages", optarg, 1, &cfg.filter.messages)))
                return rc;
            break;
        case O_ORACLE: cfg.oracle = 1; break;
        case O_LAYOUT: {
            int bl;
            if ((rc = cli_opt_layout(CMD, optarg, &bl)))
                return rc;
            cfg.filter.layout = bl ? RBF_LAYOUT_BLOCKED : RBF_LAYOUT_FLAT;
            break;
        }
        case O_HASHING: {
            int nc;
            if ((rc = cli_opt_hashing(CMD, optarg, &nc)))
                return rc;
            cfg.filter.hashing = nc ? RBF_NON_COLLIDING : RBF_COLLIDING;
            break;
        }
        case O_RECYCLE: {
            int ret;
            if ((rc = cli_opt_recycle(CMD, optarg, &ret)))
                return rc;
            cfg.filter.recycle = ret ? RBF_RETAINING : RBF_NON_RETAINING;
            break;
        }
        case O_PHASES:
            if ((rc = cli_opt_phases(CMD, optarg, &cfg.filter.phases)))
                return rc;
            break;
        case O_WORKLOAD: wspec = optarg; break;
        case O_ARRIVALS:
            if ((rc = cli_opt_count(CMD, "--arrivals", optarg, 1, &cfg.arrivals)))
                return rc;
            have_arrivals = 1;
            break;
        case O_WARMUP:
            if ((rc = cli_opt_count(CMD, "--warmup", optarg, 0, &cfg.warmup)))
                return rc;
            break;
        case O_EPOCHS:
            if ((rc = cli_opt_uint(CMD, "--epochs", optarg, 1, 1000000, &v)))
                return rc;
            cfg.epochs = (unsigned)v;
            break;
        case O_SEED:
            if ((rc = cli_opt_uint(CMD, "--seed", optarg, 0, UINT64_MAX, &cfg.seed)))
                return rc;
            break;
        case O_THREADS:
            /* 0: every online processor (the simulator's own default) */
            if ((rc = cli_opt_threads(CMD, optarg, 4096, &cfg.threads)))
                return rc;
            break;
        case O_JSON: json = 1; break;
        case O_DETAIL: detail = 1; break;
        case O_HELP: help(); return cli_finish_stdout(CMD);
        default: return cli_bad_option(CMD, argc, argv, longopts);
        }
    }
    if ((rc = cli_no_operands(CMD, argc, argv)))
        return rc;
    if (!have_bits)
        return cli_usage(CMD, "--bits is required");
    if (!have_hashes)
        return cli_usage(CMD, "--hashes is required");
    if (cfg.filter.sigma && cfg.filter.messages)
        return cli_usage(CMD, "--sigma and --messages exclude each other");
    if (!cfg.filter.sigma && !cfg.filter.messages)
        return cli_usage(CMD, "--sigma or --messages is required");
    if (cfg.oracle && !cfg.filter.messages)
        return cli_usage(CMD, "--oracle needs --messages");
    if (rbf_sim_workload_parse(wspec, &cfg.workload, &err) != RBF_OK)
        return cli_bad_value(CMD, "--workload", wspec, err,
                             "uniform:P, zipf:P:S, fading:R:L or trace:FILE");
    if (have_arrivals && cfg.workload.kind == RBF_WORKLOAD_TRACE)
        return cli_usage(CMD, "--arrivals: a trace is replayed whole (its epochs split it); "
                              "leave --arrivals out");
    const char *why;
    rc = rbf_config_check(&cfg.filter, &why);
    if (rc == RBF_EINVAL) {
        const char *opt_name = "--bits";
        if (strstr(why, "sigma"))
            opt_name = "--sigma";
        else if (strstr(why, "hashes"))
            opt_name = "--hashes";
        return cli_usage(CMD, "%s: %s", opt_name, why);
    }
    if (rc != RBF_OK)
        return cli_fail(CMD, "%s", why ? why : rbf_strerror(rc));
    if (rbf_sim_config_check(&cfg, &why) != RBF_OK)
        return cli_usage(CMD, "%s", why);

    uint64_t total = (cfg.arrivals + cfg.warmup) * cfg.epochs;
    cli_progress_begin("simulate", total);
    cfg.progress = cli_progress_cb;
    cfg.progress_ctx = NULL;
    rbf_sim_result r;
    rc = rbf_sim_run(&cfg, &r);
    cli_progress_end();
    if (rc == RBF_EIO)
        return cli_fail(CMD, "cannot read trace '%s': %s", cfg.workload.trace_path,
                        strerror(errno));
    if (rc == RBF_EINVAL && cfg.workload.kind == RBF_WORKLOAD_TRACE)
        return cli_fail(CMD, "trace '%s' is empty or has too many distinct lines",
                        cfg.workload.trace_path);
    if (rc != RBF_OK)
        return cli_fail(CMD, "%s", rbf_strerror(rc));
    if (r.total.anomalies)
        fprintf(stderr, "rbf simulate: warning: %llu held messages were reported new "
                        "(a filter bug)\n",
                (unsigned long long)r.total.anomalies);

    double model = 0;
    const char *model_name = NULL;
    int mrc = predict(&cfg, &model, &model_name);
    if (json)
        print_json(&cfg, wspec, &r, mrc, model, model_name, detail);
    else
        print_text(&cfg, wspec, &r, mrc, model, model_name, detail);
    rbf_sim_result_free(&r);
    return cli_finish_stdout(CMD);
}
