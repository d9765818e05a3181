/*
 * cmd_model.c -- `rbf model`: the analytic models of include/rbf_model.h
 * (sigma-bounded one- and two-phase, N-bounded bounds and exact rates).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "model_fn.h"
#include "rbf_model.h"
#include "rbf_predict.h"

static uint64_t *forget_gaps; /* --forget's gaps */

static const char *const CMD = "model";

enum { O_BITS = 256, O_HASHES, O_SIGMA, O_MESSAGES, O_HASHING, O_RECYCLE, O_PHASES, O_METHOD,
       O_CURVE, O_POINTS, O_FORCE, O_JSON, O_HELP, O_LAYOUT, O_FN, O_ORACLE, O_NEWFRAC, O_FORGET,
       O_ARRIVALS, O_REPLICAS };

static const struct option longopts[] = {
    {"bits", required_argument, NULL, O_BITS},
    {"hashes", required_argument, NULL, O_HASHES},
    {"sigma", required_argument, NULL, O_SIGMA},
    {"messages", required_argument, NULL, O_MESSAGES},
    {"hashing", required_argument, NULL, O_HASHING},
    {"recycle", required_argument, NULL, O_RECYCLE},
    {"phases", required_argument, NULL, O_PHASES},
    {"layout", required_argument, NULL, O_LAYOUT},
    {"method", required_argument, NULL, O_METHOD},
    {"curve", no_argument, NULL, O_CURVE},
    {"points", required_argument, NULL, O_POINTS},
    {"force", no_argument, NULL, O_FORCE},
    {"json", no_argument, NULL, O_JSON},
    {"help", no_argument, NULL, O_HELP},
    {"fn", required_argument, NULL, O_FN},
    {"oracle", no_argument, NULL, O_ORACLE},
    {"new-fraction", required_argument, NULL, O_NEWFRAC},
    {"forget", required_argument, NULL, O_FORGET},
    {"arrivals", required_argument, NULL, O_ARRIVALS},
    {"replicas", required_argument, NULL, O_REPLICAS},
    {NULL, 0, NULL, 0},
};

typedef struct opts {
    uint64_t bits, sigma, messages;
    unsigned hashes, phases;
    int nc, ret, paper, curve, json, blocked, force;
    rbf_model_method method;
    uint64_t points;
} opts;

/* Rows a full --curve may write without --force */
#define CURVE_MAX_ROWS 10000000u


static void json_inputs(const opts *o)
{
    printf("{\"bits\": %llu, \"hashes\": %u, ", (unsigned long long)o->bits, o->hashes);
    if (o->sigma)
        printf("\"sigma\": %llu, \"messages\": null, ", (unsigned long long)o->sigma);
    else
        printf("\"sigma\": null, \"messages\": %llu, ", (unsigned long long)o->messages);
    printf("\"hashing\": \"%s\", \"recycle\": \"%s\", \"phases\": %u, \"method\": \"%s\"",
           cli_hashing_name(o->nc), cli_recycle_name(o->ret), o->phases, cli_method_name(o->method));
    if (o->phases == 2)
        printf(", \"bits_per_filter\": %llu", (unsigned long long)(o->bits / 2));
    printf(", \"layout\": \"%s\"", o->blocked ? "blocked" : "flat");
    if (o->blocked)
        printf(", \"blocks_per_filter\": %llu",
               (unsigned long long)((o->phases == 2 ? o->bits / 2 : o->bits) /
                                    RBF_BLOCK_BITS));
}

static void jfield(const char *name, double v)
{
    printf(", \"%s\": ", name);
    cli_json_double(stdout, v);
}

static void header(const opts *o)
{
    /* the method that runs: auto is the renewal pass up to
     * RBF_MODEL_AUTO_EXACT_BITS bits per filter, the asymptotic one above */
    uint64_t per_filter = o->phases == 2 ? o->bits / 2 : o->bits;
    int exact = o->method == RBF_MODEL_EXACT ||
                (o->method == RBF_MODEL_AUTO && per_filter <= RBF_MODEL_AUTO_EXACT_BITS);
    if (o->sigma)
        printf("model              %s, %s, %s%s\n",
               o->phases == 2 ? "sigma-bounded two-phase" : "sigma-bounded one-phase",
               cli_hashing_name(o->nc), cli_recycle_name(o->ret),
               o->blocked                     ? " (blocked layout)"
               : o->method == RBF_MODEL_PAPER ? " (paper's method)"
               : exact                        ? " (renewal pass)"
                                              : " (asymptotic)");
    else /* recycling on N: retaining or not makes no difference */
        printf("model              N-bounded%s, %s%s\n", o->phases == 2 ? " two-phase" : "",
               cli_hashing_name(o->nc), o->blocked ? " (blocked layout)" : "");
    if (o->phases == 2)
        printf("bits               %llu (two filters of %llu)\n", (unsigned long long)o->bits,
               (unsigned long long)(o->bits / 2));
    else
        printf("bits               %llu\n", (unsigned long long)o->bits);
    printf("hashes             %u\n", o->hashes);
    if (o->blocked)
        printf("layout             blocked (%llu blocks of %u bits per filter)\n",
               (unsigned long long)((o->phases == 2 ? o->bits / 2 : o->bits) /
                                    RBF_BLOCK_BITS),
               RBF_BLOCK_BITS);
    if (o->sigma)
        printf("sigma              %llu\n", (unsigned long long)o->sigma);
    else
        printf("messages           %llu\n", (unsigned long long)o->messages);
}

static int lib_fail(int rc)
{
    if (rc == RBF_ENOMEM)
        return cli_fail(CMD, "out of memory");
    if (rc == RBF_ECANCELED)
        return cli_fail(CMD, "cancelled");
    return cli_fail(CMD, "the model rejected these parameters");
}

/* The curve's points (rbf_model_curve_points), in a malloc'd array; *n
 * receives how many. */
static uint64_t *sample_points(uint64_t first, uint64_t last, uint64_t P, size_t *n)
{
    uint64_t span = last - first, cap = P > span ? span + 1 : P;
    uint64_t *v = malloc((size_t)(cap ? cap : 1) * sizeof *v);
    if (!v)
        return NULL;
    *n = rbf_model_curve_points(first, last, P, v);
    return v;
}

static int run_sigma_points(const opts *o, rbf_model_params *p, uint64_t first)
{
    size_t n;
    uint64_t *pts = sample_points(first, o->sigma, o->points, &n);
    if (!pts)
        return cli_fail(CMD, "out of memory");
    int rc;
    cli_progress_begin("model", o->sigma + 1);
    if (o->phases == 2) {
        rbf_model_two_phase_result *rows = malloc(n * sizeof *rows);
        rc = rows ? rbf_model_two_phase_points(p, pts, n, rows) : RBF_ENOMEM;
        cli_progress_end();
        if (!rc) {
            printf("sigma,fp,fp_active,fp_frozen,expected_messages\n");
            for (size_t i = 0; i < n; i++)
                printf("%llu,%.17g,%.17g,%.17g,%.17g\n", (unsigned long long)pts[i], rows[i].fp,
                       rows[i].fp_active, rows[i].fp_frozen, rows[i].expected_messages);
        }
        free(rows);
    } else {
        rbf_model_sigma_result *rows = malloc(n * sizeof *rows);
        rc = rows ? rbf_model_sigma_points(p, pts, n, rows) : RBF_ENOMEM;
        cli_progress_end();
        if (!rc) {
            printf("sigma,fp,expected_messages\n");
            for (size_t i = 0; i < n; i++)
                printf("%llu,%.17g,%.17g\n", (unsigned long long)pts[i], rows[i].fp,
                       rows[i].expected_messages);
        }
        free(rows);
    }
    free(pts);
    if (rc)
        return lib_fail(rc);
    return cli_finish_stdout(CMD);
}

static int run_sigma(const opts *o, rbf_model_params *p)
{
    int rc;
    uint64_t first = o->ret ? (o->hashes > 1 ? o->hashes : 1) : 1;
    if (o->curve && o->points)
        return run_sigma_points(o, p, first);
    if (o->curve) {
        size_t n = (size_t)o->sigma + 1;
        if (o->phases == 2) {
            rbf_model_two_phase_result *rows = malloc(n * sizeof *rows);
            if (!rows)
                return cli_fail(CMD, "out of memory for %llu rows", (unsigned long long)n);
            cli_progress_begin("model", o->sigma + 1);
            rc = rbf_model_two_phase_curve(p, o->sigma, rows);
            cli_progress_end();
            if (rc) {
                free(rows);
                return lib_fail(rc);
            }
            printf("sigma,fp,fp_active,fp_frozen,expected_messages\n");
            for (uint64_t s = first; s <= o->sigma; s++)
                printf("%llu,%.17g,%.17g,%.17g,%.17g\n", (unsigned long long)s, rows[s].fp,
                       rows[s].fp_active, rows[s].fp_frozen, rows[s].expected_messages);
            free(rows);
        } else {
            double *fp = malloc(n * sizeof *fp), *en = malloc(n * sizeof *en);
            if (!fp || !en) {
                free(fp);
                free(en);
                return cli_fail(CMD, "out of memory for %llu rows", (unsigned long long)n);
            }
            cli_progress_begin("model", o->sigma + 1);
            rc = rbf_model_sigma_curve(p, o->sigma, fp, en);
            cli_progress_end();
            if (rc) {
                free(fp);
                free(en);
                return lib_fail(rc);
            }
            printf("sigma,fp,expected_messages\n");
            for (uint64_t s = first; s <= o->sigma; s++)
                printf("%llu,%.17g,%.17g\n", (unsigned long long)s, fp[s], en[s]);
            free(fp);
            free(en);
        }
        return cli_finish_stdout(CMD);
    }
    cli_progress_begin("model", o->sigma + 1);
    if (o->phases == 2) {
        rbf_model_two_phase_result t;
        rc = rbf_model_two_phase(p, o->sigma, &t);
        cli_progress_end();
        if (rc)
            return lib_fail(rc);
        if (o->json) {
            json_inputs(o);
            jfield("fp", t.fp);
            jfield("fp_active", t.fp_active);
            jfield("fp_frozen", t.fp_frozen);
            jfield("expected_messages", t.expected_messages);
            printf("}\n");
        } else {
            header(o);
            printf("fp                 %.12g   (f_sigma^2: active or frozen filter)\n", t.fp);
            printf("fp_active          %.12g   (f_sigma^1 of the active filter)\n", t.fp_active);
            printf("fp_frozen          %.12g   (average rate of the frozen filter)\n", t.fp_frozen);
            printf("expected_messages  %.12g   (E[N_0] of one filter per cycle)\n",
                   t.expected_messages);
        }
    } else {
        rbf_model_sigma_result r;
        rc = rbf_model_sigma(p, o->sigma, &r);
        cli_progress_end();
        if (rc)
            return lib_fail(rc);
        if (o->json) {
            json_inputs(o);
            jfield("fp", r.fp);
            jfield("expected_messages", r.expected_messages);
            printf("}\n");
        } else {
            header(o);
            printf("fp                 %.12g   (f_sigma^1)\n", r.fp);
            printf("expected_messages  %.12g   (E[N_0] per cycle)\n", r.expected_messages);
        }
    }
    return cli_finish_stdout(CMD);
}

static int run_messages(const opts *o, rbf_model_params *p)
{
    int rc;
    if (o->curve && o->points) {
        size_t n;
        uint64_t *pts = sample_points(1, o->messages, o->points, &n);
        if (!pts)
            return cli_fail(CMD, "out of memory");
        printf("messages,f_w,f_o,f_a,exact_worst,exact_oracle,exact_real\n");
        for (size_t i = 0; i < n; i++) {
            rbf_model_n_result r;
            cli_progress_begin("model", 2 * pts[i]);
            rc = rbf_model_nbounded(p, pts[i], &r);
            cli_progress_end();
            if (rc) {
                free(pts);
                return lib_fail(rc);
            }
            printf("%llu,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", (unsigned long long)pts[i], r.f_w,
                   r.f_o, r.f_a, r.exact_worst, r.exact_oracle, r.exact_real);
        }
        free(pts);
        return cli_finish_stdout(CMD);
    }
    if (o->curve) {
        rbf_model_n_result *rows = malloc((size_t)o->messages * sizeof *rows);
        if (!rows)
            return cli_fail(CMD, "out of memory for %llu rows", (unsigned long long)o->messages);
        cli_progress_begin("model", 2 * o->messages);
        rc = rbf_model_nbounded_curve(p, o->messages, rows);
        cli_progress_end();
        if (rc) {
            free(rows);
            return lib_fail(rc);
        }
        printf("messages,f_w,f_o,f_a,exact_worst,exact_oracle,exact_real\n");
        for (uint64_t n = 1; n <= o->messages; n++) {
            const rbf_model_n_result *r = &rows[n - 1];
            printf("%llu,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", (unsigned long long)n, r->f_w,
                   r->f_o, r->f_a, r->exact_worst, r->exact_oracle, r->exact_real);
        }
        free(rows);
        return cli_finish_stdout(CMD);
    }
    rbf_model_n_result r;
    cli_progress_begin("model", 2 * o->messages);
    rc = rbf_model_nbounded(p, o->messages, &r);
    cli_progress_end();
    if (rc)
        return lib_fail(rc);
    if (o->json) {
        json_inputs(o);
        jfield("f_w", r.f_w);
        jfield("f_o", r.f_o);
        jfield("f_a", r.f_a);
        jfield("exact_worst", r.exact_worst);
        jfield("exact_oracle", r.exact_oracle);
        jfield("exact_real", r.exact_real);
        jfield("exact_real_worst", r.exact_real_worst);
        if (r.saturated_at)
            printf(", \"saturated_at\": %llu", (unsigned long long)r.saturated_at);
        else
            printf(", \"saturated_at\": null");
        printf("}\n");
    } else {
        header(o);
        printf("f_w                %.12g   (classic worst case: the message after N)\n", r.f_w);
        printf("f_o                %.12g   (oracle lower bound)\n", r.f_o);
        printf("f_a                %.12g   (real-user lower bound)\n", r.f_a);
        printf("exact_worst        %.12g   (exact E[rho(B_N)])\n", r.exact_worst);
        printf("exact_oracle       %.12g   (exact oracle average)\n", r.exact_oracle);
        printf("exact_real         %.12g   (exact real-user average)\n", r.exact_real);
        printf("exact_real_worst   %.12g   (real user: E[rho] when it recycles)\n",
               r.exact_real_worst);
        if (r.saturated_at)
            printf("saturated          from n = %llu every bit is set (E[rho(B_n)] = 1): the\n"
                   "                   exact rates past it are in closed form\n",
                   (unsigned long long)r.saturated_at);
    }
    return cli_finish_stdout(CMD);
}

static int run_blocked(const opts *o, rbf_model_params *p)
{
    int rc;
    if (o->messages) {
        rbf_model_blocked_n_result r;
        rc = rbf_model_blocked_nbounded(p, o->messages, &r);
        cli_progress_end();
        if (rc)
            return lib_fail(rc);
        if (o->json) {
            json_inputs(o);
            printf(", \"f_w\": null, \"f_o\": null, \"f_a\": null");
            jfield("exact_worst", r.exact_worst);
            jfield("exact_oracle", r.exact_oracle);
            jfield("exact_real", r.exact_real);
            jfield("messages_per_cycle_real", r.messages_per_cycle_real);
            printf(", \"exact_convolution\": %s}\n", r.exact_convolution ? "true" : "false");
        } else {
            header(o);
            printf("exact_worst        %.12g   (E[rho] of the message after N insertions)\n",
                   r.exact_worst);
            printf("exact_oracle       %.12g   (oracle average)\n", r.exact_oracle);
            printf("exact_real         %.12g   (real-user average)\n", r.exact_real);
            printf("messages/cycle     %.12g   (real user: N + false positives)\n",
                   r.messages_per_cycle_real);
            printf("(f_w, f_o, f_a: flat-only formulas, not shown)\n");
        }
        return cli_finish_stdout(CMD);
    }
    if (o->phases == 2) {
        rbf_model_blocked_two_phase_result t;
        rc = rbf_model_blocked_two_phase(p, o->sigma, &t);
        cli_progress_end();
        if (rc)
            return lib_fail(rc);
        if (o->json) {
            json_inputs(o);
            jfield("fp", t.fp);
            jfield("fp_active", t.fp_active);
            jfield("fp_frozen", t.fp_frozen);
            jfield("expected_messages", t.expected_messages);
            jfield("messages_per_cycle", t.messages_per_cycle);
            printf(", \"exact_convolution\": %s}\n", t.exact_convolution ? "true" : "false");
        } else {
            header(o);
            printf("fp                 %.12g   (active or frozen filter)\n", t.fp);
            printf("fp_active          %.12g   (the active filter)\n", t.fp_active);
            printf("fp_frozen          %.12g   (average rate of the frozen filter)\n",
                   t.fp_frozen);
            printf("expected_messages  %.12g   (E[N_0] of one filter per cycle)\n",
                   t.expected_messages);
            printf("messages/cycle     %.12g   (new arrivals per cycle, as simulated)\n",
                   t.messages_per_cycle);
        }
        return cli_finish_stdout(CMD);
    }
    rbf_model_blocked_sigma_result r;
    rc = rbf_model_blocked_sigma(p, o->sigma, &r);
    cli_progress_end();
    if (rc)
        return lib_fail(rc);
    if (o->json) {
        json_inputs(o);
        jfield("fp", r.fp);
        jfield("expected_messages", r.expected_messages);
        jfield("messages_per_cycle", r.messages_per_cycle);
        printf(", \"exact_convolution\": %s}\n", r.exact_convolution ? "true" : "false");
    } else {
        header(o);
        printf("fp                 %.12g   (average rate)\n", r.fp);
        printf("expected_messages  %.12g   (E[N_0] per cycle)\n", r.expected_messages);
        printf("messages/cycle     %.12g   (new arrivals per cycle, as simulated)\n",
               r.messages_per_cycle);
    }
    return cli_finish_stdout(CMD);
}

/* parse_options and the checks return this to go on, else the exit status */
#define GO_ON (-1)

/* Which options were given */
typedef struct given {
    int bits, hashes, sigma, messages, method;
} given;

/* The options into *o, *fa and *h: GO_ON, or the exit status (--help, a
 * bad option). */
static int parse_options(int argc, char **argv, opts *o, cli_model_fn_args *fa, given *h)
{
    uint64_t v;
    int opt, rc;
    cli_getopt_reset();
    while ((opt = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
        switch (opt) {
        case O_BITS:
            if ((rc = cli_opt_count(CMD, "--bits", optarg, 1, &o->bits)))
                return rc;
            h->bits = 1;
            break;
        case O_HASHES:
            if ((rc = cli_opt_uint(CMD, "--hashes", optarg, 1, RBF_MAX_HASHES, &v)))
                return rc;
            o->hashes = (unsigned)v;
            h->hashes = 1;
            break;
        case O_SIGMA:
            if ((rc = cli_opt_count(CMD, "--sigma", optarg, 1, &o->sigma)))
                return rc;
            h->sigma = 1;
            break;
        case O_MESSAGES:
            if ((rc = cli_opt_count(CMD, "--messages", optarg, 1, &o->messages)))
                return rc;
            h->messages = 1;
            break;
        case O_HASHING:
            if ((rc = cli_opt_hashing(CMD, optarg, &o->nc)))
                return rc;
            break;
        case O_RECYCLE:
            if ((rc = cli_opt_recycle(CMD, optarg, &o->ret)))
                return rc;
            break;
        case O_PHASES:
            if ((rc = cli_opt_phases(CMD, optarg, &o->phases)))
                return rc;
            break;
        case O_METHOD:
            o->paper = 0;
            if (!strcmp(optarg, "fast"))
                o->method = RBF_MODEL_ASYMPTOTIC;
            else if (!strcmp(optarg, "exact"))
                o->method = RBF_MODEL_EXACT;
            else if (!strcmp(optarg, "auto"))
                o->method = RBF_MODEL_AUTO;
            else if (!strcmp(optarg, "paper")) {
                o->method = RBF_MODEL_PAPER;
                o->paper = 1;
            } else
                return cli_bad_value(CMD, "--method", optarg, NULL, "auto, exact, fast or paper");
            h->method = 1;
            break;
        case O_POINTS:
            if ((rc = cli_opt_count(CMD, "--points", optarg, 1, &o->points)))
                return rc;
            if (o->points < 2)
                return cli_usage(CMD, "--points: at least 2");
            break;
        case O_FORCE:
            o->force = 1;
            break;
        case O_CURVE:
            o->curve = 1;
            break;
        case O_LAYOUT:
            if (!strcmp(optarg, "flat"))
                o->blocked = 0;
            else if (!strcmp(optarg, "blocked"))
                o->blocked = 1;
            else
                return cli_usage(CMD, "--layout: '%s' is not flat or blocked", optarg);
            break;
        case O_JSON:
            o->json = 1;
            break;
        case O_HELP:
            cli_model_help();
            return cli_finish_stdout(CMD);
        case O_FN:
            fa->fn = optarg;
            break;
        case O_ORACLE:
            fa->oracle = 1;
            break;
        case O_FORGET: {
            const char *err = NULL;
            uint64_t *g = NULL;
            size_t n = 0;
            if (cli_parse_gaps(optarg, &g, &n, &err))
                return cli_bad_value(CMD, "--forget", optarg, err, "gaps in ticks: 100, 10,50,200 or 0:1000:50");
            free(forget_gaps);
            forget_gaps = g; /* reachable until exit, whatever path returns */
            fa->forget = g;
            fa->nforget = n;
            break;
        }
        case O_NEWFRAC: {
            const char *err = NULL;
            if (cli_parse_double(optarg, 0.0, 1.0, 1, 0, &fa->new_fraction, &err))
                return cli_usage(CMD, "--new-fraction: %s", err ? err : "must be in [0, 1)");
            fa->have_new_fraction = 1;
            break;
        }
        case O_ARRIVALS:
        case O_REPLICAS: {
            const char *err = NULL;
            uint64_t cnt;
            if (cli_parse_count(optarg, &cnt, &err) || cnt == 0 || (opt == O_REPLICAS && cnt > 1000))
                return cli_usage(CMD, "%s: %s", opt == O_ARRIVALS ? "--arrivals" : "--replicas",
                                 err ? err : "a count from 1 (replicas: to 1000)");
            if (opt == O_ARRIVALS)
                fa->arrivals = cnt;
            else
                fa->replicas = (unsigned)cnt;
            break;
        }
        default:
            return cli_bad_option(CMD, argc, argv, longopts);
        }
    }
    if ((rc = cli_no_operands(CMD, argc, argv)))
        return rc;
    if (!h->bits)
        return cli_usage(CMD, "--bits is required");
    if (!h->hashes)
        return cli_usage(CMD, "--hashes is required");
    if (h->sigma == h->messages)
        return cli_usage(CMD, "give exactly one of --sigma and --messages");
    if (o->curve && o->json)
        return cli_usage(CMD, "--curve and --json do not go together (--curve is CSV)");
    if (o->points && !o->curve)
        return cli_usage(CMD, "--points: applies to --curve only");
    if (o->curve && !o->points && !o->force && (h->sigma ? o->sigma : o->messages) > CURVE_MAX_ROWS)
        return cli_usage(CMD,
                         "--curve: %llu rows (about %.3g GB of CSV); sample them with --points P, "
                         "or give --force",
                         (unsigned long long)(h->sigma ? o->sigma : o->messages),
                         (double)(h->sigma ? o->sigma : o->messages) * 60e-9);
    return GO_ON;
}

/* The cycle-length models (cmd_model_fn.c): --fn, --forget, --oracle,
 * --new-fraction and two-phase --messages */
static int run_cycle_models(opts *o, cli_model_fn_args *fa, const given *h, uint64_t per_filter)
{
    /* the cycle-length models (cmd_model_fn.c) */
    if (fa->oracle && !h->messages)
        return cli_usage(CMD, "--oracle: applies to --messages only");
    if (o->blocked)
        return cli_usage(CMD, "--layout blocked: not with --fn, --forget, --oracle or two-phase "
                              "--messages (those models are of the flat layout)");
    if (o->curve)
        return cli_usage(CMD, "--curve: not with --fn, --forget, --oracle or two-phase --messages");
    if (h->method && o->paper)
        return cli_usage(CMD, "--method paper: not with --fn, --forget, --oracle or two-phase "
                              "--messages");
    if (h->messages && o->ret)
        return cli_usage(CMD, "--recycle: applies to --sigma only");
    if (h->sigma && (o->sigma >= per_filter || (o->ret && o->sigma < o->hashes)))
        return cli_usage(CMD, "--sigma: must be less than the bits per filter (%llu), and at "
                              "least --hashes with --recycle retaining",
                         (unsigned long long)per_filter);
    if (o->nc && o->hashes > per_filter)
        return cli_usage(CMD, "--hashes: must not exceed the bits per filter with "
                              "non-colliding hashing");
    fa->bits = o->bits;
    fa->sigma = o->sigma;
    fa->messages = o->messages;
    fa->hashes = o->hashes;
    fa->phases = o->phases;
    fa->nc = o->nc;
    fa->ret = o->ret;
    fa->json = o->json;
    fa->method = o->method;
    return cli_model_fn(fa);
}

/* The checks of one value, sigma- or N-bounded, flat or blocked: GO_ON or
 * the exit status */
static int check_single(const opts *o, const given *h, uint64_t per_filter)
{
    if (h->messages) {
        if (o->phases == 2)
            return cli_usage(CMD, "--phases 2: the two-phase model is sigma-bounded (use --sigma)");
        if (o->ret)
            return cli_usage(CMD, "--recycle: applies to --sigma only");
        if (h->method && o->paper)
            return cli_usage(CMD, "--method paper: applies to --sigma only");
    } else {
        char val[24];
        snprintf(val, sizeof val, "%llu", (unsigned long long)o->sigma);
        if (o->sigma >= per_filter)
            return cli_bad_value(CMD, "--sigma", val, "not less than the bits per filter",
                                 "at most %llu", (unsigned long long)per_filter - 1);
        if (o->ret && o->sigma < o->hashes)
            return cli_bad_value(CMD, "--sigma", val, "less than --hashes",
                                 "at least %u with --recycle retaining", o->hashes);
        if (o->curve && o->paper && o->sigma > 100000)
            return cli_usage(CMD, "--curve --method paper: at most 100000 rows (one solve each)");
    }
    if (o->blocked) {
        if (per_filter < RBF_BLOCK_BITS || per_filter % RBF_BLOCK_BITS) {
            char why[96];
            snprintf(why, sizeof why, "the bits per filter (%llu) are not whole blocks",
                     (unsigned long long)per_filter);
            return cli_bad_value(CMD, "--layout", "blocked", why,
                                 "flat, or bits per filter a multiple of %u",
                                 RBF_BLOCK_BITS);
        }
        if (o->curve)
            return cli_usage(CMD, "--layout blocked: no --curve (one value at a time)");
        if (o->paper)
            return cli_usage(CMD, "--layout blocked: no --method paper");
    }
    if (o->nc && o->hashes > per_filter) {
        char val[24];
        snprintf(val, sizeof val, "%u", o->hashes);
        return cli_bad_value(CMD, "--hashes", val, "more than the bits per filter",
                             "at most %llu with non-colliding hashing",
                             (unsigned long long)per_filter);
    }

    return GO_ON;
}

/* The filter configuration the options describe, for rbf_predict_params */
static void options_config(const opts *o, rbf_config *c)
{
    rbf_config_init(c);
    c->bits = o->bits;
    c->hashes = o->hashes;
    c->sigma = o->sigma;
    c->messages = o->messages;
    c->phases = o->phases;
    c->hashing = o->nc ? RBF_NON_COLLIDING : RBF_COLLIDING;
    c->recycle = o->ret ? RBF_RETAINING : RBF_NON_RETAINING;
    c->layout = o->blocked ? RBF_LAYOUT_BLOCKED : RBF_LAYOUT_FLAT;
}

int cmd_model(int argc, char **argv)
{
    opts o;
    memset(&o, 0, sizeof o);
    o.phases = 1;
    o.method = RBF_MODEL_AUTO;
    given h;
    memset(&h, 0, sizeof h);
    cli_model_fn_args fa;
    memset(&fa, 0, sizeof fa);
    int rc = parse_options(argc, argv, &o, &fa, &h);
    if (rc != GO_ON)
        return rc;
    uint64_t per_filter = o.phases == 2 ? o.bits / 2 : o.bits;
    if ((fa.arrivals || fa.replicas) && !(fa.fn && !strncmp(fa.fn, "trace:", 6)))
        return cli_usage(CMD, "--arrivals, --replicas: apply to --fn trace:FILE only");
    if (fa.fn || fa.oracle || fa.have_new_fraction || fa.forget || (h.messages && o.phases == 2))
        return run_cycle_models(&o, &fa, &h, per_filter);
    if ((rc = check_single(&o, &h, per_filter)) != GO_ON)
        return rc;

    rbf_config c;
    options_config(&o, &c);
    rbf_predict_options po;
    rbf_predict_options_init(&po);
    po.method = o.method;
    po.progress = cli_progress_cb;
    rbf_model_params p;
    rbf_predict_params(&c, &po, &p);
    if (o.blocked) {
        cli_progress_begin("model", 1);
        return run_blocked(&o, &p);
    }
    return h.sigma ? run_sigma(&o, &p) : run_messages(&o, &p);
}
