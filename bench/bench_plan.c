/*
 * bench_plan.c -- `rbf bench plan`: the time of the planner calls a planned
 * reservation makes (the Redis module's RBF.RESERVE ... ERROR_RATE eps
 * MEMORY|CAPACITY, docs/redis.md), over a grid of sizes, rates and the four
 * hashing/recycling variants:
 *
 *   flat    memory    rbf_plan_memory            (PHASES 1; 2 alike)
 *   flat    capacity  rbf_plan_messages          (PHASES 1)
 *   flat    capacity2 rbf_plan_messages_two_phase (PHASES 2)
 *
 * The flat calls ask, as the module does, for the one policy the filter
 * is built with (rbf_plan_options.policies).
 *   blocked memory    rbf_plan_blocked_memory
 *   blocked capacity  rbf_plan_blocked_capacity
 *
 * Memory runs from 1 KiB to 256 GiB by powers of 4 (bits = 8 x bytes),
 * capacity from 100 to 10^10 by powers of 10.  Every call is timed once
 * (CPU seconds of this single-threaded process: the machine may be
 * shared); each row reports the calls' p50, p95 and max, and the slowest
 * call's parameters.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli_util.h"
#include "rbf_model.h"

static const char *const CMD = "bench plan";

static void help(void)
{
    printf("Usage: rbf bench plan [OPTIONS]   (or build/rbf-bench plan)\n"
           "\n"
           "CPU time of the planner calls behind a planned reservation, per layout and\n"
           "mode: flat memory (rbf_plan_memory), flat capacity one- and two-phase\n"
           "(rbf_plan_messages, rbf_plan_messages_two_phase), blocked memory\n"
           "(rbf_plan_blocked_memory) and blocked capacity (rbf_plan_blocked_capacity),\n"
           "over memory 1 KiB..256 GiB (powers of 4), capacity 100..1e10 (powers of\n"
           "10), the rates of --fp and the four hashing/recycling variants.  The flat\n"
           "calls ask, as the Redis module does, for the one policy the filter is built\n"
           "with (sigma-bounded, or two-phase for capacity2).  Each row: calls, p50,\n"
           "p95 and max milliseconds, and the slowest call.\n"
           "\n"
           "  --fp LIST       rates, comma-separated (default 0.1,0.001,1e-6,1e-9)\n"
           "  --variants V    all (default) or default (colliding, non-retaining only)\n"
           "  --only MODE     one row: flat-memory, flat-capacity, flat-capacity2,\n"
           "                  blocked-memory or blocked-capacity\n"
           "  --quick         memory 1 KiB..1 GiB by powers of 16, capacity 100..1e8 by\n"
           "                  powers of 100, rates 0.01 and 1e-6, default variant\n"
           "  --json          one JSON object\n"
           "  --help          this text\n");
}

enum { O_FP = 256, O_VARIANTS, O_ONLY, O_QUICK, O_JSON, O_HELP };

static const struct option longopts[] = {
    {"fp", required_argument, NULL, O_FP},       {"variants", required_argument, NULL, O_VARIANTS},
    {"only", required_argument, NULL, O_ONLY},   {"quick", no_argument, NULL, O_QUICK},
    {"json", no_argument, NULL, O_JSON},         {"help", no_argument, NULL, O_HELP},
    {NULL, 0, NULL, 0},
};

enum { M_FLAT_MEM, M_FLAT_CAP, M_FLAT_CAP2, M_BLK_MEM, M_BLK_CAP, M_COUNT };

static const char *const mode_names[M_COUNT] = {"flat-memory", "flat-capacity", "flat-capacity2",
                                                "blocked-memory", "blocked-capacity"};

typedef struct slow_call {
    uint64_t size; /* bits or messages */
    double eps;
    int nc, ret;
    int rc;
} slow_call;

/* The q-quantile (nearest rank) of n sorted values. */
static double quantile(const double *v, size_t n, double q)
{
    if (!n)
        return NAN;
    size_t r = (size_t)ceil(q * (double)n);
    if (r < 1)
        r = 1;
    if (r > n)
        r = n;
    return v[r - 1];
}

static int one_call(int mode, uint64_t size, double eps, const rbf_plan_options *o)
{
    rbf_plan pl;
    rbf_plan_choice ch;
    uint64_t bits = 0;
    rbf_plan_options po = *o;
    /* as the module asks: only the policy the filter is built with */
    if (mode == M_FLAT_CAP2)
        po.policies = RBF_PLAN_TWO_PHASE;
    else if (mode == M_FLAT_CAP || mode == M_FLAT_MEM)
        po.policies = RBF_PLAN_SIGMA_BOUNDED;
    o = &po;
    switch (mode) {
    case M_FLAT_MEM:
        return rbf_plan_memory(size, eps, o, &pl);
    case M_FLAT_CAP:
        return rbf_plan_messages(size, eps, o, &bits, &pl);
    case M_FLAT_CAP2:
        return rbf_plan_messages_two_phase(size, eps, o, &bits, &pl);
    case M_BLK_MEM:
        return rbf_plan_blocked_memory(size, eps, o, &ch);
    default:
        return rbf_plan_blocked_capacity(size, eps, o, &bits, &ch);
    }
}

int bench_plan_main(int argc, char **argv)
{
    double eps_list[16] = {0.1, 0.001, 1e-6, 1e-9};
    unsigned neps = 4;
    int all_variants = 1, only = -1, json = 0, quick = 0, opt;
    cli_getopt_reset();
    while ((opt = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
        switch (opt) {
        case O_FP: {
            neps = 0;
            char *s = optarg;
            while (*s) {
                char *end;
                double e = strtod(s, &end);
                if (end == s || !(e > 0.0 && e < 1.0) || neps >= 16 || (*end && *end != ','))
                    return cli_bad_value(CMD, "--fp", optarg, NULL,
                                         "up to 16 rates in (0, 1), comma-separated");
                eps_list[neps++] = e;
                s = *end ? end + 1 : end;
            }
            if (!neps)
                return cli_bad_value(CMD, "--fp", optarg, NULL, "at least one rate");
            break;
        }
        case O_VARIANTS:
            if (!strcmp(optarg, "all"))
                all_variants = 1;
            else if (!strcmp(optarg, "default"))
                all_variants = 0;
            else
                return cli_bad_value(CMD, "--variants", optarg, NULL, "all or default");
            break;
        case O_ONLY:
            only = -1;
            for (int m = 0; m < M_COUNT; m++)
                if (!strcmp(optarg, mode_names[m]))
                    only = m;
            if (only < 0)
                return cli_bad_value(CMD, "--only", optarg, NULL,
                                     "flat-memory, flat-capacity, flat-capacity2, "
                                     "blocked-memory or blocked-capacity");
            break;
        case O_QUICK:
            quick = 1;
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
    int rc0 = cli_no_operands(CMD, argc, argv);
    if (rc0)
        return rc0;
    if (quick) {
        if (neps == 4 && eps_list[0] == 0.1) { /* --fp not given */
            eps_list[0] = 0.01;
            eps_list[1] = 1e-6;
            neps = 2;
        }
        all_variants = 0;
    }
    uint64_t mems[32], caps[16];
    unsigned nm = 0, nc = 0;
    for (unsigned lb = 10; lb <= (quick ? 30u : 38u); lb += quick ? 4 : 2)
        mems[nm++] = ((uint64_t)1 << lb) * 8;
    for (uint64_t c = 100; c <= (quick ? (uint64_t)100000000 : (uint64_t)10000000000);
         c *= quick ? 100 : 10)
        caps[nc++] = c;
    unsigned nvar = all_variants ? 4 : 1;
    size_t maxcalls = (size_t)(nm > nc ? nm : nc) * neps * nvar;
    double *t = malloc(maxcalls * sizeof *t);
    if (!t)
        return cli_fail(CMD, "out of memory");
    if (json)
        printf("{\"clock\": \"cpu\", \"rows\": [");
    else
        printf("Planner time per call (CPU ms), %u rate(s), %s\n"
               "  %-17s %6s %9s %9s %9s  %s\n",
               neps, all_variants ? "four hashing/recycling variants" : "colliding, non-retaining",
               "mode", "calls", "p50", "p95", "max", "slowest call");
    int first = 1, failures = 0;
    for (int mode = 0; mode < M_COUNT; mode++) {
        if (only >= 0 && mode != only)
            continue;
        int is_mem = mode == M_FLAT_MEM || mode == M_BLK_MEM;
        const uint64_t *sizes = is_mem ? mems : caps;
        unsigned ns = is_mem ? nm : nc;
        size_t n = 0;
        double worst = -1.0;
        slow_call slow = {0, 0, 0, 0, 0};
        for (unsigned v = 0; v < nvar; v++) {
            rbf_plan_options o;
            rbf_plan_options_init(&o);
            o.hashing = (v & 1) ? RBF_NON_COLLIDING : RBF_COLLIDING;
            o.recycle = (v & 2) ? RBF_RETAINING : RBF_NON_RETAINING;
            for (unsigned e = 0; e < neps; e++)
                for (unsigned i = 0; i < ns; i++) {
                    double t0 = cli_cpu_seconds();
                    int rc = one_call(mode, sizes[i], eps_list[e], &o);
                    double dt = cli_cpu_seconds() - t0;
                    if (rc != RBF_OK && rc != RBF_EINVAL)
                        failures++; /* EINVAL: a capacity no filter holds */
                    t[n++] = dt;
                    if (dt > worst) {
                        worst = dt;
                        slow.size = sizes[i];
                        slow.eps = eps_list[e];
                        slow.nc = v & 1;
                        slow.ret = (v & 2) != 0;
                        slow.rc = rc;
                    }
                }
        }
        qsort(t, n, sizeof *t, bench_cmp_double);
        double p50 = quantile(t, n, 0.5) * 1e3, p95 = quantile(t, n, 0.95) * 1e3,
               mx = t[n - 1] * 1e3;
        if (json) {
            printf("%s{\"mode\": \"%s\", \"calls\": %zu, \"p50_ms\": ", first ? "" : ", ",
                   mode_names[mode], n);
            cli_json_double(stdout, p50);
            printf(", \"p95_ms\": ");
            cli_json_double(stdout, p95);
            printf(", \"max_ms\": ");
            cli_json_double(stdout, mx);
            printf(", \"slowest\": {\"%s\": %llu, \"fp\": %g, \"hashing\": \"%s\", "
                   "\"recycle\": \"%s\", \"status\": %d}}",
                   is_mem ? "bits" : "messages", (unsigned long long)slow.size, slow.eps,
                   cli_hashing_name(slow.nc), cli_recycle_name(slow.ret), slow.rc);
        } else {
            printf("  %-17s %6zu %9.2f %9.2f %9.2f  %s %llu, fp %g, %s, %s\n", mode_names[mode],
                   n, p50, p95, mx, is_mem ? "bits" : "messages", (unsigned long long)slow.size,
                   slow.eps, cli_hashing_name(slow.nc), cli_recycle_name(slow.ret));
        }
        fflush(stdout);
        first = 0;
    }
    if (json)
        printf("], \"failures\": %d}\n", failures);
    else if (failures)
        printf("  %d call(s) failed (out of memory or cancelled)\n", failures);
    free(t);
    if (failures)
        return cli_fail(CMD, "%d planner call(s) failed", failures);
    return cli_finish_stdout(CMD);
}
