/*
 * dedup_opts.c -- the command line of `rbf dedup`: its help, its options,
 * and the checks of how they combine.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "dedup.h"
#include "fields.h"

#define CMD "dedup"

static void usage(FILE *fp)
{
    fprintf(fp,
            "Usage: rbf dedup [OPTIONS] [FILE...]\n"
            "\n"
            "Write each line of the FILEs (or standard input; '-' is standard input) that\n"
            "has not been seen before, in order, using a fixed amount of memory: a\n"
            "recycling Bloom filter sized by the planner for a target average\n"
            "false-positive rate.  A false positive drops a new line; a recycle forgets\n"
            "old lines, so a repeat far enough apart may come back.\n"
            "\n"
            "The filter:\n"
            "  --memory SIZE     filter memory (default 64MiB); suffixes K M G (x1000^n),\n"
            "                    KiB MiB GiB (x1024^n), optional B\n"
            "  --fp EPS          target average false-positive rate, 0 < EPS < 1\n"
            "                    (default 0.001): the chance that a new line is dropped\n"
            "  --phases 1|2      1: one filter (default); 2: two halves, the frozen half\n"
            "                    keeps recent lines across a recycle\n"
            "  --seed S          hash seed, for a reproducible run (default: random)\n"
            "  --layout L        flat or blocked (all k bits of a line in one 64-byte\n"
            "                    block: a few times faster, a somewhat higher rate).\n"
            "                    Default: blocked, sized by the blocked planner, when its\n"
            "                    lines per cycle at EPS are within 5%% of the flat plan's\n"
            "                    in the same memory, else flat (always flat with\n"
            "                    --phases 2).  Blocked memory is rounded down to a\n"
            "                    multiple of 64 bytes (128 with --phases 2)\n"
            "\n"
            "A shared filter (one for many processes and hosts, in Redis):\n"
            "  --redis URL       use the rbf Redis module's filter (docs/redis.md) instead\n"
            "                    of a local one: redis://[user[:password]@]host:port[/db]\n"
            "                    or unix:///path/to/socket (rediss:// is not supported).\n"
            "                    The password may come from the environment variable\n"
            "                    RBF_REDIS_AUTH instead, to keep it out of ps\n"
            "  --key NAME        the filter's key (required with --redis).  It is created\n"
            "                    on first use (RBF.RESERVE from --memory --fp --phases\n"
            "                    --layout --seed; several processes may race, one filter\n"
            "                    results), or used as it is, with a warning on stderr when\n"
            "                    its configuration differs from those options\n"
            "  --on-error MODE   fail (default): a lost server is an error (exit 1, the\n"
            "                    lines of unanswered batches are not written); pass: write\n"
            "                    lines unfiltered while the server is down, say so once on\n"
            "                    stderr, and reconnect every second\n"
            "\n"
            "Keys (what makes two lines the same; the whole line is always written):\n"
            "  --field N         field N (from 1) of the line, as awk's $N\n"
            "  --delimiter C     the field separator, one byte (default: runs of blanks,\n"
            "                    leading ones ignored, as awk; ' ' is that default too);\n"
            "                    \\t, \\0 and \\\\ are accepted\n"
            "  --json-field PATH the value at a dotted PATH (a.b.c) of a JSON object per\n"
            "                    line: a string's decoded content, or any other value's\n"
            "                    compact JSON text.  Invalid JSON or no such path is a\n"
            "                    missing field\n"
            "  --missing MODE    empty (default): a missing field is the empty key, as in\n"
            "                    awk; keep: write every line without the field\n"
            "\n"
            "Output and records:\n"
            "  --repeated        write the lines already seen instead (awk 'seen[$0]++':\n"
            "                    every repeat, not one per group as uniq -d)\n"
            "  -0, --null        records end in NUL, not newline (find -print0)\n"
            "  --stats           print counts, the configuration, both plans and the\n"
            "                    model's predicted false-positive rate on stderr (with\n"
            "                    --redis: the server's RBF.INFO)\n"
            "  --trace-recycles  print 'recycle N line L written W' on stderr at each\n"
            "                    recycle (L: input line that triggered it; slower; local)\n"
            "  --help            this help\n"
            "\n"
            "On a terminal, a progress line (lines, MB/s, recycles) is shown on stderr\n"
            "while files are read; never when stderr is not a terminal.\n"
            "\n"
            "Bytes: a line ends after '\\n'; its key is the line without that '\\n' ('\\r' is\n"
            "kept, so CRLF and LF lines differ); NUL and any other byte are data; a last\n"
            "line without '\\n' is written as it came.  An unreadable FILE is reported and\n"
            "skipped, and the exit status is then 1 (as with cat).\n"
            "\n"
            "Examples:\n"
            "  rbf dedup --memory 256MiB access.log > unique.log\n"
            "  tail -F events | rbf dedup --fp 1e-6 --phases 2\n"
            "  rbf dedup --field 2 --delimiter , orders.csv\n"
            "  rbf dedup --json-field request.id events.jsonl\n"
            "  RBF_REDIS_AUTH=secret rbf dedup --redis redis://dedup.lan:6379 --key events\n"
            "\n"
            "Exit status: 0 success, 1 runtime failure, 2 usage error.\n");
}

enum {
    OPT_MEMORY = 256,
    OPT_FP,
    OPT_PHASES,
    OPT_SEED,
    OPT_STATS,
    OPT_TRACE,
    OPT_HELP,
    OPT_LAYOUT,
    OPT_REDIS,
    OPT_KEY,
    OPT_ON_ERROR,
    OPT_FIELD,
    OPT_DELIM,
    OPT_JSON,
    OPT_MISSING,
    OPT_REPEATED,
};

static const struct option longopts[] = {
    {"memory", required_argument, NULL, OPT_MEMORY},
    {"fp", required_argument, NULL, OPT_FP},
    {"phases", required_argument, NULL, OPT_PHASES},
    {"seed", required_argument, NULL, OPT_SEED},
    {"layout", required_argument, NULL, OPT_LAYOUT},
    {"stats", no_argument, NULL, OPT_STATS},
    {"trace-recycles", no_argument, NULL, OPT_TRACE},
    {"redis", required_argument, NULL, OPT_REDIS},
    {"key", required_argument, NULL, OPT_KEY},
    {"on-error", required_argument, NULL, OPT_ON_ERROR},
    {"field", required_argument, NULL, OPT_FIELD},
    {"delimiter", required_argument, NULL, OPT_DELIM},
    {"json-field", required_argument, NULL, OPT_JSON},
    {"missing", required_argument, NULL, OPT_MISSING},
    {"repeated", no_argument, NULL, OPT_REPEATED},
    {"null", no_argument, NULL, '0'},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* --delimiter: one byte, or \t \0 \\ escapes. */
static int parse_delim(const char *s, int *out)
{
    if (s[0] && !s[1]) {
        *out = (unsigned char)s[0];
        return 0;
    }
    if (s[0] == '\\' && s[1] && !s[2]) {
        switch (s[1]) {
        case 't': *out = '\t'; return 0;
        case '0': *out = '\0'; return 0;
        case '\\': *out = '\\'; return 0;
        default: break;
        }
    }
    return -1;
}

int dedup_parse_options(int argc, char **argv, dedup_opts *o)
{
    memset(o, 0, sizeof *o);
    o->bytes = DEDUP_DEFAULT_MEMORY;
    o->eps = DEDUP_DEFAULT_FP;
    o->phases = 1;
    o->sep = RBF_FIELD_BLANKS;
    int have_delim = 0;
    const char *err;
    cli_getopt_reset();
    int c, rc;
    while ((c = getopt_long(argc, argv, ":0", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_MEMORY:
            if ((rc = cli_opt_bytes(CMD, "--memory", optarg, &o->bytes)))
                return rc;
            break;
        case OPT_FP:
            if ((rc = cli_opt_prob(CMD, "--fp", optarg, &o->eps)))
                return rc;
            break;
        case OPT_PHASES:
            if (cli_parse_uint(optarg, 1, 2, &o->phases, &err) < 0)
                return cli_bad_value(CMD, "--phases", optarg, NULL, "1 or 2");
            break;
        case OPT_SEED:
            if ((rc = cli_opt_uint(CMD, "--seed", optarg, 0, UINT64_MAX, &o->seed)))
                return rc;
            o->have_seed = 1;
            break;
        case OPT_LAYOUT:
            if ((rc = cli_opt_layout(CMD, optarg, &o->blocked)))
                return rc;
            o->layout_given = 1;
            break;
        case OPT_REDIS: o->url = optarg; break;
        case OPT_KEY:
            if (!*optarg)
                return cli_usage(CMD, "--key: the key name is empty");
            o->key = optarg;
            break;
        case OPT_ON_ERROR:
            if (!strcmp(optarg, "pass"))
                o->on_error_pass = 1;
            else if (!strcmp(optarg, "fail"))
                o->on_error_pass = 0;
            else
                return cli_bad_value(CMD, "--on-error", optarg, NULL, "fail or pass");
            break;
        case OPT_FIELD:
            if ((rc = cli_opt_uint(CMD, "--field", optarg, 1, INT32_MAX, &o->field)))
                return rc;
            break;
        case OPT_DELIM:
            if (parse_delim(optarg, &o->sep) < 0)
                return cli_bad_value(CMD, "--delimiter", optarg, NULL,
                                     "one byte (or \\t, \\0, \\\\)");
            have_delim = 1;
            break;
        case OPT_JSON:
            if (!*optarg || optarg[0] == '.' || optarg[strlen(optarg) - 1] == '.' ||
                strstr(optarg, ".."))
                return cli_bad_value(CMD, "--json-field", optarg, NULL,
                                     "a dotted path of names, as a.b.c");
            o->json_path = optarg;
            break;
        case OPT_MISSING:
            if (!strcmp(optarg, "keep"))
                o->missing_keep = 1;
            else if (!strcmp(optarg, "empty"))
                o->missing_keep = 0;
            else
                return cli_bad_value(CMD, "--missing", optarg, NULL, "empty or keep");
            break;
        case OPT_REPEATED: o->repeated = 1; break;
        case '0': o->nul = 1; break;
        case OPT_STATS: o->stats = 1; break;
        case OPT_TRACE: o->trace = 1; break;
        case OPT_HELP:
            usage(stdout);
            return cli_finish_stdout(CMD);
        default:
            return cli_bad_option(CMD, argc, argv, longopts);
        }
    }
    if (have_delim && !o->field)
        return cli_usage(CMD, "--delimiter needs --field N");
    if (o->field && o->json_path)
        return cli_usage(CMD, "--field and --json-field exclude each other");
    if (o->missing_keep && !o->field && !o->json_path)
        return cli_usage(CMD, "--missing needs --field or --json-field");
    if (o->url && !o->key)
        return cli_usage(CMD, "--redis needs --key NAME");
    if (o->key && !o->url)
        return cli_usage(CMD, "--key needs --redis URL");
    if (o->on_error_pass && !o->url)
        return cli_usage(CMD, "--on-error needs --redis URL");
    if (o->url && o->trace)
        return cli_usage(CMD, "--trace-recycles is for a local filter, not --redis");
    if (o->url && o->layout_given && o->blocked && o->phases == 2)
        return cli_usage(CMD, "--redis: a blocked two-phase filter cannot be planned by the "
                              "server (docs/redis.md); use --layout flat or --phases 1");
    return DEDUP_GO_ON;
}
