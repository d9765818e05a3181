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
#include <pthread.h>
#include <sys/stat.h>

#include "cli.h"
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

/* The filter is planned at its true size: the planner's default method
 * (RBF_MODEL_AUTO) answers in well under a second at any memory up to
 * 2^44 bits (docs/models.md 3b). */

typedef struct dedup_sizing {
    int ok;                /* 1: planned; 0: no feasible plan; -1: out of memory */
    unsigned hashes;
    uint64_t sigma;        /* per filter (per half for two phases) */
    double fp;             /* the model's average rate at the plan */
    double expected_lines; /* per cycle */
} dedup_sizing;

/* Plan a flat filter of `bits` total bits for average rate eps. */
static void plan_flat(uint64_t bits, double eps, unsigned phases, int progress, dedup_sizing *out)
{
    rbf_plan_options po;
    rbf_plan_options_init(&po);
    if (progress)
        po.progress = cli_progress_cb;
    rbf_plan plan;
    if (progress)
        cli_progress_begin("rbf dedup: planning", 0);
    int rc = rbf_plan_memory(bits, eps, &po, &plan);
    if (progress)
        cli_progress_end();
    memset(out, 0, sizeof *out);
    if (rc == RBF_ENOMEM) {
        out->ok = -1;
        return;
    }
    if (rc < 0)
        return;
    const rbf_plan_choice *ch = phases == 2 ? &plan.two_phase : &plan.sigma_bounded;
    if (!ch->feasible || ch->sigma == 0 || ch->hashes == 0)
        return;
    out->ok = 1;
    out->hashes = ch->hashes;
    out->sigma = ch->sigma;
    out->fp = ch->fp;
    out->expected_lines = ch->expected_messages;
}

/* Plan a one-phase blocked filter (bits a multiple of 512) by the blocked
 * planner. */
static void plan_blocked(uint64_t bits, double eps, dedup_sizing *out)
{
    rbf_plan_options po;
    rbf_plan_options_init(&po);
    rbf_plan_choice ch;
    memset(out, 0, sizeof *out);
    int rc = rbf_plan_blocked_memory(bits, eps, &po, &ch);
    if (rc == RBF_ENOMEM) {
        out->ok = -1;
        return;
    }
    if (rc < 0 || !ch.feasible || ch.sigma == 0 || ch.hashes == 0)
        return;
    out->ok = 1;
    out->hashes = ch.hashes;
    out->sigma = ch.sigma;
    out->fp = ch.fp;
    out->expected_lines = ch.expected_messages;
}

typedef struct blocked_job {
    uint64_t bits;
    double eps;
    dedup_sizing sz;
} blocked_job;

static void *blocked_thread(void *arg)
{
    blocked_job *j = arg;
    plan_blocked(j->bits, j->eps, &j->sz);
    return NULL;
}

/* The default layout: blocked (sized by the blocked planner) when its
 * lines per cycle at the target rate are within 5% of the flat plan's in
 * the same memory, flat otherwise.  Two phases: flat (the library has no
 * blocked two-phase planner).  The two plans run side by side. */
#define DEDUP_BLOCKED_WITHIN 0.95

typedef struct layout_choice {
    uint64_t bytes;
    double eps;
    unsigned phases;
    int decided;       /* the plans below were made */
    int given;         /* --layout: -1 not given, 0 flat, 1 blocked */
    int blocked;       /* the choice */
    int have_blocked;  /* blk was planned */
    dedup_sizing flat, blk;
    uint64_t blk_bits;
} layout_choice;

static void choose_layout(layout_choice *lc)
{
    uint64_t bits = lc->bytes * 8;
    lc->decided = 1;
    lc->blocked = 0;
    lc->have_blocked = 0;
    lc->blk_bits = bits - bits % 512;
    if (lc->phases == 2 || lc->blk_bits == 0) {
        plan_flat(bits, lc->eps, lc->phases, 1, &lc->flat);
        return;
    }
    blocked_job job = {.bits = lc->blk_bits, .eps = lc->eps};
    pthread_t th;
    int threaded = pthread_create(&th, NULL, blocked_thread, &job) == 0;
    plan_flat(bits, lc->eps, 1, !threaded, &lc->flat);
    if (threaded)
        pthread_join(th, NULL);
    else
        plan_blocked(job.bits, job.eps, &job.sz);
    lc->blk = job.sz;
    lc->have_blocked = 1;
    if (lc->blk.ok == 1 &&
        (lc->flat.ok != 1 ||
         lc->blk.expected_lines >= DEDUP_BLOCKED_WITHIN * lc->flat.expected_lines))
        lc->blocked = 1;
}

static int choose_layout_cb(void *ctx)
{
    layout_choice *lc = ctx;
    choose_layout(lc);
    if (lc->flat.ok < 0 || lc->blk.ok < 0) {
        cli_fail(CMD, "out of memory while planning");
        return -1;
    }
    return lc->blocked;
}

static void print_plans(const layout_choice *lc)
{
    if (!lc->decided)
        return;
    if (lc->flat.ok == 1)
        fprintf(stderr, "flat plan: k %u, sigma %" PRIu64 ", %.6g lines per cycle, fp %.9g\n",
                lc->flat.hashes, lc->flat.sigma, lc->flat.expected_lines, lc->flat.fp);
    else
        fprintf(stderr, "flat plan: none reaches the target\n");
    if (!lc->have_blocked)
        fprintf(stderr, "blocked plan: none (%s)\n",
                lc->phases == 2 ? "no blocked two-phase planner" : "memory under one block");
    else if (lc->blk.ok == 1)
        fprintf(stderr,
                "blocked plan: k %u, sigma %" PRIu64 ", %.6g lines per cycle, fp %.9g (%.4g of "
                "the flat plan's lines per cycle)\n",
                lc->blk.hashes, lc->blk.sigma, lc->blk.expected_lines, lc->blk.fp,
                lc->flat.ok == 1 ? lc->blk.expected_lines / lc->flat.expected_lines : NAN);
    else
        fprintf(stderr, "blocked plan: none reaches the target\n");
    if (lc->given >= 0)
        fprintf(stderr, "layout: %s (given by --layout; the planners would choose %s)\n",
                lc->given ? "blocked" : "flat", lc->blocked ? "blocked" : "flat");
    else
        fprintf(stderr,
                "layout chosen: %s (blocked when within 5%% of the flat plan's lines per cycle)\n",
                lc->blocked ? "blocked" : "flat");
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

static void print_stats(const dedup_run *r, const rbf_config *cfg, uint64_t bytes,
                        const dedup_sizing *sz, int blocked_model)
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
            cfg->layout == RBF_LAYOUT_BLOCKED
                ? (blocked_model ? " (the blocked planner's model)"
                                 : " (the flat layout's model: the blocked layout's "
                                   "rate is somewhat higher)")
                : "");
}

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

static int is_regular(int fd)
{
    struct stat sb;
    return fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
}

int cmd_dedup(int argc, char **argv)
{
    uint64_t bytes = DEDUP_DEFAULT_MEMORY, seed = 0, phases = 1, field = 0;
    double eps = DEDUP_DEFAULT_FP;
    int have_seed = 0, stats = 0, trace = 0, blocked = 0, layout_given = 0;
    int sep = RBF_FIELD_BLANKS, have_delim = 0, missing_keep = 0, repeated = 0, nul = 0;
    int on_error_pass = 0;
    const char *url = NULL, *key = NULL, *json_path = NULL;
    const char *err;

    cli_getopt_reset();
    int c, rc;
    while ((c = getopt_long(argc, argv, ":0", longopts, NULL)) != -1) {
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
            layout_given = 1;
            break;
        case OPT_REDIS: url = optarg; break;
        case OPT_KEY:
            if (!*optarg)
                return cli_usage(CMD, "--key: the key name is empty");
            key = optarg;
            break;
        case OPT_ON_ERROR:
            if (!strcmp(optarg, "pass"))
                on_error_pass = 1;
            else if (!strcmp(optarg, "fail"))
                on_error_pass = 0;
            else
                return cli_bad_value(CMD, "--on-error", optarg, NULL, "fail or pass");
            break;
        case OPT_FIELD:
            if ((rc = cli_opt_uint(CMD, "--field", optarg, 1, INT32_MAX, &field)))
                return rc;
            break;
        case OPT_DELIM:
            if (parse_delim(optarg, &sep) < 0)
                return cli_bad_value(CMD, "--delimiter", optarg, NULL,
                                     "one byte (or \\t, \\0, \\\\)");
            have_delim = 1;
            break;
        case OPT_JSON:
            if (!*optarg || optarg[0] == '.' || optarg[strlen(optarg) - 1] == '.' ||
                strstr(optarg, ".."))
                return cli_bad_value(CMD, "--json-field", optarg, NULL,
                                     "a dotted path of names, as a.b.c");
            json_path = optarg;
            break;
        case OPT_MISSING:
            if (!strcmp(optarg, "keep"))
                missing_keep = 1;
            else if (!strcmp(optarg, "empty"))
                missing_keep = 0;
            else
                return cli_bad_value(CMD, "--missing", optarg, NULL, "empty or keep");
            break;
        case OPT_REPEATED: repeated = 1; break;
        case '0': nul = 1; break;
        case OPT_STATS: stats = 1; break;
        case OPT_TRACE: trace = 1; break;
        case OPT_HELP:
            usage(stdout);
            return cli_finish_stdout(CMD);
        default:
            return cli_bad_option(CMD, argc, argv, longopts);
        }
    }
    if (have_delim && !field)
        return cli_usage(CMD, "--delimiter needs --field N");
    if (field && json_path)
        return cli_usage(CMD, "--field and --json-field exclude each other");
    if (missing_keep && !field && !json_path)
        return cli_usage(CMD, "--missing needs --field or --json-field");
    if (url && !key)
        return cli_usage(CMD, "--redis needs --key NAME");
    if (key && !url)
        return cli_usage(CMD, "--key needs --redis URL");
    if (on_error_pass && !url)
        return cli_usage(CMD, "--on-error needs --redis URL");
    if (url && trace)
        return cli_usage(CMD, "--trace-recycles is for a local filter, not --redis");
    if (url && layout_given && blocked && phases == 2)
        return cli_usage(CMD, "--redis: a blocked two-phase filter cannot be planned by the "
                              "server (docs/redis.md); use --layout flat or --phases 1");

    dedup_run *r = calloc(1, sizeof *r);
    if (!r)
        return cli_fail(CMD, "out of memory");
    r->out.fd = STDOUT_FILENO;
    r->out.cap = DEDUP_IOBUF;
    r->out.buf = malloc(r->out.cap);
    r->cap = DEDUP_IOBUF;
    r->buf = malloc(r->cap);
    r->trace_recycles = trace;
    r->repeated = repeated;
    r->rs = nul ? '\0' : '\n';
    r->field = field;
    r->sep = sep;
    r->json_path = json_path;
    r->missing_keep = missing_keep;
    if (!r->out.buf || !r->buf) {
        free(r->out.buf);
        free(r->buf);
        free(r);
        return cli_fail(CMD, "out of memory");
    }

    layout_choice lc = {.bytes = bytes, .eps = eps, .phases = (unsigned)phases,
                        .given = layout_given ? blocked : -1};
    rbf_config cfg;
    dedup_sizing sz = {0};
    int blocked_model = 0;
    if (url) {
        dedup_remote_opts ro = {.url = url,
                                .key = key,
                                .bytes = bytes,
                                .eps = eps,
                                .phases = (unsigned)phases,
                                .layout = layout_given ? blocked : -1,
                                .have_seed = have_seed,
                                .seed = seed,
                                .on_error_pass = on_error_pass,
                                .repeated = repeated,
                                .choose_layout = choose_layout_cb,
                                .ctx = &lc};
        rc = dedup_remote_open(&ro, &r->remote);
        if (rc != 0) {
            free(r->out.buf);
            free(r->buf);
            free(r);
            return rc;
        }
    } else {
        /* Size the filter.  Without --layout, both planners decide it; a
         * blocked filter is sized by the blocked planner (one phase) or the
         * flat plan (two phases: there is no blocked two-phase planner),
         * its bits per filter in whole 512-bit blocks. */
        if (!layout_given) {
            choose_layout(&lc);
            blocked = lc.blocked;
        }
        uint64_t bits = bytes * 8;
        if (blocked) {
            uint64_t unit = 512 * (uint64_t)phases;
            bits -= bits % unit;
            if (bits == 0) {
                free(r->out.buf);
                free(r->buf);
                free(r);
                return cli_usage(CMD,
                                 "--memory: the blocked layout needs at least %" PRIu64 " bytes",
                                 unit / 8);
            }
            bytes = bits / 8;
        }
        if (lc.decided)
            sz = blocked ? lc.blk : lc.flat;
        else if (blocked && phases == 1)
            plan_blocked(bits, eps, &sz);
        else
            plan_flat(bits, eps, (unsigned)phases, 1, &sz);
        blocked_model = blocked && phases == 1;
        if (sz.ok != 1) {
            free(r->out.buf);
            free(r->buf);
            free(r);
            if (sz.ok < 0)
                return cli_fail(CMD, "out of memory while planning a filter of %" PRIu64 " bytes",
                                bytes);
            return cli_fail(CMD,
                            "the planner finds no %s filter of %" PRIu64 " bytes for an average "
                            "false-positive rate of %g: give more --memory or a larger --fp",
                            phases == 2 ? "two-phase" : "one-phase", bytes, eps);
        }
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
    }

    int tty = isatty(STDERR_FILENO) && getenv("RBF_NO_PROGRESS") == NULL;
    r->t0 = r->t_last = cli_wall_seconds();
    int status = CLI_EXIT_OK;
    int stop = 0, failed = 0;
    if (optind >= argc) {
        r->progress = tty && is_regular(STDIN_FILENO);
        int rr = dedup_fd(r, STDIN_FILENO, "standard input");
        if (rr < 0)
            stop = 1;
        if (rr == -2)
            failed = 1;
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
        r->progress = tty && is_regular(fd);
        int rr = dedup_fd(r, fd, name);
        if (fd != STDIN_FILENO)
            close(fd);
        if (rr < 0)
            stop = 1;
        if (rr == -2)
            failed = 1;
        if (rr != 0 && rr != -1)
            status = CLI_EXIT_FAIL;
    }
    if (!stop) {
        int rr = flush_all(r);
        if (rr == -2) {
            failed = 1;
            status = CLI_EXIT_FAIL;
        }
    } else if (!r->out.closed && !r->out.failed) {
        out_flush(&r->out);
    }
    if (tty)
        progress_draw(r, 1);
    if (r->out.failed)
        status = CLI_EXIT_FAIL;
    if (failed && r->remote)
        fprintf(stderr,
                "rbf dedup: stopped: %" PRIu64 " lines written of %" PRIu64 " read; the %" PRIu64
                " lines of batches the server never answered were not written\n",
                r->lines_written, r->lines_read, dedup_remote_lost(r->remote));
    if (stats) {
        if (r->remote) {
            fprintf(stderr, "lines read: %" PRIu64 "\nlines written: %" PRIu64 "\n",
                    r->lines_read, r->lines_written);
            print_plans(&lc);
            dedup_remote_print_info(r->remote);
        } else {
            print_stats(r, &cfg, bytes, &sz, blocked_model);
            if (!lc.decided) /* --layout was given: both plans, for comparison */
                choose_layout(&lc);
            print_plans(&lc);
        }
    }
    rbf_free(r->filter);
    dedup_remote_close(r->remote);
    free(r->out.buf);
    free(r->buf);
    free(r->karena);
    free(r);
    return status;
}
