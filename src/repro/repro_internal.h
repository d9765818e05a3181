/*
 * repro_internal.h -- shared pieces of the reproduce module: the run
 * context, output files (CSV, gnuplot scripts, figures), the report's
 * figures, claims and notes, the thread pool and the simulation jobs that
 * run on it, and the steps.
 *
 * Each step (repro_figN.c) reads the same way: compute (models, planner,
 * simulations on the pool), data (the CSV files), plot (the figure's
 * caption and gnuplot script) and claims (computed from the data).
 *
 * Layout of the output directory (all names fixed so scripts can rely on
 * them):  report.md, claims.json, figN.csv (+ figN_*.csv), figN.gp,
 * figN.png, figN.svg, gnuplot.log.
 *
 * Out of memory: every function that allocates reports the failure
 * ("out of memory" on stderr, c->failed set) and returns NULL or -1; the
 * steps pass it on and the run ends with exit status 1.
 */
#ifndef RBF_REPRO_INTERNAL_H
#define RBF_REPRO_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rbf_sim.h"
#include "repro.h"

typedef struct repro_sizes {
    /* fig3: sigma-bounded verification (paper: 100,000 x 7 / x 10) */
    uint64_t sigma_arrivals;  /* arrivals per epoch */
    unsigned sigma_epochs1;   /* epochs, one-phase */
    unsigned sigma_epochs2;   /* epochs, two-phase */
    /* fig4: N-bounded bounds (paper: 1,000,000 x 14) */
    uint64_t n_arrivals;
    unsigned n_epochs;
    /* fig8 and the count-variant claim: beyond the paper */
    uint64_t fn_arrivals;
    unsigned fn_epochs;
    /* fig5/fig7: memory sweep 2^m_lo .. 2^m_hi bits */
    unsigned m_log2_lo, m_log2_hi;
    /* fig6/fig7: epsilon sweep points per decade and fixed M */
    unsigned eps_per_decade;
    uint64_t eps_bits;
    unsigned max_hashes; /* planner's k range 1..max_hashes */
} repro_sizes;

/* One figure of the report. */
typedef struct repro_figure {
    char name[16];  /* "fig3": files fig3.gp, fig3.png, fig3.svg */
    char *title;    /* heading in report.md */
    char *caption;  /* paragraph under the figure */
    char *data;     /* the CSV files it is drawn from, comma separated */
    int drawn;      /* 1 if gnuplot produced both images */
} repro_figure;

/* One row of the claims table.  `holds` is always computed by the caller
 * from the data: 1 yes, 0 no, -1 could not be evaluated. */
typedef struct repro_claim {
    char *id;      /* short key for claims.json */
    char *claim;   /* the statement */
    char *where;   /* where the paper makes it */
    char *paper;   /* the paper's figure or number */
    char *ours;    /* this project's number */
    int holds;
    char *note;    /* bound vs equality, caveats; may be NULL */
} repro_claim;

/* The count-variant check over every simulated point of every step
 * (paper section II-E: count-instance >= count-each >= count-first). */
typedef struct repro_count_check {
    size_t points, ordered;
    size_t violated;   /* count-instance below count-each, one-sided p < 0.01 */
    double min_p;      /* smallest one-sided p of that test over all points */
    double min_instance_over_each; /* smallest fp / fp_each seen */
} repro_count_check;

typedef struct repro_ctx {
    const char *out; /* output directory */
    repro_mode mode;
    uint64_t seed;
    unsigned threads;
    repro_sizes sz;
    double t_start; /* monotonic seconds */
    int have_gnuplot;
    char gnuplot_version[96];

    repro_figure figs[16];
    size_t nfigs;
    repro_claim *claims;
    size_t nclaims, cap_claims;
    char **notes; /* paragraphs for the end of the report */
    size_t nnotes, cap_notes;
    int failed; /* a step failed: exit 1 after writing what we have */

    repro_count_check cnt; /* filled by repro_run_sims */
} repro_ctx;

/* ---- small helpers (repro_out.c) */

/* printf into a fresh heap string (release with free), or NULL when out
 * of memory. */
char *repro_strdupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *repro_vstrdupf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* Report an allocation failure: "out of memory" on stderr, c->failed set.
 * Returns -1. */
int repro_oom(repro_ctx *c);

/* A 64-bit seed for job `index` of step `step`, from the run's seed:
 * independent of thread scheduling so runs are reproducible. */
uint64_t repro_job_seed(const repro_ctx *c, unsigned step, uint64_t index);

/* Progress line on stderr: "rbf reproduce: [step] message". */
void repro_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- files in the output directory (repro_out.c) */

/* Open DIR/name for writing; on failure prints why, sets c->failed and
 * returns NULL. */
FILE *repro_open(repro_ctx *c, const char *name);

/* Close a file from repro_open, checking for write errors.  Returns 0 or
 * -1 (message printed, c->failed set). */
int repro_close(repro_ctx *c, FILE *fp, const char *name);

/* Begin a gnuplot script DIR/name.gp drawing name.png and name.svg of the
 * given pixel size.  The caller writes the plot commands (they run once per
 * format inside a loop) and ends with repro_gp_end, which closes the file
 * and runs gnuplot in DIR.  Returns NULL on failure (reported). */
FILE *repro_gp_begin(repro_ctx *c, const char *name, int width, int height);
int repro_gp_end(repro_ctx *c, FILE *gp, const char *name);

/* ---- the report's items (repro_report.c).  Each returns 0, or -1 when
 * out of memory (reported; the item is left out). */

/* Register a figure: title, caption and data are heap strings from
 * repro_strdupf, owned by ctx from here on (also on failure, when any of
 * them is NULL). */
int repro_figure_add(repro_ctx *c, const char *name, char *title, char *caption, char *data);

/* Add a claim; the strings are copied. `note` may be NULL. */
int repro_claim_add(repro_ctx *c, const char *id, const char *claim, const char *where,
                    const char *paper, int holds, const char *note, const char *ours_fmt, ...)
    __attribute__((format(printf, 8, 9)));

/* Add a paragraph to the report's notes section (copied). */
int repro_note(repro_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Write report.md and claims.json.  Returns 0 or -1. */
int repro_write_report(repro_ctx *c, double seconds);

void repro_ctx_free(repro_ctx *c);

/* ---- a pool of threads over independent jobs 0..n-1 (repro_pool.c).
 * fn(arg, i) returns 0 or a negative code; the first failure stops handing
 * out jobs and is returned.  Progress (jobs done of n) is drawn under a
 * lock. */
int repro_parallel(repro_ctx *c, const char *label, size_t n, int (*fn)(void *arg, size_t i),
                   void *arg);

/* ---- simulation points on the pool (repro_sim.c) */

typedef struct repro_sim_job {
    rbf_sim_config cfg;
    rbf_sim_result res;
    int rc;
} repro_sim_job;

/* A job of step `step` with the simulator's defaults, its own seed and one
 * thread (parallelism is across points). */
void repro_sim_job_init(repro_sim_job *j, const repro_ctx *c, unsigned step, size_t index);

/* Run n jobs on the pool.  On failure names the first failed point and
 * returns -1; on success adds every point to c->cnt and returns 0. */
int repro_run_sims(repro_ctx *c, const char *label, repro_sim_job *jobs, size_t n);

/* Release the results and the array (NULL is a no-op). */
void repro_sim_jobs_free(repro_sim_job *jobs, size_t n);

/* Is v inside the 99% interval of s? */
int repro_inside(double v, const rbf_sim_stat *s);

/* P(X >= x) for X ~ Binomial(n, p): how surprising `x` misses are. */
double repro_binom_tail(unsigned x, unsigned n, double p);

/* ---- the steps (repro_figN.c).  Each returns 0 or -1 (reported). */
int repro_fig3(repro_ctx *c);   /* sigma-bounded model vs simulation */
int repro_fig4(repro_ctx *c);   /* N-bounded bounds vs simulation */
int repro_fig567(repro_ctx *c); /* capacity vs M, vs eps, one/two-phase ratio */
int repro_fig8(repro_ctx *c);   /* false negatives and count variants (simulation) */
int repro_fig9(repro_ctx *c);   /* hashing/retaining variants (model) */
int repro_fig10(repro_ctx *c);  /* blocked layout vs flat (models, simulation) */
int repro_fig11(repro_ctx *c);  /* forgetting against the gap, model and filter */
struct rbf_sim_config;
/* rbf_model_fn for a simulated configuration, NaN if none (fig8's lines;
 * repro_fig11.c) */
double repro_model_fn(const struct rbf_sim_config *cfg);

#endif
