/*
 * reproduce_sim.c -- the simulation figures of `rbf reproduce`:
 *   fig3  sigma-bounded f_sigma^1 / f_sigma^2 against the simulated filter;
 *   fig4  N-bounded bounds f_o, f_a and the exact real-user rate against the
 *         simulated real-user filter;
 *   fig8  (beyond the paper) false negatives of one- vs two-phase filters of
 *         equal memory on uniform, Zipf and fading workloads, and the
 *         count-instance / count-each / count-first comparison.
 * Every simulation point is one rbf_sim_run (its epochs on one thread);
 * points run in parallel on the pool, each with its own derived seed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "cli_util.h"
#include "rbf_model.h"
#include "rbf_sim.h"
#include "reproduce_common.h"

/* ---- shared */

typedef struct sim_job {
    rbf_sim_config cfg;
    rbf_sim_result res;
    int rc;
} sim_job;

static int sim_one(void *arg, size_t i)
{
    sim_job *j = (sim_job *)arg + i;
    j->rc = rbf_sim_run(&j->cfg, &j->res);
    return j->rc;
}

static void sim_job_init(sim_job *j, repro_ctx *c, unsigned step, size_t index)
{
    memset(j, 0, sizeof *j);
    rbf_sim_config_init(&j->cfg);
    j->cfg.seed = repro_job_seed(c, step, index);
    j->cfg.threads = 1; /* parallelism is across points */
}

static int run_jobs(repro_ctx *c, const char *label, sim_job *jobs, size_t n)
{
    int rc = repro_parallel(c, label, n, sim_one, jobs);
    if (rc != 0) {
        for (size_t i = 0; i < n; i++)
            if (jobs[i].rc != 0) {
                const char *why = NULL;
                rbf_sim_config_check(&jobs[i].cfg, &why);
                cli_fail("reproduce", "simulation failed (M=%llu k=%u sigma=%llu N=%llu "
                                      "phases=%u): %s%s%s",
                         (unsigned long long)jobs[i].cfg.filter.bits, jobs[i].cfg.filter.hashes,
                         (unsigned long long)jobs[i].cfg.filter.sigma,
                         (unsigned long long)jobs[i].cfg.filter.messages,
                         jobs[i].cfg.filter.phases, rbf_strerror(jobs[i].rc),
                         why ? ": " : "", why ? why : "");
                break;
            }
        return -1;
    }
    /* The count-variant claim collects every simulated point. */
    for (size_t i = 0; i < n; i++) {
        const rbf_sim_result *r = &jobs[i].res;
        if (r->total.new_arrivals == 0 || r->fp.mean <= 0)
            continue; /* no false positive at all: nothing to compare */
        c->cnt_points++;
        if (r->fp.mean >= r->fp_each.mean && r->fp_each.mean >= r->fp_first.mean)
            c->cnt_ordered++;
        /* Paired across epochs: is count-instance - count-each below 0
         * with 99% confidence? */
        double d[256], mean, lo, hi;
        size_t ne = r->epochs < 256 ? r->epochs : 256;
        for (size_t e = 0; e < ne; e++)
            d[e] = r->epoch_rates[e].fp - r->epoch_rates[e].fp_each;
        repro_mean_ci(d, ne, 0.99, &mean, &lo, &hi);
        if (ne > 1) {
            /* one-sided p of "mean difference < 0" from the paired t */
            double se = (hi - lo) / 2 / gsl_cdf_tdist_Pinv(0.995, (double)(ne - 1));
            double pv = se > 0 ? gsl_cdf_tdist_P(mean / se, (double)(ne - 1)) : (mean < 0 ? 0 : 1);
            if (pv < 0.01)
                c->cnt_violated++;
            if (c->cnt_points == 1 || pv < c->cnt_min_p)
                c->cnt_min_p = pv;
        }
        double q = r->fp_each.mean > 0 ? r->fp.mean / r->fp_each.mean : INFINITY;
        if (c->cnt_points == 1 || q < c->cnt_min_instance_over_each)
            c->cnt_min_instance_over_each = q;
    }
    return 0;
}

static void free_jobs(sim_job *jobs, size_t n)
{
    if (!jobs)
        return;
    for (size_t i = 0; i < n; i++)
        rbf_sim_result_free(&jobs[i].res);
    free(jobs);
}

static int inside(double v, const rbf_sim_stat *s)
{
    return v >= s->ci_low && v <= s->ci_high;
}

/* P(X >= x) for X ~ Binomial(n, p): how surprising `x` misses are. */
static double binom_tail(unsigned x, unsigned n, double p)
{
    return x == 0 ? 1.0 : gsl_cdf_binomial_Q(x - 1, p, n);
}

/* ================= fig3: sigma-bounded model against simulation ========= */

#define F3_BITS 1000u
static const unsigned f3_ks[] = {1, 3, 5};
#define F3_NK (sizeof f3_ks / sizeof f3_ks[0])
/* Thresholds: one-phase sigma = 300..900 step 50 of M = 1000; two-phase
 * 150..450 step 25 of each 500-bit half.  Below 30% fill the k = 5 rates
 * drop under 1e-4, where an epoch of the default size sees only a handful
 * of false positives and the interval says little. */
#define F3_LO1 300u
#define F3_HI1 900u
#define F3_STEP1 50u
#define F3_LO2 150u
#define F3_HI2 450u
#define F3_STEP2 25u
#define F3_NS 13u

/* Simulated series: the paper's setup (a pool of 1000 messages drawn
 * uniformly) for one- and two-phase, and two-phase again with a pool of
 * 10^6 messages, where a message of the frozen filter rarely comes back
 * (see the two-phase claim). */
static const struct {
    unsigned phases;
    uint64_t pool;
} f3_series[] = {{1, 1000}, {2, 1000}, {2, 1000000}};
#define F3_NSER (sizeof f3_series / sizeof f3_series[0])

static uint64_t f3_sigma(unsigned phases, unsigned i)
{
    return phases == 1 ? F3_LO1 + F3_STEP1 * i : F3_LO2 + F3_STEP2 * i;
}

/* Number of grid thresholds simulated for (phases, k).  A pool of P
 * messages sets on average M'(1 - (1 - 1/M')^{kP}) bits of an M'-bit
 * filter even when every message is in it; a threshold near or above that
 * is rarely or never reached, the filter stops recycling and the renewal
 * model does not apply (k = 1 at M = 1000 fills only 632 bits).  Keep the
 * thresholds at least 50 bits (several standard deviations) below. */
static unsigned f3_count(size_t ser, unsigned k)
{
    unsigned phases = f3_series[ser].phases;
    double m = phases == 1 ? F3_BITS : F3_BITS / 2;
    double fill = m * (1 - pow(1 - 1 / m, (double)k * (double)f3_series[ser].pool));
    unsigned n = 0;
    while (n < F3_NS && (double)f3_sigma(phases, n) <= fill - 50)
        n++;
    return n;
}

static void write_fig3_gp(repro_ctx *c)
{
    FILE *gp = repro_gp_begin(c, "fig3", 1300, 600);
    if (!gp)
        return;
    fprintf(gp,
            "ks = '1 3 5'\n"
            "colors = '#1b9e77 #d95f02 #7570b3'\n"
            "lo(y) = y > 1e-12 ? y : 1e-12\n"
            "set multiplot layout 1,2 title \"σ-bounded recycling Bloom filter: model against "
            "simulation (mean and 99%% interval over epochs)\" font ',13'\n"
            "set logscale y\n"
            "set format y '10^{%%L}'\n"
            "set yrange [1e-4:1]\n"
            "set ylabel 'average false-positive rate (count-instance)'\n"
            "set key bottom right\n"
            "set xlabel 'threshold σ (set bits of the filter)'\n"
            "set title 'one-phase, M = %u bits, %u epochs × %llu arrivals' font ',11'\n"
            "set xrange [%u:%u]\n"
            "plot for [i=1:3] 'fig3_lines.csv' using 'sigma':((column('phases')==1 && "
            "column('k')==word(ks,i)+0) ? column('fp') : NaN) with lines lw 1.5 lc rgb "
            "word(colors,i) title sprintf('model f_σ^1, k = %%s', word(ks,i)), \\\n"
            "     for [i=1:3] 'fig3.csv' using 'sigma':((column('phases')==1 && "
            "column('k')==word(ks,i)+0) ? column('sim_mean') : NaN):(lo(column('ci_lo'))):'ci_hi' "
            "with yerrorbars pt 7 ps 0.7 lc rgb word(colors,i) title sprintf('simulation, k = "
            "%%s', word(ks,i))\n"
            "set title 'two-phase, 2 × %u bits, %u epochs × %llu arrivals' font ',11'\n"
            "set xlabel 'threshold σ (set bits of the active filter)'\n"
            "set xrange [%u:%u]\n"
            "plot for [i=1:3] 'fig3_lines.csv' using 'sigma':((column('phases')==2 && "
            "column('k')==word(ks,i)+0) ? column('fp') : NaN) with lines lw 1.5 lc rgb "
            "word(colors,i) title sprintf('model f_σ^2, k = %%s', word(ks,i)), \\\n"
            "     for [i=1:3] 'fig3.csv' using 'sigma':((column('phases')==2 && "
            "column('pool')==1000 && column('k')==word(ks,i)+0) ? column('sim_mean') : "
            "NaN):(lo(column('ci_lo'))):'ci_hi' with yerrorbars pt 7 ps 0.7 lc rgb "
            "word(colors,i) title sprintf('simulation, k = %%s', word(ks,i)), \\\n"
            "     for [i=1:3] 'fig3.csv' using 'sigma':((column('phases')==2 && "
            "column('pool')>1000 && column('k')==word(ks,i)+0) ? column('sim_mean') : "
            "NaN):(lo(column('ci_lo'))):'ci_hi' with yerrorbars pt 6 ps 1.1 lc rgb "
            "word(colors,i) notitle, \\\n"
            "     NaN with points pt 6 ps 1.1 lc rgb '#444444' title 'open: pool of 10^6 "
            "messages'\n",
            F3_BITS, c->sz.sigma_epochs1, (unsigned long long)c->sz.sigma_arrivals,
            F3_LO1 - 25, F3_HI1 + 25, F3_BITS / 2, c->sz.sigma_epochs2,
            (unsigned long long)c->sz.sigma_arrivals, F3_LO2 - 12, F3_HI2 + 13);
    repro_gp_end(c, gp, "fig3");
}

typedef struct f3_stats {
    unsigned n, in, above;
    double max_rel, sum_rel;
    uint64_t worst_sigma;
    unsigned worst_k;
} f3_stats;

int repro_fig3(repro_ctx *c)
{
    const repro_sizes *sz = &c->sz;
    size_t n = F3_NSER * F3_NK * F3_NS;
    sim_job *jobs = calloc(n, sizeof *jobs);
    /* Model curves: one-phase for every sigma <= 950, two-phase for sigma
     * of the 500-bit halves up to 475. */
    size_t smax1 = F3_HI1 + 50, smax2 = F3_HI2 + 25;
    double *curve1 = calloc(F3_NK * (smax1 + 1), sizeof *curve1);
    double *curve2 = calloc(F3_NK * (smax2 + 1), sizeof *curve2);
    if (!jobs || !curve1 || !curve2) {
        free(jobs), free(curve1), free(curve2);
        return cli_fail("reproduce", "out of memory");
    }
    int rc = 0;
    for (size_t ki = 0; ki < F3_NK && rc == 0; ki++) {
        rbf_model_params p;
        rbf_model_params_init(&p);
        p.bits = F3_BITS;
        p.hashes = f3_ks[ki];
        rc = rbf_model_sigma_curve(&p, smax1, curve1 + ki * (smax1 + 1), NULL);
        p.bits = F3_BITS / 2;
        for (uint64_t s = 0; s <= smax2 && rc == 0; s++) {
            rbf_model_two_phase_result r;
            if (s < 100 || s < p.hashes) {
                curve2[ki * (smax2 + 1) + s] = NAN;
                continue;
            }
            rc = rbf_model_two_phase(&p, s, &r);
            curve2[ki * (smax2 + 1) + s] = r.fp;
        }
    }
    if (rc != 0) {
        free(jobs), free(curve1), free(curve2);
        return cli_fail("reproduce", "sigma-bounded model failed: status %d", rc);
    }

    size_t j = 0;
    for (size_t ser = 0; ser < F3_NSER; ser++)
        for (size_t ki = 0; ki < F3_NK; ki++)
            for (unsigned si = 0; si < f3_count(ser, f3_ks[ki]); si++, j++) {
                unsigned ph = f3_series[ser].phases;
                sim_job *jb = &jobs[j];
                sim_job_init(jb, c, 3, j);
                jb->cfg.workload.kind = RBF_SIM_UNIFORM;
                jb->cfg.workload.pool = f3_series[ser].pool;
                jb->cfg.filter.bits = F3_BITS; /* two-phase: the total, 500 + 500 */
                jb->cfg.filter.hashes = f3_ks[ki];
                jb->cfg.filter.sigma = f3_sigma(ph, si);
                jb->cfg.filter.phases = ph;
                jb->cfg.arrivals = sz->sigma_arrivals;
                jb->cfg.epochs = ph == 1 ? sz->sigma_epochs1 : sz->sigma_epochs2;
                /* The paper starts each epoch from an empty filter; a short
                 * warm-up also fills the frozen half of a two-phase filter
                 * before counting (a few cycles). */
                jb->cfg.warmup = sz->sigma_arrivals / 20;
            }
    n = j;
    if (run_jobs(c, "fig3 simulations", jobs, n) != 0) {
        free_jobs(jobs, n), free(curve1), free(curve2);
        return -1;
    }

    /* ---- data */
    FILE *fp = repro_open(c, "fig3_lines.csv");
    if (fp) {
        fputs("phases,k,sigma,fill,fp\n", fp);
        for (size_t ki = 0; ki < F3_NK; ki++)
            for (uint64_t s = F3_LO1 - 50; s <= smax1; s++)
                fprintf(fp, "1,%u,%llu,%.4f,%.10g\n", f3_ks[ki], (unsigned long long)s,
                        (double)s / F3_BITS, curve1[ki * (smax1 + 1) + s]);
        for (size_t ki = 0; ki < F3_NK; ki++)
            for (uint64_t s = F3_LO2 - 25; s <= smax2; s++)
                fprintf(fp, "2,%u,%llu,%.4f,%.10g\n", f3_ks[ki], (unsigned long long)s,
                        (double)s / (F3_BITS / 2), curve2[ki * (smax2 + 1) + s]);
        rc |= repro_close(c, fp, "fig3_lines.csv");
    } else {
        rc = -1;
    }
    f3_stats st[F3_NSER];
    memset(st, 0, sizeof st);
    fp = repro_open(c, "fig3.csv");
    if (fp) {
        fputs("phases,pool,k,sigma,model,sim_mean,ci_lo,ci_hi,epochs,arrivals_per_epoch,"
              "new_arrivals,false_positives,inside\n",
              fp);
    } else {
        rc = -1;
    }
    j = 0;
    for (size_t ser = 0; ser < F3_NSER; ser++)
        for (size_t ki = 0; ki < F3_NK; ki++)
            for (unsigned si = 0; si < f3_count(ser, f3_ks[ki]); si++, j++) {
                unsigned ph = f3_series[ser].phases;
                const rbf_sim_result *r = &jobs[j].res;
                uint64_t s = f3_sigma(ph, si);
                double m = ph == 1 ? curve1[ki * (smax1 + 1) + s] : curve2[ki * (smax2 + 1) + s];
                int in = inside(m, &r->fp);
                f3_stats *t = &st[ser];
                t->n++;
                t->in += (unsigned)in;
                t->above += r->fp.mean > m;
                double rel = m > 0 ? (r->fp.mean - m) / m : 0;
                t->sum_rel += rel;
                if (fabs(rel) > fabs(t->max_rel))
                    t->max_rel = rel, t->worst_sigma = s, t->worst_k = f3_ks[ki];
                if (fp)
                    fprintf(fp, "%u,%llu,%u,%llu,%.10g,%.10g,%.10g,%.10g,%u,%llu,%llu,%llu,%d\n", ph,
                            (unsigned long long)f3_series[ser].pool, f3_ks[ki], (unsigned long long)s, m, r->fp.mean, r->fp.ci_low,
                            r->fp.ci_high, r->epochs, (unsigned long long)jobs[j].cfg.arrivals,
                            (unsigned long long)r->total.new_arrivals,
                            (unsigned long long)r->total.fp_first, in);
            }
    if (fp)
        rc |= repro_close(c, fp, "fig3.csv");

    repro_figure_add(
        c, "fig3",
        repro_strdupf("Fig. 3: f_σ^1 and f_σ^2 against σ, model and simulation"),
        repro_strdupf(
            "Lines: the σ-bounded model (MODEL.md 3, colliding, non-retaining) for k = 1, 3, 5. "
            "Points: the library's filter in the simulator, mean over epochs with its 99%% "
            "Student-t interval; a pool of 1000 messages drawn uniformly, each epoch from an "
            "empty filter with %llu uncounted warm-up arrivals. Left: one-phase, M = %u bits, σ "
            "= %u..%u step %u (%u epochs of %llu arrivals). Right: two-phase, two filters of %u "
            "bits, σ = %u..%u step %u per filter (%u epochs). The σ ranges start at 30%% fill, "
            "where the k = 5 rate is near 10^-3: below it an epoch sees too few false positives "
            "for a useful interval. They stop 50 bits below the fill that the whole pool of 1000 "
            "messages reaches on average (M'(1 - (1 - 1/M')^{1000 k})): k = 1 sets only about "
            "632 of 1000 bits (432 of 500), so its thresholds end at 550 (375); beyond, the "
            "filter rarely or never recycles and the renewal model does not apply. Open "
            "circles (right): the same two-phase filters fed from a pool of 10^6 messages "
            "(beyond the paper; see the two-phase claims).",
            (unsigned long long)(sz->sigma_arrivals / 20), F3_BITS, F3_LO1, F3_HI1, F3_STEP1,
            sz->sigma_epochs1, (unsigned long long)sz->sigma_arrivals, F3_BITS / 2, F3_LO2,
            F3_HI2, F3_STEP2, sz->sigma_epochs2),
        repro_strdupf("`fig3.csv` (simulation points with the model at each), `fig3_lines.csv` "
                      "(model curves)"));
    write_fig3_gp(c);

    static const char *names[F3_NSER] = {"one-phase f_σ^1", "two-phase f_σ^2",
                                         "two-phase f_σ^2"};
    static const char *ids[F3_NSER][2] = {{"fig3_one_phase_inside", "fig3_one_phase_chance"},
                                          {"fig3_two_phase_inside", "fig3_two_phase_chance"},
                                          {"fig3_two_phase_big_pool_inside",
                                           "fig3_two_phase_big_pool_chance"}};
    for (size_t ser = 0; ser < F3_NSER; ser++) {
        const f3_stats *t = &st[ser];
        unsigned ph = f3_series[ser].phases;
        int paper = f3_series[ser].pool == 1000;
        char *claim = repro_strdupf(
            "The %s model lies inside the simulation's 99%% interval at every σ point (M = "
            "1000%s; pool of %llu messages%s)",
            names[ser], ph == 2 ? " as 500 + 500" : "", (unsigned long long)f3_series[ser].pool,
            paper ? ", the paper's setup" : "");
        char *note;
        if (ser == 1)
            note = repro_strdupf(
                "An equality claim tested at 99%% per point (with %u points an exact model "
                "misses about %.1f by chance). The gap is a finite-pool effect: the same model "
                "against the same filters fed from a pool of 10^6 messages (two rows below) has "
                "%u of %u points inside, mean deviation %+.2f%%. With 1000 messages most of the "
                "pool is held by one filter or the other, and a message held by the frozen filter "
                "keeps arriving: it is correctly reported seen (not new) but sets bits in the "
                "active filter, while the model treats every bit-setting arrival of the active "
                "filter as a new message. The paper's statement that all its points were inside "
                "is not reproduced at its own pool size; the model is right for streams whose "
                "messages rarely come back a cycle later.",
                t->n, 0.01 * t->n, st[2].in, st[2].n, 100 * st[2].sum_rel / (st[2].n ? st[2].n : 1));
        else
            note = repro_strdupf(
                "An equality claim tested at 99%% per point: with %u points, even an exact model "
                "falls outside about %.1f of them by chance (all inside with probability %.2f). "
                "The next row asks whether the misses are more than chance.",
                t->n, 0.01 * t->n, pow(0.99, t->n));
        repro_claim_add(c, ids[ser][0], claim, paper ? "§V-A1, Fig. 3" : "beyond the paper (Fig. 3)",
                        paper ? "\"for all data points, the value ... lies within the "
                                "confidence interval\""
                              : "-",
                        t->in == t->n, note,
                        "%u of %u points inside; largest deviation of the simulated mean from "
                        "the model %+.2f%% (k = %u, σ = %llu); simulated mean above the model at "
                        "%u of %u points, mean deviation %+.2f%%",
                        t->in, t->n, 100 * t->max_rel, t->worst_k,
                        (unsigned long long)t->worst_sigma, t->above, t->n,
                        100 * t->sum_rel / (t->n ? t->n : 1));
        repro_free_str(claim);
        repro_free_str(note);
        double pv = binom_tail(t->n - t->in, t->n, 0.01);
        claim = repro_strdupf("The %s misses (pool %llu) are no more than chance for 99%% "
                              "intervals (binomial test, level 0.01)",
                              names[ser], (unsigned long long)f3_series[ser].pool);
        repro_claim_add(c, ids[ser][1], claim, "beyond the paper (Fig. 3)", "-", pv >= 0.01,
                        "A statistical reading of the row above: P(at least this many misses | "
                        "exact model, independent 99% intervals).",
                        "%u misses of %u; P(>= %u misses) = %.3g", t->n - t->in, t->n,
                        t->n - t->in, pv);
        repro_free_str(claim);
    }
    free_jobs(jobs, n);
    free(curve1);
    free(curve2);
    return rc ? -1 : 0;
}

/* ================= fig4: N-bounded bounds against simulation ============ */

#define F4_BITS 1000u
#define F4_K 5u
#define F4_LO 50u
#define F4_HI 300u
#define F4_STEP 25u
#define F4_NP ((F4_HI - F4_LO) / F4_STEP + 1)

static void write_fig4_gp(repro_ctx *c)
{
    FILE *gp = repro_gp_begin(c, "fig4", 1000, 900);
    if (!gp)
        return;
    fprintf(gp,
            "lo(y) = y > 1e-12 ? y : 1e-12\n"
            "set multiplot layout 2,1 title \"N-bounded filter (real user: counts bit-setting "
            "messages), M = %u bits, k = %u\" font ',13'\n"
            "set lmargin 12\n"
            "set logscale y\n"
            "set format y '10^{%%L}'\n"
            "set xlabel 'N (bit-setting messages per cycle)'\n"
            "set ylabel 'average false-positive rate'\n"
            "set key bottom right\n"
            "set xrange [%u:%u]\n"
            "set yrange [1e-5:1]\n"
            "set title 'rates' font ',11'\n"
            "plot 'fig4_lines.csv' using 'N':'f_w' with lines dt 3 lw 1.2 lc rgb '#888888' title "
            "'f_w: rate of the next message (classic)', \\\n"
            "     '' using 'N':'exact_real' with lines lw 1.5 lc rgb '#000000' title 'exact "
            "real-user rate (this project)', \\\n"
            "     '' using 'N':'f_a' with lines lw 1.5 lc rgb '#7570b3' title 'f_a: real-user "
            "lower bound', \\\n"
            "     '' using 'N':'f_o' with lines dt 2 lw 1.5 lc rgb '#1b9e77' title 'f_o: oracle "
            "lower bound', \\\n"
            "     'fig4.csv' using 'N':'sim_mean':(lo(column('ci_lo'))):'ci_hi' with yerrorbars "
            "pt 7 ps 0.8 lc rgb '#d95f02' title 'simulation (99%% interval)'\n"
            "unset logscale y\n"
            "set format y '%%.2f'\n"
            "set yrange [0.6:1.4]\n"
            "set ylabel 'rate / exact real-user rate'\n"
            "set title 'relative to the exact real-user rate' font ',11'\n"
            "set key bottom center\n"
            "plot 'fig4_lines.csv' using 'N':(1) with lines lw 1.5 lc rgb '#000000' title 'exact "
            "real-user rate', \\\n"
            "     '' using 'N':(column('f_a')/column('exact_real')) with lines lw 1.5 lc rgb "
            "'#7570b3' title 'f_a', \\\n"
            "     '' using 'N':(column('f_o')/column('exact_real')) with lines dt 2 lw 1.5 lc rgb "
            "'#1b9e77' title 'f_o', \\\n"
            "     'fig4.csv' using 'N':(column('sim_mean')/column('exact_real')):"
            "(column('ci_lo')/column('exact_real')):(column('ci_hi')/column('exact_real')) with "
            "yerrorbars pt 7 ps 0.8 lc rgb '#d95f02' title 'simulation (99%% interval)'\n",
            F4_BITS, F4_K, F4_LO - 10, F4_HI + 10);
    repro_gp_end(c, gp, "fig4");
}

int repro_fig4(repro_ctx *c)
{
    const repro_sizes *sz = &c->sz;
    /* Model lines every 5 messages from 40 to 310. */
    size_t nl = (F4_HI + 10 - (F4_LO - 10)) / 5 + 1;
    rbf_model_n_result *lines = calloc(nl, sizeof *lines);
    rbf_model_n_result pts[F4_NP];
    sim_job *jobs = calloc(F4_NP, sizeof *jobs);
    if (!lines || !jobs) {
        free(lines), free(jobs);
        return cli_fail("reproduce", "out of memory");
    }
    rbf_model_params p;
    rbf_model_params_init(&p);
    p.bits = F4_BITS;
    p.hashes = F4_K;
    int rc = 0;
    for (size_t i = 0; i < nl && rc == 0; i++)
        rc = rbf_model_nbounded(&p, F4_LO - 10 + 5 * i, &lines[i]);
    for (size_t i = 0; i < F4_NP && rc == 0; i++)
        rc = rbf_model_nbounded(&p, F4_LO + F4_STEP * i, &pts[i]);
    if (rc != 0) {
        free(lines), free(jobs);
        return cli_fail("reproduce", "N-bounded model failed: status %d", rc);
    }
    for (size_t i = 0; i < F4_NP; i++) {
        sim_job_init(&jobs[i], c, 4, i);
        jobs[i].cfg.filter.bits = F4_BITS;
        jobs[i].cfg.filter.hashes = F4_K;
        jobs[i].cfg.filter.messages = F4_LO + F4_STEP * i;
        jobs[i].cfg.arrivals = sz->n_arrivals;
        jobs[i].cfg.epochs = sz->n_epochs;
    }
    if (run_jobs(c, "fig4 simulations", jobs, F4_NP) != 0) {
        free(lines), free_jobs(jobs, F4_NP);
        return -1;
    }

    FILE *fp = repro_open(c, "fig4_lines.csv");
    if (fp) {
        fputs("N,f_w,f_o,f_a,exact_worst,exact_oracle,exact_real\n", fp);
        for (size_t i = 0; i < nl; i++)
            fprintf(fp, "%zu,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g\n", (size_t)(F4_LO - 10 + 5 * i),
                    lines[i].f_w, lines[i].f_o, lines[i].f_a, lines[i].exact_worst,
                    lines[i].exact_oracle, lines[i].exact_real);
        rc |= repro_close(c, fp, "fig4_lines.csv");
    } else {
        rc = -1;
    }
    unsigned ord = 0, below_mean = 0, below_hi = 0, exact_in = 0;
    double max_gap = 0, gap_at = 0, worst_fa_over_mean = 0;
    fp = repro_open(c, "fig4.csv");
    if (fp)
        fputs("N,f_o,f_a,exact_real,sim_mean,ci_lo,ci_hi,epochs,arrivals_per_epoch,"
              "new_arrivals,false_positives,fa_below_mean,exact_inside\n",
              fp);
    else
        rc = -1;
    for (size_t i = 0; i < F4_NP; i++) {
        const rbf_sim_result *r = &jobs[i].res;
        const rbf_model_n_result *m = &pts[i];
        ord += m->f_o <= m->f_a;
        below_mean += m->f_a <= r->fp.mean;
        below_hi += m->f_o <= r->fp.ci_high && m->f_a <= r->fp.ci_high;
        int ein = inside(m->exact_real, &r->fp);
        exact_in += (unsigned)ein;
        double gap = m->f_a > 0 ? m->exact_real / m->f_a - 1 : 0;
        if (gap > max_gap)
            max_gap = gap, gap_at = F4_LO + F4_STEP * (double)i;
        if (r->fp.mean > 0 && m->f_a / r->fp.mean > worst_fa_over_mean)
            worst_fa_over_mean = m->f_a / r->fp.mean;
        if (fp)
            fprintf(fp, "%u,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%u,%llu,%llu,%llu,%d,%d\n",
                    (unsigned)(F4_LO + F4_STEP * i), m->f_o, m->f_a, m->exact_real, r->fp.mean,
                    r->fp.ci_low, r->fp.ci_high, r->epochs,
                    (unsigned long long)jobs[i].cfg.arrivals,
                    (unsigned long long)r->total.new_arrivals,
                    (unsigned long long)r->total.fp_first, m->f_a <= r->fp.mean, ein);
    }
    if (fp)
        rc |= repro_close(c, fp, "fig4.csv");

    repro_figure_add(
        c, "fig4", repro_strdupf("Fig. 4: N-bounded lower bounds f_o, f_a against simulation"),
        repro_strdupf(
            "The N-bounded filter as a real user runs it: it recycles after N bit-setting "
            "messages (a false positive sets no bit, so it is not counted). M = %u bits, k = %u, "
            "N = %u..%u step %u; %u epochs of %llu arrivals per point from a uniform pool of 1000 "
            "messages. f_o and f_a are the paper's lower bounds (§III); the exact real-user rate "
            "is this project's exact computation (MODEL.md 4); f_w is the classic rate of the "
            "message after N insertions. The lower panel divides everything by the exact rate "
            "so the gaps of a few per cent are visible.",
            F4_BITS, F4_K, F4_LO, F4_HI, F4_STEP, sz->n_epochs,
            (unsigned long long)sz->n_arrivals),
        repro_strdupf("`fig4.csv` (simulation points), `fig4_lines.csv` (models)"));
    write_fig4_gp(c);

    repro_claim_add(c, "fig4_fo_le_fa", "f_o ≤ f_a at every N (f_a is the tighter lower bound)",
                    "§V-A2, Fig. 4", "\"f_a is a tighter lower bound than f_o\"",
                    ord == F4_NP, "Model against model: no sampling involved.",
                    "f_o ≤ f_a at %u of %u values of N (M = %u, k = %u)", ord, (unsigned)F4_NP,
                    F4_BITS, F4_K);
    repro_claim_add(
        c, "fig4_fa_le_sim", "f_a (and so f_o) lies below the simulated mean at every N",
        "§V-A2, Fig. 4", "\"for all data points, both f_o and f_a are below the sample mean\"",
        below_mean == F4_NP,
        "A bound claim: f_a is a lower bound, not a prediction, so the simulated rate should "
        "be above it; near N where the bound is tight the simulated mean can fall below it by "
        "chance.",
        "f_a ≤ simulated mean at %u of %u N; largest f_a / simulated mean = %.3f", below_mean,
        (unsigned)F4_NP, worst_fa_over_mean);
    repro_claim_add(c, "fig4_bounds_within_or_below",
                    "f_o and f_a fall within or below the simulated 99% interval at every N",
                    "§V-A2, Fig. 4", "\"fall either within or below the confidence interval\"",
                    below_hi == F4_NP, NULL, "%u of %u values of N", below_hi, (unsigned)F4_NP);
    repro_claim_add(
        c, "fig4_exact_inside",
        "The exact real-user rate lies inside the simulated 99% interval at every N",
        "beyond the paper (Fig. 4)", "-", exact_in == F4_NP,
        "An equality claim at 99% per point (about 1 miss in 100 points is chance).",
        "%u of %u points inside; the exact rate exceeds f_a by up to %.1f%% (N = %.0f)", exact_in,
        (unsigned)F4_NP, 100 * max_gap, gap_at);
    free(lines);
    free_jobs(jobs, F4_NP);
    return rc ? -1 : 0;
}

/* ======== fig8: false negatives, one- vs two-phase, three workloads ======= */

#define F8_BITS 8192u
static const double f8_eps[] = {0.001, 0.003, 0.01, 0.03, 0.1};
#define F8_NE (sizeof f8_eps / sizeof f8_eps[0])
static const char *const f8_wl[] = {"uniform:4000", "zipf:4000:1", "fading:0.25:2000"};
static const char *const f8_wl_name[] = {"uniform, pool 4000", "Zipf s = 1, pool 4000",
                                         "fading: 25% new, lifetime 2000"};
#define F8_NW (sizeof f8_wl / sizeof f8_wl[0])
/* Lifetime sweep of the fading workload at eps = 0.01: from repeats that
 * come back within a few dozen arrivals to ones that come back after many
 * cycles of either filter. */
static const unsigned f8_life[] = {25, 50, 100, 200, 400, 800, 1600, 3200, 6400, 12800};
#define F8_NL (sizeof f8_life / sizeof f8_life[0])
#define F8_LIFE_EPS 0.01
#define F8_LIFE_EPS_INDEX 2 /* f8_eps[2] == F8_LIFE_EPS */

static void write_fig8_gp(repro_ctx *c)
{
    FILE *gp = repro_gp_begin(c, "fig8", 1400, 900);
    if (!gp)
        return;
    fprintf(gp,
            "wls = '%s %s %s'\n"
            "array title_of[3]\n"
            "title_of[1] = '%s'\n"
            "title_of[2] = '%s'\n"
            "title_of[3] = '%s'\n"
            "lo(y) = y > 1e-12 ? y : 1e-12\n"
            "set multiplot title \"False negatives: one-phase against two-phase filter, both "
            "%u bits in all, each sized by the planner for the same average rate ε\" font ',13'\n"
            "set logscale x 10\n"
            "set format x '10^{%%L}'\n"
            "set xrange [5e-4:0.2]\n"
            "set yrange [0:1]\n"
            "set xlabel 'target average false-positive rate ε'\n"
            "set ylabel 'false-negative rate'\n"
            "set key bottom left\n"
            "do for [w=1:3] {\n"
            "  set origin (w-1)/3.0, 0.48\n"
            "  set size 1/3.0, 0.47\n"
            "  set title title_of[w] font ',11'\n"
            "  plot 'fig8.csv' using 'eps':((strcol('workload') eq word(wls,w) && "
            "column('phases')==1) ? column('fn_mean') : NaN):'fn_lo':'fn_hi' with yerrorlines pt "
            "7 ps 0.7 lc rgb '#d95f02' title 'one-phase', \\\n"
            "       '' using 'eps':((strcol('workload') eq word(wls,w) && column('phases')==2) ? "
            "column('fn_mean') : NaN):'fn_lo':'fn_hi' with yerrorlines pt 5 ps 0.7 lc rgb "
            "'#1b9e77' title 'two-phase', \\\n"
            "       '' using 'eps':((strcol('workload') eq word(wls,w) && column('phases')==1) ? "
            "column('model_fn') : NaN) with lines dt 2 lw 1.5 lc rgb '#d95f02' title 'one-phase "
            "model', \\\n"
            "       '' using 'eps':((strcol('workload') eq word(wls,w) && column('phases')==2) ? "
            "column('model_fn') : NaN) with lines dt 2 lw 1.5 lc rgb '#1b9e77' title 'two-phase "
            "model'\n"
            "}\n"
            "set origin 0, 0\n"
            "set size 1, 0.47\n"
            "set logscale xy\n"
            "set format x '%%g'\n"
            "set format y '10^{%%L}'\n"
            "set xrange [15:20000]\n"
            "set yrange [*:1]\n"
            "set xlabel 'mean lifetime L of a message in the fading workload (arrivals; 25%% "
            "of arrivals are brand-new messages)'\n"
            "set title 'false negatives against how soon repeats come back, ε = %g' font ',11'\n"
            "set key top left\n"
            "plot 'fig8_lifetime.csv' using 'lifetime':(column('phases')==1 ? column('fn_mean') "
            ": NaN):(lo(column('fn_lo'))):'fn_hi' with yerrorlines pt 7 ps 0.7 lc rgb '#d95f02' "
            "title 'one-phase', \\\n"
            "     '' using 'lifetime':(column('phases')==2 ? column('fn_mean') : NaN):"
            "(lo(column('fn_lo'))):'fn_hi' with yerrorlines pt 5 ps 0.7 lc rgb '#1b9e77' title "
            "'two-phase', \\\n"
            "     '' using 'lifetime':(column('phases')==1 ? lo(column('model_fn')) : NaN) with "
            "lines dt 2 lw 1.5 lc rgb '#d95f02' title 'one-phase model', \\\n"
            "     '' using 'lifetime':(column('phases')==2 ? lo(column('model_fn')) : NaN) with "
            "lines dt 2 lw 1.5 lc rgb '#1b9e77' title 'two-phase model'\n",
            f8_wl[0], f8_wl[1], f8_wl[2], f8_wl_name[0], f8_wl_name[1], f8_wl_name[2], F8_BITS,
            F8_LIFE_EPS);
    repro_gp_end(c, gp, "fig8");
}

static void f8_setup(sim_job *jb, const repro_sizes *sz, const rbf_plan *plan, unsigned ph)
{
    const rbf_plan_choice *ch = ph == 1 ? &plan->sigma_bounded : &plan->two_phase;
    jb->cfg.filter.bits = F8_BITS;
    jb->cfg.filter.phases = ph;
    jb->cfg.filter.hashes = ch->hashes;
    jb->cfg.filter.sigma = ch->sigma;
    jb->cfg.arrivals = sz->fn_arrivals;
    jb->cfg.epochs = sz->fn_epochs;
    /* Warm-up: let the workload's repeats and the filters reach their
     * steady state before counting. */
    jb->cfg.warmup = sz->fn_arrivals / 5;
}

/* Is the two-phase FN rate lower (+1) or higher (-1) than the one-phase
 * one with the 99% intervals apart, or neither (0)? */
static int fn_compare(const rbf_sim_result *one, const rbf_sim_result *two)
{
    if (two->fn.ci_high < one->fn.ci_low)
        return 1;
    if (two->fn.ci_low > one->fn.ci_high)
        return -1;
    return 0;
}

/* with_model: compute the false-negative model (seconds per point at
 * fig8's sizes; left out, as NaN, in --quick runs) */
static void f8_row(FILE *fp, const sim_job *jb, int with_model)
{
    const rbf_sim_result *r = &jb->res;
    double model = NAN;
    if (rbf_sim_model(&jb->cfg, &model, NULL) != RBF_OK)
        model = NAN;
    fprintf(fp, "%u,%u,%u,%llu,", jb->cfg.filter.phases, F8_BITS, jb->cfg.filter.hashes,
            (unsigned long long)jb->cfg.filter.sigma);
    if (isfinite(model))
        fprintf(fp, "%.10g", model);
    else
        fputs("NaN", fp);
    fprintf(fp, ",%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%u,%llu", r->fp.mean,
            r->fp.ci_low, r->fp.ci_high, r->fn.mean, r->fn.ci_low, r->fn.ci_high,
            r->fp_first.mean, r->fp_each.mean, r->messages_per_cycle.mean, r->epochs,
            (unsigned long long)jb->cfg.arrivals);
    /* the false-negative model (docs/models.md 8.3), last column */
    double mfn = with_model ? repro_model_fn(&jb->cfg) : NAN;
    if (isfinite(mfn))
        fprintf(fp, ",%.10g\n", mfn);
    else
        fputs(",NaN\n", fp);
}

#define F8_COLS                                                                                  \
    "phases,bits,k,sigma,model_fp,fp_mean,fp_lo,fp_hi,fn_mean,fn_lo,fn_hi,fp_first,fp_each,"    \
    "messages_per_cycle,epochs,arrivals_per_epoch,model_fn\n"

int repro_fn(repro_ctx *c)
{
    const repro_sizes *sz = &c->sz;
    rbf_plan plans[F8_NE];
    int rc = 0;
    for (size_t e = 0; e < F8_NE && rc == 0; e++) {
        rbf_plan_options o;
        rbf_plan_options_init(&o);
        o.max_hashes = sz->max_hashes;
        rc = rbf_plan_memory(F8_BITS, f8_eps[e], &o, &plans[e]);
        if (rc == 0 && (!plans[e].sigma_bounded.feasible || !plans[e].two_phase.feasible))
            rc = -1;
    }
    if (rc != 0)
        return cli_fail("reproduce", "planner failed for fig8: status %d", rc);
    size_t ngrid = F8_NW * F8_NE * 2, n = ngrid + F8_NL * 2;
    sim_job *jobs = calloc(n, sizeof *jobs);
    if (!jobs)
        return cli_fail("reproduce", "out of memory");
    size_t j = 0;
    for (size_t w = 0; w < F8_NW && rc == 0; w++)
        for (size_t e = 0; e < F8_NE && rc == 0; e++)
            for (unsigned ph = 1; ph <= 2; ph++, j++) {
                sim_job *jb = &jobs[j];
                sim_job_init(jb, c, 8, j);
                const char *why = NULL;
                rc = rbf_sim_workload_parse(f8_wl[w], &jb->cfg.workload, &why);
                if (rc != 0) {
                    cli_fail("reproduce", "workload '%s': %s", f8_wl[w], why ? why : "invalid");
                    break;
                }
                f8_setup(jb, sz, &plans[e], ph);
            }
    for (size_t l = 0; l < F8_NL && rc == 0; l++)
        for (unsigned ph = 1; ph <= 2; ph++, j++) {
            sim_job *jb = &jobs[j];
            sim_job_init(jb, c, 8, j);
            jb->cfg.workload.kind = RBF_SIM_FADING;
            jb->cfg.workload.new_fraction = 0.25;
            jb->cfg.workload.lifetime = f8_life[l];
            f8_setup(jb, sz, &plans[F8_LIFE_EPS_INDEX], ph);
        }
    if (rc != 0 || run_jobs(c, "fig8 simulations", jobs, n) != 0) {
        free_jobs(jobs, n);
        return -1;
    }

    FILE *fp = repro_open(c, "fig8.csv");
    if (fp) {
        fputs("workload,eps," F8_COLS, fp);
        /* One run of rows per (workload, phases) so gnuplot joins them. */
        for (size_t w = 0; w < F8_NW; w++)
            for (unsigned ph = 1; ph <= 2; ph++)
                for (size_t e = 0; e < F8_NE; e++) {
                    fprintf(fp, "%s,%g,", f8_wl[w], f8_eps[e]);
                    f8_row(fp, &jobs[(w * F8_NE + e) * 2 + ph - 1], c->mode != REPRO_QUICK);
                }
        rc |= repro_close(c, fp, "fig8.csv");
    } else {
        rc = -1;
    }
    fp = repro_open(c, "fig8_lifetime.csv");
    if (fp) {
        fputs("lifetime,eps," F8_COLS, fp);
        for (unsigned ph = 1; ph <= 2; ph++)
            for (size_t l = 0; l < F8_NL; l++) {
                fprintf(fp, "%u,%g,", f8_life[l], F8_LIFE_EPS);
                f8_row(fp, &jobs[ngrid + 2 * l + ph - 1], c->mode != REPRO_QUICK);
            }
        rc |= repro_close(c, fp, "fig8_lifetime.csv");
    } else {
        rc = -1;
    }

    /* ---- claims */
    unsigned grid_lower = 0, grid_higher = 0, life_lower = 0, life_higher = 0;
    unsigned model_in = 0, model_n = 0;
    double best_gain = 0, best_life = 0;
    unsigned max_life_lower = 0, min_life_higher = 0;
    for (size_t i = 0; i < n; i += 2) {
        const rbf_sim_result *r1 = &jobs[i].res, *r2 = &jobs[i + 1].res;
        int cmp = fn_compare(r1, r2);
        double model = NAN;
        if (rbf_sim_model(&jobs[i].cfg, &model, NULL) == RBF_OK && isfinite(model)) {
            model_n++;
            model_in += (unsigned)inside(model, &r1->fp);
        }
        if (i < ngrid) {
            grid_lower += cmp > 0;
            grid_higher += cmp < 0;
            continue;
        }
        unsigned life = f8_life[(i - ngrid) / 2];
        if (cmp > 0) {
            life_lower++;
            if (life > max_life_lower)
                max_life_lower = life;
        } else if (cmp < 0) {
            life_higher++;
            if (min_life_higher == 0 || life < min_life_higher)
                min_life_higher = life;
        }
        double gain = r2->fn.mean > 0 ? r1->fn.mean / r2->fn.mean : INFINITY;
        if (gain > best_gain)
            best_gain = gain, best_life = life;
    }

    repro_figure_add(
        c, "fig8",
        repro_strdupf("Fig. 8 (beyond the paper): false negatives of one- and two-phase filters"),
        repro_strdupf(
            "Both filters have M = %u bits in all (two-phase: two of %u) and are sized by the "
            "planner for the same average false-positive rate ε (best k and σ each). The "
            "false-negative rate is the share of repeat arrivals (the message arrived earlier "
            "in the epoch) that the filter reports new because it forgot the message when it "
            "recycled. Top: against ε, on uniform and Zipf (s = 1) arrivals over 4000 messages "
            "and a fading workload (`%s`: 25%% brand-new messages, repeats of recent messages "
            "with a mean lifetime of 2000 arrivals; definition in docs/simulator.md). Bottom: "
            "against the fading workload's lifetime L at ε = %g: the two-phase filter always "
            "remembers the whole previous cycle, so it wins when repeats come back soon, and "
            "loses when they come back after more messages than its smaller cycles hold. %u "
            "epochs of %llu arrivals after %llu warm-up arrivals per point. The measured "
            "false-positive rates are in the CSV files (`fp_mean`, count-instance).",
            F8_BITS, F8_BITS / 2, f8_wl[2], F8_LIFE_EPS, sz->fn_epochs,
            (unsigned long long)sz->fn_arrivals, (unsigned long long)(sz->fn_arrivals / 5)),
        repro_strdupf("`fig8.csv` (against ε), `fig8_lifetime.csv` (against L)"));
    write_fig8_gp(c);

    char life_text[160];
    if (life_lower == 0)
        snprintf(life_text, sizeof life_text, "never lower on the lifetime sweep");
    else
        snprintf(life_text, sizeof life_text,
                 "lower for lifetimes up to L = %u arrivals (up to %.0f times fewer, at L = "
                 "%.0f)",
                 max_life_lower, best_gain, best_life);
    repro_claim_add(
        c, "fn_two_phase_lower",
        "A two-phase filter often has significantly fewer false negatives than a one-phase "
        "filter of the same total memory (here: at the same target ε, with non-overlapping 99% "
        "intervals, on at least one workload)",
        "§II-C, §V-C (stated, not measured)",
        "\"its corresponding False Negative rates will often be significantly lower\"",
        grid_lower + life_lower > 0,
        "The paper gives no measurement. Which filter forgets less depends on how soon repeats "
        "come back (Fig. 8, bottom): \"often\" holds for short-range repeats only.",
        "two-phase lower at %u and higher at %u of %zu lifetimes of the fading workload (ε = "
        "%g): %s%s%u; on uniform, Zipf and fading L = 2000: lower at %u, higher at %u of %zu "
        "(workload, ε) points",
        life_lower, life_higher, (size_t)F8_NL, F8_LIFE_EPS, life_text,
        min_life_higher ? ", higher from L = " : "", min_life_higher, grid_lower, grid_higher,
        (size_t)(F8_NW * F8_NE));
    /* the false-negative model (docs/models.md 8.3) against every point:
     * inside the 99% interval widened by 2% relative, or within 2% of the
     * simulated rate; Zipf separately (a known deviation) */
    {
        unsigned fin = 0, fnn = 0, zin = 0, zn = 0;
        double fworst = 0;
        if (c->mode != REPRO_QUICK)
            for (size_t i = 0; i < n; i++) {
                const rbf_sim_result *r = &jobs[i].res;
                double m = repro_model_fn(&jobs[i].cfg);
                if (!isfinite(m))
                    continue;
                int ok = (m >= r->fn.ci_low * 0.98 && m <= r->fn.ci_high * 1.02) ||
                         fabs(m - r->fn.mean) <= 0.02 * r->fn.mean;
                if (jobs[i].cfg.workload.kind == RBF_SIM_ZIPF) {
                    zn++;
                    zin += (unsigned)ok;
                    continue;
                }
                fnn++;
                fin += (unsigned)ok;
                double rel = r->fn.mean > 0 ? fabs(m - r->fn.mean) / r->fn.mean : 0;
                if (rel > fworst)
                    fworst = rel;
            }
        if (fnn) /* --quick runs leave the model out, and the claim with it */
            repro_claim_add(c, "fn_model_matches_simulation",
                        "The false-negative model (rbf model --fn) agrees with the simulation on "
                        "the uniform and fading points of Fig. 8 (inside the 99% interval widened "
                        "by 2%, or within 2% of the simulated rate)",
                        "beyond the paper", "(none)",
                        fin == fnn,
                        "Zipf is a known deviation of the mean field (docs/models.md 8.3); left "
                        "out of --quick runs (the model takes seconds per point).",
                        "%u of %u uniform/fading points (largest relative gap %.1f%%); Zipf: %u "
                        "of %u",
                        fin, fnn, 100 * fworst, zin, zn);
    }
    repro_claim_add(c, "count_instance_distribution_free",
                    "The count-instance rate does not depend on the arrival distribution: the "
                    "one-phase model f_σ^1 lies inside the 99% interval on uniform, Zipf and "
                    "fading workloads",
                    "§II-E", "\"count-instance is not affected by underlying distribution of "
                             "arriving messages\"",
                    model_n > 0 && binom_tail(model_n - model_in, model_n, 0.01) >= 0.01,
                    "An equality claim at 99% per point, decided like the \"chance\" rows of "
                    "Fig. 3: it fails if the number of misses has binomial probability below "
                    "0.01 for an exact model.",
                    "model inside at %u of %u one-phase points (uniform, Zipf, fading with %zu "
                    "lifetimes; M = %u, planned for ε = 0.001..0.1); P(>= %u misses) = %.3g",
                    model_in, model_n, (size_t)F8_NL + 1, F8_BITS, model_n - model_in,
                    binom_tail(model_n - model_in, model_n, 0.01));

    /* Every simulated point so far (figs. 3, 4 and 8). */
    repro_claim_add(c, "count_instance_most_stringent",
                    "Count-instance is the most stringent count: count-instance ≥ count-each ≥ "
                    "count-first",
                    "§II-E and Appendix", "proved in the appendix (for expected values)",
                    c->cnt_points > 0 && c->cnt_min_p * (double)c->cnt_points >= 0.01,
                    "count-each ≥ count-first holds by construction. count-instance ≥ count-each "
                    "is about expected values, tested per point with a paired one-sided t test "
                    "over epochs of (count-instance − count-each) < 0, and over all points with "
                    "a Bonferroni correction (the claim fails if any point has p < 0.01 / "
                    "points). Where nearly every arrival is new (a pool of 10^6 messages) the "
                    "two are almost equal and their sample means may swap by chance.",
                    "means in the stated order at %zu of %zu simulated points of Figs. 3, 4 and "
                    "8; %zu points with one-sided p < 0.01 (about %.1f expected by chance if "
                    "equal), smallest p = %.3g (Bonferroni threshold %.2g); smallest "
                    "count-instance / count-each = %.4g",
                    c->cnt_ordered, c->cnt_points, c->cnt_violated,
                    0.01 * (double)c->cnt_points, c->cnt_min_p,
                    0.01 / (double)(c->cnt_points ? c->cnt_points : 1),
                    c->cnt_min_instance_over_each);
    free_jobs(jobs, n);
    return rc ? -1 : 0;
}
