/*
 * reproduce_common.h -- shared pieces of `rbf reproduce`: the run context,
 * output files (CSV, gnuplot scripts, figures), the claims table and the
 * report, plus a small thread pool for independent simulation points.
 *
 * Layout of the output directory (all names fixed so scripts can rely on
 * them):  report.md, claims.json, figN.csv (+ figN_*.csv), figN.gp,
 * figN.png, figN.svg, gnuplot.log.
 */
#ifndef RBF_REPRODUCE_COMMON_H
#define RBF_REPRODUCE_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Run sizes.  REPRO_QUICK is for the CLI test, REPRO_DEFAULT for
 * `make reproduce`, REPRO_FULL at the paper's sample sizes (MODEL.md 7). */
typedef enum { REPRO_QUICK = 0, REPRO_DEFAULT = 1, REPRO_FULL = 2 } repro_mode;

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

/* A note for the end of the report (caveats, choices). */
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
    char **notes;
    size_t nnotes, cap_notes;
    int failed; /* a step failed: exit 1 after writing what we have */

    /* Count-variant check over every simulated point of every step
     * (paper section II-E: count-instance >= count-each >= count-first). */
    size_t cnt_points, cnt_ordered;
    size_t cnt_violated; /* count-instance below count-each, one-sided p < 0.01 */
    double cnt_min_p;    /* smallest one-sided p of that test over all points */
    double cnt_min_instance_over_each; /* smallest fp / fp_each seen */
} repro_ctx;

/* ---- small helpers */

/* printf into a fresh heap string (never NULL: aborts the step on OOM by
 * returning a static empty string, which repro_free_str ignores). */
char *repro_strdupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void repro_free_str(char *s);

/* A 64-bit seed for job `index` of step `step`, from the run's seed:
 * independent of thread scheduling so runs are reproducible. */
uint64_t repro_job_seed(const repro_ctx *c, unsigned step, uint64_t index);

/* Progress line on stderr: "rbf reproduce: [step] message". */
void repro_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- files in the output directory */

/* Open DIR/name for writing; on failure prints why and returns NULL. */
FILE *repro_open(repro_ctx *c, const char *name);

/* Close a file from repro_open, checking for write errors.  Returns 0 or
 * -1 (message printed, c->failed set). */
int repro_close(repro_ctx *c, FILE *fp, const char *name);

/* Begin a gnuplot script DIR/name.gp drawing name.png and name.svg of the
 * given pixel size.  The caller writes the plot commands (they run once per
 * format inside a loop) and ends with repro_gp_end, which closes the file
 * and runs gnuplot in DIR.  Returns NULL on failure. */
FILE *repro_gp_begin(repro_ctx *c, const char *name, int width, int height);
int repro_gp_end(repro_ctx *c, FILE *gp, const char *name);

/* Register a figure for the report (title, caption and data are printf
 * strings already formatted by the caller; ownership passes to ctx). */
void repro_figure_add(repro_ctx *c, const char *name, char *title, char *caption, char *data);

/* Add a claim; the strings are copied. `note` may be NULL. */
void repro_claim_add(repro_ctx *c, const char *id, const char *claim, const char *where,
                     const char *paper, int holds, const char *note, const char *ours_fmt, ...)
    __attribute__((format(printf, 8, 9)));

/* Add a paragraph to the report's notes section (copied). */
void repro_note(repro_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Write report.md and claims.json.  Returns 0 or -1. */
int repro_write_report(repro_ctx *c, double seconds);

void repro_ctx_free(repro_ctx *c);

/* ---- statistics across epochs */

/* Mean and two-sided Student-t confidence interval (level, e.g. 0.99) of
 * n values; n == 1 gives a zero-width interval. */
void repro_mean_ci(const double *v, size_t n, double level, double *mean, double *lo, double *hi);

/* ---- a pool of threads over independent jobs 0..n-1.  fn(arg, i) returns
 * 0 or a negative code; the first failure stops handing out jobs and is
 * returned.  Progress (jobs done of n) is drawn under a lock. */
int repro_parallel(repro_ctx *c, const char *label, size_t n, int (*fn)(void *arg, size_t i),
                   void *arg);

/* ---- the steps (reproduce_*.c) */
int repro_fig3(repro_ctx *c);   /* sigma-bounded model vs simulation */
int repro_fig4(repro_ctx *c);   /* N-bounded bounds vs simulation */
int repro_fig567(repro_ctx *c); /* capacity vs M, vs eps, one/two-phase ratio */
int repro_variants(repro_ctx *c); /* hashing/retaining variants (model) */
int repro_fn(repro_ctx *c);     /* false negatives and count variants (simulation) */
int repro_fn_model(repro_ctx *c); /* forgetting against the gap, model and filter (fig10) */
struct rbf_sim_config;
/* rbf_model_fn for a simulated configuration, NaN if none (fig8's lines) */
double repro_model_fn(const struct rbf_sim_config *cfg);

#endif
