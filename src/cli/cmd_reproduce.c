/*
 * cmd_reproduce.c -- `rbf reproduce`: regenerate the paper's figures and a
 * report whose claims table is computed from the data.
 *
 * This file parses the options only; the work is the reproduce module's
 * (src/repro/repro.h).
 */
#include "cli.h"
#include "repro.h"

static void usage(FILE *fp)
{
    fprintf(fp,
            "Usage: rbf reproduce [--out DIR] [--quick|--full] [--threads T] [--seed S]\n"
            "\n"
            "Regenerate the paper's results: figures 3-7 (models against the simulated\n"
            "real filter, capacity comparisons), three figures beyond the paper (false\n"
            "negatives of one- vs two-phase filters; hashing/retaining variants; blocked\n"
            "against flat layout), and\n"
            "DIR/report.md with a claims table computed from the data (also claims.json).\n"
            "Each figure is written as figN.csv (data), figN.gp (gnuplot script),\n"
            "figN.png and figN.svg.\n"
            "\n"
            "Options:\n"
            "  --out DIR      output directory, created if missing (default: report)\n"
            "  --quick        small samples, a few seconds (for tests)\n"
            "  --full         the paper's sample sizes or larger, and a wider M sweep\n"
            "  --threads T    worker threads for the simulations, 1 to 64; 0 (the default)\n"
            "                 = every online processor, at most 64\n"
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

int cmd_reproduce(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"out", required_argument, NULL, 'o'},   {"quick", no_argument, NULL, 'q'},
        {"full", no_argument, NULL, 'f'},        {"threads", required_argument, NULL, 't'},
        {"seed", required_argument, NULL, 's'},  {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    repro_options o;
    repro_options_init(&o);
    int quick = 0, full = 0;

    cli_getopt_reset();
    int opt, rc;
    while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'o':
            if (!*optarg)
                return cli_usage("reproduce", "option '--out' needs a directory");
            o.out = optarg;
            break;
        case 'q':
            quick = 1;
            o.mode = REPRO_QUICK;
            break;
        case 'f':
            full = 1;
            o.mode = REPRO_FULL;
            break;
        case 't':
            if ((rc = cli_opt_threads("reproduce", optarg, 64, &o.threads)))
                return rc;
            if (o.threads == 0)
                o.threads = cli_online_processors(64);
            break;
        case 's':
            if ((rc = cli_opt_uint("reproduce", "--seed", optarg, 0, UINT64_MAX, &o.seed)))
                return rc;
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
    return repro_run(&o) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}
