/*
 * cmd_model_fn.c -- the parts of `rbf model` built on the cycle-length
 * distribution (docs/models.md 8): --fn WORKLOAD, --oracle, and the
 * two-phase N-bounded filter (--phases 2 --messages N).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "model_fn.h"
#include "rbf_model.h"
#include "rbf_predict.h"
#include "rbf_sim.h"

static const char *const CMD = "model";

/* gaps:FILE -- CSV "gap,probability" (a header line that does not start
 * with a digit is skipped; '#' lines are comments). */
static int read_gaps(const char *path, uint64_t **gaps, double **prob, size_t *n)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return cli_fail(CMD, "--fn gaps: cannot open '%s': %s", path, strerror(errno));
    size_t cap = 0, cnt = 0;
    uint64_t *g = NULL;
    double *p = NULL;
    char line[512];
    unsigned long lineno = 0;
    int rc = 0;
    while (fgets(line, sizeof line, fp)) {
        lineno++;
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '#' || *s == '\n' || *s == '\r' || *s == 0)
            continue;
        if (lineno == 1 && !(*s >= '0' && *s <= '9'))
            continue; /* header */
        char *end;
        errno = 0;
        unsigned long long gv = strtoull(s, &end, 10);
        if (errno || end == s || *end != ',' || gv == 0) {
            rc = cli_usage(CMD, "--fn gaps: %s line %lu: expected 'gap,probability' with gap >= 1",
                           path, lineno);
            break;
        }
        char *s2 = end + 1;
        double pv = strtod(s2, &end);
        while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
            end++;
        if (end == s2 || *end || !(pv >= 0.0) || pv > 1e300) {
            rc = cli_usage(CMD, "--fn gaps: %s line %lu: the probability must be a number >= 0",
                           path, lineno);
            break;
        }
        if (cnt == cap) {
            cap = cap ? 2 * cap : 64;
            uint64_t *g2 = realloc(g, cap * sizeof *g2);
            double *p2 = g2 ? realloc(p, cap * sizeof *p2) : NULL;
            if (g2)
                g = g2;
            if (!g2 || !p2) {
                rc = cli_fail(CMD, "out of memory");
                break;
            }
            p = p2;
        }
        g[cnt] = gv;
        p[cnt] = pv;
        cnt++;
    }
    fclose(fp);
    if (!rc && cnt == 0)
        rc = cli_usage(CMD, "--fn gaps: %s holds no 'gap,probability' line", path);
    if (rc) {
        free(g);
        free(p);
        return rc;
    }
    *gaps = g;
    *prob = p;
    *n = cnt;
    return 0;
}

static int lib_fail(int rc)
{
    if (rc == RBF_ENOMEM)
        return cli_fail(CMD, "out of memory (or a cycle distribution too long for this model)");
    if (rc == RBF_ECANCELED)
        return cli_fail(CMD, "cancelled");
    return cli_fail(CMD, "the model rejected these parameters");
}

int cli_parse_gaps(const char *s, uint64_t **out, size_t *n, const char **err)
{
    *out = NULL;
    *n = 0;
    const size_t MAXG = 10000;
    uint64_t a, b, step = 1;
    const char *colon = strchr(s, ':');
    if (colon) {
        char buf[3][32];
        const char *p = s;
        int parts = 0;
        while (parts < 3) {
            size_t len = strcspn(p, ":");
            if (len == 0 || len >= sizeof buf[0]) {
                *err = "a range is A:B or A:B:STEP";
                return -1;
            }
            memcpy(buf[parts], p, len);
            buf[parts][len] = 0;
            parts++;
            p += len;
            if (!*p)
                break;
            p++;
        }
        if (*p || parts < 2) {
            *err = "a range is A:B or A:B:STEP";
            return -1;
        }
        if (cli_parse_count(buf[0], &a, err) || cli_parse_count(buf[1], &b, err) ||
            (parts == 3 && cli_parse_count(buf[2], &step, err)))
            return -1;
        if (b < a || step == 0) {
            *err = "a range A:B:STEP needs A <= B and STEP >= 1";
            return -1;
        }
        if ((b - a) / step + 1 > MAXG) {
            *err = "more than 10000 gaps";
            return -1;
        }
        size_t cnt = (size_t)((b - a) / step + 1);
        uint64_t *g = malloc(cnt * sizeof *g);
        if (!g) {
            *err = "out of memory";
            return -1;
        }
        for (size_t i = 0; i < cnt; i++)
            g[i] = a + (uint64_t)i * step;
        *out = g;
        *n = cnt;
        return 0;
    }
    size_t cnt = 1;
    for (const char *p = s; *p; p++)
        cnt += *p == ',';
    if (cnt > MAXG) {
        *err = "more than 10000 gaps";
        return -1;
    }
    uint64_t *g = malloc(cnt * sizeof *g);
    if (!g) {
        *err = "out of memory";
        return -1;
    }
    const char *p = s;
    for (size_t i = 0; i < cnt; i++) {
        char buf[32];
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= sizeof buf) {
            free(g);
            *err = "gaps are G or G1,G2,...";
            return -1;
        }
        memcpy(buf, p, len);
        buf[len] = 0;
        if (cli_parse_count(buf, &g[i], err)) {
            free(g);
            return -1;
        }
        p += len + (p[len] == ',');
    }
    *out = g;
    *n = cnt;
    return 0;
}

/* What the cycle-length models gave */
typedef struct fn_out {
    double fp, mean;
    uint64_t saturated;
    int stuck;
    rbf_model_fn_result fr;
    rbf_model_cycles *c;
    int timed;              /* gaps:FILE: its seconds are printed */
    double read_s, model_s; /* reading the file, then the model */
} fn_out;

/* --fn and --new-fraction into the workload *w: 0, or the exit status */
static int fn_workload(const cli_model_fn_args *a, rbf_model_workload *w, uint64_t **gaps,
                       double **prob)
{
    if (a->fn) {
        if (!strncmp(a->fn, "gaps:", 5)) {
            if (!a->have_new_fraction)
                return cli_usage(CMD, "--fn gaps:FILE needs --new-fraction (the fraction of "
                                      "arrivals that are first arrivals)");
            int rc;
            if ((rc = read_gaps(a->fn + 5, gaps, prob, &w->gap_count)))
                return rc;
            w->kind = RBF_WORKLOAD_TRACE;
            w->gaps = *gaps;
            w->gap_prob = *prob;
            w->new_fraction = a->new_fraction;
        } else {
            rbf_sim_workload sw;
            const char *why = NULL;
            if (rbf_sim_workload_parse(a->fn, &sw, &why) != RBF_OK)
                return cli_usage(CMD, "--fn: %s", why ? why : "bad workload");
            if (a->have_new_fraction)
                return cli_usage(CMD, "--new-fraction: applies to --fn gaps:FILE only");
            switch (sw.kind) {
            case RBF_WORKLOAD_UNIFORM:
                w->kind = RBF_WORKLOAD_UNIFORM;
                w->pool = sw.pool;
                break;
            case RBF_WORKLOAD_ZIPF:
                w->kind = RBF_WORKLOAD_ZIPF;
                w->pool = sw.pool;
                w->exponent = sw.exponent;
                break;
            case RBF_WORKLOAD_FADING:
                w->kind = RBF_WORKLOAD_FADING;
                w->new_fraction = sw.new_fraction;
                w->lifetime = sw.lifetime;
                break;
            default:
                return cli_usage(CMD, "--fn: a trace has no model (measure its gaps and use "
                                      "gaps:FILE with --new-fraction)");
            }
        }
    } else if (a->have_new_fraction) {
        return cli_usage(CMD, "--new-fraction: applies to --fn gaps:FILE only");
    }

    return 0;
}

/* The rate, the mean cycle, false negatives: a library status */
static int fn_compute(const cli_model_fn_args *a, const rbf_model_params *p,
                      const rbf_model_cycle_spec *s, const rbf_model_workload *w, fn_out *r)
{
    cli_progress_begin("model", 60);
    /* Without --fn only the rate and the mean cycle are printed: for the
     * oracle and the two-phase real user they follow from the N-bounded
     * rates (any N, milliseconds with the fast method) without the
     * cycle-length law, which would be N entries long. */
    int direct = 0, filled = 0, rc = RBF_OK;
    rbf_model_n_result nr;
    memset(&nr, 0, sizeof nr);
    if (a->messages && (!a->fn || !a->oracle)) {
        rbf_model_params q = *p;
        if (!a->oracle && a->phases == 1 && a->method == RBF_MODEL_AUTO)
            q.method = RBF_MODEL_ASYMPTOTIC; /* only whether the filter can fill (exact_real =
                                                1), which the fast method decides conservatively */
        if ((rc = rbf_model_nbounded(&q, a->messages, &nr))) {
            cli_progress_end();
            return rc;
        }
        if (!a->fn)
            r->saturated = nr.saturated_at;
        /* exact_real = 1: the real user's active filter can fill before its
         * N-th bit-setting message (mass above 1e-30 on a full filter),
         * and then never recycles.  Whether that is a real risk or one in
         * 10^19 cycles, the cycle law says (below) */
        filled = !a->oracle && nr.exact_real >= 1.0;
        if (filled && (nr.saturated_at || a->messages > ((uint64_t)1 << 20))) {
            /* surely stuck (every bit set before N, or the filling is
             * sharp: the law would only confirm it, after minutes) */
            r->stuck = 1;
            direct = 1;
        } else if (a->fn || a->forget || filled) {
            /* the cycle law below */
        } else if (a->oracle) {
            /* one cycle is N ticks; two phases: held by neither filter */
            r->fp = a->phases == 2 ? 1.0 - (1.0 - nr.exact_oracle) * (1.0 - nr.exact_worst)
                                : nr.exact_oracle;
            r->mean = (double)a->messages;
            direct = 1;
        } else if (a->phases == 2) {
            /* a cycle: N bit-setting ticks, each a false positive of the
             * frozen filter with probability exact_real_worst (its bits are
             * the previous cycle's B'_N, independent), and E_fp active
             * false positives: the same model as the cycle law's, without
             * the law (N + F entries, too long past ~2^26) */
            double n = (double)a->messages;
            double efp = n * nr.exact_real / (1.0 - nr.exact_real);
            r->fp = (efp + n * nr.exact_real_worst) / (n + efp);
            if (r->fp > 1.0)
                r->fp = 1.0;
            r->mean = n + efp;
            direct = 1;
        }
    }
    if (!direct) {
        rc = rbf_model_cycles_new(p, s, &r->c);
        if (!rc && a->fn)
            rc = rbf_model_fn_with(r->c, p, s, w, &r->fr);
        if (!rc) {
            rbf_model_cycles_get_fp(r->c, &r->fp);
            rbf_model_cycles_get_mean(r->c, &r->mean);
        } else if (filled && rc != RBF_ECANCELED) {
            rc = RBF_OK;
            r->stuck = 1;
        }
    }
    if (r->stuck) {
        /* The cycle law ignores a full filter's mass below 1e-13 a cycle
         * (1000 bits, k = 2, N = 680: 4e-19, and the filter recycles like
         * any other, as rbf simulate shows).  It stops above that (N = 800:
         * rbf simulate completes no cycle), or when N is too long for it:
         * the filter gets stuck full, every new message a false positive,
         * every arrival reported seen (no repeat reported new). */
        r->fp = 1.0;
        r->mean = INFINITY;
        r->saturated = nr.saturated_at;
        r->fr.fn = 0.0;
        r->fr.forgotten = NAN;
        r->fr.tick_fraction = NAN;
    }
    cli_progress_end();
    return rc;
}

void cli_model_fn_json_head(const cli_model_fn_args *a)
{
    printf("{\"bits\": %llu, \"hashes\": %u, ", (unsigned long long)a->bits, a->hashes);
    if (a->sigma)
        printf("\"sigma\": %llu, \"messages\": null, ", (unsigned long long)a->sigma);
    else
        printf("\"sigma\": null, \"messages\": %llu, ", (unsigned long long)a->messages);
    printf("\"hashing\": \"%s\", \"recycle\": \"%s\", \"phases\": %u, \"oracle\": %s",
           cli_hashing_name(a->nc), cli_recycle_name(a->ret), a->phases,
           a->oracle ? "true" : "false");
}

static void fn_print_json(const cli_model_fn_args *a, const fn_out *r)
{
    cli_model_fn_json_head(a);
    printf(", \"method\": \"%s\"", cli_method_name(a->method));
    if (a->phases == 2)
        printf(", \"bits_per_filter\": %llu", (unsigned long long)(a->bits / 2));
    cli_json_field(stdout, "fp", r->fp);
    printf(", \"cycle_mean\": ");
    if (isinf(r->mean))
        printf("null");
    else
        cli_json_double(stdout, r->mean);
    if (a->messages) {
        if (r->saturated)
            printf(", \"saturated_at\": %llu", (unsigned long long)r->saturated);
        else
            printf(", \"saturated_at\": null");
    }
    if (a->fn) {
        printf(", \"workload\": ");
        cli_json_string(stdout, a->fn);
        cli_json_field(stdout, "fn", r->fr.fn);
        printf(", \"forgotten\": ");
        if (isnan(r->fr.forgotten))
            printf("null");
        else
            cli_json_double(stdout, r->fr.forgotten);
        printf(", \"tick_fraction\": ");
        if (isnan(r->fr.tick_fraction))
            printf("null");
        else
            cli_json_double(stdout, r->fr.tick_fraction);
    } else {
        printf(", \"fn\": null");
    }
    if (r->c) {
        rbf_model_law law = RBF_MODEL_LAW_NONE;
        rbf_model_cycles_get_law(r->c, &law);
        printf(", \"cycle_law\": ");
        cli_json_string(stdout, rbf_model_law_name(law));
    }
    if (a->forget) {
        printf(", \"forget\": ");
        if (!r->c) {
            printf("null"); /* r->stuck: it never recycles */
        } else {
            printf("[");
            for (size_t i = 0; i < a->nforget; i++) {
                printf("%s{\"gap\": %llu, \"forgotten\": ", i ? ", " : "",
                       (unsigned long long)a->forget[i]);
                cli_json_double(stdout, rbf_model_forget(r->c, a->forget[i], RBF_MODEL_FROM_TICK, 0));
                cli_json_field(stdout, "false_negative", rbf_model_miss(r->c, a->forget[i], RBF_MODEL_FROM_TICK));
                printf("}");
            }
            printf("]");
        }
    }
    if (r->timed) {
        cli_json_field(stdout, "read_seconds", r->read_s);
        cli_json_field(stdout, "model_seconds", r->model_s);
    }
    printf("}\n");
}

static void fn_print_text(const cli_model_fn_args *a, const fn_out *r)
{
    const char *policy = a->sigma ? "sigma-bounded" : a->oracle ? "N-bounded oracle"
                                                                : "N-bounded real user";
    printf("model              %s, %s-phase, %s%s%s\n", policy, a->phases == 2 ? "two" : "one",
           cli_hashing_name(a->nc), a->sigma ? ", " : "", a->sigma ? cli_recycle_name(a->ret) : "");
    if (a->phases == 2)
        printf("bits               %llu (two filters of %llu)\n", (unsigned long long)a->bits,
               (unsigned long long)(a->bits / 2));
    else
        printf("bits               %llu\n", (unsigned long long)a->bits);
    printf("hashes             %u\n", a->hashes);
    if (a->sigma)
        printf("sigma              %llu\n", (unsigned long long)a->sigma);
    else
        printf("messages           %llu\n", (unsigned long long)a->messages);
    printf("fp                 %.12g   (average false-positive rate)\n", r->fp);
    if (isinf(r->mean))
        printf("cycle_mean         infinite (the active filter fills before its N-th\n"
               "                   bit-setting message and never recycles: every new\n"
               "                   message is a false positive)\n");
    else
        printf("cycle_mean         %.12g   (ticks per cycle: arrivals the active filter\n"
               "                                  does not hold, false positives included)\n",
               r->mean);
    if (r->c) {
        rbf_model_law law = RBF_MODEL_LAW_NONE;
        rbf_model_cycles_get_law(r->c, &law);
        if (law == RBF_MODEL_LAW_LARGE)
            printf("cycle_law          large-filter (from the fill's first cumulants: the\n"
                   "                   chain would take seconds; --method exact runs it)\n");
    }
    if (r->saturated)
        printf("saturated          from n = %llu messages every bit of a filter is set:\n"
               "                   the rates past it are in closed form\n",
               (unsigned long long)r->saturated);
    if (a->fn) {
        printf("workload           %s\n", a->fn);
        printf("fn                 %.12g   (false negatives / repeats, steady state)\n", r->fr.fn);
        if (r->stuck) {
            printf("                   (a stuck full filter reports every arrival seen: no\n"
                   "                   repeat is reported new; forgotten and tick_fraction\n"
                   "                   do not apply)\n");
        } else {
            printf("forgotten          %.12g   (repeats held by no filter)\n", r->fr.forgotten);
            printf("tick_fraction      %.12g   (ticks per arrival)\n", r->fr.tick_fraction);
        }
    }
    if (a->forget && !r->c) {
        printf("forget             none: the filter never recycles\n");
    } else if (a->forget) {
        printf("forget             a message inserted at a tick, after GAP more ticks:\n"
               "                   %-10s %-16s %s\n",
               "gap", "forgotten", "false negative (forgotten, not a false positive)");
        for (size_t i = 0; i < a->nforget; i++)
            printf("                   %-10llu %-16.10g %.10g\n", (unsigned long long)a->forget[i],
                   rbf_model_forget(r->c, a->forget[i], RBF_MODEL_FROM_TICK, 0),
                   rbf_model_miss(r->c, a->forget[i], RBF_MODEL_FROM_TICK));
    }
    if (r->timed)
        printf("seconds            %.3g reading, %.3g model\n", r->read_s, r->model_s);
}

int cli_model_fn(const cli_model_fn_args *a)
{
    rbf_config cfg;
    rbf_config_init(&cfg);
    cfg.bits = a->bits;
    cfg.hashes = a->hashes;
    cfg.phases = a->phases;
    cfg.hashing = a->nc ? RBF_NON_COLLIDING : RBF_COLLIDING;
    cfg.recycle = a->ret ? RBF_RETAINING : RBF_NON_RETAINING;
    rbf_predict_options po;
    rbf_predict_options_init(&po);
    po.progress = cli_progress_cb;
    po.method = (rbf_model_method)a->method;
    rbf_model_params p;
    rbf_predict_params(&cfg, &po, &p);
    rbf_model_cycle_spec s;
    rbf_model_cycle_spec_init(&s);
    s.phases = a->phases;
    s.sigma = a->sigma;
    s.messages = a->messages;
    s.oracle = a->oracle;

    rbf_model_workload w;
    memset(&w, 0, sizeof w);
    uint64_t *gaps = NULL;
    double *prob = NULL;
    if (a->fn && !strncmp(a->fn, "trace:", 6))
        return cli_model_trace(a, &p, &s); /* cmd_model_trace.c */
    double t0 = cli_wall_seconds();
    int rc = fn_workload(a, &w, &gaps, &prob);
    if (rc)
        return rc;
    fn_out r;
    memset(&r, 0, sizeof r);
    double t1 = cli_wall_seconds();
    rc = fn_compute(a, &p, &s, &w, &r);
    r.timed = gaps != NULL; /* a gaps file was read */
    r.read_s = t1 - t0;
    r.model_s = cli_wall_seconds() - t1;
    free(gaps);
    free(prob);
    if (rc) {
        rbf_model_cycles_free(r.c);
        return lib_fail(rc);
    }
    if (a->json)
        fn_print_json(a, &r);
    else
        fn_print_text(a, &r);
    rbf_model_cycles_free(r.c);
    return cli_finish_stdout(CMD);
}
