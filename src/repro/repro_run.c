/*
 * repro_run.c -- the driver of the reproduce module: choose the sample
 * sizes, create the output directory, run the steps in order and write the
 * report.  A claim that does not hold is a result, not an error: the run
 * fails only when a step could not run or a file could not be written.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_util.h"
#include "repro.h"
#include "repro_internal.h"

/* Sample sizes per mode, indexed by repro_mode. */
static const repro_sizes mode_sizes[] = {
    [REPRO_QUICK] = {.sigma_arrivals = 20000, .sigma_epochs1 = 4, .sigma_epochs2 = 4,
                     .n_arrivals = 50000, .n_epochs = 4, .fn_arrivals = 50000, .fn_epochs = 3,
                     .m_log2_lo = 8, .m_log2_hi = 14, .eps_per_decade = 2,
                     .eps_bits = 1u << 12, .max_hashes = 20},
    [REPRO_DEFAULT] = {.sigma_arrivals = 100000, .sigma_epochs1 = 7, .sigma_epochs2 = 10,
                       .n_arrivals = 250000, .n_epochs = 14, .fn_arrivals = 200000,
                       .fn_epochs = 7, .m_log2_lo = 8, .m_log2_hi = 20, .eps_per_decade = 4,
                       .eps_bits = 1u << 16, .max_hashes = 24},
    [REPRO_FULL] = {.sigma_arrivals = 100000, .sigma_epochs1 = 30, .sigma_epochs2 = 30,
                    .n_arrivals = 1000000, .n_epochs = 14, .fn_arrivals = 1000000,
                    .fn_epochs = 14, .m_log2_lo = 8, .m_log2_hi = 22, .eps_per_decade = 8,
                    .eps_bits = 1u << 20, .max_hashes = 28},
};

void repro_options_init(repro_options *o)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    o->out = "report";
    o->mode = REPRO_DEFAULT;
    o->seed = 1;
    o->threads = ncpu > 0 ? (unsigned)(ncpu > 64 ? 64 : ncpu) : 1;
}

/* mkdir -p: the path and its parents.  Returns 0, or -1 with errno set. */
static int make_dir(const char *path)
{
    size_t len = strlen(path);
    char *p = malloc(len + 1);
    if (!p) {
        errno = ENOMEM;
        return -1;
    }
    memcpy(p, path, len + 1);
    int rc = 0;
    for (char *q = p + 1; q < p + len && rc == 0; q++) {
        if (*q != '/')
            continue;
        *q = 0;
        if (mkdir(p, 0777) != 0 && errno != EEXIST)
            rc = -1;
        *q = '/';
    }
    if (rc == 0 && mkdir(p, 0777) != 0 && errno != EEXIST)
        rc = -1;
    struct stat st;
    if (rc == 0 && stat(p, &st) != 0)
        rc = -1;
    if (rc == 0 && !S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        rc = -1;
    }
    int saved = errno;
    free(p);
    errno = saved;
    return rc;
}

/* Is gnuplot on PATH?  Records its version line for the report. */
static int find_gnuplot(repro_ctx *c)
{
    FILE *p = popen("gnuplot --version 2>/dev/null", "r");
    if (!p)
        return 0;
    char line[96] = "";
    if (!fgets(line, sizeof line, p))
        line[0] = 0;
    int st = pclose(p);
    line[strcspn(line, "\n")] = 0;
    snprintf(c->gnuplot_version, sizeof c->gnuplot_version, "%s", line);
    return st == 0 && line[0] != 0;
}

static const char *mode_flag(repro_mode m)
{
    return m == REPRO_QUICK ? "--quick" : m == REPRO_FULL ? "--full" : "default";
}

/* The steps, in the order of the report. */
static const struct {
    const char *what;
    int (*run)(repro_ctx *);
} steps[] = {
    {"fig3: sigma-bounded model against simulation", repro_fig3},
    {"fig4: N-bounded bounds against simulation", repro_fig4},
    {"fig5-7: capacity by policy against M and epsilon", repro_fig567},
    {"fig8: false negatives and count variants (simulation)", repro_fig8},
    {"fig9: hashing and retaining variants (models)", repro_fig9},
    {"fig10: blocked layout against flat (models, simulation)", repro_fig10},
    {"fig11: forgetting against the gap, one- vs two-phase (model and filter)", repro_fig11},
};
#define NSTEPS (sizeof steps / sizeof steps[0])

static void run_steps(repro_ctx *c)
{
    for (size_t i = 0; i < NSTEPS; i++) {
        double t0 = cli_wall_seconds();
        repro_log("[%zu/%zu] %s", i + 1, NSTEPS, steps[i].what);
        int rc = steps[i].run(c);
        double dt = cli_wall_seconds() - t0;
        if (rc != 0) {
            c->failed = 1;
            repro_log("[%zu/%zu] FAILED after %.1f s", i + 1, NSTEPS, dt);
            repro_note(c, "Step \"%s\" failed in this run: its figure and claims are missing "
                          "or incomplete (see the messages on stderr).",
                       steps[i].what);
        } else {
            repro_log("[%zu/%zu] done in %.1f s", i + 1, NSTEPS, dt);
        }
    }
}

int repro_run(const repro_options *o)
{
    repro_ctx c;
    memset(&c, 0, sizeof c);
    c.out = o->out;
    c.mode = o->mode;
    c.seed = o->seed;
    c.threads = o->threads ? o->threads : 1;
    c.sz = mode_sizes[o->mode];
    c.t_start = cli_wall_seconds();
    if (make_dir(c.out) != 0) {
        cli_fail("reproduce", "cannot create directory %s: %s", c.out, strerror(errno));
        return -1;
    }
    c.have_gnuplot = find_gnuplot(&c);
    if (!c.have_gnuplot) {
        cli_fail("reproduce", "gnuplot not found: writing data and scripts without figures "
                              "(install Debian's gnuplot-nox)");
        c.failed = 1;
    }
    /* A fresh log per run: gnuplot appends to it. */
    FILE *lg = repro_open(&c, "gnuplot.log");
    if (lg)
        repro_close(&c, lg, "gnuplot.log");

    repro_log("writing into %s/ (%s run, seed %llu, %u thread%s)", c.out, mode_flag(c.mode),
              (unsigned long long)c.seed, c.threads, c.threads == 1 ? "" : "s");
    run_steps(&c);
    if (c.have_gnuplot)
        repro_note(&c, "Figures drawn with %s.", c.gnuplot_version);

    double seconds = cli_wall_seconds() - c.t_start;
    if (repro_write_report(&c, seconds) != 0)
        c.failed = 1;
    size_t yes = 0, no = 0;
    for (size_t i = 0; i < c.nclaims; i++)
        yes += c.claims[i].holds > 0, no += c.claims[i].holds == 0;
    repro_log("%s/report.md: %zu claims hold, %zu do not; %.1f s in all", c.out, yes, no,
              seconds);
    int failed = c.failed;
    repro_ctx_free(&c);
    return failed ? -1 : 0;
}
