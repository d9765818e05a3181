/*
 * dedup_remote.c -- `rbf dedup --redis URL --key NAME` (dedup_remote.h).
 *
 * One blocking hiredis connection.  Batches go out as RBF.MADD commands
 * written as soon as they are queued (redisBufferWrite), with up to
 * REMOTE_WINDOW of them unanswered, so the server always has the next one
 * while the client reads the last answer.  Each batch keeps a copy of its
 * lines until its answer arrives; then the lines the server calls new (or,
 * with --repeated, seen) are emitted, oldest batch first, so the output is
 * in input order.  When the connection fails the unanswered batches are
 * dropped (a failure), or with --on-error pass written unfiltered while
 * the server is down, with a reconnection tried every second.
 */
#include "dedup_remote.h"

#include <errno.h>
#include <hiredis.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli_util.h"
#include "fields.h"

#define CMD "dedup"
#define REMOTE_WINDOW 8
#define REMOTE_RECONNECT_SECONDS 1.0

typedef struct rbatch {
    char *data; /* the lines, back to back */
    size_t dlen, dcap;
    size_t *llen;
    uint8_t *pass;
    size_t n, ncap;
    size_t nsent; /* keys in its RBF.MADD (0: no command was sent) */
} rbatch;

struct dedup_remote {
    dedup_remote_opts o;
    rbf_redis_url url;
    char where[1300];        /* the URL without credentials, for messages */
    const char *password;    /* from the URL or RBF_REDIS_AUTH, or NULL */
    redisContext *c;
    rbatch win[REMOTE_WINDOW];
    size_t head, count;      /* ring of unanswered batches */
    int down;                /* --on-error pass: the server is unreachable */
    double last_try;
    uint64_t lost;
    /* argv of one RBF.MADD */
    const char **argv;
    size_t *argl;
    size_t argcap;
};

/* ---- connection */

static const char *conn_error(redisContext *c)
{
    if (!c)
        return "out of memory";
    if (c->err == REDIS_ERR_EOF)
        return "the server closed the connection";
    return c->errstr[0] ? c->errstr : "connection error";
}

static redisReply *command(dedup_remote *d, int argc, const char **argv)
{
    return redisCommandArgv(d->c, argc, argv, NULL);
}

/* Connect, AUTH and SELECT.  Returns 0, or -1 with the reason in why.  A
 * reconnection waits at most 250 ms for the connection, so a server that
 * does not answer holds the stream back only briefly each second. */
static int connect_server(dedup_remote *d, int again, char *why, size_t whylen)
{
    struct timeval tv = {again ? 0 : 5, again ? 250000 : 0};
    if (d->c) {
        redisFree(d->c);
        d->c = NULL;
    }
    d->c = d->url.is_unix ? redisConnectUnixWithTimeout(d->url.path, tv)
                          : redisConnectWithTimeout(d->url.host, d->url.port, tv);
    if (!d->c || d->c->err) {
        snprintf(why, whylen, "cannot connect to %s: %s", d->where, conn_error(d->c));
        return -1;
    }
    struct timeval rt = {120, 0}; /* a planned reservation may take seconds */
    redisSetTimeout(d->c, rt);
    if (d->password) {
        const char *argv[3] = {"AUTH", d->url.has_user ? d->url.user : d->password,
                               d->password};
        redisReply *r = command(d, d->url.has_user ? 3 : 2, argv);
        if (!r) {
            snprintf(why, whylen, "%s: %s", d->where, conn_error(d->c));
            return -1;
        }
        int bad = r->type == REDIS_REPLY_ERROR;
        if (bad)
            snprintf(why, whylen, "%s refused the password: %s", d->where, r->str);
        freeReplyObject(r);
        if (bad)
            return -1;
    }
    if (d->url.db != 0) {
        char db[32];
        snprintf(db, sizeof db, "%d", d->url.db);
        const char *argv[2] = {"SELECT", db};
        redisReply *r = command(d, 2, argv);
        if (!r) {
            snprintf(why, whylen, "%s: %s", d->where, conn_error(d->c));
            return -1;
        }
        int bad = r->type == REDIS_REPLY_ERROR;
        if (bad)
            snprintf(why, whylen, "%s: SELECT %s: %s", d->where, db, r->str);
        freeReplyObject(r);
        if (bad)
            return -1;
    }
    return 0;
}

/* ---- the filter at the key */

/* RBF.INFO key as a reply (array of names and values), or NULL with why. */
static redisReply *info(dedup_remote *d, char *why, size_t whylen, int *missing)
{
    const char *argv[2] = {"RBF.INFO", d->o.key};
    *missing = 0;
    redisReply *r = command(d, 2, argv);
    if (!r) {
        snprintf(why, whylen, "%s: %s", d->where, conn_error(d->c));
        return NULL;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        if (strstr(r->str, "not found"))
            *missing = 1;
        else if (!strncmp(r->str, "WRONGTYPE", 9))
            snprintf(why, whylen, "key '%s' at %s holds another kind of value, not an rbf filter",
                     d->o.key, d->where);
        else if (strstr(r->str, "unknown command"))
            snprintf(why, whylen,
                     "%s has no rbf module (RBF.INFO is unknown): start redis-server with "
                     "--loadmodule rbf-redis.so (docs/redis.md)",
                     d->where);
        else
            snprintf(why, whylen, "%s: RBF.INFO %s: %s", d->where, d->o.key, r->str);
        freeReplyObject(r);
        return NULL;
    }
    if (r->type != REDIS_REPLY_ARRAY) {
        snprintf(why, whylen, "%s: unexpected reply to RBF.INFO", d->where);
        freeReplyObject(r);
        return NULL;
    }
    return r;
}

/* The value of field name in an RBF.INFO reply, as text, or NULL. */
static const char *info_field(const redisReply *r, const char *name, char *buf, size_t len)
{
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
        const redisReply *k = r->element[i], *v = r->element[i + 1];
        if (k->type != REDIS_REPLY_STRING && k->type != REDIS_REPLY_STATUS)
            continue;
        if (strcmp(k->str, name))
            continue;
        if (v->type == REDIS_REPLY_INTEGER)
            snprintf(buf, len, "%lld", v->integer);
        else if (v->type == REDIS_REPLY_STRING || v->type == REDIS_REPLY_STATUS)
            snprintf(buf, len, "%s", v->str);
        else
            return NULL;
        return buf;
    }
    return NULL;
}

static int reserve(dedup_remote *d, char *why, size_t whylen)
{
    int blocked = d->o.layout;
    if (blocked < 0) {
        blocked = d->o.choose_layout ? d->o.choose_layout(d->o.ctx) : 0;
        if (blocked < 0) {
            snprintf(why, whylen, "cannot choose a layout for the new filter");
            return -1;
        }
    }
    char eps[64], mem[32], phases[8], seed[32];
    snprintf(eps, sizeof eps, "%.17g", d->o.eps);
    snprintf(mem, sizeof mem, "%" PRIu64, d->o.bytes);
    snprintf(phases, sizeof phases, "%u", d->o.phases);
    snprintf(seed, sizeof seed, "%" PRIu64, d->o.seed);
    const char *argv[14];
    int argc = 0;
    argv[argc++] = "RBF.RESERVE";
    argv[argc++] = d->o.key;
    argv[argc++] = "ERROR_RATE";
    argv[argc++] = eps;
    argv[argc++] = "MEMORY";
    argv[argc++] = mem;
    argv[argc++] = "PHASES";
    argv[argc++] = phases;
    argv[argc++] = "LAYOUT";
    argv[argc++] = blocked ? "blocked" : "flat";
    if (d->o.have_seed) {
        argv[argc++] = "SEED";
        argv[argc++] = seed;
    }
    redisReply *r = command(d, argc, argv);
    if (!r) {
        snprintf(why, whylen, "%s: %s", d->where, conn_error(d->c));
        return -1;
    }
    int bad = r->type == REDIS_REPLY_ERROR && !strstr(r->str, "item exists");
    if (bad) {
        if (!strncmp(r->str, "WRONGTYPE", 9))
            snprintf(why, whylen, "key '%s' at %s holds another kind of value, not an rbf filter",
                     d->o.key, d->where);
        else
            snprintf(why, whylen, "%s refused to create the filter '%s': %s", d->where, d->o.key,
                     r->str);
    }
    freeReplyObject(r);
    return bad ? -1 : 0;
}

/* The filter at the key: created when missing (another process may create
 * it first: then it is used), compared with the options when warn. */
static int ensure_filter(dedup_remote *d, int warn, char *why, size_t whylen)
{
    int missing;
    redisReply *r = info(d, why, whylen, &missing);
    if (!r && missing) {
        if (reserve(d, why, whylen) < 0)
            return -1;
        warn = 1; /* someone else's reservation may have won */
        r = info(d, why, whylen, &missing);
        if (!r && missing)
            snprintf(why, whylen, "the filter '%s' vanished from %s just after it was created",
                     d->o.key, d->where);
    }
    if (!r)
        return -1;
    if (warn) {
        char b1[64], b2[64], b3[64], b4[64];
        const char *bits = info_field(r, "bits", b1, sizeof b1);
        const char *phases = info_field(r, "phases", b2, sizeof b2);
        const char *layout = info_field(r, "layout", b3, sizeof b3);
        const char *fp = info_field(r, "model_fp", b4, sizeof b4);
        int is_blocked = layout && !strcmp(layout, "blocked");
        uint64_t want_bits = d->o.bytes * 8;
        if (is_blocked) {
            uint64_t unit = 512 * (uint64_t)d->o.phases;
            want_bits -= want_bits % unit;
        }
        char diff[512] = "";
        size_t dl = 0;
        if (bits && strtoull(bits, NULL, 10) != want_bits)
            dl += (size_t)snprintf(diff + dl, sizeof diff - dl, " %s bits (--memory asks %" PRIu64 ");",
                                   bits, want_bits);
        if (phases && strtoul(phases, NULL, 10) != d->o.phases && dl < sizeof diff)
            dl += (size_t)snprintf(diff + dl, sizeof diff - dl, " %s phase(s) (--phases %u);",
                                   phases, d->o.phases);
        if (layout && d->o.layout >= 0 && is_blocked != d->o.layout && dl < sizeof diff)
            dl += (size_t)snprintf(diff + dl, sizeof diff - dl, " the %s layout (--layout %s);",
                                   layout, d->o.layout ? "blocked" : "flat");
        if (fp && dl < sizeof diff) {
            char *e;
            double v = strtod(fp, &e);
            if (e != fp && isfinite(v) && fabs(v / d->o.eps - 1) > 0.01)
                dl += (size_t)snprintf(diff + dl, sizeof diff - dl,
                                       " a model false-positive rate of %s (--fp %g);", fp,
                                       d->o.eps);
        }
        if (dl > 0) {
            diff[strlen(diff) - 1] = '\0';
            fprintf(stderr,
                    "rbf dedup: warning: the filter '%s' at %s differs from the options:%s; "
                    "it is used as it is\n",
                    d->o.key, d->where, diff);
        }
    }
    freeReplyObject(r);
    return 0;
}

int dedup_remote_open(const dedup_remote_opts *o, dedup_remote **out)
{
    *out = NULL;
    dedup_remote *d = calloc(1, sizeof *d);
    if (!d)
        return cli_fail(CMD, "out of memory");
    d->o = *o;
    const char *why = NULL;
    if (rbf_redis_url_parse(o->url, &d->url, &why) < 0) {
        free(d);
        return cli_usage(CMD, "--redis %s: %s", o->url, why);
    }
    if (d->url.is_unix)
        snprintf(d->where, sizeof d->where, "unix://%s", d->url.path);
    else
        snprintf(d->where, sizeof d->where, "redis://%s%s%s:%d/%d", strchr(d->url.host, ':') ? "[" : "",
                 d->url.host, strchr(d->url.host, ':') ? "]" : "", d->url.port, d->url.db);
    const char *env = getenv("RBF_REDIS_AUTH");
    if (d->url.has_password)
        d->password = d->url.password;
    else if (env && *env)
        d->password = env;
    char msg[2048];
    if (connect_server(d, 0, msg, sizeof msg) < 0) {
        if (o->on_error_pass && d->c && d->c->err) {
            fprintf(stderr,
                    "rbf dedup: %s; writing lines unfiltered until the server answers "
                    "(reconnecting every second)\n",
                    msg);
            d->down = 1;
            d->last_try = cli_wall_seconds();
            *out = d;
            return 0;
        }
        dedup_remote_close(d);
        return cli_fail(CMD, "%s", msg);
    }
    if (ensure_filter(d, 1, msg, sizeof msg) < 0) {
        dedup_remote_close(d);
        return cli_fail(CMD, "%s", msg);
    }
    *out = d;
    return 0;
}

/* ---- batches */

static void batch_reset(rbatch *b)
{
    b->dlen = 0;
    b->n = 0;
    b->nsent = 0;
}

static int batch_fill(rbatch *b, size_t n, const char *const *lines, const size_t *llens,
                      const uint8_t *pass)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += llens[i];
    if (total > b->dcap) {
        size_t cap = b->dcap ? b->dcap : 65536;
        while (cap < total)
            cap *= 2;
        char *nd = realloc(b->data, cap);
        if (!nd)
            return -1;
        b->data = nd;
        b->dcap = cap;
    }
    if (n > b->ncap) {
        size_t *nl = realloc(b->llen, n * sizeof *nl);
        if (!nl)
            return -1;
        b->llen = nl;
        uint8_t *np = realloc(b->pass, n);
        if (!np)
            return -1;
        b->pass = np;
        b->ncap = n;
    }
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        memcpy(b->data + off, lines[i], llens[i]);
        off += llens[i];
        b->llen[i] = llens[i];
        b->pass[i] = pass ? pass[i] : 0;
    }
    b->dlen = off;
    b->n = n;
    return 0;
}

/* Emit a batch's lines: by the answers when ans (nsent entries), else all. */
static int batch_emit(dedup_remote *d, rbatch *b, const redisReply *ans, dedup_emit_fn emit,
                      void *ctx)
{
    size_t off = 0, j = 0;
    for (size_t i = 0; i < b->n; i++) {
        int write = 1;
        if (ans && !b->pass[i]) {
            const redisReply *e = ans->element[j++];
            int is_new = e->type == REDIS_REPLY_INTEGER && e->integer == 1;
            write = d->o.repeated ? !is_new : is_new;
        }
        if (write && emit(ctx, b->data + off, b->llen[i]) < 0)
            return -1;
        off += b->llen[i];
    }
    return 0;
}

static void go_down(dedup_remote *d, const char *reason)
{
    fprintf(stderr,
            "rbf dedup: lost %s (%s): writing lines unfiltered while it is down "
            "(reconnecting every second)\n",
            d->where, reason);
    d->down = 1;
    d->last_try = cli_wall_seconds();
    if (d->c) {
        redisFree(d->c);
        d->c = NULL;
    }
}

/* A write failed, but the answers of older batches may already be here:
 * take them (and write their lines) until the connection has nothing more.
 * Returns 0, or -1 when emit says output must stop. */
static int salvage(dedup_remote *d, dedup_emit_fn emit, void *ctx)
{
    d->c->err = 0;
    d->c->errstr[0] = '\0';
    while (d->count > 0) {
        rbatch *b = &d->win[d->head];
        redisReply *r = NULL;
        if (b->nsent > 0) {
            void *rv = NULL;
            for (;;) {
                if (redisGetReplyFromReader(d->c, &rv) != REDIS_OK)
                    return 0;
                if (rv)
                    break;
                if (redisBufferRead(d->c) != REDIS_OK)
                    return 0;
            }
            r = rv;
            if (r->type != REDIS_REPLY_ARRAY || r->elements != b->nsent) {
                freeReplyObject(r);
                return 0;
            }
        }
        d->head = (d->head + 1) % REMOTE_WINDOW;
        d->count--;
        int rc = batch_emit(d, b, r, emit, ctx);
        if (r)
            freeReplyObject(r);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* The connection failed: emit every unanswered batch unfiltered (--on-error
 * pass) or drop them and fail.  After a failed write, the answers already
 * received are used first. */
static int connection_lost(dedup_remote *d, int on_write, dedup_emit_fn emit, void *ctx)
{
    char reason[512];
    snprintf(reason, sizeof reason, "%s", conn_error(d->c));
    if (on_write && salvage(d, emit, ctx) < 0)
        return -1;
    if (!d->o.on_error_pass) {
        for (size_t i = 0; i < d->count; i++)
            d->lost += d->win[(d->head + i) % REMOTE_WINDOW].n;
        d->count = 0;
        cli_fail(CMD, "lost the connection to %s: %s", d->where, reason);
        return -2;
    }
    go_down(d, reason);
    while (d->count > 0) {
        rbatch *b = &d->win[d->head];
        d->head = (d->head + 1) % REMOTE_WINDOW;
        d->count--;
        if (batch_emit(d, b, NULL, emit, ctx) < 0)
            return -1;
    }
    return 0;
}

/* Read the answer of the oldest batch and emit its lines. */
static int complete_one(dedup_remote *d, dedup_emit_fn emit, void *ctx)
{
    rbatch *b = &d->win[d->head];
    redisReply *r = NULL;
    if (b->nsent > 0) {
        void *rv = NULL;
        if (redisGetReply(d->c, &rv) != REDIS_OK || !rv)
            return connection_lost(d, 0, emit, ctx);
        r = rv;
        if (r->type == REDIS_REPLY_ERROR) {
            cli_fail(CMD, "%s answered RBF.MADD %s with: %s", d->where, d->o.key, r->str);
            freeReplyObject(r);
            for (size_t i = 0; i < d->count; i++)
                d->lost += d->win[(d->head + i) % REMOTE_WINDOW].n;
            d->count = 0;
            return -2;
        }
        if (r->type != REDIS_REPLY_ARRAY || r->elements != b->nsent) {
            cli_fail(CMD, "%s sent an unexpected answer to RBF.MADD", d->where);
            freeReplyObject(r);
            for (size_t i = 0; i < d->count; i++)
                d->lost += d->win[(d->head + i) % REMOTE_WINDOW].n;
            d->count = 0;
            return -2;
        }
    }
    d->head = (d->head + 1) % REMOTE_WINDOW;
    d->count--;
    int rc = batch_emit(d, b, r, emit, ctx);
    if (r)
        freeReplyObject(r);
    return rc;
}

static void try_reconnect(dedup_remote *d)
{
    double now = cli_wall_seconds();
    if (now - d->last_try < REMOTE_RECONNECT_SECONDS)
        return;
    d->last_try = now;
    char msg[2048];
    if (connect_server(d, 1, msg, sizeof msg) < 0 || ensure_filter(d, 0, msg, sizeof msg) < 0) {
        if (d->c) {
            redisFree(d->c);
            d->c = NULL;
        }
        return;
    }
    d->down = 0;
    fprintf(stderr, "rbf dedup: reconnected to %s: filtering again\n", d->where);
}

int dedup_remote_submit(dedup_remote *d, size_t n, const void *const *keys, const size_t *klens,
                        const char *const *lines, const size_t *llens, const uint8_t *pass,
                        dedup_emit_fn emit, void *ctx)
{
    if (n == 0)
        return 0;
    if (d->down)
        try_reconnect(d);
    if (d->down) {
        for (size_t i = 0; i < n; i++)
            if (emit(ctx, lines[i], llens[i]) < 0)
                return -1;
        return 0;
    }
    while (d->count == REMOTE_WINDOW) {
        int rc = complete_one(d, emit, ctx);
        if (rc < 0)
            return rc;
        if (d->down)
            return dedup_remote_submit(d, n, keys, klens, lines, llens, pass, emit, ctx);
    }
    rbatch *b = &d->win[(d->head + d->count) % REMOTE_WINDOW];
    batch_reset(b);
    if (batch_fill(b, n, lines, llens, pass) < 0) {
        cli_fail(CMD, "out of memory");
        return -2;
    }
    if (n + 2 > d->argcap) {
        size_t cap = n + 2;
        const char **na = realloc(d->argv, cap * sizeof *na);
        if (!na) {
            cli_fail(CMD, "out of memory");
            return -2;
        }
        d->argv = na;
        size_t *nl = realloc(d->argl, cap * sizeof *nl);
        if (!nl) {
            cli_fail(CMD, "out of memory");
            return -2;
        }
        d->argl = nl;
        d->argcap = cap;
    }
    size_t argc = 0;
    d->argv[argc] = "RBF.MADD";
    d->argl[argc++] = 8;
    d->argv[argc] = d->o.key;
    d->argl[argc++] = strlen(d->o.key);
    for (size_t i = 0; i < n; i++) {
        if (pass && pass[i])
            continue;
        d->argv[argc] = keys[i];
        d->argl[argc++] = klens[i];
    }
    b->nsent = argc - 2;
    d->count++;
    if (b->nsent == 0)
        return 0;
    if (redisAppendCommandArgv(d->c, (int)argc, d->argv, d->argl) != REDIS_OK) {
        cli_fail(CMD, "out of memory");
        return -2;
    }
    int done = 0;
    while (!done)
        if (redisBufferWrite(d->c, &done) != REDIS_OK)
            return connection_lost(d, 1, emit, ctx);
    return 0;
}

int dedup_remote_drain(dedup_remote *d, dedup_emit_fn emit, void *ctx)
{
    while (d->count > 0) {
        int rc = complete_one(d, emit, ctx);
        if (rc < 0)
            return rc;
    }
    return 0;
}

uint64_t dedup_remote_lost(const dedup_remote *d)
{
    return d->lost;
}

void dedup_remote_print_info(dedup_remote *d)
{
    if (d->down || !d->c) {
        fprintf(stderr, "server: %s unreachable, no RBF.INFO\n", d->where);
        return;
    }
    char why[2048];
    int missing;
    redisReply *r = info(d, why, sizeof why, &missing);
    if (!r) {
        fprintf(stderr, "server: no RBF.INFO (%s)\n", missing ? "the filter is gone" : why);
        return;
    }
    fprintf(stderr, "server: %s key %s\n", d->where, d->o.key);
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
        const redisReply *k = r->element[i], *v = r->element[i + 1];
        if (k->type != REDIS_REPLY_STRING && k->type != REDIS_REPLY_STATUS)
            continue;
        if (v->type == REDIS_REPLY_INTEGER)
            fprintf(stderr, "server %s: %lld\n", k->str, v->integer);
        else if (v->type == REDIS_REPLY_STRING || v->type == REDIS_REPLY_STATUS)
            fprintf(stderr, "server %s: %s\n", k->str, v->str);
        else if (v->type == REDIS_REPLY_NIL)
            fprintf(stderr, "server %s: nil\n", k->str);
    }
    freeReplyObject(r);
}

void dedup_remote_close(dedup_remote *d)
{
    if (!d)
        return;
    if (d->c)
        redisFree(d->c);
    for (size_t i = 0; i < REMOTE_WINDOW; i++) {
        free(d->win[i].data);
        free(d->win[i].llen);
        free(d->win[i].pass);
    }
    free(d->argv);
    free(d->argl);
    memset(d->url.password, 0, sizeof d->url.password); /* not left in freed memory */
    free(d);
}
