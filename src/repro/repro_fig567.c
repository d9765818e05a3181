/*
 * repro_fig567.c -- figures 5, 6 and 7 of the reproduce module: expected
 * message capacity per policy (sigma-bounded, oracle-N, average-N, worst
 * case, two-phase) from the planner, against memory M and against the
 * target average rate epsilon.  Models only, no simulation.
 *
 *   compute  f567_compute: the planner over the M and epsilon sweeps on
 *            the pool
 *   data     fig5.csv (M sweep), fig6.csv (epsilon sweep), fig7.csv (the
 *            one/two-phase ratio over both)
 *   plot     f567_plot: captions and fig5.gp, fig6.gp, fig7.gp
 *   claims   worst-case loss and average-N closeness against M, the
 *            capacity order, worst-case loss against epsilon, one- against
 *            two-phase capacity and its trend
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "rbf_model.h"
#include "rbf_predict.h"
#include "repro_internal.h"

/* The paper's working point for Fig. 5 and the M of MODEL.md's example. */
#define FIG5_EPS 0.01

typedef struct plan_job {
    uint64_t bits;
    double eps;
    rbf_plan plan;
    double sigma_step; /* see sigma_step_of */
    int rc;
} plan_job;

typedef struct plan_sweep {
    plan_job *jobs;
    unsigned max_hashes;
} plan_sweep;

/* Granularity of the sigma-bounded capacity at a plan: E[N_0] grows by
 * this much from sigma to sigma + 1 (same k); 0 where there is no next
 * sigma.  Returns 0 or the model's error. */
static int sigma_step_of(const plan_job *j, double *step)
{
    const rbf_plan_choice *ch = &j->plan.sigma_bounded;
    *step = 0;
    if (!ch->feasible || ch->sigma + 1 >= j->bits)
        return 0;
    rbf_config cfg; /* the planned filter with sigma + 1 */
    rbf_config_init(&cfg);
    cfg.bits = j->bits;
    cfg.hashes = ch->hashes;
    cfg.sigma = ch->sigma + 1;
    rbf_prediction r;
    int rc = rbf_predict(&cfg, NULL, &r);
    if (rc == 0)
        *step = r.messages_per_cycle - ch->expected_messages;
    return rc;
}

static int plan_one(void *arg, size_t i)
{
    plan_sweep *s = arg;
    plan_job *j = &s->jobs[i];
    rbf_plan_options o;
    rbf_plan_options_init(&o);
    o.max_hashes = s->max_hashes;
    j->rc = rbf_plan_memory(j->bits, j->eps, &o, &j->plan);
    if (j->rc == 0)
        j->rc = sigma_step_of(j, &j->sigma_step);
    return j->rc;
}

static double cap(const rbf_plan_choice *ch)
{
    return ch->feasible ? ch->expected_messages : NAN;
}

static double ratio(double a, double b)
{
    return (isfinite(a) && isfinite(b) && b > 0) ? a / b : NAN;
}

static void csv_num(FILE *fp, double v)
{
    if (isfinite(v))
        fprintf(fp, ",%.10g", v);
    else
        fputs(",NaN", fp);
}

static const char *csv_header =
    "bits,eps,k_sigma,sigma,cap_sigma,k_oracle,n_oracle,k_average,n_average,k_worst,n_worst,"
    "k_two_phase,sigma_two_phase,cap_two_phase,ratio_oracle,ratio_average,ratio_worst,"
    "ratio_one_two\n";

static void csv_row(FILE *fp, const plan_job *j)
{
    const rbf_plan *p = &j->plan;
    double cs = cap(&p->sigma_bounded);
    fprintf(fp, "%llu,%.6g,%u,%llu", (unsigned long long)j->bits, j->eps, p->sigma_bounded.hashes,
            (unsigned long long)p->sigma_bounded.sigma);
    csv_num(fp, cs);
    fprintf(fp, ",%u,%llu,%u,%llu,%u,%llu,%u,%llu", p->oracle_n.hashes,
            (unsigned long long)p->oracle_n.messages, p->average_n.hashes,
            (unsigned long long)p->average_n.messages, p->worst_case.hashes,
            (unsigned long long)p->worst_case.messages, p->two_phase.hashes,
            (unsigned long long)p->two_phase.sigma);
    csv_num(fp, cap(&p->two_phase));
    csv_num(fp, ratio(cap(&p->oracle_n), cs));
    csv_num(fp, ratio(cap(&p->average_n), cs));
    csv_num(fp, ratio(cap(&p->worst_case), cs));
    csv_num(fp, ratio(cs, cap(&p->two_phase)));
    fputc('\n', fp);
}

static int write_csv(repro_ctx *c, const char *name, const plan_job *jobs, size_t n)
{
    FILE *fp = repro_open(c, name);
    if (!fp)
        return -1;
    fputs(csv_header, fp);
    for (size_t i = 0; i < n; i++)
        csv_row(fp, &jobs[i]);
    return repro_close(c, fp, name);
}

/* Min and max of a ratio over a sweep, and where (index) they occur. */
typedef struct range {
    double min, max;
    size_t imin, imax;
    size_t n, nan;
} range;

static range range_of(const plan_job *jobs, size_t n, double (*f)(const rbf_plan *))
{
    range r = {INFINITY, -INFINITY, 0, 0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        double v = f(&jobs[i].plan);
        if (!isfinite(v)) {
            r.nan++;
            continue;
        }
        r.n++;
        if (v < r.min)
            r.min = v, r.imin = i;
        if (v > r.max)
            r.max = v, r.imax = i;
    }
    return r;
}

static double r_worst(const rbf_plan *p)
{
    return ratio(cap(&p->worst_case), cap(&p->sigma_bounded));
}
static double r_average(const rbf_plan *p)
{
    return ratio(cap(&p->average_n), cap(&p->sigma_bounded));
}
static double r_oracle(const rbf_plan *p)
{
    return ratio(cap(&p->oracle_n), cap(&p->sigma_bounded));
}
static double r_one_two(const rbf_plan *p)
{
    return ratio(cap(&p->sigma_bounded), cap(&p->two_phase));
}

/* Does sigma >= oracle >= average >= worst hold in capacity?  Each policy's
 * capacity is the best point on its own grid: whole messages for the
 * N-bounded ones, one sigma step of E[N_0] for the sigma-bounded one.  So
 * the oracle passing E[N_0] by less than 1 + one sigma step is a tie. */
static int ordered(const plan_job *j)
{
    const rbf_plan *p = &j->plan;
    double s = cap(&p->sigma_bounded), o = cap(&p->oracle_n), a = cap(&p->average_n),
           w = cap(&p->worst_case);
    if (!(isfinite(s) && isfinite(o) && isfinite(a) && isfinite(w) && o >= a && a >= w))
        return 0;
    return o <= s || o < s + 1 + j->sigma_step;
}

/* Largest k any policy chose: if it reaches max_hashes the planner's range
 * may have cut the optimum. */
static unsigned max_k(const rbf_plan *p)
{
    unsigned k = p->sigma_bounded.hashes;
    const rbf_plan_choice *ch[] = {&p->oracle_n, &p->average_n, &p->worst_case, &p->two_phase};
    for (size_t i = 0; i < 4; i++)
        if (ch[i]->hashes > k)
            k = ch[i]->hashes;
    return k;
}

static int fig5_script(repro_ctx *c)
{
    FILE *gp = repro_gp_begin(c, "fig5", 1000, 820);
    if (!gp)
        return -1;
    fprintf(gp,
            "set multiplot layout 2,1 title \"Expected messages per cycle at average rate ε = "
            "%g, as a fraction of the σ-bounded capacity\" font ',13'\n"
            "set logscale x 2\n"
            "set format x '2^{%%L}'\n"
            "set xlabel 'memory M (bits)'\n"
            "set ylabel 'capacity / σ-bounded capacity'\n"
            "set yrange [0.5:1.05]\n"
            "set key outside right center vertical\n"
            "set lmargin at screen 0.09\nset rmargin at screen 0.66\n"
            "plot 'fig5.csv' using 'bits':(1) with lines dt 2 lc rgb '#000000' title 'σ-bounded "
            "f_σ^1 (reference)', \\\n"
            "     '' using 'bits':'ratio_oracle' with linespoints pt 6 ps 0.8 lc rgb '#1b9e77' "
            "title 'oracle N-bounded f_o', \\\n"
            "     '' using 'bits':'ratio_average' with linespoints pt 7 ps 0.8 lc rgb '#7570b3' "
            "title 'average N-bounded f_a', \\\n"
            "     '' using 'bits':'ratio_worst' with linespoints pt 5 ps 0.8 lc rgb '#d95f02' "
            "title 'worst case f_w (classic)', \\\n"
            "     0.7 with lines dt 3 lc rgb '#888888' title '0.7 (paper: more than 30%% fewer)'\n"
            "set ylabel 'best k'\n"
            "set yrange [0:*]\n"
            "set title 'number of hashes k chosen per policy' font ',11'\n"
            "plot 'fig5.csv' using 'bits':'k_sigma' with linespoints pt 9 ps 0.8 lc rgb "
            "'#000000' title 'σ-bounded', \\\n"
            "     '' using 'bits':'k_average' with linespoints pt 7 ps 0.8 lc rgb '#7570b3' title "
            "'average N-bounded f_a', \\\n"
            "     '' using 'bits':'k_worst' with linespoints pt 5 ps 0.8 lc rgb '#d95f02' title "
            "'worst case f_w', \\\n"
            "     '' using 'bits':'k_two_phase' with linespoints pt 4 ps 0.8 lc rgb '#e7298a' "
            "title 'two-phase (σ-bounded)'\n",
            FIG5_EPS);
    return repro_gp_end(c, gp, "fig5");
}

static int fig6_script(repro_ctx *c)
{
    FILE *gp = repro_gp_begin(c, "fig6", 1000, 820);
    if (!gp)
        return -1;
    fprintf(gp,
            "set multiplot layout 2,1 title \"Expected messages per cycle at M = %llu bits, as a "
            "fraction of the σ-bounded capacity\" font ',13'\n"
            "set logscale x 10\n"
            "set format x '10^{%%L}'\n"
            "set xrange [7e-5:0.14]\n"
            "set xlabel 'target average false-positive rate ε'\n"
            "set ylabel 'capacity / σ-bounded capacity'\n"
            "set yrange [0.5:1.05]\n"
            "set key outside right center vertical\n"
            "set lmargin at screen 0.09\nset rmargin at screen 0.66\n"
            "plot 'fig6.csv' using 'eps':(1) with lines dt 2 lc rgb '#000000' title 'σ-bounded "
            "f_σ^1 (reference)', \\\n"
            "     '' using 'eps':'ratio_oracle' with linespoints pt 6 ps 0.8 lc rgb '#1b9e77' "
            "title 'oracle N-bounded f_o', \\\n"
            "     '' using 'eps':'ratio_average' with linespoints pt 7 ps 0.8 lc rgb '#7570b3' "
            "title 'average N-bounded f_a', \\\n"
            "     '' using 'eps':'ratio_worst' with linespoints pt 5 ps 0.8 lc rgb '#d95f02' "
            "title 'worst case f_w (classic)', \\\n"
            "     0.7 with lines dt 3 lc rgb '#888888' title '0.7 (paper: about 30%% fewer)'\n"
            "set ylabel 'best k'\n"
            "set yrange [0:*]\n"
            "set title 'number of hashes k chosen per policy' font ',11'\n"
            "plot 'fig6.csv' using 'eps':'k_sigma' with linespoints pt 9 ps 0.8 lc rgb '#000000' "
            "title 'σ-bounded', \\\n"
            "     '' using 'eps':'k_average' with linespoints pt 7 ps 0.8 lc rgb '#7570b3' title "
            "'average N-bounded f_a', \\\n"
            "     '' using 'eps':'k_worst' with linespoints pt 5 ps 0.8 lc rgb '#d95f02' title "
            "'worst case f_w', \\\n"
            "     '' using 'eps':'k_two_phase' with linespoints pt 4 ps 0.8 lc rgb '#e7298a' "
            "title 'two-phase (σ-bounded)'\n",
            (unsigned long long)c->sz.eps_bits);
    return repro_gp_end(c, gp, "fig6");
}

static int fig7_script(repro_ctx *c)
{
    FILE *gp = repro_gp_begin(c, "fig7", 1200, 520);
    if (!gp)
        return -1;
    fprintf(gp,
            "set multiplot layout 1,2 title \"One-phase / two-phase σ-bounded capacity at equal "
            "total memory (k optimised for each)\" font ',13'\n"
            "set ylabel 'capacity ratio one-phase / two-phase'\n"
            "set yrange [1:*]\n"
            "set key top left\n"
            "set logscale x 2\n"
            "set format x '2^{%%L}'\n"
            "set xlabel 'total memory M (bits)'\n"
            "set title 'against M, ε = %g' font ',11'\n"
            "plot 'fig7.csv' using 'bits':(strcol('sweep') eq 'M' ? column('ratio') : NaN) with "
            "linespoints pt 7 ps 0.8 lc rgb '#e7298a' title 'E[N_0] one-phase / E[N_0] "
            "two-phase'\n"
            "unset logscale x\n"
            "set logscale x 10\n"
            "set format x '10^{%%L}'\n"
            "set xrange [7e-5:0.14]\n"
            "set xlabel 'target average false-positive rate ε'\n"
            "set title 'against ε, M = %llu bits' font ',11'\n"
            "plot 'fig7.csv' using 'eps':(strcol('sweep') eq 'eps' ? column('ratio') : NaN) with "
            "linespoints pt 7 ps 0.8 lc rgb '#e7298a' title 'E[N_0] one-phase / E[N_0] "
            "two-phase'\n",
            FIG5_EPS, (unsigned long long)c->sz.eps_bits);
    return repro_gp_end(c, gp, "fig7");
}

/* The two sweeps, planned: jobs[0..nm-1] against M at FIG5_EPS, then
 * jobs[nm..nm+ne-1] against eps at M = eps_bits. */
typedef struct f567_data {
    plan_job *jobs;
    size_t nm, ne;
} f567_data;

/* ---- compute */

static int f567_compute(repro_ctx *c, f567_data *d)
{
    const repro_sizes *sz = &c->sz;
    /* M sweep: two points per octave, 2^lo .. 2^hi. */
    d->nm = 2 * (size_t)(sz->m_log2_hi - sz->m_log2_lo) + 1;
    /* eps sweep: 10^-4 .. 10^-1, eps_per_decade points per decade. */
    d->ne = 3 * (size_t)sz->eps_per_decade + 1;
    size_t n = d->nm + d->ne;
    plan_job *jobs = d->jobs = calloc(n, sizeof *jobs);
    if (!jobs)
        return repro_oom(c);
    for (size_t i = 0; i < d->nm; i++) {
        jobs[i].bits = (uint64_t)llround(pow(2.0, sz->m_log2_lo + 0.5 * (double)i));
        jobs[i].eps = FIG5_EPS;
    }
    for (size_t i = 0; i < d->ne; i++) {
        jobs[d->nm + i].bits = sz->eps_bits;
        jobs[d->nm + i].eps = pow(10.0, -4.0 + (double)i / sz->eps_per_decade);
    }
    plan_sweep s = {jobs, sz->max_hashes};
    if (repro_parallel(c, "planner", n, plan_one, &s) == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (jobs[i].rc != 0) {
            cli_fail("reproduce", "rbf_plan_memory(M=%llu, eps=%g) failed: status %d",
                     (unsigned long long)jobs[i].bits, jobs[i].eps, jobs[i].rc);
            break;
        }
    return -1;
}

/* ---- data */

static int f567_write_fig7(repro_ctx *c, const f567_data *d)
{
    FILE *fp = repro_open(c, "fig7.csv");
    if (!fp)
        return -1;
    fputs("sweep,bits,eps,k_one,cap_one,k_two,cap_two,ratio\n", fp);
    for (size_t i = 0; i < d->nm + d->ne; i++) {
        const plan_job *j = &d->jobs[i];
        const rbf_plan *p = &j->plan;
        fprintf(fp, "%s,%llu,%.6g,%u", i < d->nm ? "M" : "eps", (unsigned long long)j->bits, j->eps,
                p->sigma_bounded.hashes);
        csv_num(fp, cap(&p->sigma_bounded));
        fprintf(fp, ",%u", p->two_phase.hashes);
        csv_num(fp, cap(&p->two_phase));
        csv_num(fp, r_one_two(p));
        fputc('\n', fp);
    }
    return repro_close(c, fp, "fig7.csv");
}

static int f567_data_files(repro_ctx *c, const f567_data *d)
{
    int rc = write_csv(c, "fig5.csv", d->jobs, d->nm);
    rc |= write_csv(c, "fig6.csv", d->jobs + d->nm, d->ne);
    rc |= f567_write_fig7(c, d);
    return rc;
}

/* ---- plot */

static int f567_plot(repro_ctx *c)
{
    const repro_sizes *sz = &c->sz;
    int rc = 0;
    rc |= repro_figure_add(
        c, "fig5", repro_strdupf("Fig. 5: capacity against memory M at ε = %g", FIG5_EPS),
        repro_strdupf(
            "Expected messages per cycle that each sizing rule allows at an average "
            "false-positive rate of ε = %g, divided by the σ-bounded capacity E[N_0] "
            "(MODEL.md 5), for M = 2^%u .. 2^%u bits (two points per octave). For each policy "
            "the planner (`rbf_plan_memory`) picks the best k in 1..%u (lower panel). The "
            "worst-case rule f_w is the classic sizing: recycle when the *next* message would "
            "exceed ε.",
            FIG5_EPS, sz->m_log2_lo, sz->m_log2_hi, sz->max_hashes),
        repro_strdupf("`fig5.csv`"));
    rc |= fig5_script(c);
    rc |= repro_figure_add(
        c, "fig6",
        repro_strdupf("Fig. 6: capacity against the target rate ε at M = %llu bits",
                      (unsigned long long)sz->eps_bits),
        repro_strdupf("The same comparison as Fig. 5 at fixed memory M = %llu bits, for ε from "
                      "10^-4 to 10^-1 (%u points per decade), k in 1..%u per policy.",
                      (unsigned long long)sz->eps_bits, sz->eps_per_decade, sz->max_hashes),
        repro_strdupf("`fig6.csv`"));
    rc |= fig6_script(c);
    rc |= repro_figure_add(
        c, "fig7", repro_strdupf("Fig. 7: one-phase against two-phase capacity"),
        repro_strdupf("E[N_0] of the best one-phase σ-bounded filter of M bits divided by E[N_0] "
                      "of one filter of the best two-phase filter (two filters of M/2 bits) at "
                      "the same average rate: left against M at ε = %g, right against ε at M = "
                      "%llu bits. Above 1, the one-phase filter holds more messages per cycle; "
                      "the two-phase filter buys its lower false-negative rate (Fig. 8) with "
                      "this factor.",
                      FIG5_EPS, (unsigned long long)sz->eps_bits),
        repro_strdupf("`fig7.csv` (from the same planner runs as `fig5.csv`, `fig6.csv`)"));
    rc |= fig7_script(c);
    return rc;
}

/* ---- claims */

/* Against M: worst-case sizing loses more than 30%; average-N is close. */
static int f567_claims_M(repro_ctx *c, const f567_data *d)
{
    const repro_sizes *sz = &c->sz;
    const plan_job *jm = d->jobs;
    size_t nm = d->nm;
    range w = range_of(jm, nm, r_worst), a = range_of(jm, nm, r_average),
          o = range_of(jm, nm, r_oracle);
    int rc = 0;
    rc |= repro_claim_add(
        c, "worst_case_30pct_M",
        "Worst-case sizing (f_w) stores more than 30% fewer messages than σ-bounded sizing at "
        "ε = 0.01, at every M",
        "§V-B, Fig. 5", "\"consistently reduced by more than 30%\"", w.n == nm && w.max < 0.70,
        NULL,
        "f_w / σ-bounded capacity from %.3f (M = %llu) to %.3f (M = %llu) over %zu values of M "
        "in 2^%u..2^%u%s",
        w.min, (unsigned long long)jm[w.imin].bits, w.max, (unsigned long long)jm[w.imax].bits, w.n,
        sz->m_log2_lo, sz->m_log2_hi, w.nan ? " (some points infeasible)" : "");
    rc |= repro_claim_add(
        c, "average_close_M",
        "Sizing by the average-N bound f_a is close to σ-bounded sizing (here: within 10% at "
        "every M)",
        "§V-B, Fig. 5", "\"f_a is seen to be a good approximation\" (no number)",
        a.n == nm && a.min >= 0.90,
        "The paper gives no tolerance; 10% is this project's reading of \"close\". f_a is a "
        "lower bound on the N-bounded rate, so the N it allows is an upper bound on what an "
        "N-bounded filter really holds at ε.",
        "f_a / σ-bounded capacity from %.3f (M = %llu) to %.3f (M = %llu); f_o from %.3f to "
        "%.3f",
        a.min, (unsigned long long)jm[a.imin].bits, a.max, (unsigned long long)jm[a.imax].bits,
        o.min, o.max);
    return rc;
}

/* sigma-bounded >= oracle >= average >= worst case, at every point. */
static int f567_claim_order(repro_ctx *c, const f567_data *d)
{
    const plan_job *jobs = d->jobs;
    size_t nm = d->nm, ne = d->ne;
    size_t nord = 0, nstrict = 0;
    double max_excess = 0; /* largest capacity(f_o) - E[N_0], messages */
    for (size_t i = 0; i < nm + ne; i++) {
        const rbf_plan *p = &jobs[i].plan;
        nord += (size_t)ordered(&jobs[i]);
        double cs = cap(&p->sigma_bounded), co = cap(&p->oracle_n), ca = cap(&p->average_n),
               cw = cap(&p->worst_case);
        nstrict += cs >= co && co >= ca && ca >= cw;
        if (co - cs > max_excess)
            max_excess = co - cs;
    }
    return repro_claim_add(
        c, "capacity_order",
        "Capacity order: σ-bounded ≥ oracle f_o ≥ average f_a ≥ worst case f_w",
        "§V (step 2), Figs. 5-6",
        "\"σ-bounded maintains the highest number of messages, followed by f_o, f_a, "
        "and f_w the lowest\"",
        nord == nm + ne,
        "Each capacity is the best point on its own grid (whole messages for N; "
        "one σ step of E[N_0] for σ-bounded), so the oracle passing E[N_0] by less "
        "than one message plus one σ step counts as a tie. The σ-bounded and oracle "
        "capacities are nearly equal (Figs. 5-6).",
        "order holds at %zu of %zu planner points (M and ε sweeps; strictly, "
        "without ties, at %zu); the oracle's N exceeds E[N_0] by at most %.2f "
        "messages",
        nord, nm + ne, nstrict, max_excess);
}

/* Against eps: worst-case loss about 30%; one-phase beats two-phase. */
static int f567_claims_eps(repro_ctx *c, const f567_data *d)
{
    const repro_sizes *sz = &c->sz;
    const plan_job *jm = d->jobs, *je = d->jobs + d->nm;
    size_t nm = d->nm, ne = d->ne;
    int rc = 0;
    range we = range_of(je, ne, r_worst);
    rc |= repro_claim_add(
        c, "worst_case_30pct_eps",
        "Worst-case sizing loses about 30% of the capacity at every ε (here: a loss between "
        "20% and 40%)",
        "§V-B, Fig. 6", "\"consistent underestimation ... of around 30%\"",
        we.n == ne && we.min >= 0.60 && we.max <= 0.80,
        "\"Around 30%\" read as 20-40%: the tolerance is this project's.",
        "loss 1 - f_w/σ-bounded from %.1f%% (ε = %.3g) to %.1f%% (ε = %.3g) at M = %llu",
        100 * (1 - we.max), je[we.imax].eps, 100 * (1 - we.min), je[we.imin].eps,
        (unsigned long long)sz->eps_bits);

    range r1m = range_of(jm, nm, r_one_two), r1e = range_of(je, ne, r_one_two);
    rc |= repro_claim_add(
        c, "one_phase_beats_two",
        "A one-phase filter holds more messages per cycle than a two-phase filter "
        "of the same total memory at the same average rate",
        "§V-C, Fig. 7", "\"the one-phase RBF appears to outperform the two-phased\"",
        r1m.n == nm && r1e.n == ne && r1m.min > 1 && r1e.min > 1, NULL,
        "one/two-phase ratio %.3f..%.3f over M (ε = %g), %.3f..%.3f over ε (M = "
        "%llu)",
        r1m.min, r1m.max, FIG5_EPS, r1e.min, r1e.max, (unsigned long long)sz->eps_bits);
    return rc;
}

/* The two-phase overhead shrinks as eps tightens. */
static int f567_claim_overhead(repro_ctx *c, const f567_data *d)
{
    const repro_sizes *sz = &c->sz;
    const plan_job *je = d->jobs + d->nm;
    size_t ne = d->ne;
    /* Overhead against eps: compare the tightest and loosest eps, and fit
     * a least-squares slope of the ratio on log10(eps). */
    double first = r_one_two(&je[0].plan), last = r_one_two(&je[ne - 1].plan);
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    size_t np = 0, rises = 0;
    for (size_t i = 0; i < ne; i++) {
        double y = r_one_two(&je[i].plan), x = log10(je[i].eps);
        if (!isfinite(y))
            continue;
        sx += x, sy += y, sxx += x * x, sxy += x * y, np++;
        if (i > 0 && y < r_one_two(&je[i - 1].plan))
            rises++; /* going towards tighter eps (smaller index) the ratio rose */
    }
    double dn = (double)np;
    double slope = np > 1 ? (dn * sxy - sx * sy) / (dn * sxx - sx * sx) : NAN;
    return repro_claim_add(
        c, "two_phase_overhead_eps",
        "The two-phase overhead (one/two-phase capacity ratio) shrinks as ε tightens",
        "§V-C, Fig. 7", "shown in Fig. 7 (no number in the text)",
        isfinite(first) && isfinite(last) && first < last && slope > 0,
        "Read from the paper's Fig. 7 description; the capacity is a step function of the "
        "integer σ and k, so the ratio wiggles between neighbouring ε.",
        "ratio %.3f at ε = %.3g, %.3f at ε = %.3g; slope %.4f per decade of ε; the ratio goes "
        "up in %zu of %zu steps from one ε to the next tighter one (M = %llu)",
        first, je[0].eps, last, je[ne - 1].eps, slope, rises, ne - 1,
        (unsigned long long)sz->eps_bits);
}

/* A note when some policy chose the largest k the planner tried. */
static int f567_note_kmax(repro_ctx *c, const f567_data *d)
{
    const repro_sizes *sz = &c->sz;
    const plan_job *jobs = d->jobs;
    size_t nm = d->nm, ne = d->ne;
    unsigned kmax = 0;
    for (size_t i = 0; i < nm + ne; i++)
        if (max_k(&jobs[i].plan) > kmax)
            kmax = max_k(&jobs[i].plan);
    if (kmax >= sz->max_hashes)
        return repro_note(c,
                          "Figs. 5-7: some policy chose k = %u, the top of the planner's range: "
                          "its optimum may lie beyond.",
                          kmax);
    return 0;
}

/* ---- the step */

int repro_fig567(repro_ctx *c)
{
    f567_data d = {NULL, 0, 0};
    int rc = f567_compute(c, &d);
    if (rc == 0) {
        rc |= f567_data_files(c, &d);
        rc |= f567_plot(c);
        rc |= f567_claims_M(c, &d);
        rc |= f567_claim_order(c, &d);
        rc |= f567_claims_eps(c, &d);
        rc |= f567_claim_overhead(c, &d);
        rc |= f567_note_kmax(c, &d);
    }
    free(d.jobs);
    return rc ? -1 : 0;
}
