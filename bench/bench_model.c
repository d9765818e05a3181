/*
 * bench_model.c -- `rbf bench model`: the cost of a full sigma sweep (every
 * sigma = 1..M-1, f_sigma^1 and E[N_0]) by the renewal pass (one pass,
 * O(kM)) and by the paper's method (one O(k^2 sigma) solve per sigma, so
 * O(k^2 M^2) for the sweep), and the time of `rbf plan` at large M.
 *
 * The paper's sweep is timed directly while its estimated total stays
 * under --budget seconds; beyond that a sample of sigma values is timed,
 * time(sigma) = a + b sigma is fitted (the method is linear in sigma) and
 * the sweep is extrapolated as sum_{sigma<M} (a + b sigma): those rows say
 * "extrapolated".  All times are CPU seconds of this process.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "cli_util.h"
#include "rbf_model.h"

static const char *const CMD = "bench model";

/* Timings are CPU time of this (single-threaded) process
 * (cli_cpu_seconds): the machine may be shared, and wall-clock time would
 * measure the neighbours. */

static void help(void)
{
    printf("Usage: rbf bench model [OPTIONS]   (or build/rbf-bench model)\n"
           "\n"
           "Full sigma sweep (sigma = 1..M-1) by the renewal pass and by the paper's\n"
           "method for M = 2^10 .. 2^MAXLOG; rbf plan at M = 2^20, 2^30, 2^36, 2^40,\n"
           "2^44 (default method: auto); then the worst relative gap between the\n"
           "asymptotic (fast) and the exact renewal pass, f_sigma^1, E[N_0] and\n"
           "f_sigma^2, over k = 2,4,8,16,32, the four variants and sigma/M = 0.1..0.9,\n"
           "at M = 2^20 .. 2^GAPLOG, and the plans by both methods at those sizes.\n"
           "\n"
           "  --hashes K      k for the sweeps (default 4)\n"
           "  --max-log L     largest M = 2^L for the sweeps (default 20)\n"
           "  --budget S      time the paper's sweep directly when it is estimated to\n"
           "                  take under S seconds, else extrapolate (default 60)\n"
           "  --fp EPS        target rate for the plan timings (default 0.001)\n"
           "  --plan-logs A,B,..  plan sizes as powers of two (default 20,30,36,40,44)\n"
           "  --gap-max-log G largest M = 2^G for the fast-vs-exact gap (default 24;\n"
           "                  the exact pass at 2^30 takes minutes; 0: skip)\n"
           "  --quick         small sizes only (M up to 2^14, plans at 2^16, 2^20)\n"
           "  --json          one JSON object\n"
           "  --help          this text\n");
}

enum { O_HASHES = 256, O_MAXLOG, O_BUDGET, O_FP, O_PLANLOGS, O_GAPLOG, O_QUICK, O_JSON, O_HELP };

static const struct option longopts[] = {
    {"hashes", required_argument, NULL, O_HASHES}, {"max-log", required_argument, NULL, O_MAXLOG},
    {"budget", required_argument, NULL, O_BUDGET}, {"fp", required_argument, NULL, O_FP},
    {"plan-logs", required_argument, NULL, O_PLANLOGS}, {"quick", no_argument, NULL, O_QUICK},
    {"gap-max-log", required_argument, NULL, O_GAPLOG},
    {"json", no_argument, NULL, O_JSON},           {"help", no_argument, NULL, O_HELP},
    {NULL, 0, NULL, 0},
};

typedef struct sweep_row {
    unsigned log2m;
    double fast_s;
    double paper_s;
    int extrapolated;
} sweep_row;

/* Seconds for the fast sweep of M (repeated until 0.2 s for precision). */
static int time_fast(uint64_t M, unsigned k, double *secs)
{
    rbf_model_params p;
    rbf_model_params_init(&p);
    p.bits = M;
    p.hashes = k;
    double *fp = malloc(M * sizeof *fp), *en = malloc(M * sizeof *en);
    if (!fp || !en) {
        free(fp);
        free(en);
        return -1;
    }
    int reps = 0;
    double t0 = cli_cpu_seconds(), t;
    do {
        if (rbf_model_sigma_curve(&p, M - 1, fp, en) != RBF_OK) {
            free(fp);
            free(en);
            return -1;
        }
        reps++;
        t = cli_cpu_seconds() - t0;
    } while (t < 0.2);
    *secs = t / reps;
    free(fp);
    free(en);
    return 0;
}

static double time_paper_one(uint64_t M, unsigned k, uint64_t s)
{
    rbf_model_params p;
    rbf_model_params_init(&p);
    p.bits = M;
    p.hashes = k;
    p.method = RBF_MODEL_PAPER;
    rbf_model_sigma_result r;
    double t0 = cli_cpu_seconds();
    (void)rbf_model_sigma(&p, s, &r);
    return cli_cpu_seconds() - t0;
}

/* Least squares fit of t = a + b s over samples; returns the sweep sum. */
static double extrapolate(uint64_t M, unsigned k, int nsamp)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 1; i <= nsamp; i++) {
        uint64_t s = (uint64_t)((double)(M - 1) * i / nsamp);
        if (s < 1)
            s = 1;
        double t = time_paper_one(M, k, s);
        double x = (double)s;
        sx += x;
        sy += t;
        sxx += x * x;
        sxy += x * t;
    }
    double n = nsamp;
    double b = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    double a = (sy - b * sx) / n;
    if (b < 0)
        b = 0;
    if (a < 0)
        a = 0;
    double Mm1 = (double)(M - 1);
    return Mm1 * a + b * Mm1 * (Mm1 + 1) / 2.0;
}

/* ---- the asymptotic method against the exact pass */
typedef struct gap_row {
    double model_gap;   /* worst relative gap of f^1, E[N_0], f^2 */
    int plan_same;      /* the plans pick the same k and thresholds */
    double cap_gap;     /* worst relative gap of the plans' capacities */
    double exact_plan_s, fast_plan_s;
} gap_row;

static double rel(double a, double b)
{
    double d = fabs(a - b), m = fabs(b);
    return m > 0 ? d / m : d;
}

static int gap_at(uint64_t M, double eps, gap_row *g)
{
    static const unsigned ks[] = {2, 4, 8, 16, 32};
    uint64_t pts[9];
    rbf_model_sigma_result e1[9], f1[9];
    rbf_model_two_phase_result e2[9], f2[9];
    memset(g, 0, sizeof *g);
    for (unsigned i = 0; i < 9; i++)
        pts[i] = M / 10 * (i + 1);
    for (unsigned ki = 0; ki < 5; ki++)
        for (int v = 0; v < 4; v++) {
            rbf_model_params p;
            rbf_model_params_init(&p);
            p.bits = M;
            p.hashes = ks[ki];
            p.hashing = (v & 1) ? RBF_NON_COLLIDING : RBF_COLLIDING;
            p.recycle = (v >> 1) ? RBF_RETAINING : RBF_NON_RETAINING;
            p.method = RBF_MODEL_EXACT;
            if (rbf_model_sigma_points(&p, pts, 9, e1) ||
                rbf_model_two_phase_points(&p, pts, 9, e2))
                return -1;
            p.method = RBF_MODEL_ASYMPTOTIC;
            if (rbf_model_sigma_points(&p, pts, 9, f1) ||
                rbf_model_two_phase_points(&p, pts, 9, f2))
                return -1;
            for (unsigned i = 0; i < 9; i++) {
                double r[4] = {rel(f1[i].fp, e1[i].fp),
                               rel(f1[i].expected_messages, e1[i].expected_messages),
                               rel(f2[i].fp, e2[i].fp),
                               rel(f2[i].expected_messages, e2[i].expected_messages)};
                for (int j = 0; j < 4; j++)
                    if (r[j] > g->model_gap)
                        g->model_gap = r[j];
            }
        }
    rbf_plan pe, pf;
    rbf_plan_options o;
    rbf_plan_options_init(&o);
    o.method = RBF_MODEL_EXACT;
    double t0 = cli_cpu_seconds();
    if (rbf_plan_memory(M, eps, &o, &pe))
        return -1;
    g->exact_plan_s = cli_cpu_seconds() - t0;
    o.method = RBF_MODEL_ASYMPTOTIC;
    t0 = cli_cpu_seconds();
    if (rbf_plan_memory(M, eps, &o, &pf))
        return -1;
    g->fast_plan_s = cli_cpu_seconds() - t0;
    const rbf_plan_choice *a[5] = {&pe.sigma_bounded, &pe.average_n, &pe.oracle_n, &pe.worst_case,
                                   &pe.two_phase};
    const rbf_plan_choice *b[5] = {&pf.sigma_bounded, &pf.average_n, &pf.oracle_n, &pf.worst_case,
                                   &pf.two_phase};
    g->plan_same = 1;
    for (int i = 0; i < 5; i++) {
        if (a[i]->feasible != b[i]->feasible || a[i]->hashes != b[i]->hashes ||
            a[i]->sigma != b[i]->sigma || a[i]->messages != b[i]->messages)
            g->plan_same = 0;
        double c = rel(b[i]->expected_messages, a[i]->expected_messages);
        if (c > g->cap_gap)
            g->cap_gap = c;
    }
    return 0;
}

/* The whole run as one JSON document (--json). */
static void print_json(unsigned k, const sweep_row *rows, unsigned nrows, double eps,
                       const unsigned *plan_logs, const double *plan_s, unsigned nplan,
                       const gap_row *gaps, unsigned ngap)
{
    printf("{\"clock\": \"cpu\", \"hashes\": %u, \"sweeps\": [", k);
    for (unsigned i = 0; i < nrows; i++) {
        printf("%s{\"bits\": %llu, \"fast_seconds\": ", i ? ", " : "",
               (unsigned long long)((uint64_t)1 << rows[i].log2m));
        cli_json_double(stdout, rows[i].fast_s);
        printf(", \"paper_seconds\": ");
        cli_json_double(stdout, rows[i].paper_s);
        printf(", \"paper_extrapolated\": %s, \"speedup\": ",
               rows[i].extrapolated ? "true" : "false");
        cli_json_double(stdout, rows[i].paper_s / rows[i].fast_s);
        printf("}");
    }
    printf("], \"plan_fp\": ");
    cli_json_double(stdout, eps);
    printf(", \"plans\": [");
    for (unsigned i = 0; i < nplan; i++) {
        printf("%s{\"bits\": %llu, \"seconds\": ", i ? ", " : "",
               (unsigned long long)((uint64_t)1 << plan_logs[i]));
        cli_json_double(stdout, plan_s[i]);
        printf("}");
    }
    printf("], \"gaps\": [");
    for (unsigned i = 0; i < ngap; i++) {
        printf("%s{\"bits\": %llu, \"model_gap\": ", i ? ", " : "",
               (unsigned long long)((uint64_t)1 << (20 + 2 * i)));
        cli_json_double(stdout, gaps[i].model_gap);
        printf(", \"plan_same\": %s, \"capacity_gap\": ", gaps[i].plan_same ? "true" : "false");
        cli_json_double(stdout, gaps[i].cap_gap);
        printf(", \"exact_plan_seconds\": ");
        cli_json_double(stdout, gaps[i].exact_plan_s);
        printf(", \"fast_plan_seconds\": ");
        cli_json_double(stdout, gaps[i].fast_plan_s);
        printf("}");
    }
    printf("]}\n");
}

int bench_model_main(int argc, char **argv)
{
    unsigned k = 4, maxlog = 20;
    double budget = 60.0, eps = 0.001;
    unsigned plan_logs[8] = {20, 30, 36, 40, 44};
    unsigned nplan = 5, gaplog = 24;
    int json = 0, opt, rc;
    uint64_t v;
    const char *err;
    cli_getopt_reset();
    while ((opt = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
        switch (opt) {
        case O_HASHES:
            if ((rc = cli_opt_uint(CMD, "--hashes", optarg, 1, RBF_MAX_HASHES, &v)))
                return rc;
            k = (unsigned)v;
            break;
        case O_MAXLOG:
            if ((rc = cli_opt_uint(CMD, "--max-log", optarg, 10, 30, &v)))
                return rc;
            maxlog = (unsigned)v;
            break;
        case O_BUDGET:
            if (cli_parse_double(optarg, 0.0, 1e6, 0, 1, &budget, &err))
                return cli_bad_value(CMD, "--budget", optarg, err, "seconds, more than 0, at most 1e6");
            break;
        case O_FP:
            if ((rc = cli_opt_prob(CMD, "--fp", optarg, &eps)))
                return rc;
            break;
        case O_PLANLOGS: {
            nplan = 0;
            char *s = optarg, *end;
            while (*s && nplan < 8) {
                unsigned long x = strtoul(s, &end, 10);
                if (end == s || x < 2 || x > 44)
                    return cli_bad_value(CMD, "--plan-logs", optarg, NULL,
                                         "a list of powers 2..44 like 20,24,30");
                plan_logs[nplan++] = (unsigned)x;
                s = *end == ',' ? end + 1 : end;
                if (*end && *end != ',')
                    return cli_bad_value(CMD, "--plan-logs", optarg, NULL,
                                         "a list of powers 2..44 like 20,24,30");
            }
            if (!nplan)
                return cli_bad_value(CMD, "--plan-logs", optarg, NULL,
                                     "a list of powers 2..44 like 20,24,30");
            break;
        }
        case O_GAPLOG:
            if ((rc = cli_opt_uint(CMD, "--gap-max-log", optarg, 0, 32, &v)))
                return rc;
            gaplog = (unsigned)v;
            break;
        case O_QUICK:
            maxlog = 14;
            budget = 2.0;
            plan_logs[0] = 16;
            plan_logs[1] = 20;
            nplan = 2;
            gaplog = 20;
            break;
        case O_JSON:
            json = 1;
            break;
        case O_HELP:
            help();
            return cli_finish_stdout(CMD);
        default:
            return cli_bad_option(CMD, argc, argv, longopts);
        }
    }
    if ((rc = cli_no_operands(CMD, argc, argv)))
        return rc;

    sweep_row rows[32];
    unsigned nrows = 0;
    if (!json)
        printf("Full sigma sweep (sigma = 1..M-1, fp and E[N_0]), k = %u, colliding, "
               "non-retaining (CPU seconds)\n  %-8s %14s %16s %12s\n",
               k, "M", "renewal pass", "paper's method", "speed-up");
    for (unsigned L = 10; L <= maxlog; L++) {
        uint64_t M = (uint64_t)1 << L;
        sweep_row *r = &rows[nrows++];
        r->log2m = L;
        if (time_fast(M, k, &r->fast_s))
            return cli_fail(CMD, "out of memory at M = 2^%u", L);
        double est = extrapolate(M, k, 8);
        if (est < budget) {
            double t0 = cli_cpu_seconds();
            for (uint64_t s = 1; s < M; s++)
                (void)time_paper_one(M, k, s);
            r->paper_s = cli_cpu_seconds() - t0;
            r->extrapolated = 0;
        } else {
            r->paper_s = extrapolate(M, k, 16);
            r->extrapolated = 1;
        }
        if (!json) {
            printf("  2^%-6u %12.6f s %14.3f s %11.0fx%s\n", L, r->fast_s, r->paper_s,
                   r->paper_s / r->fast_s, r->extrapolated ? "  (paper: extrapolated)" : "");
            fflush(stdout);
        }
    }
    double plan_s[8];
    if (!json)
        printf("\nrbf plan --bits M --fp %g (all five policies, k <= 32; CPU seconds)\n", eps);
    for (unsigned i = 0; i < nplan; i++) {
        rbf_plan p;
        double t0 = cli_cpu_seconds();
        rc = rbf_plan_memory((uint64_t)1 << plan_logs[i], eps, NULL, &p);
        plan_s[i] = cli_cpu_seconds() - t0;
        if (rc)
            return cli_fail(CMD, "rbf_plan_memory failed at 2^%u", plan_logs[i]);
        if (!json) {
            printf("  2^%-6u %10.3f s   (sigma-bounded k = %u, sigma = %llu)\n", plan_logs[i],
                   plan_s[i], p.sigma_bounded.hashes, (unsigned long long)p.sigma_bounded.sigma);
            fflush(stdout);
        }
    }
    /* fast vs exact: worst relative gaps */
    gap_row gaps[16];
    unsigned ngap = 0;
    if (gaplog >= 20 && !json)
        printf("\nAsymptotic (fast) vs exact renewal pass: worst relative gap over k = 2,4,8,16,32,\n"
               "4 variants, sigma/M = 0.1..0.9 (f^1, E[N_0], f^2), and the plans (fp %g)\n", eps);
    for (unsigned L = 20; gaplog >= 20 && L <= gaplog && ngap < 16; L += 2) {
        gap_row *g = &gaps[ngap++];
        if (gap_at((uint64_t)1 << L, eps, g))
            return cli_fail(CMD, "out of memory at M = 2^%u", L);
        if (!json) {
            printf("  2^%-6u model gap %.2e   plan: %s (capacity gap %.2e; exact %.1f s, fast "
                   "%.3f s)\n",
                   L, g->model_gap, g->plan_same ? "same k and thresholds" : "DIFFERENT",
                   g->cap_gap, g->exact_plan_s, g->fast_plan_s);
            fflush(stdout);
        }
    }
    if (json)
        print_json(k, rows, nrows, eps, plan_logs, plan_s, nplan, gaps, ngap);
    return cli_finish_stdout(CMD);
}
