/*
 * cmd_reproduce.c -- `rbf reproduce`: regenerate the paper's figures and a
 * report whose claims table is computed from the data (issue 5).
 *
 * The steps live in reproduce_*.c; this file parses options, chooses the
 * sample sizes, runs the steps in order and writes the report.  A claim
 * that does not hold is a result, not an error: the exit status is 1 only
 * when a step could not run or a file could not be written.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "reproduce_common.h"

static void usage(FILE *fp)
{
    fprintf(fp,
            "Usage: rbf reproduce [--out DIR] [--quick|--full] [--threads T] [--seed S]\n"
            "\n"
            "Regenerate the paper's results: figures 3-7 (models against the simulated\n"
            "real filter, capacity comparisons), two figures beyond the paper (false\n"
            "negatives of one- vs two-phase filters; hashing/retaining variants), and\n"
            "DIR/report.md with a claims table computed from the data (also claims.json).\n"
            "Each figure is written as figN.csv (data), figN.gp (gnuplot script),\n"
            "figN.png and figN.svg.\n"
            "\n"
            "Options:\n"
            "  --out DIR      output directory, created if missing (default: report)\n"
            "  --quick        small samples, a few seconds (for tests)\n"
            "  --full         the paper's sample sizes or larger, and a wider M sweep\n"
            "  --threads T    worker threads for the simulations (default: online CPUs)\n"
            "  --seed S       seed of every random stream (default: 1); same seed and\n"
            "                 sizes give the same numbers, whatever T is\n"
            "  --help         this text\n"
            "\n"
            "Needs gnuplot (Debian: gnuplot-nox) to draw the figures; without it the data,\n"
            "scripts and report are still written and the exit status is 1.\n"
            "Progress goes to stderr.  Exit status: 0 everything written, 1 a step or a\n"
            "file failed, 2 usage error.  A claim that does not hold is reported, not an\n"
            "error.\n");
}

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

static void choose_sizes(repro_mode m, repro_sizes *s)
{
    *s = mode_sizes[m];
}

/* mkdir -p for one path (the parents too). */
static int make_dir(const char *path)
{
    char *p = repro_strdupf("%s", path);
    int rc = 0;
    for (char *q = p + 1; *q && rc == 0; q++) {
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
    if (rc == 0 && (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)))
        rc = -1;
    repro_free_str(p);
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

int cmd_reproduce(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"out", required_argument, NULL, 'o'},   {"quick", no_argument, NULL, 'q'},
        {"full", no_argument, NULL, 'f'},        {"threads", required_argument, NULL, 't'},
        {"seed", required_argument, NULL, 's'},  {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    repro_ctx c;
    memset(&c, 0, sizeof c);
    c.out = "report";
    c.mode = REPRO_DEFAULT;
    c.seed = 1;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    c.threads = ncpu > 0 ? (unsigned)(ncpu > 64 ? 64 : ncpu) : 1;
    int quick = 0, full = 0;
    const char *err;
    uint64_t v;

    cli_getopt_reset();
    int opt, rc;
    while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'o':
            if (!*optarg)
                return cli_usage("reproduce", "option '--out' needs a directory");
            c.out = optarg;
            break;
        case 'q':
            quick = 1;
            c.mode = REPRO_QUICK;
            break;
        case 'f':
            full = 1;
            c.mode = REPRO_FULL;
            break;
        case 't':
            if (cli_parse_uint(optarg, 1, 64, &v, &err) != 0)
                return cli_usage("reproduce", "--threads '%s': %s (1..64)", optarg, err);
            c.threads = (unsigned)v;
            break;
        case 's':
            if (cli_parse_uint(optarg, 0, UINT64_MAX, &v, &err) != 0)
                return cli_usage("reproduce", "--seed '%s': %s", optarg, err);
            c.seed = v;
            break;
        case 'h':
            usage(stdout);
            return cli_finish_stdout("reproduce");
        default:
            return cli_bad_option("reproduce", argc, argv, longopts);
        }
    }
    if ((rc = cli_no_operands("reproduce", argc, argv)))
        return rc;
    if (quick && full)
        return cli_usage("reproduce", "--quick and --full exclude each other");

    choose_sizes(c.mode, &c.sz);
    c.t_start = cli_wall_seconds();
    if (make_dir(c.out) != 0)
        return cli_fail("reproduce", "cannot create directory %s: %s", c.out, strerror(errno));
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

    repro_log("writing into %s/ (%s run, seed %llu, %u thread%s)", c.out,
              quick ? "--quick" : full ? "--full" : "default", (unsigned long long)c.seed,
              c.threads, c.threads == 1 ? "" : "s");

    static const struct {
        const char *what;
        int (*run)(repro_ctx *);
    } steps[] = {
        {"fig3: sigma-bounded model against simulation", repro_fig3},
        {"fig4: N-bounded bounds against simulation", repro_fig4},
        {"fig5-7: capacity by policy against M and epsilon", repro_fig567},
        {"fig8: false negatives and count variants (simulation)", repro_fn},
        {"fig9: hashing and retaining variants (models)", repro_variants},
        {"fig10: forgetting against the gap, one- vs two-phase (model and filter)", repro_fn_model},
    };
    size_t nsteps = sizeof steps / sizeof steps[0];
    for (size_t i = 0; i < nsteps; i++) {
        double t0 = cli_wall_seconds();
        repro_log("[%zu/%zu] %s", i + 1, nsteps, steps[i].what);
        rc = steps[i].run(&c);
        double dt = cli_wall_seconds() - t0;
        if (rc != 0) {
            c.failed = 1;
            repro_log("[%zu/%zu] FAILED after %.1f s", i + 1, nsteps, dt);
            repro_note(&c, "Step \"%s\" failed in this run: its figure and claims are missing "
                           "or incomplete (see the messages on stderr).",
                       steps[i].what);
        } else {
            repro_log("[%zu/%zu] done in %.1f s", i + 1, nsteps, dt);
        }
    }
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
    return failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
