/*
 * plan.c -- reservations: the worker threads, the planner and the models,
 * creating a filter, and the commands that wait while a key's plan runs.
 *
 * A reservation by ERROR_RATE is planned (rbf_plan_memory,
 * rbf_plan_messages, the blocked planners) on a worker thread while the
 * client is blocked, then created on the main thread.  Until the plan is
 * done the key does not exist for persistence or replication (nothing
 * half-made is ever saved or sent), but every command on it, from any
 * client, waits for the plan in a queue of the key's pending plan and runs
 * once the filter exists, in the order the commands arrived.  DEL, UNLINK,
 * RENAME, RENAMENX and MOVE of the key, FLUSHDB, FLUSHALL and SWAPDB cancel
 * the plan (the module's command filter and server events); the reserving
 * client gets an error that says so, and so does every command that waited.
 * The reservation replicates as the explicit form with the seed it drew,
 * so replicas and AOF replays never plan.
 *
 * Model values of an explicit reservation are computed by a worker into an
 * rr_model shared (reference-counted) with the value; RBF.INFO shows
 * "pending" until they are ready.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "rr.h"

#define RR_WORKERS 2

/* ----------------------------------------------------------- worker pool */

typedef struct rr_job {
    struct rr_job *next;
    void (*run)(struct rr_job *job);
} rr_job;

static pthread_mutex_t q_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cv = PTHREAD_COND_INITIALIZER;
static rr_job *q_head, *q_tail;

static void *worker_main(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&q_mu);
        while (!q_head)
            pthread_cond_wait(&q_cv, &q_mu);
        rr_job *j = q_head;
        q_head = j->next;
        if (!q_head)
            q_tail = NULL;
        pthread_mutex_unlock(&q_mu);
        j->run(j);
    }
    return NULL;
}

static void queue_job(rr_job *j)
{
    j->next = NULL;
    pthread_mutex_lock(&q_mu);
    if (q_tail)
        q_tail->next = j;
    else
        q_head = j;
    q_tail = j;
    pthread_cond_signal(&q_cv);
    pthread_mutex_unlock(&q_mu);
}

int rr_workers_start(void)
{
    for (int i = 0; i < RR_WORKERS; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker_main, NULL) != 0)
            return -1;
        pthread_detach(t);
    }
    return 0;
}

/* ------------------------------------------------------------ the models */

void rr_model_release(rr_model *m)
{
    if (m && atomic_fetch_sub(&m->refs, 1) == 1)
        rr_free(m);
}

static int model_progress(void *ctx, uint64_t done, uint64_t total)
{
    (void)done;
    (void)total;
    return atomic_load((atomic_int *)ctx);
}

/* The model's average false-positive rate and messages per cycle for a
 * configuration (rbf_predict, the same answer the simulator and the CLI
 * give); RR_MODEL_NONE where no model applies (two-phase N-bounded
 * blocked) or it failed. */
static int model_compute(const rbf_config *c, atomic_int *cancel, double *fp, double *mpc)
{
    rbf_predict_options o;
    rbf_predict_options_init(&o);
    o.progress = model_progress;
    o.progress_ctx = cancel;
    rbf_prediction pr;
    int rc = rbf_predict(c, &o, &pr);
    *fp = pr.fp;
    *mpc = pr.messages_per_cycle;
    if (rc != RBF_OK) {
        *fp = NAN;
        if (!c->messages)
            *mpc = NAN;
        return RR_MODEL_NONE;
    }
    return RR_MODEL_READY;
}

typedef struct model_job {
    rr_job base;
    rr_model *m;
} model_job;

static void model_job_run(rr_job *j)
{
    model_job *mj = (model_job *)j;
    rr_model *m = mj->m;
    double fp = NAN, mpc = NAN;
    if (!atomic_load(&m->cancel)) {
        int st = model_compute(&m->cfg, &m->cancel, &fp, &mpc);
        m->fp = fp;
        m->mpc = mpc;
        atomic_store(&m->state, st);
    }
    rr_model_release(m);
    rr_free(mj);
}

/* A model for cfg: ready at once if the planner gave the values (fp not
 * NaN), else computed by a worker. */
rr_model *rr_model_start(const rbf_config *cfg, double fp, double mpc)
{
    rr_model *m = rr_alloc(sizeof *m);
    if (!m)
        return NULL;
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    atomic_init(&m->refs, 1);
    atomic_init(&m->cancel, 0);
    if (!isnan(fp)) {
        m->fp = fp;
        m->mpc = mpc;
        atomic_init(&m->state, RR_MODEL_READY);
        return m;
    }
    m->fp = m->mpc = NAN;
    atomic_init(&m->state, RR_MODEL_PENDING);
    model_job *mj = rr_alloc(sizeof *mj);
    if (!mj) {
        atomic_init(&m->state, RR_MODEL_NONE);
        return m;
    }
    mj->base.run = model_job_run;
    mj->m = m;
    atomic_fetch_add(&m->refs, 1);
    queue_job(&mj->base);
    return m;
}


/* ------------------------------------------------------------ planning */

/* The blocked layout's plan (one phase; parse_reserve refuses two). */
static void plan_run_blocked(const rr_req *q, const rbf_plan_options *po, rr_plan_out *o)
{
    rbf_plan_choice ch;
    memset(&ch, 0, sizeof ch);
    uint64_t bits = q->mem_bits / RBF_BLOCK_BITS * RBF_BLOCK_BITS;
    int rc = q->capacity ? rbf_plan_blocked_capacity(q->capacity, q->eps, po, &bits, &ch)
                         : rbf_plan_blocked_memory(bits, q->eps, po, &ch);
    o->err = NULL;
    if (rc == RBF_ECANCELED) {
        o->err = "ERR the reservation was cancelled while its filter was being planned";
        return;
    }
    if (rc == RBF_ENOMEM) {
        o->err = q->capacity ? "ERR no blocked filter holds CAPACITY at this ERROR_RATE "
                               "(too large, or out of memory while planning)"
                             : "ERR out of memory while planning";
        return;
    }
    if (rc != RBF_OK) {
        o->err = q->capacity ? "ERR no blocked filter holds CAPACITY at this ERROR_RATE (planner "
                               "refused)"
                             : "ERR MEMORY is too small to plan a blocked filter";
        return;
    }
    if (!ch.feasible || !ch.sigma) {
        o->err = "ERR ERROR_RATE cannot be reached in this MEMORY with the blocked layout and at "
                 "most 32 hashes";
        return;
    }
    rbf_config_init(&o->cfg);
    o->cfg.bits = bits;
    o->cfg.hashes = ch.hashes;
    o->cfg.sigma = ch.sigma;
    o->cfg.phases = 1;
    o->cfg.hashing = q->hashing;
    o->cfg.recycle = q->recycle;
    o->cfg.layout = RBF_LAYOUT_BLOCKED;
    if (q->given & (1u << O_SEED))
        o->cfg.seed = q->seed;
    o->fp = ch.fp;
    o->mpc = ch.expected_messages;
}

static void plan_run(const rr_req *q, rr_plan_out *o, atomic_int *cancel)
{
    rbf_plan_options po;
    rbf_plan_options_init(&po);
    if (cancel) {
        po.progress = model_progress;
        po.progress_ctx = cancel;
    }
    po.hashing = (q->hashing == RBF_NON_COLLIDING) ? RBF_NON_COLLIDING : RBF_COLLIDING;
    po.recycle = (q->recycle == RBF_RETAINING) ? RBF_RETAINING : RBF_NON_RETAINING;
    if (q->layout == RBF_LAYOUT_BLOCKED) {
        plan_run_blocked(q, &po, o);
        return;
    }
    /* the one policy the filter is built with: a fraction of the time */
    po.policies = q->phases == 2 ? RBF_PLAN_TWO_PHASE : RBF_PLAN_SIGMA_BOUNDED;
    rbf_plan pl;
    memset(&pl, 0, sizeof pl);
    uint64_t bits = q->mem_bits;
    int rc;
    if (q->capacity)
        rc = q->phases == 2 ? rbf_plan_messages_two_phase(q->capacity, q->eps, &po, &bits, &pl)
                            : rbf_plan_messages(q->capacity, q->eps, &po, &bits, &pl);
    else
        rc = rbf_plan_memory(bits, q->eps, &po, &pl);
    o->err = NULL;
    if (rc == RBF_ECANCELED) {
        o->err = "ERR the reservation was cancelled while its filter was being planned";
        return;
    }
    if (rc == RBF_ENOMEM) {
        o->err = "ERR out of memory while planning";
        return;
    }
    if (rc != RBF_OK) {
        o->err = q->capacity ? "ERR no filter holds CAPACITY at this ERROR_RATE (planner refused)"
                             : "ERR MEMORY is too small to plan a filter";
        return;
    }
    const rbf_plan_choice *c = q->phases == 2 ? &pl.two_phase : &pl.sigma_bounded;
    if (!c->feasible || !c->sigma) {
        o->err = "ERR ERROR_RATE cannot be reached in this MEMORY with at most 32 hashes";
        return;
    }
    rbf_config_init(&o->cfg);
    o->cfg.bits = q->capacity ? bits : q->mem_bits;
    o->cfg.hashes = c->hashes;
    o->cfg.sigma = c->sigma;
    o->cfg.phases = q->phases;
    o->cfg.hashing = q->hashing;
    o->cfg.recycle = q->recycle;
    if (q->given & (1u << O_SEED))
        o->cfg.seed = q->seed;
    o->fp = c->fp;
    o->mpc = c->expected_messages;
}



void rr_plan_run(const rr_req *q, rr_plan_out *o)
{
    plan_run(q, o, NULL);
}

/* ------------------------------------------------------------ creating */

static void fmt_u64(char *buf, size_t cap, uint64_t v)
{
    snprintf(buf, cap, "%llu", (unsigned long long)v);
}

/* Propagate the explicit form of a reservation, with its seed. */
static void replicate_reserve(RedisModuleCtx *ctx, RedisModuleString *key, const rbf_config *c)
{
    char b[24], h[24], t[24], p[24], s[24];
    fmt_u64(b, sizeof b, c->bits);
    fmt_u64(h, sizeof h, c->hashes);
    fmt_u64(t, sizeof t, c->sigma ? c->sigma : c->messages);
    fmt_u64(p, sizeof p, c->phases);
    fmt_u64(s, sizeof s, c->seed);
    const char *hashing = c->hashing == RBF_NON_COLLIDING ? "non-colliding" : "colliding";
    const char *recycle = c->recycle == RBF_RETAINING ? "retaining" : "non-retaining";
    const char *bound = c->sigma ? "SIGMA" : "MESSAGES";
    /* a flat filter's form is exactly that of the module before LAYOUT */
    if (c->layout == RBF_LAYOUT_BLOCKED)
        RedisModule_Replicate(ctx, "RBF.RESERVE", "scccccccccccccccc", key, "BITS", b, "HASHES", h,
                              bound, t, "PHASES", p, "HASHING", hashing, "RECYCLE", recycle,
                              "SEED", s, "LAYOUT", "blocked");
    else
        RedisModule_Replicate(ctx, "RBF.RESERVE", "scccccccccccccc", key, "BITS", b, "HASHES", h,
                              bound, t, "PHASES", p, "HASHING", hashing, "RECYCLE", recycle, "SEED",
                              s);
}

int rr_create_and_reply(RedisModuleCtx *ctx, RedisModuleString *key, const rbf_config *c,
                        double fp, double mpc, RedisModuleString **items, size_t n, int kind)
{
    const char *why = NULL;
    int rc = rbf_config_check(c, &why);
    if (rc != RBF_OK)
        return rr_reply_errf(ctx, "ERR invalid filter: %s", why ? why : rbf_strerror(rc));
    RedisModuleKey *k = RedisModule_OpenKey(ctx, key, REDISMODULE_READ | REDISMODULE_WRITE);
    int t = RedisModule_KeyType(k);
    if (t != REDISMODULE_KEYTYPE_EMPTY) {
        int ours = t == REDISMODULE_KEYTYPE_MODULE && RedisModule_ModuleTypeGetType(k) == rr_type;
        RedisModule_CloseKey(k);
        return ours ? RedisModule_ReplyWithError(ctx, "ERR item exists") : rr_reply_wrongtype(ctx);
    }
    if (rr_check_room(ctx, rr_config_bytes(c) + sizeof(rr_value)) != 0) {
        RedisModule_CloseKey(k);
        return REDISMODULE_OK;
    }
    rbf *f = NULL;
    rc = rbf_new(c, &f);
    rr_value *v = rc == RBF_OK ? rr_value_new() : NULL;
    rr_model *m = v ? rr_model_start(c, fp, mpc) : NULL;
    if (!m) {
        rbf_free(f);
        rr_free(v);
        RedisModule_CloseKey(k);
        return rr_reply_errf(ctx, "ERR cannot create the filter: %s",
                             rc != RBF_OK ? rbf_strerror(rc) : "out of memory");
    }
    rr_value_set_filter(v, f, m);
    RedisModule_ModuleTypeSetValue(k, rr_type, v);
    RedisModule_CloseKey(k);
    replicate_reserve(ctx, key, c);
    if (n) {
        /* the items replicate as one RBF.MADD after the reservation */
        RedisModule_Replicate(ctx, "RBF.MADD", "sv", key, items, n);
        rr_insert_items(ctx, v, items, n, kind);
        return REDISMODULE_OK;
    }
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

/* ------------------------------------------------------------ pending plans
 *
 * The table of keys being planned and the commands waiting on each is
 * touched on the main thread only (commands, the command filter, server
 * events, blocked-client callbacks); the workers see only their job. */

typedef struct waiter {
    struct waiter *next;
    RedisModuleBlockedClient *bc;
    RedisModuleCmdFunc fn; /* the command, run again once the plan is done */
    RedisModuleString **argv;
    int argc;
    char err[200]; /* not empty: the plan failed, reply this instead */
} waiter;

typedef struct plan_job plan_job;
typedef struct pending {
    struct pending *next;
    int db;
    RedisModuleString *key;
    plan_job *job;
    waiter *head, *tail;
    size_t nwait;
} pending;

struct plan_job {
    rr_job base;
    RedisModuleBlockedClient *bc;
    rr_req req;
    RedisModuleString *key;
    RedisModuleString **items;
    size_t nitems;
    int kind;
    rr_plan_out out;
    atomic_int cancel;
    pending *p;        /* its entry in the table, NULL once out of it */
    int replied;       /* the reply callback ran */
    char why[160];     /* set when cancelled: the reason */
};

static pending *pending_head;
/* Nonzero while a waiting command runs again: it must not block. */
static int in_rerun;

static pending *pending_find(int db, RedisModuleString *key)
{
    for (pending *p = pending_head; p; p = p->next)
        if (p->db == db && RedisModule_StringCompare(p->key, key) == 0)
            return p;
    return NULL;
}

/* Take p out of the table and hand its waiters to the server to run (err
 * NULL: again, now that the plan is done; else failed with err). */
static void pending_finish(pending *p, const char *err)
{
    for (pending **pp = &pending_head; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    atomic_fetch_sub(&rr_count.plans_waiting, 1);
    waiter *w = p->head;
    while (w) {
        waiter *next = w->next;
        if (err)
            snprintf(w->err, sizeof w->err, "%s", err);
        atomic_fetch_sub(&rr_count.plan_waiters, 1);
        RedisModule_UnblockClient(w->bc, w);
        w = next;
    }
    if (p->job)
        p->job->p = NULL;
    RedisModule_FreeString(NULL, p->key);
    rr_free(p);
}

static int waiter_reply_cb(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    (void)argv;
    (void)argc;
    waiter *w = RedisModule_GetBlockedClientPrivateData(ctx);
    if (w->err[0])
        return RedisModule_ReplyWithError(ctx, w->err);
    in_rerun++;
    int rc = w->fn(ctx, w->argv, w->argc);
    in_rerun--;
    return rc;
}

static void waiter_free_cb(RedisModuleCtx *ctx, void *privdata)
{
    (void)ctx;
    waiter *w = privdata;
    for (int i = 0; i < w->argc; i++)
        RedisModule_FreeString(NULL, w->argv[i]);
    rr_free(w->argv);
    rr_free(w);
}

/* Could the caller block, were it not run again from a reply callback? */
static int ctx_may_block(RedisModuleCtx *ctx)
{
    int fl = RedisModule_GetContextFlags(ctx);
    return !(fl & (REDISMODULE_CTX_FLAGS_LUA | REDISMODULE_CTX_FLAGS_MULTI |
                   REDISMODULE_CTX_FLAGS_REPLICATED | REDISMODULE_CTX_FLAGS_LOADING |
                   REDISMODULE_CTX_FLAGS_DENY_BLOCKING));
}

static int can_block(RedisModuleCtx *ctx)
{
    return !in_rerun && ctx_may_block(ctx);
}

int rr_wait_for_plan(RedisModuleCtx *ctx, RedisModuleCmdFunc fn, RedisModuleString **argv,
                     int argc)
{
    if (!pending_head || argc < 2)
        return 0;
    pending *p = pending_find(RedisModule_GetSelectedDb(ctx), argv[1]);
    if (!p)
        return 0;
    if (!can_block(ctx)) {
        char shown[44];
        rr_printable(argv[1], shown, sizeof shown);
        rr_reply_errf(ctx, "ERR key '%s' is being reserved (its filter is being planned) and a "
                           "command inside MULTI or a script cannot wait: retry after the "
                           "reservation's reply",
                      shown);
        return 1;
    }
    waiter *w = rr_alloc(sizeof *w);
    RedisModuleString **copy = w ? rr_alloc((size_t)argc * sizeof *copy) : NULL;
    if (!copy) {
        rr_free(w);
        RedisModule_ReplyWithError(ctx, "ERR out of memory");
        return 1;
    }
    memset(w, 0, sizeof *w);
    for (int i = 0; i < argc; i++)
        copy[i] = RedisModule_CreateStringFromString(NULL, argv[i]);
    w->fn = fn;
    w->argv = copy;
    w->argc = argc;
    w->bc = RedisModule_BlockClient(ctx, waiter_reply_cb, NULL, waiter_free_cb, 0);
    if (!w->bc) {
        waiter_free_cb(ctx, w);
        RedisModule_ReplyWithError(ctx, "ERR cannot block the client to wait for the plan");
        return 1;
    }
    if (p->tail)
        p->tail->next = w;
    else
        p->head = w;
    p->tail = w;
    p->nwait++;
    atomic_fetch_add(&rr_count.plan_waiters, 1);
    return 1;
}

int rr_begin(RedisModuleCtx *ctx, RedisModuleCmdFunc self, RedisModuleString **argv, int argc,
             int bad_arity)
{
    if (bad_arity) {
        RedisModule_WrongArity(ctx);
        return 1;
    }
    return rr_wait_for_plan(ctx, self, argv, argc);
}

void rr_cancel_plans(int db, RedisModuleString *name, const char *why)
{
    pending *p = pending_head;
    while (p) {
        pending *next = p->next;
        if ((db < 0 || p->db == db) && (!name || RedisModule_StringCompare(p->key, name) == 0)) {
            plan_job *j = p->job;
            snprintf(j->why, sizeof j->why, "ERR the reservation was cancelled: %s while its "
                                            "filter was being planned", why);
            atomic_store(&j->cancel, 1);
            atomic_fetch_add(&rr_count.plans_cancelled, 1);
            pending_finish(p, j->why);
        }
        p = next;
    }
}

void rr_cancel_plans_renamed_onto(RedisModuleCtx *ctx, int db, RedisModuleString *dst,
                                  RedisModuleString *src)
{
    pending *p = pending_head;
    while (p) {
        pending *next = p->next;
        if ((db < 0 || p->db == db) && RedisModule_StringCompare(p->key, dst) == 0) {
            /* a source being planned itself counts as there: its RENAME
             * cancels that plan (the source's) and would move the key */
            if (!ctx || pending_find(p->db, src) ||
                RedisModule_SelectDb(ctx, p->db) != REDISMODULE_OK ||
                RedisModule_KeyExists(ctx, src))
                rr_cancel_plans(p->db, dst, "the key was overwritten by RENAME");
        }
        p = next;
    }
}

/* ------------------------------------------------------------ planned reservations */

static void plan_job_free(plan_job *pj)
{
    if (!pj)
        return;
    if (pj->key)
        RedisModule_FreeString(NULL, pj->key);
    for (size_t i = 0; i < pj->nitems; i++)
        RedisModule_FreeString(NULL, pj->items[i]);
    rr_free(pj->items);
    rr_free(pj);
}

static void plan_job_run(rr_job *j)
{
    plan_job *pj = (plan_job *)j;
    if (!atomic_load(&pj->cancel))
        plan_run(&pj->req, &pj->out, &pj->cancel);
    RedisModule_UnblockClient(pj->bc, pj);
}

static int plan_reply_cb(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    (void)argv;
    (void)argc;
    plan_job *pj = RedisModule_GetBlockedClientPrivateData(ctx);
    pj->replied = 1;
    if (pj->why[0])
        return RedisModule_ReplyWithError(ctx, pj->why);
    pending *p = pj->p;
    if (pj->out.err) {
        if (p)
            pending_finish(p, pj->out.err);
        return RedisModule_ReplyWithError(ctx, pj->out.err);
    }
    /* the filter first, then the commands that waited, in their order */
    in_rerun++;
    rr_create_and_reply(ctx, pj->key, &pj->out.cfg, pj->out.fp, pj->out.mpc, pj->items,
                        pj->nitems, pj->kind);
    in_rerun--;
    if (p)
        pending_finish(p, NULL);
    return REDISMODULE_OK;
}

/* Always called, also when the reserving client went away before its
 * reply: then the reservation is dropped and the commands that waited run
 * as if it had never come. */
static void plan_free_cb(RedisModuleCtx *ctx, void *privdata)
{
    (void)ctx;
    plan_job *pj = privdata;
    if (pj->p)
        pending_finish(pj->p, NULL);
    plan_job_free(pj);
}

/* A cheap lower bound of the memory a planned request needs (bytes): the
 * classic Bloom filter's n log2(1/eps) / ln 2 bits for CAPACITY, MEMORY
 * itself otherwise.  Checked before planning so that an absurd request is
 * refused at once. */
static uint64_t plan_lower_bound(const rr_req *q)
{
    if (!q->capacity)
        return q->mem_bits / 8;
    double b = (double)q->capacity * log2(1.0 / q->eps) / log(2.0) / 8.0;
    return b >= 1.8e19 ? UINT64_MAX : (uint64_t)b;
}

int rr_reserve(RedisModuleCtx *ctx, RedisModuleString *key, const rr_req *q,
               RedisModuleString **items, size_t n, int kind)
{
    if (!q->planned) {
        rbf_config c;
        rr_req_config(q, &c);
        return rr_create_and_reply(ctx, key, &c, NAN, NAN, items, n, kind);
    }
    if (rr_check_room(ctx, plan_lower_bound(q)) != 0)
        return REDISMODULE_OK;
    /* A reservation that waited behind another one, whose client went away
     * before its reply, runs again from its reply callback, where a client
     * cannot block: it was sent by a client that could wait, so it is
     * planned here, inline, whatever its size (a rare stall: it takes a
     * disconnect during a plan and a second reservation of the same key). */
    const int may_block = ctx_may_block(ctx);
    if (!may_block) {
        /* inside MULTI or Lua the plan would run on the main thread: only
         * small ones (milliseconds) are allowed there */
        if (q->layout == RBF_LAYOUT_BLOCKED)
            return rr_reply_errf(ctx, "ERR a LAYOUT blocked reservation cannot be planned inside "
                                      "MULTI or a script (the blocked planner takes longer than "
                                      "the main thread may stall): reserve outside, or give "
                                      "BITS/HASHES/SIGMA");
        if (plan_lower_bound(q) > RR_INLINE_PLAN_BYTES)
            return rr_reply_errf(ctx, "ERR a reservation planned inside MULTI or a script is "
                                      "limited to %u bytes (planning larger ones would stall the "
                                      "server): reserve outside, or give BITS/HASHES/SIGMA",
                                 (unsigned)RR_INLINE_PLAN_BYTES);
    }
    if (!may_block || in_rerun) {
        rr_plan_out o;
        plan_run(q, &o, NULL);
        if (o.err)
            return RedisModule_ReplyWithError(ctx, o.err);
        return rr_create_and_reply(ctx, key, &o.cfg, o.fp, o.mpc, items, n, kind);
    }
    plan_job *pj = rr_alloc(sizeof *pj);
    pending *p = rr_alloc(sizeof *p);
    if (!pj || !p) {
        rr_free(pj);
        rr_free(p);
        return RedisModule_ReplyWithError(ctx, "ERR out of memory");
    }
    memset(pj, 0, sizeof *pj);
    memset(p, 0, sizeof *p);
    pj->base.run = plan_job_run;
    pj->req = *q;
    pj->kind = kind;
    atomic_init(&pj->cancel, 0);
    pj->key = RedisModule_CreateStringFromString(NULL, key);
    if (n) {
        pj->items = rr_alloc(n * sizeof *pj->items);
        if (!pj->items) {
            plan_job_free(pj);
            rr_free(p);
            return RedisModule_ReplyWithError(ctx, "ERR out of memory");
        }
        for (size_t i = 0; i < n; i++)
            pj->items[i] = RedisModule_CreateStringFromString(NULL, items[i]);
        pj->nitems = n;
    }
    pj->bc = RedisModule_BlockClient(ctx, plan_reply_cb, NULL, plan_free_cb, 0);
    if (!pj->bc) {
        plan_job_free(pj);
        rr_free(p);
        return RedisModule_ReplyWithError(ctx, "ERR cannot block the client for planning");
    }
    p->db = RedisModule_GetSelectedDb(ctx);
    p->key = RedisModule_CreateStringFromString(NULL, key);
    p->job = pj;
    pj->p = p;
    p->next = pending_head;
    pending_head = p;
    atomic_fetch_add(&rr_count.plans_waiting, 1);
    queue_job(&pj->base);
    return REDISMODULE_OK;
}
