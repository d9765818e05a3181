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
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <sys/stat.h>

#include "cli.h"
#include "dedup.h"
#include "dedup_remote.h"
#include "fields.h"
#include "rbf.h"
#include "rbf_model.h"

#define CMD "dedup"

/* Lines per filter call: enough to amortise the call and let the batch
 * path prefetch ahead, small enough for its arrays to stay in L1/L2. */
#define DEDUP_BATCH 1024
/* Initial input buffer and fixed output buffer: 1 MiB each. */
#define DEDUP_IOBUF ((size_t)1 << 20)

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
    rbf *filter;            /* the local filter, or NULL */
    dedup_remote *remote;   /* the shared filter (--redis), or NULL */
    dedup_out out;
    int trace_recycles;
    int repeated;           /* write the lines seen before instead of the new ones */
    char rs;                /* record separator: '\n', or '\0' with --null */
    uint64_t field;         /* --field N (0: the whole line) */
    int sep;                /* --delimiter byte, or RBF_FIELD_BLANKS */
    const char *json_path;  /* --json-field PATH, or NULL */
    int missing_keep;       /* --missing keep */
    uint64_t lines_read;
    uint64_t lines_written;
    uint64_t cycles_seen; /* for --trace-recycles */
    /* progress line (a terminal on stderr, a regular file in) */
    int progress, progress_drawn;
    uint64_t bytes_read;
    double t0, t_last;
    unsigned batches_since;
    /* input buffer: data in buf[start..end), lines scanned up to `scan` */
    char *buf;
    size_t cap;
    /* one batch of complete lines */
    const void *keys[DEDUP_BATCH];
    size_t key_lens[DEDUP_BATCH];
    const char *lines[DEDUP_BATCH];
    size_t line_lens[DEDUP_BATCH];
    uint8_t results[DEDUP_BATCH];
    uint8_t pass[DEDUP_BATCH];  /* 1: a line without the field, kept (--missing keep) */
    size_t key_off[DEDUP_BATCH]; /* JSON keys: offset in karena ((size_t)-1: in the line) */
    size_t npass;
    size_t nbatch;
    /* decoded JSON keys of the batch */
    char *karena;
    size_t klen, kcap;
    /* the filter's view of the batch when some lines pass */
    const void *fkeys[DEDUP_BATCH];
    size_t fkey_lens[DEDUP_BATCH];
    uint8_t fresults[DEDUP_BATCH];
} dedup_run;

static int emit_line(void *ctx, const char *p, size_t n)
{
    dedup_run *r = ctx;
    r->lines_written++;
    return out_put(&r->out, p, n);
}

static void progress_draw(dedup_run *r, int final)
{
    double t = cli_wall_seconds();
    if (!final && t - r->t_last < 0.25)
        return;
    r->t_last = t;
    double el = t - r->t0;
    if (el < 1.0 && !final)
        return;
    uint64_t cycles = 0;
    if (r->filter) {
        rbf_stats st;
        rbf_get_stats(r->filter, &st);
        cycles = st.cycles;
    }
    if (final) {
        if (r->progress_drawn) /* erase it */
            fputs("\r\033[K", stderr);
        r->progress_drawn = 0;
        return;
    }
    r->progress_drawn = 1;
    if (r->filter)
        fprintf(stderr, "\rrbf dedup: %" PRIu64 " lines, %.1f MB/s, %" PRIu64 " recycles\033[K",
                r->lines_read, el > 0 ? (double)r->bytes_read / el / 1e6 : 0.0, cycles);
    else
        fprintf(stderr, "\rrbf dedup: %" PRIu64 " lines, %.1f MB/s\033[K", r->lines_read,
                el > 0 ? (double)r->bytes_read / el / 1e6 : 0.0);
    fflush(stderr);
}

/* Run the batch through the filter and write the lines reported new (or,
 * with --repeated, seen).  Returns 0, -1 when output must stop (closed
 * pipe or write error), -2 after a failure of the shared filter. */
static int run_batch(dedup_run *r)
{
    size_t n = r->nbatch;
    r->nbatch = 0;
    if (n == 0)
        return 0;
    if (r->json_path) {
        for (size_t i = 0; i < n; i++)
            if (r->key_off[i] != (size_t)-1)
                r->keys[i] = r->karena + r->key_off[i];
        r->klen = 0;
    }
    size_t npass = r->npass;
    r->npass = 0;
    if (r->progress && ++r->batches_since >= 16) {
        r->batches_since = 0;
        progress_draw(r, 0);
    }
    if (r->remote)
        return dedup_remote_submit(r->remote, n, r->keys, r->key_lens, r->lines, r->line_lens,
                                   npass ? r->pass : NULL, emit_line, r);
    if (npass) {
        /* Lines without the field skip the filter and are written. */
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            if (r->pass[i])
                continue;
            r->fkeys[m] = r->keys[i];
            r->fkey_lens[m++] = r->key_lens[i];
        }
        if (m && rbf_insert_keys(r->filter, r->fkeys, r->fkey_lens, m, r->fresults) < 0)
            return -1;
        for (size_t i = 0, j = 0; i < n; i++)
            r->results[i] = r->pass[i] ? 2 : r->fresults[j++];
    } else if (r->trace_recycles) {
        /* One line at a time so each recycle is tied to its line: the line
         * that triggers it (it is processed, then the filter clears). */
        uint64_t written = r->lines_written;
        for (size_t i = 0; i < n; i++) {
            int64_t rc = rbf_insert_keys(r->filter, &r->keys[i], &r->key_lens[i], 1,
                                         &r->results[i]);
            if (rc < 0)
                return -1;
            written += r->repeated ? !r->results[i] : r->results[i];
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
    /* 1 new, 0 seen, 2 passed */
    uint8_t want = r->repeated ? 0 : 1;
    for (size_t i = 0; i < n; i++) {
        if (r->results[i] != want && r->results[i] != 2)
            continue;
        r->lines_written++;
        if (out_put(&r->out, r->lines[i], r->line_lens[i]) < 0)
            return -1;
    }
    return 0;
}

/* The key of a JSON line: the value at the dotted path, a string's decoded
 * bytes or any other value's compact JSON text, copied into the batch's
 * key arena.  Returns 1 with *off, *klen set, 0 when the line is not a JSON
 * object with that path, -1 when out of memory. */
static int json_key(dedup_run *r, const char *p, size_t n, size_t *off, size_t *klen)
{
    json_error_t jerr;
    json_t *root = json_loadb(p, n, JSON_ALLOW_NUL, &jerr);
    if (!root)
        return 0;
    json_t *v = root;
    const char *path = r->json_path;
    while (v) {
        const char *dot = strchr(path, '.');
        size_t len = dot ? (size_t)(dot - path) : strlen(path);
        if (!json_is_object(v)) {
            v = NULL;
            break;
        }
        v = json_object_getn(v, path, len);
        if (!dot)
            break;
        path = dot + 1;
    }
    if (!v) {
        json_decref(root);
        return 0;
    }
    const char *kp;
    size_t kl;
    char *dumped = NULL;
    if (json_is_string(v)) {
        kp = json_string_value(v);
        kl = json_string_length(v);
    } else {
        dumped = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!dumped) {
            json_decref(root);
            return -1;
        }
        kp = dumped;
        kl = strlen(dumped);
    }
    if (kl > r->kcap - r->klen) {
        size_t cap = r->kcap ? r->kcap : 65536;
        while (cap - r->klen < kl)
            cap *= 2;
        char *na = realloc(r->karena, cap);
        if (!na) {
            free(dumped);
            json_decref(root);
            return -1;
        }
        r->karena = na;
        r->kcap = cap;
    }
    memcpy(r->karena + r->klen, kp, kl);
    *off = r->klen;
    *klen = kl;
    r->klen += kl;
    free(dumped);
    json_decref(root);
    return 1;
}

/* Queue one record: rec_len bytes without its separator, line_len >=
 * rec_len bytes to write.  Returns as run_batch. */
static int add_line(dedup_run *r, const char *p, size_t rec_len, size_t line_len)
{
    size_t i = r->nbatch;
    const char *key = p;
    size_t klen = rec_len;
    int have = 1;
    r->pass[i] = 0;
    if (r->json_path) {
        size_t off = 0;
        have = json_key(r, p, rec_len, &off, &klen);
        if (have < 0) {
            cli_fail(CMD, "out of memory");
            return -2;
        }
        r->key_off[i] = have ? off : (size_t)-1;
        if (!have) {
            key = p;
            klen = 0;
        }
    } else if (r->field) {
        have = rbf_field(p, rec_len, r->field, r->sep, &key, &klen);
    }
    if (!have && r->missing_keep) {
        r->pass[i] = 1;
        r->npass++;
    }
    r->keys[i] = key;
    r->key_lens[i] = klen;
    r->lines[i] = p;
    r->line_lens[i] = line_len;
    r->nbatch++;
    r->lines_read++;
    if (r->nbatch == DEDUP_BATCH)
        return run_batch(r);
    return 0;
}

/* Wait for the shared filter's answers, then write what is buffered. */
static int flush_all(dedup_run *r)
{
    if (r->remote) {
        int rc = dedup_remote_drain(r->remote, emit_line, r);
        if (rc < 0)
            return rc;
    }
    return out_flush(&r->out);
}

/* De-duplicate one open file.  Returns 0 when the file was read to its
 * end, 1 after a read error (reported, naming `name`), -1 when output must
 * stop, -2 when out of memory or the shared filter failed (reported). */
static int dedup_fd(dedup_run *r, int fd, const char *name)
{
    size_t start = 0, end = 0, scan = 0;
    int status = 0, short_read = 0, rc;
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
            if (poll(&pfd, 1, 0) == 0 && (rc = flush_all(r)) < 0)
                return rc;
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
        r->bytes_read += (uint64_t)got;
        short_read = (size_t)got < want;
        /* Split the complete lines.  Their bytes stay in place until the
         * batch is flushed below, before the buffer is compacted. */
        const char *base = r->buf;
        for (;;) {
            const char *nl = memchr(base + scan, r->rs, end - scan);
            if (!nl) {
                scan = end;
                break;
            }
            size_t stop = (size_t)(nl - base);
            if ((rc = add_line(r, base + start, stop - start, stop + 1 - start)) < 0)
                return rc;
            start = scan = stop + 1;
        }
        if ((rc = run_batch(r)) < 0)
            return rc;
    }
    if (start < end) {
        /* The last line has no separator: it is a line, written as it came. */
        if ((rc = add_line(r, r->buf + start, end - start, end - start)) < 0 ||
            (rc = run_batch(r)) < 0)
            return rc;
    }
    return status;
}

/* ---- sizing */

static int is_regular(int fd)
{
    struct stat sb;
    return fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
}

static void run_free(dedup_run *r)
{
    rbf_free(r->filter);
    dedup_remote_close(r->remote);
    free(r->out.buf);
    free(r->buf);
    free(r->karena);
    free(r);
}

/* A run with its buffers, set from the options; NULL when out of memory. */
static dedup_run *run_new(const dedup_opts *o)
{
    dedup_run *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->out.fd = STDOUT_FILENO;
    r->out.cap = DEDUP_IOBUF;
    r->out.buf = malloc(r->out.cap);
    r->cap = DEDUP_IOBUF;
    r->buf = malloc(r->cap);
    r->trace_recycles = o->trace;
    r->repeated = o->repeated;
    r->rs = o->nul ? '\0' : '\n';
    r->field = o->field;
    r->sep = o->sep;
    r->json_path = o->json_path;
    r->missing_keep = o->missing_keep;
    if (!r->out.buf || !r->buf) {
        run_free(r);
        return NULL;
    }
    return r;
}

/* The shared filter of a Redis server: 0, or the exit status. */
static int open_remote(const dedup_opts *o, dedup_run *r, layout_choice *lc)
{
    dedup_remote_opts ro = {.url = o->url,
                            .key = o->key,
                            .bytes = o->bytes,
                            .eps = o->eps,
                            .phases = (unsigned)o->phases,
                            .layout = o->layout_given ? o->blocked : -1,
                            .have_seed = o->have_seed,
                            .seed = o->seed,
                            .on_error_pass = o->on_error_pass,
                            .repeated = o->repeated,
                            .choose_layout = dedup_choose_layout_cb,
                            .ctx = lc};
    return dedup_remote_open(&ro, &r->remote);
}

/* The local filter, sized.  Without --layout, both planners decide it; a
 * blocked filter is sized by the blocked planner (one phase) or the flat
 * plan (two phases: there is no blocked two-phase planner), its bits per
 * filter in whole 512-bit blocks.  0, or the exit status. */
static int open_local(dedup_opts *o, dedup_run *r, layout_choice *lc, rbf_config *cfg,
                      dedup_sizing *sz, int *blocked_model)
{
    int blocked = o->blocked;
    if (!o->layout_given) {
        dedup_choose_layout(lc);
        blocked = lc->blocked;
    }
    uint64_t bits = o->bytes * 8, phases = o->phases;
    if (blocked) {
        uint64_t unit = 512 * phases;
        bits -= bits % unit;
        if (bits == 0)
            return cli_usage(CMD, "--memory: the blocked layout needs at least %" PRIu64 " bytes",
                             unit / 8);
        o->bytes = bits / 8;
    }
    if (lc->decided)
        *sz = blocked ? lc->blk : lc->flat;
    else if (blocked && phases == 1)
        dedup_plan_blocked(bits, o->eps, sz);
    else
        dedup_plan_flat(bits, o->eps, (unsigned)phases, 1, sz);
    *blocked_model = blocked && phases == 1;
    if (sz->ok != 1) {
        if (sz->ok < 0)
            return cli_fail(CMD, "out of memory while planning a filter of %" PRIu64 " bytes",
                            o->bytes);
        return cli_fail(CMD,
                        "the planner finds no %s filter of %" PRIu64 " bytes for an average "
                        "false-positive rate of %g: give more --memory or a larger --fp",
                        phases == 2 ? "two-phase" : "one-phase", o->bytes, o->eps);
    }
    rbf_config_init(cfg); /* draws a random seed from the OS */
    cfg->bits = bits;
    cfg->hashes = sz->hashes;
    cfg->sigma = sz->sigma;
    cfg->phases = (unsigned)phases;
    cfg->layout = blocked ? RBF_LAYOUT_BLOCKED : RBF_LAYOUT_FLAT;
    if (o->have_seed)
        cfg->seed = o->seed;
    const char *why = NULL;
    int rc = rbf_config_check(cfg, &why);
    if (rc == RBF_OK)
        rc = rbf_new(cfg, &r->filter);
    if (rc == RBF_OK)
        return 0;
    if (why)
        return cli_fail(CMD,
                        "no workable filter in %" PRIu64 " bytes (k=%u, sigma=%" PRIu64
                        ": %s): give more --memory or a larger --fp",
                        o->bytes, cfg->hashes, cfg->sigma, why);
    return cli_fail(CMD, "cannot allocate a filter of %" PRIu64 " bytes: %s", o->bytes,
                    rbf_strerror(rc));
}

/* One input: 0 to go on, 1 to stop; *status and *failed updated. */
static int run_input(dedup_run *r, int fd, const char *name, int tty, int *status, int *failed)
{
    r->progress = tty && is_regular(fd);
    int rr = dedup_fd(r, fd, name);
    if (rr == -2)
        *failed = 1;
    if (rr != 0 && rr != -1)
        *status = CLI_EXIT_FAIL;
    return rr < 0;
}

/* Every input (the files named, or standard input), then the last lines. */
static int run_inputs(dedup_run *r, int argc, char **argv, int tty, int *failed)
{
    int status = CLI_EXIT_OK, stop = 0;
    if (optind >= argc)
        stop = run_input(r, STDIN_FILENO, "standard input", tty, &status, failed);
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
        stop = run_input(r, fd, name, tty, &status, failed);
        if (fd != STDIN_FILENO)
            close(fd);
    }
    if (!stop) {
        if (flush_all(r) == -2) {
            *failed = 1;
            status = CLI_EXIT_FAIL;
        }
    } else if (!r->out.closed && !r->out.failed) {
        out_flush(&r->out);
    }
    return status;
}

int cmd_dedup(int argc, char **argv)
{
    dedup_opts o;
    int rc = dedup_parse_options(argc, argv, &o);
    if (rc != DEDUP_GO_ON)
        return rc;
    dedup_run *r = run_new(&o);
    if (!r)
        return cli_fail(CMD, "out of memory");
    layout_choice lc = {.bytes = o.bytes, .eps = o.eps, .phases = (unsigned)o.phases,
                        .given = o.layout_given ? o.blocked : -1};
    rbf_config cfg;
    dedup_sizing sz = {0};
    int blocked_model = 0;
    rc = o.url ? open_remote(&o, r, &lc) : open_local(&o, r, &lc, &cfg, &sz, &blocked_model);
    if (rc != 0) {
        run_free(r);
        return rc;
    }

    int tty = isatty(STDERR_FILENO) && getenv("RBF_NO_PROGRESS") == NULL;
    r->t0 = r->t_last = cli_wall_seconds();
    int failed = 0;
    int status = run_inputs(r, argc, argv, tty, &failed);
    if (tty)
        progress_draw(r, 1);
    if (r->out.failed)
        status = CLI_EXIT_FAIL;
    if (failed && r->remote)
        fprintf(stderr,
                "rbf dedup: stopped: %" PRIu64 " lines written of %" PRIu64 " read; the %" PRIu64
                " lines of batches the server never answered were not written\n",
                r->lines_written, r->lines_read, dedup_remote_lost(r->remote));
    if (o.stats) {
        if (r->remote) {
            fprintf(stderr, "lines read: %" PRIu64 "\nlines written: %" PRIu64 "\n",
                    r->lines_read, r->lines_written);
            dedup_print_plans(&lc);
            dedup_remote_print_info(r->remote);
        } else {
            dedup_print_stats(r->filter, r->lines_read, r->lines_written, &cfg, o.bytes, &sz,
                              blocked_model);
            if (!lc.decided) /* --layout was given: both plans, for comparison */
                dedup_choose_layout(&lc);
            dedup_print_plans(&lc);
        }
    }
    run_free(r);
    return status;
}
