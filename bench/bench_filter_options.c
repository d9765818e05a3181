/*
 * bench_filter_options.c -- the command line of `rbf bench filter`: the
 * help, the options into ctx and bf_args, and the checks of the options
 * that depend on each other.
 */
#include <getopt.h>

#include "bench_filter.h"

static void usage(FILE *fp)
{
    fprintf(fp,
            "Usage: rbf bench filter [OPTIONS]   (or build/rbf-bench filter)\n"
            "\n"
            "Test-and-insert and contains throughput (ns per operation, hashing included,\n"
            "16-byte random keys) of rbf (one key per call and batched) and of libbloom,\n"
            "and the machine's limit for the same access pattern (k random cache-line\n"
            "accesses per operation), in one run.  Fresh keys in every round; median of\n"
            "the timed rounds after a warm-up.\n"
            "\n"
            "Options:\n"
            "  --sizes LIST      filter sizes in bytes, comma-separated (default\n"
            "                    128KiB,4MiB,128MiB; libbloom stops at 2^31 bits = 256 MiB)\n"
            "  --keys N          operations per timed round (default 1Mi)\n"
            "  --reps N          timed rounds per measurement, median reported (default 5)\n"
            "  --batch N         keys per rbf_insert_keys / rbf_contains_keys call (default 256)\n"
            "  --hashes K        hash positions per key (default 7)\n"
            "  --fill-cap N      at most N prefilled keys in the contains filters (default 4Mi)\n"
            "  --prefill F       put F x libbloom's design entries of fresh keys into the insert\n"
            "                    filters before timing, 0 to 1 (default 0; 0.5 = mid-cycle)\n"
            "  --phases 1|2      rbf phases (default 1)\n"
            "  --hashing H       colliding (default) or non-colliding\n"
            "  --recycle R       non-retaining (default) or retaining\n"
            "  --layout L        flat, blocked or both (default): rbf's bit layout; with\n"
            "                    blocked, the rows of the blocked layout, a one-line limit,\n"
            "                    the cost of hashing a key alone and the floor of one call\n"
            "                    per key (rbf_hash + 1 line RMW, no look-ahead) are added\n"
            "  --seed S          seed of the keys and of the hash key (default 1)\n"
            "  --chunk N         operations per timed chunk, whose keys are generated just\n"
            "                    before it, untimed (default 4096: the keys are in cache);\n"
            "                    --chunk 1Mi with --keys 1Mi streams each round's 16 MiB of\n"
            "                    keys from memory (libbloom is then reset inside the timed\n"
            "                    loop whenever it reaches its design entries, as rbf\n"
            "                    recycles inside it)\n"
            "  --sequential      time each row's rounds back to back (after its own warm-up)\n"
            "                    instead of interleaving the rounds of all rows; a row then\n"
            "                    runs with its filter warm in the caches, as in a harness\n"
            "                    that times one library at a time\n"
            "  --threads N       instead: one filter shared by 1, 2, ..., N threads (up to 64),\n"
            "                    rbf_insert throughput of a concurrent filter (concurrent = 1)\n"
            "                    vs a mutex-guarded single-writer filter vs one filter per\n"
            "                    thread vs the machine's limit (k random bits per key set\n"
            "                    in one shared array, no filter), and one cache line's trip\n"
            "                    between two threads; --sizes (default 4MiB), --keys (per thread per round,\n"
            "                    default 512Ki), --reps, --hashes, --phases, --hashing,\n"
            "                    --recycle, --seed and --json apply\n"
            "  --json            one JSON object instead of the table\n"
            "  -h, --help        this help\n");
}

/* --sizes: a comma-separated list of byte counts into sizes[0..*nsz-1]. */
static int parse_sizes(const char *arg, uint64_t *sizes, size_t *nsz)
{
    const char *err;
    uint64_t v;
    *nsz = 0;
    char *copy = strdup(arg), *save = NULL;
    if (!copy)
        return cli_fail(CMD, "out of memory");
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (*nsz == MAX_SIZES) {
            free(copy);
            return cli_usage(CMD, "--sizes: at most %d sizes", MAX_SIZES);
        }
        if (cli_parse_bytes(t, &v, &err) || v < 1024 || v % 8 ||
            v > (UINT64_C(1) << 35)) {
            int bad = cli_bad_value(CMD, "--sizes", t, NULL,
                                    "sizes in bytes from 1KiB to 32GiB, multiples of 8");
            free(copy);
            return bad;
        }
        sizes[(*nsz)++] = v;
    }
    free(copy);
    if (*nsz == 0)
        return cli_usage(CMD, "--sizes: no size given");
    return 0;
}


int bf_parse_options(int argc, char **argv, ctx *c, bf_args *a)
{
    enum { O_SIZES = 256, O_KEYS, O_REPS, O_BATCH, O_HASHES, O_FILLCAP, O_PHASES, O_HASHING,
           O_RECYCLE, O_SEED, O_JSON, O_PREFILL, O_SEQUENTIAL, O_CHUNK, O_THREADS, O_LAYOUT };
    static const struct option opts[] = {
        {"sizes", required_argument, NULL, O_SIZES},     {"keys", required_argument, NULL, O_KEYS},
        {"reps", required_argument, NULL, O_REPS},       {"batch", required_argument, NULL, O_BATCH},
        {"hashes", required_argument, NULL, O_HASHES},   {"fill-cap", required_argument, NULL, O_FILLCAP},
        {"phases", required_argument, NULL, O_PHASES},   {"hashing", required_argument, NULL, O_HASHING},
        {"recycle", required_argument, NULL, O_RECYCLE}, {"seed", required_argument, NULL, O_SEED},
        {"json", no_argument, NULL, O_JSON},             {"help", no_argument, NULL, 'h'},
        {"prefill", required_argument, NULL, O_PREFILL}, {"sequential", no_argument, NULL, O_SEQUENTIAL},
        {"chunk", required_argument, NULL, O_CHUNK},     {"threads", required_argument, NULL, O_THREADS},
        {"layout", required_argument, NULL, O_LAYOUT},
        {NULL, 0, NULL, 0}};
    opterr = 0;
    int o, rc;
    const char *err;
    uint64_t v;
    while ((o = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (o) {
        case 'h':
            usage(stdout);
            a->help = 1;
            return cli_finish_stdout(CMD);
        case O_THREADS:
            if ((rc = cli_opt_uint(CMD, "--threads", optarg, 1, BENCH_MAX_THREADS, &v)))
                return rc;
            a->threads = (unsigned)v;
            break;
        case O_SIZES:
            a->sizes_given = 1;
            if ((rc = parse_sizes(optarg, a->sizes, &a->nsz)))
                return rc;
            break;
        case O_KEYS:
            a->keys_given = 1;
            if (cli_parse_count(optarg, &v, &err) || v < 1 || v > (UINT64_C(1) << 34))
                return cli_bad_value(CMD, "--keys", optarg, NULL, "a count from 1 to 16Gi");
            c->keys = v;
            break;
        case O_REPS:
            if ((rc = cli_opt_uint(CMD, "--reps", optarg, 1, MAX_REPS, &v)))
                return rc;
            c->reps = (unsigned)v;
            break;
        case O_BATCH:
            a->batch_given = 1;
            if (cli_parse_uint(optarg, 1, MAX_CHUNK, &v, &err))
                return cli_bad_value(CMD, "--batch", optarg, err, "1 to %u, and at most --chunk",
                                     MAX_CHUNK);
            c->batch = (size_t)v;
            break;
        case O_HASHES:
            if ((rc = cli_opt_uint(CMD, "--hashes", optarg, 1, 64, &v)))
                return rc;
            c->k = (unsigned)v;
            break;
        case O_FILLCAP:
            if ((rc = cli_opt_count(CMD, "--fill-cap", optarg, 1, &v)))
                return rc;
            c->fill_cap = v;
            break;
        case O_PHASES:
            if (cli_parse_uint(optarg, 1, 2, &v, &err))
                return cli_bad_value(CMD, "--phases", optarg, NULL, "1 or 2");
            c->phases = (unsigned)v;
            break;
        case O_HASHING: {
            int nc;
            if ((rc = cli_opt_hashing(CMD, optarg, &nc)))
                return rc;
            c->hashing = nc ? RBF_NON_COLLIDING : RBF_COLLIDING;
            break;
        }
        case O_RECYCLE: {
            int ret;
            if ((rc = cli_opt_recycle(CMD, optarg, &ret)))
                return rc;
            c->recycle = ret ? RBF_RETAINING : RBF_NON_RETAINING;
            break;
        }
        case O_SEED:
            if ((rc = cli_opt_uint(CMD, "--seed", optarg, 0, UINT64_MAX, &v)))
                return rc;
            c->seed = v;
            break;
        case O_JSON: c->json = 1; break;
        case O_LAYOUT:
            if (!strcmp(optarg, "flat")) {
                c->flat = 1;
                c->blocked = 0;
            } else if (!strcmp(optarg, "blocked")) {
                c->flat = 0;
                c->blocked = 1;
            } else if (!strcmp(optarg, "both")) {
                c->flat = c->blocked = 1;
            } else {
                return cli_usage(CMD, "--layout: '%s': must be flat, blocked or both", optarg);
            }
            break;
        case O_SEQUENTIAL: c->sequential = 1; break;
        case O_CHUNK:
            if (cli_parse_count(optarg, &v, &err) || v < 1 || v > MAX_CHUNK)
                return cli_bad_value(CMD, "--chunk", optarg, NULL, "a count from 1 to 16Mi");
            c->chunk = (size_t)v;
            break;
        case O_PREFILL:
            if (cli_parse_double(optarg, 0, 1, 1, 1, &c->prefill, &err))
                return cli_bad_value(CMD, "--prefill", optarg, err, "a number from 0 to 1");
            break;
        default: return cli_bad_option(CMD, argc, argv, opts);
        }
    }
    if ((rc = cli_no_operands(CMD, argc, argv)))
        return rc;
    return 0;
}

/* The options that depend on each other. */
int bf_check_options(const ctx *c, const bf_args *a)
{
    if (c->batch > c->chunk)
        return cli_usage(CMD, "--chunk %zu is smaller than the batch, %zu keys (--batch%s)", c->chunk,
                         c->batch, a->batch_given ? "" : ", default");
    if ((uint64_t)c->chunk * c->k > MAX_CHUNK_POSITIONS)
        return cli_usage(CMD,
                         "--chunk %zu with --hashes %u: the limit kernels would need %zu x %u "
                         "precomputed positions, more than %u; give a smaller --chunk",
                         c->chunk, c->k, c->chunk, c->k, (unsigned)MAX_CHUNK_POSITIONS);
    for (size_t s = 0; s < a->nsz; s++)
        if (c->phases == 2 && a->sizes[s] * 8 / 2 <= 2 * (uint64_t)c->k)
            return cli_usage(CMD, "--sizes: %llu bytes is too small for two phases",
                             (unsigned long long)a->sizes[s]);
    for (size_t s = 0; s < a->nsz; s++)
        if (c->blocked && (a->sizes[s] * 8 / c->phases) % 512 != 0)
            return cli_usage(CMD,
                             "--sizes: %llu bytes: the blocked layout needs bits per filter to "
                             "be a multiple of 512 (bytes a multiple of %u)",
                             (unsigned long long)a->sizes[s], 64u * c->phases);

    return 0;
}
