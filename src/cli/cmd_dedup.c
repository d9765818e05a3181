/*
 * cmd_dedup.c -- `rbf dedup`: drop repeated lines from a stream in fixed
 * memory, sized by a target average false-positive rate.
 *
 * The input is read with read(2) into one buffer and split into lines with
 * memchr; complete lines are handed to the filter in batches
 * (rbf_insert_keys, which overlaps their memory accesses) and the lines
 * reported new are copied, in order, into an output buffer written with
 * write(2).  stdio is not used for the data: its per-byte locking and line
 * handling cost more than the filter itself.
 *
 * Byte rules (docs/dedup.md): a line is everything up to and including a
 * '\n'; its key is the line without that one '\n' (a '\r' before it is part
 * of the key, so "a\r\n" and "a\n" are different lines); any byte, NUL
 * included, is data; the last line of a file may lack its '\n' and is then
 * written as it came.  Each file's end ends a line, as with awk.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "rbf.h"
#include "rbf_model.h"

#define CMD "dedup"

/* Lines per filter call: enough to amortise the call and let the batch
 * path prefetch ahead, small enough for its arrays to stay in L1/L2. */
#define DEDUP_BATCH 1024
/* Initial input buffer and fixed output buffer: 1 MiB each. */
#define DEDUP_IOBUF ((size_t)1 << 20)
#define DEDUP_DEFAULT_MEMORY ((uint64_t)64 << 20)
#define DEDUP_DEFAULT_FP 0.001

/* ---- output */

typedef struct dedup_out {
    int fd;
    char *buf;
    size_t len, cap;
    int closed; /* the reader went away (EPIPE): stop quietly */
    int failed; /* a write error was reported */
} dedup_out;

/* Write all of p[0..n) to o->fd.  Returns 0, or -1 after setting closed
 * (EPIPE, quiet) or failed (any other error, reported here). */
static int out_write_all(dedup_out *o, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(o->fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EPIPE) {
                o->closed = 1;
            } else {
                o->failed = 1;
                cli_fail(CMD, "error writing output: %s", strerror(errno));
            }
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int out_flush(dedup_out *o)
{
    if (o->len == 0)
        return 0;
    size_t n = o->len;
    o->len = 0;
    return out_write_all(o, o->buf, n);
}

/* Append one line.  A line larger than the buffer goes straight out after
 * what is buffered, so a 100 MB line costs no extra copy. */
static int out_put(dedup_out *o, const char *p, size_t n)
{
    if (n > o->cap - o->len) {
        if (out_flush(o) < 0)
            return -1;
        if (n >= o->cap)
            return out_write_all(o, p, n);
    }
    memcpy(o->buf + o->len, p, n);
    o->len += n;
    return 0;
}

/* ---- the run */

typedef struct dedup_run {
    rbf *filter;
    dedup_out out;
    int trace_recycles;
    uint64_t lines_read;
    uint64_t lines_written;
    uint64_t cycles_seen; /* for --trace-recycles */
    /* input buffer: data in buf[start..end), lines scanned up to `scan` */
    char *buf;
    size_t cap;
    /* one batch of complete lines */
    const void *keys[DEDUP_BATCH];
    size_t key_lens[DEDUP_BATCH];
    size_t line_lens[DEDUP_BATCH];
    uint8_t results[DEDUP_BATCH];
    size_t nbatch;
} dedup_run;

/* Run the batch through the filter and write the lines reported new.
 * Returns 0, or -1 when output must stop (closed pipe or write error). */
static int run_batch(dedup_run *r)
{
    size_t n = r->nbatch;
    r->nbatch = 0;
    if (n == 0)
        return 0;
    if (r->trace_recycles) {
        /* One line at a time so each recycle is tied to its line: the line
         * that triggers it (it is processed, then the filter clears). */
        uint64_t written = r->lines_written;
        for (size_t i = 0; i < n; i++) {
            int64_t rc = rbf_insert_keys(r->filter, &r->keys[i], &r->key_lens[i], 1,
                                         &r->results[i]);
            if (rc < 0)
                return -1;
            written += r->results[i];
            rbf_stats st;
            rbf_get_stats(r->filter, &st);
            uint64_t line = r->lines_read - n + i + 1;
            while (r->cycles_seen < st.cycles) {
                r->cycles_seen++;
                fprintf(stderr, "recycle %" PRIu64 " line %" PRIu64 " written %" PRIu64 "\n",
                        r->cycles_seen, line, written);
            }
        }
    } else if (rbf_insert_keys(r->filter, r->keys, r->key_lens, n, r->results) < 0) {
        return -1; /* cannot happen: every key is non-NULL */
    }
    for (size_t i = 0; i < n; i++) {
        if (!r->results[i])
            continue;
        r->lines_written++;
        if (out_put(&r->out, r->keys[i], r->line_lens[i]) < 0)
            return -1;
    }
    return 0;
}

/* Queue one line: key_len bytes of key, line_len >= key_len bytes to
 * write. */
static int add_line(dedup_run *r, const char *p, size_t key_len, size_t line_len)
{
    r->keys[r->nbatch] = p;
    r->key_lens[r->nbatch] = key_len;
    r->line_lens[r->nbatch] = line_len;
    r->nbatch++;
    r->lines_read++;
    if (r->nbatch == DEDUP_BATCH)
        return run_batch(r);
    return 0;
}

/* De-duplicate one open file.  Returns 0 when the file was read to its
 * end, 1 after a read error (reported, naming `name`), -1 when output must
 * stop, -2 when out of memory (reported). */
static int dedup_fd(dedup_run *r, int fd, const char *name)
{
    size_t start = 0, end = 0, scan = 0;
    int status = 0, short_read = 0;
    for (;;) {
        if (end == r->cap) {
            if (start > 0) {
                /* Keep only the unfinished line, at the front. */
                memmove(r->buf, r->buf + start, end - start);
                end -= start;
                scan -= start;
                start = 0;
            } else {
                /* One line fills the buffer: grow it, so any line length
                 * works (memory then follows the longest line). */
                if (r->cap > SIZE_MAX / 2) {
                    cli_fail(CMD, "%s: line too long for memory", name);
                    return -2;
                }
                char *nb = realloc(r->buf, r->cap * 2);
                if (!nb) {
                    cli_fail(CMD, "%s: out of memory for a line longer than %zu bytes", name,
                             r->cap);
                    return -2;
                }
                r->buf = nb;
                r->cap *= 2;
            }
        }
        if (short_read) {
            /* A pipe or terminal ran dry: if nothing more is ready, let the
             * lines found so far go out now, so a stream (tail -F | rbf
             * dedup) is not held back until 1 MiB of output piles up. */
            struct pollfd pfd = {.fd = fd, .events = POLLIN, .revents = 0};
            if (poll(&pfd, 1, 0) == 0 && out_flush(&r->out) < 0)
                return -1;
        }
        size_t want = r->cap - end;
        ssize_t got = read(fd, r->buf + end, want);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            cli_fail(CMD, "%s: %s", name, strerror(errno));
            status = 1;
            break; /* what was read so far is still processed below */
        }
        if (got == 0)
            break;
        end += (size_t)got;
        short_read = (size_t)got < want;
        /* Split the complete lines.  Their bytes stay in place until the
         * batch is flushed below, before the buffer is compacted. */
        const char *base = r->buf;
        for (;;) {
            const char *nl = memchr(base + scan, '\n', end - scan);
            if (!nl) {
                scan = end;
                break;
            }
            size_t stop = (size_t)(nl - base);
            if (add_line(r, base + start, stop - start, stop + 1 - start) < 0)
                return -1;
            start = scan = stop + 1;
        }
        if (run_batch(r) < 0)
            return -1;
    }
    if (start < end) {
        /* The last line has no '\n': it is a line, written as it came. */
        if (add_line(r, r->buf + start, end - start, end - start) < 0 || run_batch(r) < 0)
            return -1;
    }
    return status;
}

/* ---- sizing */

/* The filter is planned at its true size: the planner's default method
 * (RBF_MODEL_AUTO) answers in well under a second at any memory up to
 * 2^44 bits (docs/models.md 3b). */

typedef struct dedup_sizing {
    unsigned hashes;
    uint64_t sigma;        /* per filter (per half for two phases) */
    double fp;             /* the model's average rate at the plan */
    double expected_lines; /* per cycle */
} dedup_sizing;

/* Plan a filter of `bits` total bits for average rate eps.  Returns
 * RBF_OK, RBF_ENOMEM, or RBF_EINVAL when no
 * configuration is feasible. */
static int dedup_plan(uint64_t bits, double eps, unsigned phases, dedup_sizing *out)
{
    rbf_plan_options po;
    rbf_plan_options_init(&po);
    po.progress = cli_progress_cb;
    rbf_plan plan;
    cli_progress_begin("rbf dedup: planning", 0);
    int rc = rbf_plan_memory(bits, eps, &po, &plan);
    cli_progress_end();
    if (rc == RBF_ENOMEM)
        return rc;
    if (rc < 0)
        return RBF_EINVAL;
    const rbf_plan_choice *ch = phases == 2 ? &plan.two_phase : &plan.sigma_bounded;
    if (!ch->feasible || ch->sigma == 0 || ch->hashes == 0)
        return RBF_EINVAL;
    out->hashes = ch->hashes;
    out->sigma = ch->sigma;
    out->fp = ch->fp;
    out->expected_lines = ch->expected_messages;
    return RBF_OK;
}

/* ---- options */

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
            "Options:\n"
            "  --memory SIZE     filter memory (default 64MiB); suffixes K M G (x1000^n),\n"
            "                    KiB MiB GiB (x1024^n), optional B\n"
            "  --fp EPS          target average false-positive rate, 0 < EPS < 1\n"
            "                    (default 0.001): the chance that a new line is dropped\n"
            "  --phases 1|2      1: one filter (default); 2: two halves, the frozen half\n"
            "                    keeps recent lines across a recycle\n"
            "  --seed S          hash seed, for a reproducible run (default: random)\n"
            "  --layout L        flat (default) or blocked: all k bits of a line in one\n"
            "                    64-byte block, a few times faster, a somewhat higher\n"
            "                    false-positive rate; the memory is rounded down to a\n"
            "                    multiple of 64 bytes (128 with --phases 2)\n"
            "  --stats           print counts, the configuration and the model's\n"
            "                    predicted false-positive rate on stderr\n"
            "  --trace-recycles  print 'recycle N line L written W' on stderr at each\n"
            "                    recycle (L: input line that triggered it; slower)\n"
            "  --help            this help\n"
            "\n"
            "Bytes: a line ends after '\\n'; its key is the line without that '\\n' ('\\r' is\n"
            "kept, so CRLF and LF lines differ); NUL and any other byte are data; a last\n"
            "line without '\\n' is written as it came.  An unreadable FILE is reported and\n"
            "skipped, and the exit status is then 1 (as with cat).\n"
            "\n"
            "Examples:\n"
            "  rbf dedup --memory 256MiB access.log > unique.log\n"
            "  tail -F events | rbf dedup --fp 1e-6 --phases 2\n"
            "\n"
            "Exit status: 0 success, 1 runtime failure, 2 usage error.\n");
}

enum { OPT_MEMORY = 256, OPT_FP, OPT_PHASES, OPT_SEED, OPT_STATS, OPT_TRACE, OPT_HELP, OPT_LAYOUT };

static const struct option longopts[] = {
    {"memory", required_argument, NULL, OPT_MEMORY},
    {"fp", required_argument, NULL, OPT_FP},
    {"phases", required_argument, NULL, OPT_PHASES},
    {"seed", required_argument, NULL, OPT_SEED},
    {"layout", required_argument, NULL, OPT_LAYOUT},
    {"stats", no_argument, NULL, OPT_STATS},
    {"trace-recycles", no_argument, NULL, OPT_TRACE},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

static void print_stats(const dedup_run *r, const rbf_config *cfg, uint64_t bytes,
                        const dedup_sizing *sz)
{
    rbf_stats st;
    rbf_get_stats(r->filter, &st);
    fprintf(stderr,
            "lines read: %" PRIu64 "\n"
            "lines written: %" PRIu64 "\n"
            "recycles: %" PRIu64 "\n",
            r->lines_read, r->lines_written, st.cycles);
    if (cfg->phases == 2)
        fprintf(stderr, "bits set: %" PRIu64 " active, %" PRIu64 " frozen, of %" PRIu64
                        " per half\n",
                st.bits_set, st.frozen_bits_set, st.bits);
    else
        fprintf(stderr, "bits set: %" PRIu64 " of %" PRIu64 "\n", st.bits_set, st.bits);
    fprintf(stderr,
            "memory: %" PRIu64 " bytes (%" PRIu64 " bits, %u phase%s, %s layout)\n"
            "hashes: %u\n"
            "sigma: %" PRIu64 "\n"
            "seed: %" PRIu64 "\n"
            "expected lines per cycle: %.6g\n"
            "predicted fp: %.9g%s\n",
            bytes, cfg->bits, cfg->phases, cfg->phases == 2 ? "s" : "",
            cli_layout_name(cfg->layout == RBF_LAYOUT_BLOCKED), cfg->hashes, cfg->sigma,
            cfg->seed, sz->expected_lines, sz->fp,
            cfg->layout == RBF_LAYOUT_BLOCKED ? " (the flat layout's model: the blocked layout's "
                                                "rate is somewhat higher)"
                                              : "");
}

int cmd_dedup(int argc, char **argv)
{
    uint64_t bytes = DEDUP_DEFAULT_MEMORY, seed = 0, phases = 1;
    double eps = DEDUP_DEFAULT_FP;
    int have_seed = 0, stats = 0, trace = 0, blocked = 0;
    const char *err;

    cli_getopt_reset();
    int c, rc;
    while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_MEMORY:
            if ((rc = cli_opt_bytes(CMD, "--memory", optarg, &bytes)))
                return rc;
            break;
        case OPT_FP:
            if ((rc = cli_opt_prob(CMD, "--fp", optarg, &eps)))
                return rc;
            break;
        case OPT_PHASES:
            if (cli_parse_uint(optarg, 1, 2, &phases, &err) < 0)
                return cli_bad_value(CMD, "--phases", optarg, NULL, "1 or 2");
            break;
        case OPT_SEED:
            if ((rc = cli_opt_uint(CMD, "--seed", optarg, 0, UINT64_MAX, &seed)))
                return rc;
            have_seed = 1;
            break;
        case OPT_LAYOUT:
            if ((rc = cli_opt_layout(CMD, optarg, &blocked)))
                return rc;
            break;
        case OPT_STATS: stats = 1; break;
        case OPT_TRACE: trace = 1; break;
        case OPT_HELP:
            usage(stdout);
            return cli_finish_stdout(CMD);
        default:
            return cli_bad_option(CMD, argc, argv, longopts);
        }
    }

    /* Size the filter: the planner's best k and sigma for this memory.  The
     * blocked layout needs bits per filter in whole 512-bit blocks: the
     * memory is rounded down to them. */
    uint64_t bits = bytes * 8;
    if (blocked) {
        uint64_t unit = 512 * (uint64_t)phases;
        bits -= bits % unit;
        if (bits == 0)
            return cli_usage(CMD, "--memory: the blocked layout needs at least %" PRIu64 " bytes",
                             unit / 8);
        bytes = bits / 8;
    }
    dedup_sizing sz;
    int prc = dedup_plan(bits, eps, (unsigned)phases, &sz);
    if (prc == RBF_ENOMEM)
        return cli_fail(CMD, "out of memory while planning a filter of %" PRIu64 " bytes", bytes);
    if (prc < 0)
        return cli_fail(CMD,
                        "the planner finds no %s filter of %" PRIu64 " bytes for an average "
                        "false-positive rate of %g: give more --memory or a larger --fp",
                        phases == 2 ? "two-phase" : "one-phase", bytes, eps);

    rbf_config cfg;
    rbf_config_init(&cfg); /* draws a random seed from the OS */
    cfg.bits = bits;
    cfg.hashes = sz.hashes;
    cfg.sigma = sz.sigma;
    cfg.phases = (unsigned)phases;
    cfg.layout = blocked ? RBF_LAYOUT_BLOCKED : RBF_LAYOUT_FLAT;
    if (have_seed)
        cfg.seed = seed;
    const char *why = NULL;
    rc = rbf_config_check(&cfg, &why);
    dedup_run *r = calloc(1, sizeof *r);
    if (!r)
        return cli_fail(CMD, "out of memory");
    r->out.fd = STDOUT_FILENO;
    r->out.cap = DEDUP_IOBUF;
    r->out.buf = malloc(r->out.cap);
    r->cap = DEDUP_IOBUF;
    r->buf = malloc(r->cap);
    r->trace_recycles = trace;
    if (!r->out.buf || !r->buf) {
        free(r->out.buf);
        free(r->buf);
        free(r);
        return cli_fail(CMD, "out of memory");
    }
    if (rc == RBF_OK)
        rc = rbf_new(&cfg, &r->filter);
    if (rc != RBF_OK) {
        free(r->out.buf);
        free(r->buf);
        free(r);
        if (why)
            return cli_fail(CMD,
                            "no workable filter in %" PRIu64 " bytes (k=%u, sigma=%" PRIu64
                            ": %s): give more --memory or a larger --fp",
                            bytes, cfg.hashes, cfg.sigma, why);
        return cli_fail(CMD, "cannot allocate a filter of %" PRIu64 " bytes: %s", bytes,
                        rbf_strerror(rc));
    }

    int status = CLI_EXIT_OK;
    int stop = 0;
    if (optind >= argc) {
        int rr = dedup_fd(r, STDIN_FILENO, "standard input");
        if (rr < 0)
            stop = 1;
        if (rr != 0 && rr != -1)
            status = CLI_EXIT_FAIL;
    }
    for (int i = optind; i < argc && !stop; i++) {
        const char *name = argv[i];
        int fd;
        if (!strcmp(name, "-")) {
            fd = STDIN_FILENO;
            name = "standard input";
        } else {
            fd = open(name, O_RDONLY | O_CLOEXEC);
            if (fd < 0) {
                cli_fail(CMD, "%s: %s", name, strerror(errno));
                status = CLI_EXIT_FAIL;
                continue;
            }
        }
        int rr = dedup_fd(r, fd, name);
        if (fd != STDIN_FILENO)
            close(fd);
        if (rr < 0)
            stop = 1;
        if (rr != 0 && rr != -1)
            status = CLI_EXIT_FAIL;
    }
    if (!r->out.closed && !r->out.failed)
        out_flush(&r->out);
    if (r->out.failed)
        status = CLI_EXIT_FAIL;
    if (stats)
        print_stats(r, &cfg, bytes, &sz);
    rbf_free(r->filter);
    free(r->out.buf);
    free(r->buf);
    free(r);
    return status;
}
