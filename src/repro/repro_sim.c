/*
 * repro_sim.c -- simulation points of the reproduce module (figs. 3, 4
 * and 8): every point is one rbf_sim_run (its epochs on one thread); the
 * points run in parallel on the pool, each with its own derived seed.
 * Every simulated point also feeds the count-variant claim (c->cnt).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "cli_util.h"
#include "repro_internal.h"

void repro_sim_job_init(repro_sim_job *j, const repro_ctx *c, unsigned step, size_t index)
{
    memset(j, 0, sizeof *j);
    rbf_sim_config_init(&j->cfg);
    j->cfg.seed = repro_job_seed(c, step, index);
    j->cfg.threads = 1; /* parallelism is across points */
}

static int sim_one(void *arg, size_t i)
{
    repro_sim_job *j = (repro_sim_job *)arg + i;
    j->rc = rbf_sim_run(&j->cfg, &j->res);
    return j->rc;
}

/* Name the first failed point on stderr. */
static void report_failure(const repro_sim_job *jobs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (jobs[i].rc == 0)
            continue;
        const rbf_config *f = &jobs[i].cfg.filter;
        const char *why = NULL;
        rbf_sim_config_check(&jobs[i].cfg, &why);
        cli_fail("reproduce", "simulation failed (M=%llu k=%u sigma=%llu N=%llu phases=%u): %s%s%s",
                 (unsigned long long)f->bits, f->hashes, (unsigned long long)f->sigma,
                 (unsigned long long)f->messages, f->phases, rbf_strerror(jobs[i].rc),
                 why ? ": " : "", why ? why : "");
        return;
    }
}

/* One point of the count-variant check: are the means in the order
 * count-instance >= count-each >= count-first, and is count-instance -
 * count-each, paired across epochs, below 0 with 99% confidence? */
static void count_check_add(repro_count_check *k, const rbf_sim_result *r)
{
    if (r->total.new_arrivals == 0 || r->fp.mean <= 0)
        return; /* no false positive at all: nothing to compare */
    k->points++;
    if (r->fp.mean >= r->fp_each.mean && r->fp_each.mean >= r->fp_first.mean)
        k->ordered++;
    double d[256];
    unsigned ne = r->epochs < 256 ? r->epochs : 256;
    for (unsigned e = 0; e < ne; e++)
        d[e] = r->epoch_rates[e].fp - r->epoch_rates[e].fp_each;
    rbf_sim_stat st;
    if (ne > 1 && rbf_sim_interval(d, ne, 0.99, &st) == RBF_OK) {
        /* one-sided p of "mean difference < 0" from the paired t */
        double se = st.stddev / sqrt((double)ne);
        double pv =
            se > 0 ? gsl_cdf_tdist_P(st.mean / se, (double)(ne - 1)) : (st.mean < 0 ? 0 : 1);
        if (pv < 0.01)
            k->violated++;
        if (k->points == 1 || pv < k->min_p)
            k->min_p = pv;
    }
    double q = r->fp_each.mean > 0 ? r->fp.mean / r->fp_each.mean : INFINITY;
    if (k->points == 1 || q < k->min_instance_over_each)
        k->min_instance_over_each = q;
}

int repro_run_sims(repro_ctx *c, const char *label, repro_sim_job *jobs, size_t n)
{
    if (repro_parallel(c, label, n, sim_one, jobs) != 0) {
        report_failure(jobs, n);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        count_check_add(&c->cnt, &jobs[i].res);
    return 0;
}

void repro_sim_jobs_free(repro_sim_job *jobs, size_t n)
{
    if (!jobs)
        return;
    for (size_t i = 0; i < n; i++)
        rbf_sim_result_free(&jobs[i].res);
    free(jobs);
}

int repro_inside(double v, const rbf_sim_stat *s)
{
    return v >= s->ci_low && v <= s->ci_high;
}

double repro_binom_tail(unsigned x, unsigned n, double p)
{
    return x == 0 ? 1.0 : gsl_cdf_binomial_Q(x - 1, p, n);
}
