/*
 * cmd_plan.c -- `rbf plan`: capacity planning (MODEL.md 5): the best k and
 * threshold for a memory and a target average false-positive rate, or the
 * least memory for a number of messages per cycle.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "model_fn.h"
#include "rbf_model.h"

static const char *const CMD = "plan";

static void help(void)
{
    printf(
        "Usage: rbf plan (--bits M | --memory SIZE) --fp EPS [OPTIONS]\n"
        "       rbf plan --capacity N --fp EPS [OPTIONS]\n"
        "\n"
        "For a memory and a target average false-positive rate EPS, the number of\n"
        "hashes k and the recycling threshold that hold the most messages per cycle,\n"
        "for each policy: sigma-bounded (recycle at sigma set bits; recommended),\n"
        "average-N and oracle-N (the paper's N-bounded bounds), worst case (the\n"
        "classic sizing: recycle after N messages with f_w(N) <= EPS) and two-phase\n"
        "(two filters of M/2).  With --capacity: the least memory whose\n"
        "sigma-bounded filter holds N messages per cycle at EPS (and the same for\n"
        "two-phase), with the plan at that memory.\n"
        "\n"
        "  --bits M            memory in bits (suffixes k M G T, Ki Mi Gi Ti; 2^40)\n"
        "  --memory SIZE       memory in bytes instead (64MiB, 1GB, 4096, ...)\n"
        "  --capacity N        messages per cycle to hold (least-memory question;\n"
        "                      --messages N is its old name, kept for one release)\n"
        "  --fp EPS            target average false-positive rate, 0 < EPS < 1\n"
        "  --max-hashes K      largest k to consider (default 32, at most %u)\n"
        "  --hashing H         colliding (default) | non-colliding\n"
        "  --recycle R         non-retaining (default) | retaining\n"
        "  --layout L          flat | blocked: also plan the sigma-bounded filter with\n"
        "                      the blocked layout (blocks of 512 bits, the memory\n"
        "                      rounded down to a multiple of 512) and show the\n"
        "                      messages per cycle per bit of both layouts; with\n"
        "                      --capacity also the least whole blocks whose blocked\n"
        "                      plan holds N\n"
        "  --method X          auto (default: exact below 2^22 bits, else fast) | exact\n"
        "                      (the renewal pass, O(kM)) | fast (asymptotic, milliseconds\n"
        "                      at any size, within 1e-9 of exact; docs/models.md)\n"
        "  --remember W        sizing for both errors: one- or two-phase sigma-bounded,\n"
        "                      average rate <= EPS, and a message repeated within W new\n"
        "                      messages (ticks) forgotten with probability <= --miss;\n"
        "                      the most messages per cycle (docs/models.md 9.4)\n"
        "  --miss D            with --remember: the forgetting bound (default 0.01);\n"
        "                      with --fn: the false-negative bound on the trace\n"
        "  --fn trace:FILE     sizing for a log: one- or two-phase sigma-bounded,\n"
        "                      average rate <= EPS, false-negative rate on the trace\n"
        "                      (one message per line, from an empty filter) <= --miss;\n"
        "                      else the least memory that has one (docs/models.md 9.6)\n"
        "  --arrivals A        with --fn: the filter starts empty at each window of A\n"
        "                      arrivals (default: the whole trace)\n"
        "  --json              one JSON object\n"
        "  --help              this text\n"
        "\n"
        "Ties in capacity go to the smaller k.  Examples:\n"
        "  rbf plan --bits 16Mi --fp 0.001\n"
        "  rbf plan --memory 64MiB --fp 1e-6 --json\n"
        "  rbf plan --capacity 1M --fp 0.001\n"
        "  rbf plan --bits 16Mi --fp 0.001 --layout blocked\n"
        "  rbf plan --capacity 1M --fp 0.001 --layout blocked\n",
        RBF_MAX_HASHES);
}

enum { O_BITS = 256, O_MEMORY, O_MESSAGES, O_CAPACITY, O_FP, O_MAXK, O_HASHING, O_RECYCLE, O_METHOD, O_JSON,
       O_HELP, O_LAYOUT, O_REMEMBER, O_MISS, O_FN, O_ARRIVALS };

static const struct option longopts[] = {
    {"bits", required_argument, NULL, O_BITS},
    {"memory", required_argument, NULL, O_MEMORY},
    {"capacity", required_argument, NULL, O_CAPACITY},
    {"messages", required_argument, NULL, O_MESSAGES},
    {"fp", required_argument, NULL, O_FP},
    {"max-hashes", required_argument, NULL, O_MAXK},
    {"hashing", required_argument, NULL, O_HASHING},
    {"recycle", required_argument, NULL, O_RECYCLE},
    {"method", required_argument, NULL, O_METHOD},
    {"json", no_argument, NULL, O_JSON},
    {"layout", required_argument, NULL, O_LAYOUT},
    {"help", no_argument, NULL, O_HELP},
    {"remember", required_argument, NULL, O_REMEMBER},
    {"miss", required_argument, NULL, O_MISS},
    {"fn", required_argument, NULL, O_FN},
    {"arrivals", required_argument, NULL, O_ARRIVALS},
    {NULL, 0, NULL, 0},
};


static void json_choice(const char *name, const rbf_plan_choice *c, int is_sigma, uint64_t bits,
                        int two)
{
    printf("\"%s\": {\"feasible\": %s, ", name, c->feasible ? "true" : "false");
    if (!c->feasible) {
        printf("\"hashes\": null, \"%s\": null, \"expected_messages\": null, \"fp\": null, "
               "\"gain_vs_worst_case\": null}",
               is_sigma ? "sigma" : "messages");
        return;
    }
    printf("\"hashes\": %u, ", c->hashes);
    if (is_sigma)
        printf("\"sigma\": %llu, ", (unsigned long long)c->sigma);
    else
        printf("\"messages\": %llu, ", (unsigned long long)c->messages);
    if (two)
        printf("\"bits_per_filter\": %llu, ", (unsigned long long)(bits / 2));
    printf("\"expected_messages\": ");
    cli_json_double(stdout, c->expected_messages);
    cli_json_field(stdout, "fp", c->fp);
    /* no gain against a worst case that cannot reach the target: null */
    printf(", \"gain_vs_worst_case\": ");
    if (c->gain_vs_worst_case > 0.0)
        cli_json_double(stdout, c->gain_vs_worst_case);
    else
        printf("null");
    printf("}");
}

static void json_plan_fields(const rbf_plan *p, const rbf_plan_options *o)
{
    printf("\"bits\": %llu, \"memory_bytes\": %llu, \"target_fp\": ", (unsigned long long)p->bits,
           (unsigned long long)((p->bits + 7) / 8));
    cli_json_double(stdout, p->target_fp);
    printf(", \"max_hashes\": %u, \"k_at_max_hashes\": %s, \"hashing\": \"%s\", \"recycle\": \"%s\", ",
           o->max_hashes,
           p->sigma_bounded.feasible && p->sigma_bounded.hashes == o->max_hashes ? "true" : "false",
           cli_hashing_name((o->hashing == RBF_NON_COLLIDING)), cli_recycle_name((o->recycle == RBF_RETAINING)));
    printf("\"method\": \"%s\", ", cli_method_name(o->method));
    json_choice("sigma_bounded", &p->sigma_bounded, 1, p->bits, 0);
    printf(", ");
    json_choice("average_n", &p->average_n, 0, p->bits, 0);
    printf(", ");
    json_choice("oracle_n", &p->oracle_n, 0, p->bits, 0);
    printf(", ");
    json_choice("worst_case", &p->worst_case, 0, p->bits, 0);
    printf(", ");
    json_choice("two_phase", &p->two_phase, 1, p->bits, 1);
}

static void table_row(const char *name, const rbf_plan_choice *c, int is_sigma)
{
    if (!c->feasible) {
        printf("  %-15s %3s  %-18s %16s  %-13s %s\n", name, "-", "(none reaches EPS)", "-", "-",
               "-");
        return;
    }
    char thr[48];
    if (is_sigma)
        snprintf(thr, sizeof thr, "sigma=%llu", (unsigned long long)c->sigma);
    else
        snprintf(thr, sizeof thr, "N=%llu", (unsigned long long)c->messages);
    char gain[24];
    if (c->gain_vs_worst_case > 0)
        snprintf(gain, sizeof gain, "%.3fx", c->gain_vs_worst_case);
    else
        snprintf(gain, sizeof gain, "-");
    printf("  %-15s %3u  %-18s %16.2f  %-13.6g %s\n", name, c->hashes, thr, c->expected_messages,
           c->fp, gain);
}

static void print_text(const rbf_plan *p, const rbf_plan_options *o)
{
    const rbf_plan_choice *s = &p->sigma_bounded, *w = &p->worst_case;
    if (s->feasible) {
        printf("Recommended: sigma-bounded one-phase filter of %llu bits (%llu bytes), k = %u "
               "hashes,\n",
               (unsigned long long)p->bits, (unsigned long long)((p->bits + 7) / 8), s->hashes);
        printf("  recycling at sigma = %llu set bits: about %.1f messages per cycle at an\n",
               (unsigned long long)s->sigma, s->expected_messages);
        printf("  average false-positive rate of %.6g (target %.6g).\n", s->fp, p->target_fp);
        if (w->feasible)
            printf("  %+.0f%% messages per cycle vs classic worst-case sizing (k = %u, N = %llu).\n",
                   100.0 * (s->gain_vs_worst_case - 1.0), w->hashes,
                   (unsigned long long)w->messages);
        else
            printf("  (classic worst-case sizing cannot reach the target with this memory.)\n");
        printf("  rbf_config: .bits = %llu, .hashes = %u, .sigma = %llu, .hashing = %s,\n"
               "              .recycle = %s, .phases = 1\n",
               (unsigned long long)p->bits, s->hashes, (unsigned long long)s->sigma,
               (o->hashing == RBF_NON_COLLIDING) ? "RBF_NON_COLLIDING" : "RBF_COLLIDING",
               (o->recycle == RBF_RETAINING) ? "RBF_RETAINING" : "RBF_NON_RETAINING");
        if (s->hashes == o->max_hashes)
            printf("  note: k = %u is the largest k allowed (--max-hashes %u): a larger\n"
                   "  --max-hashes may hold more messages per cycle.\n",
                   s->hashes, o->max_hashes);
    } else {
        printf("No sigma-bounded filter of %llu bits with k <= %u reaches an average\n"
               "false-positive rate of %.6g.  Give it more memory (rbf plan --messages N).\n",
               (unsigned long long)p->bits, o->max_hashes, p->target_fp);
    }
    printf("\nAll policies (%s hashing, %s; k <= %u):\n", cli_hashing_name((o->hashing == RBF_NON_COLLIDING)),
           cli_recycle_name((o->recycle == RBF_RETAINING)), o->max_hashes);
    printf("  %-15s %3s  %-18s %16s  %-13s %s\n", "policy", "k", "threshold", "messages/cycle",
           "fp (model)", "vs worst case");
    table_row("sigma-bounded", &p->sigma_bounded, 1);
    table_row("average-N", &p->average_n, 0);
    table_row("oracle-N", &p->oracle_n, 0);
    table_row("worst case", &p->worst_case, 0);
    table_row("two-phase", &p->two_phase, 1);
    printf("  (two-phase: two filters of %llu bits; messages/cycle of one filter, it\n"
           "   remembers about twice that.  oracle-N assumes a user who can tell a false\n"
           "   positive from a repeat; average-N is the paper's bound for a real user.)\n",
           (unsigned long long)(p->bits / 2));
}

/* The two layouts side by side (sigma-bounded one-phase). */
static void json_layouts(const rbf_plan *p, const rbf_plan_choice *b, uint64_t bbits, int blocked)
{
    const rbf_plan_choice *f = &p->sigma_bounded;
    printf(", \"layout\": \"%s\", \"layouts\": {", blocked ? "blocked" : "flat");
    for (int i = 0; i < 2; i++) {
        const rbf_plan_choice *c = i ? b : f;
        uint64_t bits = i ? bbits : p->bits;
        printf("%s\"%s\": {\"bits\": %llu, \"feasible\": %s, ", i ? ", " : "",
               i ? "blocked" : "flat", (unsigned long long)bits, c->feasible ? "true" : "false");
        if (c->feasible)
            printf("\"hashes\": %u, \"sigma\": %llu, ", c->hashes, (unsigned long long)c->sigma);
        else
            printf("\"hashes\": null, \"sigma\": null, ");
        printf("\"expected_messages\": ");
        cli_json_double(stdout, c->feasible ? c->expected_messages : NAN);
        cli_json_field(stdout, "messages_per_cycle_per_bit", c->feasible ? c->expected_messages / (double)bits : NAN);
        cli_json_field(stdout, "fp", c->feasible ? c->fp : NAN);
        printf("}");
    }
    printf("}, \"blocked_vs_flat_per_bit\": ");
    cli_json_double(stdout, f->feasible && b->feasible
                                ? (b->expected_messages / (double)bbits) /
                                      (f->expected_messages / (double)p->bits)
                                : NAN);
}

static void text_layouts(const rbf_plan *p, const rbf_plan_choice *b, uint64_t bbits,
                         const rbf_plan_options *o, int blocked)
{
    const rbf_plan_choice *f = &p->sigma_bounded;
    printf("\nLayouts (sigma-bounded one-phase, target %.6g):\n", p->target_fp);
    printf("  %-8s %12s %4s %14s %16s %14s  %s\n", "layout", "bits", "k", "sigma",
           "messages/cycle", "per bit", "fp (model)");
    for (int i = 0; i < 2; i++) {
        const rbf_plan_choice *c = i ? b : f;
        uint64_t bits = i ? bbits : p->bits;
        if (!c->feasible) {
            printf("  %-8s %12llu %4s %14s %16s %14s  %s\n", i ? "blocked" : "flat",
                   (unsigned long long)bits, "-", "-", "(none reaches EPS)", "-", "-");
            continue;
        }
        printf("  %-8s %12llu %4u %14llu %16.2f %14.6g  %.6g\n", i ? "blocked" : "flat",
               (unsigned long long)bits, c->hashes, (unsigned long long)c->sigma,
               c->expected_messages, c->expected_messages / (double)bits, c->fp);
    }
    if (f->feasible && b->feasible) {
        double r = (b->expected_messages / (double)bbits) / (f->expected_messages / (double)p->bits);
        printf("  blocked holds %.2f%% %s messages per cycle per bit than flat: the price of\n"
               "  one 512-bit block (one cache line) per message.\n",
               100.0 * fabs(1.0 - r), r <= 1.0 ? "fewer" : "more");
    }
    if (blocked && b->feasible)
        printf("  rbf_config: .bits = %llu, .hashes = %u, .sigma = %llu, .hashing = %s,\n"
               "              .recycle = %s, .phases = 1, .layout = RBF_LAYOUT_BLOCKED\n",
               (unsigned long long)bbits, b->hashes, (unsigned long long)b->sigma,
               (o->hashing == RBF_NON_COLLIDING) ? "RBF_NON_COLLIDING" : "RBF_COLLIDING",
               (o->recycle == RBF_RETAINING) ? "RBF_RETAINING" : "RBF_NON_RETAINING");
}

static int lib_fail(int rc)
{
    if (rc == RBF_ENOMEM)
        return cli_fail(CMD, "out of memory");
    if (rc == RBF_ECANCELED)
        return cli_fail(CMD, "cancelled");
    return cli_fail(CMD, "no plan for these parameters (more than 2^56 bits needed?)");
}

/* The options of rbf plan */
typedef struct plan_args {
    uint64_t bits, messages; /* memory; capacity (--capacity) */
    double eps;
    int have_bits, have_memory, have_messages, have_fp, json;
    int layout; /* -1: not given, 0 flat, 1 blocked */
    rbf_plan_options o;
    uint64_t remember;
    double miss;
    int have_remember, have_miss;
    const char *fn_trace; /* --fn trace:FILE */
    uint64_t arrivals;
} plan_args;

/* parse_options returns this to go on, else the exit status */
#define GO_ON (-1)

static int parse_options(int argc, char **argv, plan_args *a)
{
    uint64_t v;
    int opt, rc;
    cli_getopt_reset();
    while ((opt = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
        switch (opt) {
        case O_BITS:
            if ((rc = cli_opt_count(CMD, "--bits", optarg, 1, &a->bits)))
                return rc;
            a->have_bits = 1;
            break;
        case O_MEMORY:
            if ((rc = cli_opt_bytes(CMD, "--memory", optarg, &v)))
                return rc;
            a->bits = v * 8;
            a->have_memory = 1;
            break;
        case O_MESSAGES:
            fprintf(stderr, "rbf plan: --messages is the old name of --capacity (kept for one "
                            "release): use --capacity\n");
            /* fall through */
        case O_CAPACITY:
            if ((rc = cli_opt_count(CMD, "--capacity", optarg, 1, &a->messages)))
                return rc;
            if (a->messages > ((uint64_t)1 << 50))
                return cli_bad_value(CMD, "--capacity", optarg, "too large", "at most 2^50");
            a->have_messages = 1;
            break;
        case O_FP:
            if ((rc = cli_opt_prob(CMD, "--fp", optarg, &a->eps)))
                return rc;
            a->have_fp = 1;
            break;
        case O_MAXK:
            if ((rc = cli_opt_uint(CMD, "--max-hashes", optarg, 1, RBF_MAX_HASHES, &v)))
                return rc;
            a->o.max_hashes = (unsigned)v;
            break;
        case O_HASHING:
            {
                int nc;
                if ((rc = cli_opt_hashing(CMD, optarg, &nc)))
                    return rc;
                a->o.hashing = nc ? RBF_NON_COLLIDING : RBF_COLLIDING;
            }
            break;
        case O_RECYCLE:
            {
                int ret;
                if ((rc = cli_opt_recycle(CMD, optarg, &ret)))
                    return rc;
                a->o.recycle = ret ? RBF_RETAINING : RBF_NON_RETAINING;
            }
            break;
        case O_METHOD:
            if (!strcmp(optarg, "auto"))
                a->o.method = RBF_MODEL_AUTO;
            else if (!strcmp(optarg, "exact"))
                a->o.method = RBF_MODEL_EXACT;
            else if (!strcmp(optarg, "fast"))
                a->o.method = RBF_MODEL_ASYMPTOTIC;
            else
                return cli_bad_value(CMD, "--method", optarg, NULL, "auto, exact or fast");
            break;
        case O_JSON:
            a->json = 1;
            break;
        case O_LAYOUT:
            if (!strcmp(optarg, "flat"))
                a->layout = 0;
            else if (!strcmp(optarg, "blocked"))
                a->layout = 1;
            else
                return cli_usage(CMD, "--layout: '%s' is not flat or blocked", optarg);
            break;
        case O_HELP:
            help();
            return cli_finish_stdout(CMD);
        case O_REMEMBER:
            if ((rc = cli_opt_count(CMD, "--remember", optarg, 0, &a->remember)))
                return rc;
            a->have_remember = 1;
            break;
        case O_MISS:
            {
                const char *err;
                if (cli_parse_double(optarg, 0.0, 1.0, 1, 0, &a->miss, &err))
                    return cli_bad_value(CMD, "--miss", optarg, err, "0 <= DELTA < 1");
            }
            a->have_miss = 1;
            break;
        case O_FN:
            if (strncmp(optarg, "trace:", 6) || !optarg[6])
                return cli_usage(CMD, "--fn: trace:FILE (a log, one message per line)");
            a->fn_trace = optarg + 6;
            break;
        case O_ARRIVALS:
            if ((rc = cli_opt_count(CMD, "--arrivals", optarg, 1, &a->arrivals)))
                return rc;
            break;
        default:
            return cli_bad_option(CMD, argc, argv, longopts);
        }
    }
    if ((rc = cli_no_operands(CMD, argc, argv)))
        return rc;
    if (a->have_bits && a->have_memory)
        return cli_usage(CMD, "--bits and --memory: give one of them");
    if (a->have_messages && (a->have_bits || a->have_memory))
        return cli_usage(CMD, "--capacity: give either a memory (--bits/--memory) or --capacity");
    if (!a->have_bits && !a->have_memory && !a->have_messages)
        return cli_usage(CMD, "give --bits, --memory or --capacity");
    if (!a->have_fp)
        return cli_usage(CMD, "--fp is required");
    if (a->layout >= 0 && !a->have_messages && a->bits < RBF_BLOCK_BITS)
        return cli_usage(CMD, "--layout: needs at least %u bits (one block)", RBF_BLOCK_BITS);

    if (a->arrivals && !a->fn_trace)
        return cli_usage(CMD, "--arrivals: applies to --fn trace:FILE only");
    if (a->fn_trace && (a->have_remember || a->have_messages || a->layout >= 0))
        return cli_usage(CMD, "--fn: with a memory (--bits/--memory), not with --remember, "
                              "--capacity or --layout");
    if (a->have_miss && !a->have_remember && !a->fn_trace)
        return cli_usage(CMD, "--miss: applies to --remember or --fn only");
    return GO_ON;
}

/* The memory question: the plan at --bits/--memory */
static int plan_memory(plan_args *a)
{
    rbf_plan p;
    int rc;
    cli_progress_begin("plan", a->bits);
    rc = rbf_plan_memory(a->bits, a->eps, &a->o, &p);
    rbf_plan_choice bc;
    uint64_t bbits = a->bits - a->bits % RBF_BLOCK_BITS;
    if (!rc && a->layout >= 0)
        rc = rbf_plan_blocked_memory(a->bits, a->eps, &a->o, &bc);
    cli_progress_end();
    if (rc)
        return lib_fail(rc);
    if (a->json) {
        printf("{");
        json_plan_fields(&p, &a->o);
        if (a->layout >= 0)
            json_layouts(&p, &bc, bbits, a->layout);
        printf("}\n");
    } else {
        print_text(&p, &a->o);
        if (a->layout >= 0)
            text_layouts(&p, &bc, bbits, &a->o, a->layout);
    }
    return cli_finish_stdout(CMD);
}

/* The capacity question: the least memory for --capacity N */
static int plan_capacity(plan_args *a)
{
    rbf_plan p;
    int rc;
    uint64_t b1 = 0, b2 = 0;
    cli_progress_begin("plan", 1);
    rc = rbf_plan_messages(a->messages, a->eps, &a->o, &b1, &p);
    if (!rc)
        rc = rbf_plan_messages_two_phase(a->messages, a->eps, &a->o, &b2, NULL);
    /* --a->layout: the least whole blocks whose blocked plan holds N */
    rbf_plan_choice bc;
    uint64_t bb = 0;
    memset(&bc, 0, sizeof bc);
    if (!rc && a->layout >= 0)
        rc = rbf_plan_blocked_capacity(a->messages, a->eps, &a->o, &bb, &bc);
    cli_progress_end();
    if (rc)
        return lib_fail(rc);
    if (a->json) {
        printf("{\"capacity\": %llu, \"two_phase_bits\": %llu, \"two_phase_memory_bytes\": %llu, ",
               (unsigned long long)a->messages, (unsigned long long)b2,
               (unsigned long long)((b2 + 7) / 8));
        if (a->layout >= 0)
            printf("\"blocked_bits\": %llu, \"blocked_memory_bytes\": %llu, ",
                   (unsigned long long)bb, (unsigned long long)(bb / 8));
        json_plan_fields(&p, &a->o);
        if (a->layout >= 0)
            json_layouts(&p, &bc, bb, a->layout);
        printf("}\n");
    } else if (a->layout >= 0) {
        printf("Least memory for %llu messages per cycle at an average false-positive rate\n"
               "of %.6g: %llu bits (%llu bytes) for a sigma-bounded one-phase filter,\n"
               "%llu bits (%llu bytes, %llu blocks of %u bits) with the blocked layout.\n\n",
               (unsigned long long)a->messages, a->eps, (unsigned long long)b1,
               (unsigned long long)((b1 + 7) / 8), (unsigned long long)bb,
               (unsigned long long)(bb / 8), (unsigned long long)(bb / RBF_BLOCK_BITS),
               RBF_BLOCK_BITS);
        print_text(&p, &a->o);
        text_layouts(&p, &bc, bb, &a->o, a->layout);
    } else {
        printf("Least memory for %llu messages per cycle at an average false-positive rate\n"
               "of %.6g: %llu bits (%llu bytes) for a sigma-bounded one-phase filter\n"
               "(two-phase: %llu bits in all, two filters of %llu).\n\n",
               (unsigned long long)a->messages, a->eps, (unsigned long long)b1,
               (unsigned long long)((b1 + 7) / 8), (unsigned long long)b2,
               (unsigned long long)(b2 / 2));
        print_text(&p, &a->o);
    }
    return cli_finish_stdout(CMD);
}

int cmd_plan(int argc, char **argv)
{
    plan_args a;
    memset(&a, 0, sizeof a);
    a.layout = -1;
    a.miss = 0.01;
    rbf_plan_options_init(&a.o);
    int rc = parse_options(argc, argv, &a);
    if (rc != GO_ON)
        return rc;
    if (a.fn_trace)
        return cli_plan_trace(a.bits, a.eps, a.fn_trace, a.arrivals, a.miss, &a.o, a.json);
    if (a.have_remember && a.layout >= 0)
        return cli_usage(CMD, "--layout: not with --remember (its cycle models are of the flat "
                              "layout)");
    if (a.have_remember) {
        if (a.have_messages)
            return cli_usage(CMD, "--remember: give a memory (--bits/--memory), not --capacity");
        return cli_plan_remember(a.bits, a.eps, a.remember, a.miss, &a.o, a.json);
    }
    a.o.progress = cli_progress_cb;
    a.o.progress_ctx = NULL;
    return a.have_messages ? plan_capacity(&a) : plan_memory(&a);
}
