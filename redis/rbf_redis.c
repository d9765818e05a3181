/*
 * rbf_redis.c -- rbf-redis: recycling Bloom filters as a Redis module.
 *
 * One key holds one rbf filter (a module data type).  Commands: RBF.RESERVE,
 * RBF.ADD, RBF.MADD, RBF.EXISTS, RBF.MEXISTS, RBF.INSERT, RBF.RECYCLE,
 * RBF.INFO, RBF.SCANDUMP, RBF.LOADCHUNK, and with the load argument
 * "BF-COMPAT yes" the RedisBloom-shaped BF.* commands.  docs/redis.md is the
 * user's manual; this comment is the map of the code.
 *
 *   - Values: rr_value holds the filter (or, while an RBF.LOADCHUNK restore
 *     is incomplete, the image assembled so far), the model values computed
 *     at reservation, and the state of an RBF.SCANDUMP in progress (which
 *     streams the image with rbf_save_range; a write first saves the pages
 *     it may change, so the dump is the filter at cursor 0).
 *   - Images: RDB, AOF rewrite, SCANDUMP/LOADCHUNK and DEBUG DIGEST all use
 *     the library's portable image (rbf_save_buffer / rbf_load_buffer,
 *     docs/file-format.md): it holds the configuration, the seed, the
 *     counters and both bit arrays, with a checksum.
 *   - Sizing: a reservation by ERROR_RATE is planned with rbf_plan_memory /
 *     rbf_plan_messages (LAYOUT blocked: rbf_plan_blocked_memory, and a
 *     search over memory for CAPACITY) on a worker thread while the client is blocked
 *     (RedisModule_BlockClient), then created on the main thread.  Where a
 *     client cannot block (MULTI, Lua, the replication link, loading) it is
 *     planned inline.  Either way it replicates as the explicit form with
 *     the seed it drew, so replicas and AOF replays never plan.
 *   - Model values of an explicit reservation (the blocked models for a
 *     blocked filter) are computed by a worker
 *     thread into an rr_model shared (reference-counted) with the value;
 *     RBF.INFO shows "pending" until they are ready.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <rbf.h>
#include <rbf_model.h>

#define XXH_INLINE_ALL
#include <xxhash.h> /* the image checksum (docs/file-format.md), as the library */

#include "redismodule_api.h"

#define RR_MODULE_NAME "rbf"
#define RR_MODULE_VERSION 10000
#define RR_TYPE_NAME "rbf-filtr" /* exactly 9 characters */
#ifdef RBF_REDIS_ENCVER /* test builds only: a "newer" encoding */
#define RR_ENCVER RBF_REDIS_ENCVER
#else
#define RR_ENCVER 1
#endif
#define RR_WORKERS 2
#define RR_CURSOR_BITS 40 /* SCANDUMP cursor: generation << 40 | end offset */
#define RR_CURSOR_MASK ((UINT64_C(1) << RR_CURSOR_BITS) - 1)
#define RR_HEADER 128    /* bytes of a version 1 image header (docs/file-format.md) */
#define RR_HEADER_V2 192 /* version 2 (the blocked layout) */
#define RR_PAGE 4096u    /* SCANDUMP saves what a write would change in pages of this size */
#define RR_BLOCK_BITS 512u /* the blocked layout's block (RBF_MODEL_BLOCK_BITS) */
/* Largest planned reservation (bytes, MEMORY or CAPACITY's lower bound)
 * planned inline where the client cannot block (MULTI, Lua). */
#define RR_INLINE_PLAN_BYTES (128u << 10)

#if defined(RBF_HAVE_ALLOCATOR)
#define RR_ALLOC_HOOKED 1
#else
#define RR_ALLOC_HOOKED 0
#endif

/* ------------------------------------------------------------------ state */

static RedisModuleType *rr_type;
static size_t rr_chunk = (size_t)16 << 20; /* AOF / RDB chunk bytes */
/* SCANDUMP chunk bytes.  A call costs about its chunk: the server copies the
 * reply, and blocks of 8 MiB and more come fresh from the system each time
 * (page faults), so the default stays below (docs/redis.md, measured). */
static size_t rr_dump_chunk = (size_t)4 << 20;
static atomic_uint rr_dump_gen;
/* Bytes of filters allocated outside the server's allocator (until the
 * library's allocator hook is in, the maxmemory check adds them itself). */
static atomic_ullong rr_outside_bytes;

/* BF.* defaults for auto-creation (RedisBloom's: 1% and 100 items), planned
 * once at load. */
static double rr_bf_error = 0.01;
static uint64_t rr_bf_capacity = 100;
static rbf_config rr_bf_default;
static double rr_bf_default_fp, rr_bf_default_mpc;

/* Model values: shared by a value and the worker computing them. */
enum { RR_MODEL_PENDING = 0, RR_MODEL_READY = 1, RR_MODEL_NONE = 2 };
typedef struct rr_model {
    atomic_int state;
    atomic_int refs;
    atomic_int cancel; /* the value was freed: stop computing */
    double fp, mpc;
    rbf_config cfg; /* what to compute for */
} rr_model;

typedef struct rr_value {
    rbf *f;          /* NULL while a LOADCHUNK restore is incomplete */
    rr_model *model; /* NULL while restoring */
    uint64_t fbytes; /* the filter's bit arrays, bytes */
    /* SCANDUMP in progress (dump_gen 0: none): the image streams from the
     * filter; a page a write is about to change is saved first (dump_pages),
     * so the dump is the filter as it was at cursor 0 */
    unsigned dump_gen;
    uint64_t dump_len;      /* image bytes */
    uint64_t dump_hs;       /* its header bytes */
    uint64_t dump_sent;     /* bytes served so far: the next chunk starts here */
    XXH3_state_t *dump_sum; /* XXH3 of the bytes served (the image's checksum) */
    void *dump_sum_mem;     /* its allocation (the state is 64-byte aligned) */
    uint8_t **dump_pages;   /* per RR_PAGE bytes of the image: saved copy, or NULL */
    uint64_t dump_npages;
    uint64_t dump_saved;    /* bytes of saved pages */
    /* LOADCHUNK assembly */
    uint8_t *load;
    size_t load_len, load_have;
} rr_value;

/* --------------------------------------------------------------- helpers */

static void *rr_alloc(size_t n)
{
    return RedisModule_TryAlloc(n ? n : 1);
}

static void rr_free(void *p)
{
    if (p)
        RedisModule_Free(p);
}

static void model_release(rr_model *m)
{
    if (m && atomic_fetch_sub(&m->refs, 1) == 1)
        rr_free(m);
}

static uint64_t config_bytes(const rbf_config *c);

static uint64_t filter_bytes(const rbf *f)
{
    rbf_config c;
    rbf_get_config(f, &c);
    return config_bytes(&c);
}

static void value_drop_dump(rr_value *v)
{
    if (v->dump_pages) {
        for (uint64_t i = 0; i < v->dump_npages; i++)
            rr_free(v->dump_pages[i]);
        rr_free(v->dump_pages);
    }
    rr_free(v->dump_sum_mem);
    v->dump_pages = NULL;
    v->dump_sum = NULL;
    v->dump_sum_mem = NULL;
    v->dump_gen = 0;
    v->dump_len = v->dump_hs = v->dump_sent = v->dump_npages = v->dump_saved = 0;
}

static void value_drop_filter(rr_value *v)
{
    if (v->f) {
        if (!RR_ALLOC_HOOKED)
            atomic_fetch_sub(&rr_outside_bytes, v->fbytes);
        rbf_free(v->f);
        v->f = NULL;
    }
    if (v->model) {
        atomic_store(&v->model->cancel, 1);
        model_release(v->model);
        v->model = NULL;
    }
    v->fbytes = 0;
}

static void value_free(void *p)
{
    rr_value *v = p;
    if (!v)
        return;
    value_drop_filter(v);
    value_drop_dump(v);
    rr_free(v->load);
    rr_free(v);
}

static rr_value *value_new(void)
{
    rr_value *v = rr_alloc(sizeof *v);
    if (v)
        memset(v, 0, sizeof *v);
    return v;
}

static void dump_before_write(rr_value *v, RedisModuleString **items, size_t n, int recycle);

/* Install filter f (owned from now on) into v with model m (one reference
 * handed over; may be NULL). */
static void value_set_filter(rr_value *v, rbf *f, rr_model *m)
{
    v->f = f;
    v->model = m;
    v->fbytes = filter_bytes(f);
    if (!RR_ALLOC_HOOKED)
        atomic_fetch_add(&rr_outside_bytes, v->fbytes);
}

/* The same for the save paths (RDB, AOF rewrite, digest), where a missing
 * image would write a damaged file: out of memory there is fatal, as for
 * any allocation of the server's own (RedisModule_Alloc panics; for BGSAVE
 * and BGREWRITEAOF that is the forked child, and the save fails). */
static uint8_t *image_for_save(const rbf *f, size_t *len)
{
    uint64_t n = 0;
    if (rbf_save_size(f, &n) != RBF_OK || n > SIZE_MAX)
        return NULL;
    uint8_t *buf = RedisModule_Alloc((size_t)n);
    if (rbf_save_buffer(f, buf, (size_t)n) != RBF_OK) {
        RedisModule_Free(buf);
        return NULL;
    }
    *len = (size_t)n;
    return buf;
}

static uint64_t get_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint32_t get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Total image size announced by an image header, 0 if the header is not
 * one (the full checks happen in rbf_load_buffer). */
static uint64_t image_size_from_header(const uint8_t *h)
{
    static const uint8_t magic[8] = {'R', 'B', 'F', 'I', 'L', 'T', 'R', 0x1a};
    if (memcmp(h, magic, 8) != 0)
        return 0;
    /* version 1: 128-byte header (flat); version 2: 192 (blocked) */
    uint32_t version = get_le32(h + 8), hsize = get_le32(h + 12);
    if (!((version == 1 && hsize == RR_HEADER) || (version == 2 && hsize == RR_HEADER_V2)))
        return 0;
    uint32_t phases = get_le32(h + 36);
    uint64_t words = get_le64(h + 112);
    if ((phases != 1 && phases != 2) || words == 0 || words > (UINT64_C(1) << 50))
        return 0;
    return hsize + 8 * words * phases + 8;
}

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

/* ------------------------------------------------------------ the models */

static int model_progress(void *ctx, uint64_t done, uint64_t total)
{
    (void)done;
    (void)total;
    return atomic_load((atomic_int *)ctx);
}

/* The blocked layout's models (rbf_model_blocked_*), the same quantities
 * as the flat ones below: the average rate and E[N_0] (sigma-bounded), the
 * real-user rate and N (N-bounded).  The library has no two-phase
 * N-bounded model, blocked or flat. */
static int model_compute_blocked(const rbf_config *c, rbf_model_params *p, double *fp,
                                 double *mpc)
{
    p->layout = RBF_MODEL_LAYOUT_BLOCKED;
    if (c->sigma && c->phases == 1) {
        rbf_model_blocked_sigma_result r;
        if (rbf_model_blocked_sigma(p, c->sigma, &r) != RBF_OK)
            return RR_MODEL_NONE;
        *fp = r.fp;
        *mpc = r.expected_messages;
        return RR_MODEL_READY;
    }
    if (c->sigma) {
        rbf_model_blocked_two_phase_result r;
        if (rbf_model_blocked_two_phase(p, c->sigma, &r) != RBF_OK)
            return RR_MODEL_NONE;
        *fp = r.fp;
        *mpc = r.expected_messages;
        return RR_MODEL_READY;
    }
    *mpc = (double)c->messages;
    if (c->phases == 2) {
        *fp = NAN;
        return RR_MODEL_NONE;
    }
    p->recycle = RBF_NON_RETAINING;
    rbf_model_blocked_n_result r;
    if (rbf_model_blocked_nbounded(p, c->messages, &r) != RBF_OK)
        return RR_MODEL_NONE;
    *fp = r.exact_real;
    return RR_MODEL_READY;
}

/* The model's average false-positive rate and messages per cycle for a
 * configuration; RR_MODEL_NONE where no model applies (two-phase
 * N-bounded) or it failed. */
static int model_compute(const rbf_config *c, atomic_int *cancel, double *fp, double *mpc)
{
    rbf_model_params p;
    rbf_model_params_init(&p);
    p.hashes = c->hashes;
    p.hashing = (c->hashing == RBF_NON_COLLIDING) ? RBF_NON_COLLIDING : RBF_COLLIDING;
    p.recycle = (c->recycle == RBF_RETAINING) ? RBF_RETAINING : RBF_NON_RETAINING;
    p.progress = model_progress;
    p.progress_ctx = cancel;
    p.bits = c->phases == 2 ? c->bits / 2 : c->bits;
    if (c->layout == RBF_LAYOUT_BLOCKED)
        return model_compute_blocked(c, &p, fp, mpc);
    if (c->sigma && c->phases == 1) {
        rbf_model_sigma_result r;
        if (rbf_model_sigma(&p, c->sigma, &r) != RBF_OK)
            return RR_MODEL_NONE;
        *fp = r.fp;
        *mpc = r.expected_messages;
        return RR_MODEL_READY;
    }
    if (c->sigma) {
        rbf_model_two_phase_result r;
        if (rbf_model_two_phase(&p, c->sigma, &r) != RBF_OK)
            return RR_MODEL_NONE;
        *fp = r.fp;
        *mpc = r.expected_messages;
        return RR_MODEL_READY;
    }
    *mpc = (double)c->messages;
    if (c->phases == 2) {
        *fp = NAN;
        return RR_MODEL_NONE;
    }
    p.recycle = (0) ? RBF_RETAINING : RBF_NON_RETAINING;
    rbf_model_n_result r;
    if (rbf_model_nbounded(&p, c->messages, &r) != RBF_OK)
        return RR_MODEL_NONE;
    *fp = r.exact_real;
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
    model_release(m);
    rr_free(mj);
}

/* A model for cfg: ready at once if the planner gave the values (fp not
 * NaN), else computed by a worker. */
static rr_model *model_start(const rbf_config *cfg, double fp, double mpc)
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

/* ------------------------------------------------------- argument parsing */

static int arg_is(RedisModuleString *s, const char *word)
{
    size_t n;
    const char *p = RedisModule_StringPtrLen(s, &n);
    return n == strlen(word) && strncasecmp(p, word, n) == 0;
}

/* At most cap - 4 bytes of s for an error message, bytes outside printable
 * ASCII shown as '?', "..." if cut. */
static void printable(RedisModuleString *s, char *out, size_t cap)
{
    size_t n, j = 0;
    const char *p = RedisModule_StringPtrLen(s, &n);
    for (size_t i = 0; i < n && j + 4 < cap; i++)
        out[j++] = p[i] >= 0x20 && p[i] <= 0x7e && p[i] != '\'' ? p[i] : '?';
    if (j < n)
        memcpy(out + j, "...", 3), j += 3;
    out[j] = '\0';
}

/* An unsigned 64-bit decimal: digits only, no sign, no overflow. */
static int parse_u64(RedisModuleString *s, uint64_t *out)
{
    size_t n;
    const char *p = RedisModule_StringPtrLen(s, &n);
    if (n == 0 || n > 20)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return -1;
        unsigned d = (unsigned)(p[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static int parse_rate(RedisModuleString *s, double *out)
{
    double d;
    if (RedisModule_StringToDouble(s, &d) != REDISMODULE_OK || !(d > 0.0 && d < 1.0))
        return -1;
    *out = d;
    return 0;
}

static int reply_errf(RedisModuleCtx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int reply_errf(RedisModuleCtx *ctx, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return RedisModule_ReplyWithError(ctx, buf);
}

/* A reservation request: planned (ERROR_RATE with MEMORY or CAPACITY) or
 * explicit (BITS, HASHES, SIGMA or MESSAGES). */
enum {
    O_ERROR_RATE, O_MEMORY, O_CAPACITY, O_BITS, O_HASHES, O_SIGMA, O_MESSAGES,
    O_PHASES, O_HASHING, O_RECYCLE, O_SEED, O_LAYOUT, O_COUNT
};
static const char *const opt_names[O_COUNT] = {"ERROR_RATE", "MEMORY", "CAPACITY", "BITS",
                                               "HASHES", "SIGMA", "MESSAGES", "PHASES",
                                               "HASHING", "RECYCLE", "SEED", "LAYOUT"};

typedef struct rr_req {
    unsigned given; /* bit per O_* */
    int planned;
    double eps;
    uint64_t mem_bits, capacity;
    uint64_t bits, hashes, sigma, messages, seed;
    unsigned phases;
    rbf_hashing hashing;
    rbf_recycle_mode recycle;
    rbf_layout layout;
} rr_req;

static void req_init(rr_req *q)
{
    memset(q, 0, sizeof *q);
    q->phases = 1;
    q->hashing = RBF_COLLIDING;
    q->recycle = RBF_NON_RETAINING;
    q->layout = RBF_LAYOUT_FLAT;
}

/* Parse RESERVE options argv[from..to).  0, or -1 after replying an error. */
static int parse_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int from, int to, rr_req *q)
{
    req_init(q);
    for (int i = from; i < to; i += 2) {
        int o = -1;
        for (int j = 0; j < O_COUNT; j++)
            if (arg_is(argv[i], opt_names[j]))
                o = j;
        if (o < 0) {
            char shown[44];
            printable(argv[i], shown, sizeof shown);
            return reply_errf(ctx, "ERR unknown option '%s' (argument %d)", shown, i), -1;
        }
        if (q->given & (1u << o))
            return reply_errf(ctx, "ERR option %s given twice", opt_names[o]), -1;
        if (i + 1 >= to)
            return reply_errf(ctx, "ERR option %s needs a value", opt_names[o]), -1;
        q->given |= 1u << o;
        RedisModuleString *a = argv[i + 1];
        int bad = 0;
        uint64_t u = 0;
        switch (o) {
        case O_ERROR_RATE:
            bad = parse_rate(a, &q->eps);
            if (bad)
                return reply_errf(ctx, "ERR ERROR_RATE must be a number between 0 and 1 (exclusive)"), -1;
            break;
        case O_MEMORY:
            bad = parse_u64(a, &u) || u == 0 || u > UINT64_MAX / 8;
            q->mem_bits = u * 8;
            break;
        case O_CAPACITY: bad = parse_u64(a, &q->capacity) || q->capacity == 0; break;
        case O_BITS: bad = parse_u64(a, &q->bits) || q->bits == 0; break;
        case O_HASHES:
            bad = parse_u64(a, &q->hashes) || q->hashes == 0 || q->hashes > RBF_MAX_HASHES;
            if (bad)
                return reply_errf(ctx, "ERR HASHES must be an integer from 1 to %u", RBF_MAX_HASHES), -1;
            break;
        case O_SIGMA: bad = parse_u64(a, &q->sigma) || q->sigma == 0; break;
        case O_MESSAGES: bad = parse_u64(a, &q->messages) || q->messages == 0; break;
        case O_PHASES:
            if (arg_is(a, "1"))
                q->phases = 1;
            else if (arg_is(a, "2"))
                q->phases = 2;
            else
                return reply_errf(ctx, "ERR PHASES must be 1 or 2"), -1;
            break;
        case O_HASHING:
            if (arg_is(a, "colliding"))
                q->hashing = RBF_COLLIDING;
            else if (arg_is(a, "non-colliding"))
                q->hashing = RBF_NON_COLLIDING;
            else
                return reply_errf(ctx, "ERR HASHING must be colliding or non-colliding"), -1;
            break;
        case O_RECYCLE:
            if (arg_is(a, "retaining"))
                q->recycle = RBF_RETAINING;
            else if (arg_is(a, "non-retaining"))
                q->recycle = RBF_NON_RETAINING;
            else
                return reply_errf(ctx, "ERR RECYCLE must be retaining or non-retaining"), -1;
            break;
        case O_LAYOUT:
            if (arg_is(a, "flat"))
                q->layout = RBF_LAYOUT_FLAT;
            else if (arg_is(a, "blocked"))
                q->layout = RBF_LAYOUT_BLOCKED;
            else
                return reply_errf(ctx, "ERR LAYOUT must be flat or blocked"), -1;
            break;
        case O_SEED:
            bad = parse_u64(a, &q->seed);
            if (bad)
                return reply_errf(ctx, "ERR SEED must be an unsigned 64-bit decimal integer"), -1;
            break;
        default: break;
        }
        if (bad)
            return reply_errf(ctx, "ERR %s must be a positive integer%s", opt_names[o],
                              o == O_MEMORY ? " (bytes)" : ""),
                   -1;
    }
    unsigned planned = (1u << O_ERROR_RATE) | (1u << O_MEMORY) | (1u << O_CAPACITY);
    unsigned explicit_ = (1u << O_BITS) | (1u << O_HASHES) | (1u << O_SIGMA) | (1u << O_MESSAGES);
    int has = (q->given & (1u << O_MEMORY)) != 0;
    int hcap = (q->given & (1u << O_CAPACITY)) != 0;
    if ((q->given & planned) && (q->given & explicit_))
        return reply_errf(ctx, "ERR give either ERROR_RATE with MEMORY or CAPACITY, or BITS, HASHES "
                               "and SIGMA or MESSAGES, not both"),
               -1;
    if (q->given & planned) {
        if (!(q->given & (1u << O_ERROR_RATE)))
            return reply_errf(ctx, "ERR MEMORY and CAPACITY need ERROR_RATE"), -1;
        if (has == hcap)
            return reply_errf(ctx, "ERR ERROR_RATE needs exactly one of MEMORY or CAPACITY"), -1;
        if (q->layout == RBF_LAYOUT_BLOCKED && q->phases == 2)
            return reply_errf(ctx, "ERR LAYOUT blocked with PHASES 2 cannot be planned (the library "
                                   "has no blocked two-phase planner): give BITS, HASHES and SIGMA"),
                   -1;
        if (q->layout == RBF_LAYOUT_BLOCKED && has && q->mem_bits < RR_BLOCK_BITS)
            return reply_errf(ctx, "ERR MEMORY with LAYOUT blocked must be at least 64 bytes "
                                   "(one 512-bit block)"),
                   -1;
        q->planned = 1;
        return 0;
    }
    if (!(q->given & (1u << O_BITS)) || !(q->given & (1u << O_HASHES)))
        return reply_errf(ctx, "ERR reservation needs ERROR_RATE with MEMORY or CAPACITY, or BITS "
                               "and HASHES with SIGMA or MESSAGES"),
               -1;
    if (!!q->sigma == !!q->messages)
        return reply_errf(ctx, "ERR BITS and HASHES need exactly one of SIGMA or MESSAGES"), -1;
    if (q->layout == RBF_LAYOUT_BLOCKED) {
        /* bits per filter (floor(BITS / PHASES)) in whole 512-bit blocks */
        uint64_t per = q->bits / q->phases, step = (uint64_t)RR_BLOCK_BITS * q->phases;
        if (per % RR_BLOCK_BITS != 0 || per == 0) {
            uint64_t lo = per / RR_BLOCK_BITS * step;
            uint64_t hi = lo <= UINT64_MAX - step ? lo + step : lo;
            if (lo == 0)
                return reply_errf(ctx, "ERR BITS %llu with LAYOUT blocked%s: the bits per filter "
                                       "must be a multiple of 512; give BITS %llu or more",
                                  (unsigned long long)q->bits,
                                  q->phases == 2 ? " and PHASES 2" : "", (unsigned long long)hi),
                       -1;
            return reply_errf(ctx, "ERR BITS %llu with LAYOUT blocked%s: the bits per filter must "
                                   "be a multiple of 512; nearest BITS are %llu and %llu",
                              (unsigned long long)q->bits, q->phases == 2 ? " and PHASES 2" : "",
                              (unsigned long long)lo, (unsigned long long)hi),
                   -1;
        }
    }
    return 0;
}

/* The configuration of an explicit request (seed drawn if not given). */
static void req_config(const rr_req *q, rbf_config *c)
{
    rbf_config_init(c);
    c->bits = q->bits;
    c->hashes = (unsigned)q->hashes;
    c->sigma = q->sigma;
    c->messages = q->messages;
    c->phases = q->phases;
    c->hashing = q->hashing;
    c->recycle = q->recycle;
    c->layout = q->layout;
    if (q->given & (1u << O_SEED))
        c->seed = q->seed;
}

/* ------------------------------------------------------------ memory use */

static uint64_t phys_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || psz <= 0)
        return UINT64_MAX;
    return (uint64_t)pages * (uint64_t)psz;
}

/* Whether `need` more bytes fit: under maxmemory if one is set, else under
 * the machine's physical memory.  0, or -1 after replying an error. */
static int check_room(RedisModuleCtx *ctx, uint64_t need)
{
    /* what the primary or the AOF did must be applied: a replica (which
     * ignores maxmemory by default) or a loading server never refuses */
    if (RedisModule_GetContextFlags(ctx) &
        (REDISMODULE_CTX_FLAGS_REPLICATED | REDISMODULE_CTX_FLAGS_LOADING))
        return 0;
    uint64_t used = 0, maxmem = 0;
    RedisModuleServerInfoData *inf = RedisModule_GetServerInfo(ctx, "memory");
    if (inf) {
        int err = 0;
        used = RedisModule_ServerInfoGetFieldUnsigned(inf, "used_memory", &err);
        if (err)
            used = 0;
        maxmem = RedisModule_ServerInfoGetFieldUnsigned(inf, "maxmemory", &err);
        if (err)
            maxmem = 0;
        RedisModule_FreeServerInfo(ctx, inf);
    }
    used += atomic_load(&rr_outside_bytes);
    if (maxmem) {
        if (need > maxmem || used > maxmem - need)
            return reply_errf(ctx, "ERR the filter needs %llu bytes: more than maxmemory allows "
                                   "(%llu of %llu in use)",
                              (unsigned long long)need, (unsigned long long)used,
                              (unsigned long long)maxmem),
                   -1;
        return 0;
    }
    if (need > phys_bytes())
        return reply_errf(ctx, "ERR the filter needs %llu bytes: more than this machine's memory",
                          (unsigned long long)need),
               -1;
    return 0;
}

static uint64_t config_bytes(const rbf_config *c)
{
    uint64_t m = c->phases == 2 ? c->bits / 2 : c->bits;
    return (m / 64 + (m % 64 != 0)) * 8 * c->phases;
}

/* ------------------------------------------------------------ planning */

typedef struct plan_out {
    rbf_config cfg;
    double fp, mpc;
    const char *err; /* NULL on success */
} plan_out;

static uint64_t round_up_block(uint64_t bits)
{
    uint64_t r = bits % RR_BLOCK_BITS;
    return r == 0 ? bits : bits <= UINT64_MAX - (RR_BLOCK_BITS - r) ? bits + (RR_BLOCK_BITS - r) : 0;
}

/* Memory for CAPACITY with the blocked layout.  The library's blocked
 * planner works at a given memory (rbf_plan_blocked_memory), so: start from
 * the flat filter's least memory (rbf_plan_messages), which holds fewer
 * messages as blocked, and step the memory up in proportion to the
 * shortfall until the blocked plan's E[N_0] reaches the capacity (E[N_0]
 * is close to proportional to the memory at a fixed rate); then one step
 * down in proportion to the excess, kept if it still holds the capacity.
 * The result holds the capacity; it is not proven the least. */
static int plan_blocked_capacity(const rr_req *q, const rbf_plan_options *po, uint64_t *bits,
                                 rbf_plan_choice *ch)
{
    rbf_plan flat;
    uint64_t b0 = 0;
    int rc = rbf_plan_messages(q->capacity, q->eps, po, &b0, &flat);
    if (rc != RBF_OK)
        return rc;
    double cap = (double)q->capacity;
    uint64_t b = round_up_block(b0 < RR_BLOCK_BITS ? RR_BLOCK_BITS : b0);
    for (int it = 0; it < 40 && b; it++) {
        rc = rbf_plan_blocked_memory(b, q->eps, po, ch);
        if (rc == RBF_ENOMEM || rc == RBF_ECANCELED)
            return rc;
        int ok = rc == RBF_OK && ch->feasible && ch->sigma;
        if (ok && ch->expected_messages >= cap) {
            double down = (double)b * cap / ch->expected_messages;
            uint64_t b2 = round_up_block((uint64_t)ceil(down));
            rbf_plan_choice c2;
            if (b2 && b2 < b && rbf_plan_blocked_memory(b2, q->eps, po, &c2) == RBF_OK &&
                c2.feasible && c2.sigma && c2.expected_messages >= cap) {
                b = b2;
                *ch = c2;
            }
            *bits = b;
            return RBF_OK;
        }
        double grow = 1.25;
        if (ok && ch->expected_messages > 0) {
            grow = cap / ch->expected_messages * 1.001;
            if (grow > 4.0)
                grow = 4.0;
        }
        double nb = ceil((double)b * grow);
        if (nb >= 1.8e19)
            return RBF_ENOMEM;
        uint64_t next = round_up_block((uint64_t)nb);
        b = next > b ? next : round_up_block(b + RR_BLOCK_BITS);
    }
    return RBF_EINVAL;
}

/* The blocked layout's plan (one phase; parse_reserve refuses two). */
static void plan_run_blocked(const rr_req *q, const rbf_plan_options *po, plan_out *o)
{
    rbf_plan_choice ch;
    memset(&ch, 0, sizeof ch);
    uint64_t bits = q->mem_bits / RR_BLOCK_BITS * RR_BLOCK_BITS;
    int rc = q->capacity ? plan_blocked_capacity(q, po, &bits, &ch)
                         : rbf_plan_blocked_memory(bits, q->eps, po, &ch);
    o->err = NULL;
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

static void plan_run(const rr_req *q, plan_out *o)
{
    rbf_plan_options po;
    rbf_plan_options_init(&po);
    po.hashing = (q->hashing == RBF_NON_COLLIDING) ? RBF_NON_COLLIDING : RBF_COLLIDING;
    po.recycle = (q->recycle == RBF_RETAINING) ? RBF_RETAINING : RBF_NON_RETAINING;
    if (q->layout == RBF_LAYOUT_BLOCKED) {
        plan_run_blocked(q, &po, o);
        return;
    }
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

/* ------------------------------------------------ creating and replying */

enum { REPLY_OK, REPLY_ARRAY, REPLY_ONE };

static int reply_wrongtype(RedisModuleCtx *ctx)
{
    return RedisModule_ReplyWithError(ctx, "WRONGTYPE Operation against a key holding the wrong kind of value");
}

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

/* Insert items into f, replying 0/1 per item (array) or one integer. */
static void insert_items(RedisModuleCtx *ctx, rbf *f, RedisModuleString **items, size_t n, int kind)
{
    if (kind == REPLY_ONE) {
        size_t len;
        const char *p = RedisModule_StringPtrLen(items[0], &len);
        RedisModule_ReplyWithLongLong(ctx, rbf_insert(f, p, len));
        return;
    }
    RedisModule_ReplyWithArray(ctx, (long)n);
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const char *p = RedisModule_StringPtrLen(items[i], &len);
        RedisModule_ReplyWithLongLong(ctx, rbf_insert(f, p, len));
    }
}

/* Create key with configuration c and model values (fp NaN: compute),
 * replicate the explicit reservation, then insert the items (if any) and
 * reply.  The key must be checked empty by the caller or is checked here. */
static int create_and_reply(RedisModuleCtx *ctx, RedisModuleString *key, const rbf_config *c,
                            double fp, double mpc, RedisModuleString **items, size_t n, int kind)
{
    const char *why = NULL;
    int rc = rbf_config_check(c, &why);
    if (rc != RBF_OK)
        return reply_errf(ctx, "ERR invalid filter: %s", why ? why : rbf_strerror(rc));
    RedisModuleKey *k = RedisModule_OpenKey(ctx, key, REDISMODULE_READ | REDISMODULE_WRITE);
    int t = RedisModule_KeyType(k);
    if (t != REDISMODULE_KEYTYPE_EMPTY) {
        RedisModule_CloseKey(k);
        if (t != REDISMODULE_KEYTYPE_MODULE || RedisModule_ModuleTypeGetType(k) != rr_type)
            return reply_wrongtype(ctx);
        return RedisModule_ReplyWithError(ctx, "ERR item exists");
    }
    if (check_room(ctx, config_bytes(c) + sizeof(rr_value)) != 0) {
        RedisModule_CloseKey(k);
        return REDISMODULE_OK;
    }
    rbf *f = NULL;
    rc = rbf_new(c, &f);
    rr_value *v = rc == RBF_OK ? value_new() : NULL;
    rr_model *m = v ? model_start(c, fp, mpc) : NULL;
    if (!m) {
        rbf_free(f);
        rr_free(v);
        RedisModule_CloseKey(k);
        return reply_errf(ctx, "ERR cannot create the filter: %s",
                          rc != RBF_OK ? rbf_strerror(rc) : "out of memory");
    }
    value_set_filter(v, f, m);
    RedisModule_ModuleTypeSetValue(k, rr_type, v);
    RedisModule_CloseKey(k);
    replicate_reserve(ctx, key, c);
    if (n) {
        /* the items replicate as one RBF.MADD after the reservation */
        RedisModule_Replicate(ctx, "RBF.MADD", "sv", key, items, n);
        insert_items(ctx, f, items, n, kind);
        return REDISMODULE_OK;
    }
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

/* A planned reservation waiting for a worker. */
typedef struct plan_job {
    rr_job base;
    RedisModuleBlockedClient *bc;
    rr_req req;
    RedisModuleString *key;
    RedisModuleString **items;
    size_t nitems;
    int kind;
    plan_out out;
} plan_job;

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
    plan_run(&pj->req, &pj->out);
    RedisModule_UnblockClient(pj->bc, pj);
}

static int plan_reply_cb(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    (void)argv;
    (void)argc;
    plan_job *pj = RedisModule_GetBlockedClientPrivateData(ctx);
    if (pj->out.err)
        return RedisModule_ReplyWithError(ctx, pj->out.err);
    return create_and_reply(ctx, pj->key, &pj->out.cfg, pj->out.fp, pj->out.mpc, pj->items,
                            pj->nitems, pj->kind);
}

static void plan_free_cb(RedisModuleCtx *ctx, void *privdata)
{
    (void)ctx;
    plan_job_free(privdata);
}

static int can_block(RedisModuleCtx *ctx)
{
    int fl = RedisModule_GetContextFlags(ctx);
    return !(fl & (REDISMODULE_CTX_FLAGS_LUA | REDISMODULE_CTX_FLAGS_MULTI |
                   REDISMODULE_CTX_FLAGS_REPLICATED | REDISMODULE_CTX_FLAGS_LOADING |
                   REDISMODULE_CTX_FLAGS_DENY_BLOCKING));
}

/* Reserve key as q says (the key is known to be empty), then insert the
 * items and reply as `kind` says. */
static int reserve_request(RedisModuleCtx *ctx, RedisModuleString *key, const rr_req *q,
                           RedisModuleString **items, size_t n, int kind)
{
    if (!q->planned) {
        rbf_config c;
        req_config(q, &c);
        return create_and_reply(ctx, key, &c, NAN, NAN, items, n, kind);
    }
    if (check_room(ctx, plan_lower_bound(q)) != 0)
        return REDISMODULE_OK;
    if (!can_block(ctx)) {
        /* inside MULTI or Lua the plan would run on the main thread: only
         * small ones (milliseconds) are allowed there */
        if (q->layout == RBF_LAYOUT_BLOCKED)
            return reply_errf(ctx, "ERR a LAYOUT blocked reservation cannot be planned inside MULTI "
                                   "or a script (the blocked planner takes about a second): "
                                   "reserve outside, or give BITS/HASHES/SIGMA");
        if (plan_lower_bound(q) > RR_INLINE_PLAN_BYTES)
            return reply_errf(ctx, "ERR a reservation planned inside MULTI or a script is limited "
                                   "to %u bytes (planning larger ones would stall the server): "
                                   "reserve outside, or give BITS/HASHES/SIGMA",
                              (unsigned)RR_INLINE_PLAN_BYTES);
        plan_out o;
        plan_run(q, &o);
        if (o.err)
            return RedisModule_ReplyWithError(ctx, o.err);
        return create_and_reply(ctx, key, &o.cfg, o.fp, o.mpc, items, n, kind);
    }
    plan_job *pj = rr_alloc(sizeof *pj);
    if (!pj)
        return RedisModule_ReplyWithError(ctx, "ERR out of memory");
    memset(pj, 0, sizeof *pj);
    pj->base.run = plan_job_run;
    pj->req = *q;
    pj->kind = kind;
    pj->key = RedisModule_CreateStringFromString(NULL, key);
    if (n) {
        pj->items = rr_alloc(n * sizeof *pj->items);
        if (!pj->items) {
            plan_job_free(pj);
            return RedisModule_ReplyWithError(ctx, "ERR out of memory");
        }
        for (size_t i = 0; i < n; i++)
            pj->items[i] = RedisModule_CreateStringFromString(NULL, items[i]);
        pj->nitems = n;
    }
    pj->bc = RedisModule_BlockClient(ctx, plan_reply_cb, NULL, plan_free_cb, 0);
    if (!pj->bc) {
        plan_job_free(pj);
        return RedisModule_ReplyWithError(ctx, "ERR cannot block the client for planning");
    }
    queue_job(&pj->base);
    return REDISMODULE_OK;
}

/* ------------------------------------------------------- key access */

/* Open key and fetch its value.  Returns 1 with *v set (NULL if the key is
 * empty), or 0 after replying WRONGTYPE. */
static int open_value(RedisModuleCtx *ctx, RedisModuleString *name, int mode, RedisModuleKey **k,
                      rr_value **v)
{
    *k = RedisModule_OpenKey(ctx, name, mode);
    *v = NULL;
    int t = RedisModule_KeyType(*k);
    if (t == REDISMODULE_KEYTYPE_EMPTY)
        return 1;
    if (t != REDISMODULE_KEYTYPE_MODULE || RedisModule_ModuleTypeGetType(*k) != rr_type) {
        RedisModule_CloseKey(*k);
        *k = NULL;
        reply_wrongtype(ctx);
        return 0;
    }
    *v = RedisModule_ModuleTypeGetValue(*k);
    return 1;
}

static int reply_restoring(RedisModuleCtx *ctx, const rr_value *v)
{
    return reply_errf(ctx, "ERR filter restore incomplete: LOADCHUNK has %llu of %llu bytes",
                      (unsigned long long)v->load_have, (unsigned long long)v->load_len);
}

/* A filter to read, ready for use: 1 with *v set (the key already closed:
 * the value stays valid while this command runs), or 0 after replying the
 * error (a missing key, another type's key, a restore in progress). */
static int open_ready(RedisModuleCtx *ctx, RedisModuleString *name, rr_value **v)
{
    RedisModuleKey *k;
    if (!open_value(ctx, name, REDISMODULE_READ, &k, v))
        return 0;
    RedisModule_CloseKey(k);
    if (!*v) {
        RedisModule_ReplyWithError(ctx, "ERR not found");
        return 0;
    }
    if (!(*v)->f) {
        reply_restoring(ctx, *v);
        return 0;
    }
    return 1;
}

/* --------------------------------------------------------- commands */

static int cmd_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *k;
    rr_value *v;
    if (!open_value(ctx, argv[1], REDISMODULE_READ, &k, &v))
        return REDISMODULE_OK;
    RedisModule_CloseKey(k);
    if (v)
        return RedisModule_ReplyWithError(ctx, "ERR item exists");
    rr_req q;
    if (parse_reserve(ctx, argv, 2, argc, &q) != 0)
        return REDISMODULE_OK;
    return reserve_request(ctx, argv[1], &q, NULL, 0, REPLY_OK);
}

/* ADD / MADD / BF.ADD / BF.MADD on an existing filter, or auto-creation
 * with the BF defaults when `bf` is set. */
static int add_common(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int multi, int bf)
{
    if (multi ? argc < 3 : argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *k;
    rr_value *v;
    if (!open_value(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &k, &v))
        return REDISMODULE_OK;
    size_t n = (size_t)argc - 2;
    int kind = multi ? REPLY_ARRAY : REPLY_ONE;
    if (!v) {
        RedisModule_CloseKey(k);
        if (!bf)
            return RedisModule_ReplyWithError(ctx, "ERR not found");
        rbf_config c = rr_bf_default;
        rbf_config tmp;
        rbf_config_init(&tmp);
        c.seed = tmp.seed;
        return create_and_reply(ctx, argv[1], &c, rr_bf_default_fp, rr_bf_default_mpc, argv + 2, n,
                                kind);
    }
    if (!v->f) {
        RedisModule_CloseKey(k);
        return reply_restoring(ctx, v);
    }
    dump_before_write(v, argv + 2, n, 0);
    insert_items(ctx, v->f, argv + 2, n, kind);
    RedisModule_CloseKey(k);
    RedisModule_ReplicateVerbatim(ctx);
    return REDISMODULE_OK;
}

static int cmd_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return add_common(ctx, argv, argc, 0, 0);
}

static int cmd_madd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return add_common(ctx, argv, argc, 1, 0);
}

static int exists_common(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int multi)
{
    if (multi ? argc < 3 : argc != 3)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *k;
    rr_value *v;
    if (!open_value(ctx, argv[1], REDISMODULE_READ, &k, &v))
        return REDISMODULE_OK;
    if (v && !v->f) {
        RedisModule_CloseKey(k);
        return reply_restoring(ctx, v);
    }
    if (multi)
        RedisModule_ReplyWithArray(ctx, argc - 2);
    for (int i = 2; i < argc; i++) {
        size_t len;
        const char *p = RedisModule_StringPtrLen(argv[i], &len);
        RedisModule_ReplyWithLongLong(ctx, v ? rbf_contains(v->f, p, len) : 0);
    }
    RedisModule_CloseKey(k);
    return REDISMODULE_OK;
}

static int cmd_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return exists_common(ctx, argv, argc, 0);
}

static int cmd_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return exists_common(ctx, argv, argc, 1);
}

/* Position of the ITEMS keyword at or after `from`, or -1 after replying. */
static int find_items(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int from)
{
    for (int i = from; i < argc; i++)
        if (arg_is(argv[i], "ITEMS")) {
            if (i + 1 >= argc)
                return RedisModule_ReplyWithError(ctx, "ERR ITEMS needs at least one item"), -1;
            return i;
        }
    return RedisModule_ReplyWithError(ctx, "ERR ITEMS missing"), -1;
}

static int insert_existing(RedisModuleCtx *ctx, RedisModuleKey *k, rr_value *v,
                           RedisModuleString **items, size_t n)
{
    if (!v->f) {
        RedisModule_CloseKey(k);
        return reply_restoring(ctx, v);
    }
    dump_before_write(v, items, n, 0);
    insert_items(ctx, v->f, items, n, REPLY_ARRAY);
    RedisModule_CloseKey(k);
    RedisModule_ReplicateVerbatim(ctx);
    return REDISMODULE_OK;
}

/* RBF.INSERT key [NOCREATE] [reserve options] ITEMS item... */
static int cmd_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 4)
        return RedisModule_WrongArity(ctx);
    int it = find_items(ctx, argv, argc, 2);
    if (it < 0)
        return REDISMODULE_OK;
    int nocreate = 0, from = 2;
    if (from < it && arg_is(argv[from], "NOCREATE")) {
        nocreate = 1;
        from++;
    }
    RedisModuleKey *k;
    rr_value *v;
    if (!open_value(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &k, &v))
        return REDISMODULE_OK;
    rr_req q;
    int have_opts = from < it;
    if (have_opts && parse_reserve(ctx, argv, from, it, &q) != 0) {
        RedisModule_CloseKey(k);
        return REDISMODULE_OK;
    }
    size_t n = (size_t)(argc - it - 1);
    if (v)
        return insert_existing(ctx, k, v, argv + it + 1, n);
    RedisModule_CloseKey(k);
    if (nocreate)
        return RedisModule_ReplyWithError(ctx, "ERR not found");
    if (!have_opts)
        return RedisModule_ReplyWithError(ctx, "ERR not found: give RESERVE options before ITEMS "
                                               "to create the filter");
    return reserve_request(ctx, argv[1], &q, argv + it + 1, n, REPLY_ARRAY);
}

static int cmd_recycle(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *k;
    rr_value *v;
    if (!open_value(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &k, &v))
        return REDISMODULE_OK;
    if (!v) {
        RedisModule_CloseKey(k);
        return RedisModule_ReplyWithError(ctx, "ERR not found");
    }
    if (!v->f) {
        RedisModule_CloseKey(k);
        return reply_restoring(ctx, v);
    }
    dump_before_write(v, NULL, 0, 1);
    rbf_recycle(v->f);
    RedisModule_CloseKey(k);
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

/* ---- RBF.INFO */

static const char *const info_names[] = {
    "bits", "hashes", "sigma", "messages", "phases", "hashing", "recycle", "bits_per_filter",
    "bits_set", "fill", "frozen_bits_set", "cycles", "cycle_messages", "inserts",
    "reported_new", "model_fp", "model_messages_per_cycle", "memory", "layout"};
#define INFO_FIELDS (sizeof info_names / sizeof info_names[0])

static size_t value_mem(const rr_value *v)
{
    return sizeof *v + (v->f ? (size_t)v->fbytes + 256 : 0) + (v->model ? sizeof *v->model : 0) +
           (size_t)v->dump_saved + (v->dump_pages ? (size_t)v->dump_npages * sizeof(uint8_t *) : 0) +
           (v->dump_sum_mem ? sizeof(XXH3_state_t) + 64 : 0) + v->load_len;
}

static void reply_model_value(RedisModuleCtx *ctx, const rr_model *m, int which)
{
    int st = atomic_load_explicit(&((rr_model *)m)->state, memory_order_acquire);
    if (st == RR_MODEL_PENDING) {
        RedisModule_ReplyWithCString(ctx, "pending");
        return;
    }
    double d = which ? m->mpc : m->fp;
    RedisModule_ReplyWithDouble(ctx, d);
}

static void info_field(RedisModuleCtx *ctx, const rr_value *v, size_t i)
{
    rbf_config c;
    rbf_stats s;
    rbf_get_config(v->f, &c);
    rbf_get_stats(v->f, &s);
    switch (i) {
    case 0: RedisModule_ReplyWithLongLong(ctx, (long long)c.bits); break;
    case 1: RedisModule_ReplyWithLongLong(ctx, (long long)c.hashes); break;
    case 2: RedisModule_ReplyWithLongLong(ctx, (long long)c.sigma); break;
    case 3: RedisModule_ReplyWithLongLong(ctx, (long long)c.messages); break;
    case 4: RedisModule_ReplyWithLongLong(ctx, (long long)c.phases); break;
    case 5:
        RedisModule_ReplyWithCString(ctx, c.hashing == RBF_NON_COLLIDING ? "non-colliding" : "colliding");
        break;
    case 6:
        RedisModule_ReplyWithCString(ctx, c.recycle == RBF_RETAINING ? "retaining" : "non-retaining");
        break;
    case 7: RedisModule_ReplyWithLongLong(ctx, (long long)s.bits); break;
    case 8: RedisModule_ReplyWithLongLong(ctx, (long long)s.bits_set); break;
    case 9: RedisModule_ReplyWithDouble(ctx, (double)s.bits_set / (double)s.bits); break;
    case 10: RedisModule_ReplyWithLongLong(ctx, (long long)s.frozen_bits_set); break;
    case 11: RedisModule_ReplyWithLongLong(ctx, (long long)s.cycles); break;
    case 12: RedisModule_ReplyWithLongLong(ctx, (long long)s.cycle_messages); break;
    case 13: RedisModule_ReplyWithLongLong(ctx, (long long)s.inserts); break;
    case 14: RedisModule_ReplyWithLongLong(ctx, (long long)s.reported_new); break;
    case 15: reply_model_value(ctx, v->model, 0); break;
    case 16: reply_model_value(ctx, v->model, 1); break;
    case 17: RedisModule_ReplyWithLongLong(ctx, (long long)value_mem(v)); break;
    default:
        RedisModule_ReplyWithCString(ctx, c.layout == RBF_LAYOUT_BLOCKED ? "blocked" : "flat");
        break;
    }
}

static int cmd_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2 && argc != 3)
        return RedisModule_WrongArity(ctx);
    rr_value *v;
    if (!open_ready(ctx, argv[1], &v))
        return REDISMODULE_OK;
    if (argc == 3) {
        for (size_t i = 0; i < INFO_FIELDS; i++)
            if (arg_is(argv[2], info_names[i])) {
                info_field(ctx, v, i);
                return REDISMODULE_OK;
            }
        return RedisModule_ReplyWithError(ctx, "ERR unknown INFO field");
    }
    RedisModule_ReplyWithArray(ctx, (long)(2 * INFO_FIELDS));
    for (size_t i = 0; i < INFO_FIELDS; i++) {
        RedisModule_ReplyWithCString(ctx, info_names[i]);
        info_field(ctx, v, i);
    }
    return REDISMODULE_OK;
}

/* ---- RBF.SCANDUMP / RBF.LOADCHUNK
 *
 * The dump is the filter's image in chunks of at most rr_dump_chunk bytes.  The
 * cursor returned with a chunk is (generation << 40) | (offset just past the
 * chunk); SCANDUMP with cursor 0 starts a new dump (copying nothing: the
 * header goes out with the first chunk), each later cursor must be the one
 * just returned and reads the next chunk from the filter, and [0, nil] ends
 * the dump.  The dump is the filter as it was at cursor 0: a write while a
 * dump is in progress first saves the pages not yet served that it may
 * change (dump_before_write), and the chunks read those saved pages.  The
 * checksum at the end is XXH3 of the bytes served.  LOADCHUNK takes the chunks in order: the one ending
 * at offset len(data) starts a new restore (replacing what the key held),
 * each next one must continue where the previous ended, and the last one
 * verifies the image and makes the filter usable. */

/* Save page i of the image (the part before the checksum) as it is now,
 * unless saved already.  0, or -1 when out of memory. */
static int dump_save_page(rr_value *v, uint64_t i)
{
    if (!v->dump_pages) {
        v->dump_pages = rr_alloc((size_t)v->dump_npages * sizeof *v->dump_pages);
        if (!v->dump_pages)
            return -1;
        memset(v->dump_pages, 0, (size_t)v->dump_npages * sizeof *v->dump_pages);
    }
    if (v->dump_pages[i])
        return 0;
    uint64_t start = i * RR_PAGE, end = start + RR_PAGE;
    if (end > v->dump_len - 8)
        end = v->dump_len - 8;
    uint8_t *p = rr_alloc((size_t)(end - start));
    if (!p)
        return -1;
    rbf_save_range(v->f, start, p, (size_t)(end - start));
    v->dump_pages[i] = p;
    v->dump_saved += end - start;
    return 0;
}

/* Called before every write to v->f (n items to insert, or a recycle):
 * while a dump is in progress, save the pages not yet served that the
 * write may change.  An insert changes only the words at its k positions
 * in the active filter, unless it recycles; a recycle (or an insert that
 * may recycle: sigma within n*k bits, or N within n messages) may change
 * every page, so all the pages not yet served are saved.  Out of memory,
 * the dump is dropped (its next cursor is refused as stale). */
static void dump_before_write(rr_value *v, RedisModuleString **items, size_t n, int recycle)
{
    if (!v->dump_gen || v->dump_sent >= v->dump_len - 8)
        return;
    rbf_config c;
    rbf_stats s;
    rbf_get_config(v->f, &c);
    rbf_get_stats(v->f, &s);
    int all = recycle;
    if (!all && c.sigma)
        all = s.bits_set + (uint64_t)c.hashes * n > c.sigma;
    else if (!all)
        all = s.cycle_messages + n >= c.messages;
    if (all) {
        for (uint64_t i = v->dump_sent / RR_PAGE; i < v->dump_npages; i++)
            if (dump_save_page(v, i) != 0) {
                value_drop_dump(v);
                return;
            }
        return;
    }
    uint64_t pos[RBF_MAX_HASHES];
    for (size_t j = 0; j < n; j++) {
        size_t len;
        const char *p = RedisModule_StringPtrLen(items[j], &len);
        int k = rbf_positions(v->f, rbf_hash(v->f, p, len), pos);
        for (int t = 0; t < k; t++) {
            /* the word's bytes in the image: the active filter comes first */
            uint64_t off = v->dump_hs + 8 * (pos[t] / 64);
            if (off + 8 > v->dump_sent && dump_save_page(v, off / RR_PAGE) != 0) {
                value_drop_dump(v);
                return;
            }
        }
    }
}

/* Image bytes [off, off + n) of the dump into buf: saved pages as saved,
 * the others from the filter, the checksum from the bytes served. */
static void dump_read(rr_value *v, uint64_t off, uint8_t *buf, size_t n)
{
    uint64_t body = v->dump_len - 8, end = off + n, pos = off;
    while (pos < end && pos < body) {
        uint64_t i = pos / RR_PAGE, stop = pos;
        if (v->dump_pages && v->dump_pages[i]) {
            stop = (i + 1) * RR_PAGE;
            if (stop > body)
                stop = body;
            if (stop > end)
                stop = end;
            memcpy(buf + (pos - off), v->dump_pages[i] + (pos - i * RR_PAGE), (size_t)(stop - pos));
        } else {
            /* a run of pages not saved: one range from the filter */
            while (stop < end && stop < body &&
                   !(v->dump_pages && v->dump_pages[stop / RR_PAGE])) {
                stop = (stop / RR_PAGE + 1) * RR_PAGE;
                if (stop > body)
                    stop = body;
                if (stop > end)
                    stop = end;
            }
            rbf_save_range(v->f, pos, buf + (pos - off), (size_t)(stop - pos));
        }
        pos = stop;
    }
    if (pos > off)
        XXH3_64bits_update(v->dump_sum, buf, (size_t)(pos - off));
    if (end > body) {
        uint8_t tail[8];
        uint64_t sum = XXH3_64bits_digest(v->dump_sum);
        for (int b = 0; b < 8; b++)
            tail[b] = (uint8_t)(sum >> (8 * b));
        uint64_t from = pos > body ? pos : body;
        memcpy(buf + (from - off), tail + (from - body), (size_t)(end - from));
    }
}

static int cmd_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 3)
        return RedisModule_WrongArity(ctx);
    long long cur;
    if (RedisModule_StringToLongLong(argv[2], &cur) != REDISMODULE_OK || cur < 0)
        return RedisModule_ReplyWithError(ctx, "ERR cursor must be a non-negative integer");
    rr_value *v;
    if (!open_ready(ctx, argv[1], &v))
        return REDISMODULE_OK;
    uint64_t off;
    if (cur == 0) {
        /* a new dump: nothing is copied here; the header goes out in this
         * first chunk (a chunk is at least 1 KiB) */
        value_drop_dump(v);
        uint64_t len = 0;
        rbf_config c;
        rbf_get_config(v->f, &c);
        /* the hash state from the server's allocator, aligned by hand */
        v->dump_sum_mem = rr_alloc(sizeof(XXH3_state_t) + 64);
        if (v->dump_sum_mem)
            v->dump_sum = (XXH3_state_t *)(void *)((uintptr_t)((uint8_t *)v->dump_sum_mem + 63) &
                                                   ~(uintptr_t)63);
        if (rbf_save_size(v->f, &len) != RBF_OK || !v->dump_sum) {
            value_drop_dump(v);
            return RedisModule_ReplyWithError(ctx, "ERR out of memory for the dump");
        }
        XXH3_64bits_reset(v->dump_sum);
        v->dump_len = len;
        v->dump_hs = len - 8 - config_bytes(&c);
        v->dump_npages = (len - 8 + RR_PAGE - 1) / RR_PAGE;
        v->dump_gen = (atomic_fetch_add(&rr_dump_gen, 1) % 0x3fffffu) + 1;
        off = 0;
    } else {
        uint64_t gen = (uint64_t)cur >> RR_CURSOR_BITS;
        off = (uint64_t)cur & RR_CURSOR_MASK;
        if (!v->dump_gen || gen != v->dump_gen || off != v->dump_sent)
            return RedisModule_ReplyWithError(ctx, "ERR invalid or stale SCANDUMP cursor: start "
                                                   "again at 0");
    }
    if (off == v->dump_len) {
        value_drop_dump(v);
        RedisModule_ReplyWithArray(ctx, 2);
        RedisModule_ReplyWithLongLong(ctx, 0);
        return RedisModule_ReplyWithNull(ctx);
    }
    uint64_t n = v->dump_len - off;
    if (n > rr_dump_chunk)
        n = rr_dump_chunk;
    uint8_t *buf = rr_alloc((size_t)n);
    if (!buf)
        return RedisModule_ReplyWithError(ctx, "ERR out of memory for the dump chunk");
    dump_read(v, off, buf, (size_t)n);
    v->dump_sent = off + n;
    /* pages wholly served are not read again */
    for (uint64_t i = off / RR_PAGE; v->dump_pages && i < v->dump_sent / RR_PAGE; i++)
        if (v->dump_pages[i]) {
            v->dump_saved -= v->dump_len - 8 - i * RR_PAGE < RR_PAGE ? v->dump_len - 8 - i * RR_PAGE
                                                                       : RR_PAGE;
            rr_free(v->dump_pages[i]);
            v->dump_pages[i] = NULL;
        }
    uint64_t next = ((uint64_t)v->dump_gen << RR_CURSOR_BITS) | v->dump_sent;
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, (long long)next);
    RedisModule_ReplyWithStringBuffer(ctx, (const char *)buf, (size_t)n);
    rr_free(buf);
    return REDISMODULE_OK;
}

static int cmd_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 4)
        return RedisModule_WrongArity(ctx);
    long long cur;
    if (RedisModule_StringToLongLong(argv[2], &cur) != REDISMODULE_OK || cur <= 0)
        return RedisModule_ReplyWithError(ctx, "ERR cursor must be a positive integer");
    size_t n;
    const uint8_t *data = (const uint8_t *)RedisModule_StringPtrLen(argv[3], &n);
    uint64_t end = (uint64_t)cur & RR_CURSOR_MASK;
    if (n == 0 || n > end)
        return RedisModule_ReplyWithError(ctx, "ERR chunk does not match its cursor");
    uint64_t start = end - n;
    RedisModuleKey *k;
    rr_value *v;
    if (!open_value(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &k, &v))
        return REDISMODULE_OK;
    if (start == 0) {
        /* a new restore: the first chunk carries the header */
        uint64_t total = n >= RR_HEADER ? image_size_from_header(data) : 0;
        if (!total || n > total) {
            RedisModule_CloseKey(k);
            return RedisModule_ReplyWithError(ctx, "ERR first chunk is not an rbf image header");
        }
        if (check_room(ctx, 2 * total) != 0) {
            RedisModule_CloseKey(k);
            return REDISMODULE_OK;
        }
        uint8_t *buf = total <= SIZE_MAX ? rr_alloc((size_t)total) : NULL;
        if (!buf) {
            RedisModule_CloseKey(k);
            return RedisModule_ReplyWithError(ctx, "ERR out of memory for the restore");
        }
        if (!v) {
            v = value_new();
            if (!v) {
                rr_free(buf);
                RedisModule_CloseKey(k);
                return RedisModule_ReplyWithError(ctx, "ERR out of memory");
            }
            RedisModule_ModuleTypeSetValue(k, rr_type, v);
        }
        value_drop_filter(v);
        value_drop_dump(v);
        rr_free(v->load);
        v->load = buf;
        v->load_len = (size_t)total;
        v->load_have = 0;
    } else if (!v || v->f || !v->load || start != v->load_have || end > v->load_len) {
        RedisModule_CloseKey(k);
        return RedisModule_ReplyWithError(ctx, v && v->load ? "ERR chunk out of order: LOADCHUNK "
                                                              "takes the chunks in SCANDUMP order"
                                                            : "ERR no restore in progress: the "
                                                              "first chunk must come first");
    }
    memcpy(v->load + start, data, n);
    v->load_have = (size_t)end;
    RedisModule_ReplicateVerbatim(ctx);
    if (v->load_have < v->load_len) {
        RedisModule_CloseKey(k);
        return RedisModule_ReplyWithSimpleString(ctx, "OK");
    }
    rbf *f = NULL;
    int rc = rbf_load_buffer(v->load, v->load_len, &f);
    rr_free(v->load);
    v->load = NULL;
    v->load_len = v->load_have = 0;
    rr_model *m = NULL;
    if (rc == RBF_OK) {
        rbf_config c;
        rbf_get_config(f, &c);
        m = model_start(&c, NAN, NAN);
    }
    if (!m) {
        rbf_free(f);
        RedisModule_DeleteKey(k);
        RedisModule_CloseKey(k);
        return reply_errf(ctx, "ERR restored image rejected: %s",
                          rc != RBF_OK ? rbf_strerror(rc) : "out of memory");
    }
    value_set_filter(v, f, m);
    RedisModule_CloseKey(k);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

/* --------------------------------------------------- data type methods */

/* RDB, encoding version 1:
 *   kind (0 filter, 1 incomplete restore)
 *   kind 0: image length, model state, model fp, model mpc, chunk count,
 *           the image in chunks
 *   kind 1: image length, bytes so far, chunk count, those bytes in chunks */

static void save_chunks(RedisModuleIO *io, const uint8_t *p, size_t len)
{
    uint64_t nchunks = len / rr_chunk + (len % rr_chunk != 0);
    RedisModule_SaveUnsigned(io, nchunks);
    for (size_t off = 0; off < len; off += rr_chunk) {
        size_t n = len - off < rr_chunk ? len - off : rr_chunk;
        RedisModule_SaveStringBuffer(io, (const char *)p + off, n);
    }
}

static int load_chunks(RedisModuleIO *io, uint8_t *dst, size_t len)
{
    uint64_t nchunks = RedisModule_LoadUnsigned(io);
    size_t off = 0;
    for (uint64_t i = 0; i < nchunks && !RedisModule_IsIOError(io); i++) {
        size_t n = 0;
        char *s = RedisModule_LoadStringBuffer(io, &n);
        if (!s)
            return -1;
        if (n > len - off) {
            RedisModule_Free(s);
            return -1;
        }
        memcpy(dst + off, s, n);
        off += n;
        RedisModule_Free(s);
    }
    return RedisModule_IsIOError(io) || off != len ? -1 : 0;
}

static void rdb_save(RedisModuleIO *io, void *value)
{
    rr_value *v = value;
    if (!v->f) {
        RedisModule_SaveUnsigned(io, 1);
        RedisModule_SaveUnsigned(io, v->load_len);
        RedisModule_SaveUnsigned(io, v->load_have);
        save_chunks(io, v->load, v->load_have);
        return;
    }
    size_t len = 0;
    uint8_t *img = image_for_save(v->f, &len);
    RedisModule_SaveUnsigned(io, 0);
    RedisModule_SaveUnsigned(io, img ? len : 0);
    int st = atomic_load(&v->model->state);
    RedisModule_SaveUnsigned(io, (uint64_t)st);
    RedisModule_SaveDouble(io, st == RR_MODEL_READY ? v->model->fp : 0.0);
    RedisModule_SaveDouble(io, st == RR_MODEL_READY ? v->model->mpc : 0.0);
    save_chunks(io, img, img ? len : 0);
    rr_free(img);
}

static void *rdb_load(RedisModuleIO *io, int encver)
{
    if (encver != RR_ENCVER) {
        RedisModule_Log(NULL, "warning", "rbf: cannot load filter encoding version %d (this module "
                                         "reads version %d): upgrade the module",
                        encver, RR_ENCVER);
        return NULL;
    }
    uint64_t kind = RedisModule_LoadUnsigned(io);
    uint64_t len = RedisModule_LoadUnsigned(io);
    if (RedisModule_IsIOError(io) || kind > 1 || len > SIZE_MAX || len < RR_HEADER + 8)
        return NULL;
    rr_value *v = value_new();
    uint8_t *buf = v ? rr_alloc((size_t)len) : NULL;
    if (!buf) {
        rr_free(v);
        return NULL;
    }
    if (kind == 1) {
        uint64_t have = RedisModule_LoadUnsigned(io);
        if (have > len || load_chunks(io, buf, (size_t)have) != 0) {
            rr_free(buf);
            rr_free(v);
            return NULL;
        }
        v->load = buf;
        v->load_len = (size_t)len;
        v->load_have = (size_t)have;
        return v;
    }
    uint64_t st = RedisModule_LoadUnsigned(io);
    double fp = RedisModule_LoadDouble(io), mpc = RedisModule_LoadDouble(io);
    rbf *f = NULL;
    if (load_chunks(io, buf, (size_t)len) != 0 || rbf_load_buffer(buf, (size_t)len, &f) != RBF_OK) {
        rr_free(buf);
        rr_free(v);
        RedisModule_Log(NULL, "warning", "rbf: a filter in the RDB file is damaged");
        return NULL;
    }
    rr_free(buf);
    rbf_config c;
    rbf_get_config(f, &c);
    rr_model *m = model_start(&c, st == RR_MODEL_READY ? fp : NAN, mpc);
    if (!m) {
        rbf_free(f);
        rr_free(v);
        return NULL;
    }
    value_set_filter(v, f, m);
    return v;
}

static void emit_chunks(RedisModuleIO *aof, RedisModuleString *key, const uint8_t *p, size_t len)
{
    for (size_t off = 0; off < len; off += rr_chunk) {
        size_t n = len - off < rr_chunk ? len - off : rr_chunk;
        RedisModule_EmitAOF(aof, "RBF.LOADCHUNK", "slb", key, (long long)(off + n),
                            (const char *)p + off, n);
    }
}

static void aof_rewrite(RedisModuleIO *aof, RedisModuleString *key, void *value)
{
    rr_value *v = value;
    if (!v->f) {
        emit_chunks(aof, key, v->load, v->load_have);
        return;
    }
    size_t len = 0;
    uint8_t *img = image_for_save(v->f, &len);
    if (!img)
        return;
    emit_chunks(aof, key, img, len);
    rr_free(img);
}

static size_t mem_usage(const void *value)
{
    return value_mem(value);
}

static void digest(RedisModuleDigest *md, void *value)
{
    rr_value *v = value;
    if (!v->f) {
        RedisModule_DigestAddStringBuffer(md, "restoring", 9);
        RedisModule_DigestAddStringBuffer(md, (const char *)v->load, v->load_have);
        RedisModule_DigestEndSequence(md);
        return;
    }
    size_t len = 0;
    uint8_t *img = image_for_save(v->f, &len);
    if (img)
        RedisModule_DigestAddStringBuffer(md, (const char *)img, len);
    RedisModule_DigestEndSequence(md);
    rr_free(img);
}

/* ------------------------------------------------ RedisBloom commands */

/* BF.RESERVE key error_rate capacity [EXPANSION n] [NONSCALING] */
static int bf_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 4)
        return RedisModule_WrongArity(ctx);
    rr_req q;
    req_init(&q);
    q.planned = 1;
    q.given = (1u << O_ERROR_RATE) | (1u << O_CAPACITY);
    if (parse_rate(argv[2], &q.eps) != 0)
        return RedisModule_ReplyWithError(ctx, "ERR error_rate must be between 0 and 1 (exclusive)");
    if (parse_u64(argv[3], &q.capacity) != 0 || q.capacity == 0)
        return RedisModule_ReplyWithError(ctx, "ERR capacity must be a positive integer");
    for (int i = 4; i < argc; i++) {
        uint64_t x;
        if (arg_is(argv[i], "NONSCALING"))
            continue;
        if (arg_is(argv[i], "EXPANSION") && i + 1 < argc && parse_u64(argv[i + 1], &x) == 0) {
            i++;
            continue;
        }
        return RedisModule_ReplyWithError(ctx, "ERR unknown or incomplete option after capacity "
                                               "(EXPANSION n, NONSCALING)");
    }
    RedisModuleKey *k;
    rr_value *v;
    if (!open_value(ctx, argv[1], REDISMODULE_READ, &k, &v))
        return REDISMODULE_OK;
    RedisModule_CloseKey(k);
    if (v)
        return RedisModule_ReplyWithError(ctx, "ERR item exists");
    return reserve_request(ctx, argv[1], &q, NULL, 0, REPLY_OK);
}

static int bf_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return add_common(ctx, argv, argc, 0, 1);
}

static int bf_madd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return add_common(ctx, argv, argc, 1, 1);
}

/* BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING]
 * ITEMS item... */
static int bf_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc < 4)
        return RedisModule_WrongArity(ctx);
    int it = find_items(ctx, argv, argc, 2);
    if (it < 0)
        return REDISMODULE_OK;
    rr_req q;
    req_init(&q);
    q.planned = 1;
    q.given = (1u << O_ERROR_RATE) | (1u << O_CAPACITY);
    q.eps = rr_bf_error;
    q.capacity = rr_bf_capacity;
    int nocreate = 0, custom = 0;
    for (int i = 2; i < it; i++) {
        uint64_t x;
        if (arg_is(argv[i], "NOCREATE")) {
            nocreate = 1;
        } else if (arg_is(argv[i], "NONSCALING")) {
        } else if (arg_is(argv[i], "CAPACITY") && i + 1 < it) {
            if (parse_u64(argv[++i], &q.capacity) != 0 || q.capacity == 0)
                return RedisModule_ReplyWithError(ctx, "ERR CAPACITY must be a positive integer");
            custom = 1;
        } else if (arg_is(argv[i], "ERROR") && i + 1 < it) {
            if (parse_rate(argv[++i], &q.eps) != 0)
                return RedisModule_ReplyWithError(ctx, "ERR ERROR must be between 0 and 1 (exclusive)");
            custom = 1;
        } else if (arg_is(argv[i], "EXPANSION") && i + 1 < it && parse_u64(argv[i + 1], &x) == 0) {
            i++;
        } else {
            return RedisModule_ReplyWithError(ctx, "ERR unknown or incomplete option before ITEMS");
        }
    }
    if (nocreate && custom)
        return RedisModule_ReplyWithError(ctx, "ERR NOCREATE cannot be used with CAPACITY or ERROR");
    RedisModuleKey *k;
    rr_value *v;
    if (!open_value(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &k, &v))
        return REDISMODULE_OK;
    size_t n = (size_t)(argc - it - 1);
    if (v)
        return insert_existing(ctx, k, v, argv + it + 1, n);
    RedisModule_CloseKey(k);
    if (nocreate)
        return RedisModule_ReplyWithError(ctx, "ERR not found");
    if (!custom) {
        rbf_config c = rr_bf_default, tmp;
        rbf_config_init(&tmp);
        c.seed = tmp.seed;
        return create_and_reply(ctx, argv[1], &c, rr_bf_default_fp, rr_bf_default_mpc,
                                argv + it + 1, n, REPLY_ARRAY);
    }
    return reserve_request(ctx, argv[1], &q, argv + it + 1, n, REPLY_ARRAY);
}

static int bf_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return exists_common(ctx, argv, argc, 0);
}

static int bf_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    return exists_common(ctx, argv, argc, 1);
}

/* Capacity as BF.INFO reports it: the model's messages per cycle. */
static long long bf_capacity(const rr_value *v)
{
    int st = atomic_load(&v->model->state);
    if (st == RR_MODEL_PENDING || isnan(v->model->mpc))
        return 0;
    return (long long)floor(v->model->mpc);
}

static int bf_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2 && argc != 3)
        return RedisModule_WrongArity(ctx);
    rr_value *v;
    if (!open_ready(ctx, argv[1], &v))
        return REDISMODULE_OK;
    rbf_stats s;
    rbf_config c;
    rbf_get_stats(v->f, &s);
    rbf_get_config(v->f, &c);
    long long vals[4] = {bf_capacity(v), (long long)value_mem(v), (long long)c.phases,
                         (long long)s.reported_new};
    static const char *const names[5] = {"Capacity", "Size", "Number of filters",
                                         "Number of items inserted", "Expansion rate"};
    static const char *const fields[5] = {"CAPACITY", "SIZE", "FILTERS", "ITEMS", "EXPANSION"};
    if (argc == 3) {
        for (int i = 0; i < 5; i++)
            if (arg_is(argv[2], fields[i])) {
                RedisModule_ReplyWithArray(ctx, 1);
                if (i == 4)
                    return RedisModule_ReplyWithNull(ctx);
                return RedisModule_ReplyWithLongLong(ctx, vals[i]);
            }
        return RedisModule_ReplyWithError(ctx, "ERR unknown BF.INFO field (CAPACITY, SIZE, FILTERS, "
                                               "ITEMS, EXPANSION)");
    }
    RedisModule_ReplyWithArray(ctx, 10);
    for (int i = 0; i < 5; i++) {
        RedisModule_ReplyWithCString(ctx, names[i]);
        if (i == 4)
            RedisModule_ReplyWithNull(ctx);
        else
            RedisModule_ReplyWithLongLong(ctx, vals[i]);
    }
    return REDISMODULE_OK;
}

/* BF.CARD: as RedisBloom's, the items reported new (BF.INFO ITEMS). */
static int bf_card(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (argc != 2)
        return RedisModule_WrongArity(ctx);
    RedisModuleKey *k;
    rr_value *v;
    if (!open_value(ctx, argv[1], REDISMODULE_READ, &k, &v))
        return REDISMODULE_OK;
    RedisModule_CloseKey(k);
    if (!v)
        return RedisModule_ReplyWithLongLong(ctx, 0);
    if (!v->f)
        return reply_restoring(ctx, v);
    rbf_stats s;
    rbf_get_stats(v->f, &s);
    return RedisModule_ReplyWithLongLong(ctx, (long long)s.reported_new);
}

/* ------------------------------------------------------------- loading */

#if RR_ALLOC_HOOKED
static void *hook_malloc(void *ctx, size_t n)
{
    (void)ctx;
    return RedisModule_TryAlloc(n ? n : 1);
}
/* RedisModule_Realloc panics on failure; the hook must return NULL and
 * leave the block alone, so: a new block, copy, free. */
static void *hook_realloc(void *ctx, void *p, size_t n)
{
    (void)ctx;
    if (!p)
        return RedisModule_TryAlloc(n ? n : 1);
    void *q = RedisModule_TryAlloc(n ? n : 1);
    if (!q)
        return NULL;
    size_t old = RedisModule_MallocSize(p);
    memcpy(q, p, old < n ? old : n);
    RedisModule_Free(p);
    return q;
}
static void hook_free(void *ctx, void *p)
{
    (void)ctx;
    RedisModule_Free(p);
}
/* Zeroed memory for the bit arrays.  The server's calloc gets fresh pages
 * from the system already zero and leaves them untouched, where malloc and
 * memset would fault in the whole filter at once inside RBF.RESERVE (128
 * MiB: 1.3-2 s measured on a busy 2-core machine).  Redis 7.0 has no
 * TryCalloc: RedisModule_Calloc panics on failure, so the memory check of
 * every reservation (check_room) runs before the filter is allocated;
 * small blocks keep TryAlloc. */
static void *hook_calloc(void *ctx, size_t n, size_t size)
{
    (void)ctx;
    if (n && size > SIZE_MAX / n)
        return NULL;
    size_t bytes = n * size;
    if (bytes == 0)
        bytes = 1;
    if (bytes < ((size_t)1 << 20)) {
        void *p = RedisModule_TryAlloc(bytes);
        if (p)
            memset(p, 0, bytes);
        return p;
    }
    return RedisModule_Calloc(1, bytes);
}
#endif

typedef struct cmd_def {
    const char *name;
    RedisModuleCmdFunc fn;
    const char *flags;
} cmd_def;

static const cmd_def rbf_cmds[] = {
    {"rbf.reserve", cmd_reserve, "write deny-oom"},
    {"rbf.add", cmd_add, "write deny-oom fast"},
    {"rbf.madd", cmd_madd, "write deny-oom"},
    {"rbf.exists", cmd_exists, "readonly fast"},
    {"rbf.mexists", cmd_mexists, "readonly"},
    {"rbf.insert", cmd_insert, "write deny-oom"},
    {"rbf.recycle", cmd_recycle, "write"},
    {"rbf.info", cmd_info, "readonly fast"},
    {"rbf.scandump", cmd_scandump, "readonly"},
    {"rbf.loadchunk", cmd_loadchunk, "write deny-oom"},
};

static const cmd_def bf_cmds[] = {
    {"bf.reserve", bf_reserve, "write deny-oom"},
    {"bf.add", bf_add, "write deny-oom fast"},
    {"bf.madd", bf_madd, "write deny-oom"},
    {"bf.exists", bf_exists, "readonly fast"},
    {"bf.mexists", bf_mexists, "readonly"},
    {"bf.insert", bf_insert, "write deny-oom"},
    {"bf.info", bf_info, "readonly fast"},
    {"bf.card", bf_card, "readonly fast"},
    {"bf.scandump", cmd_scandump, "readonly"},
    {"bf.loadchunk", cmd_loadchunk, "write deny-oom"},
};

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
    __attribute__((visibility("default")));

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (rbf_redis_api_init(ctx, RR_MODULE_NAME, RR_MODULE_VERSION) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    int bf = 0;
    for (int i = 0; i < argc; i += 2) {
        uint64_t u;
        if (i + 1 >= argc) {
            RedisModule_Log(ctx, "warning", "rbf: load argument without a value");
            return REDISMODULE_ERR;
        }
        if (arg_is(argv[i], "BF-COMPAT") && (arg_is(argv[i + 1], "yes") || arg_is(argv[i + 1], "no"))) {
            bf = arg_is(argv[i + 1], "yes");
        } else if (arg_is(argv[i], "BF-ERROR-RATE") && parse_rate(argv[i + 1], &rr_bf_error) == 0) {
        } else if (arg_is(argv[i], "BF-CAPACITY") && parse_u64(argv[i + 1], &u) == 0 && u > 0 &&
                   u <= 100000000) {
            rr_bf_capacity = u;
        } else if (arg_is(argv[i], "CHUNK-BYTES") && parse_u64(argv[i + 1], &u) == 0 &&
                   u >= 1024 && u <= ((uint64_t)256 << 20)) {
            rr_chunk = rr_dump_chunk = (size_t)u;
        } else {
            RedisModule_Log(ctx, "warning", "rbf: bad load argument (BF-COMPAT yes|no, "
                                            "BF-ERROR-RATE eps, BF-CAPACITY n, CHUNK-BYTES n)");
            return REDISMODULE_ERR;
        }
    }
    RedisModule_SetModuleOptions(ctx, REDISMODULE_OPTIONS_HANDLE_IO_ERRORS);
#if RR_ALLOC_HOOKED
    static const rbf_allocator hook = {hook_malloc, hook_realloc, hook_free, NULL, hook_calloc,
                                       {NULL}};
    if (rbf_set_allocator(&hook) != RBF_OK)
        return REDISMODULE_ERR;
#endif
    RedisModuleTypeMethods tm;
    memset(&tm, 0, sizeof tm);
    tm.version = RBF_REDIS_TYPE_METHOD_VERSION;
    tm.rdb_load = rdb_load;
    tm.rdb_save = rdb_save;
    tm.aof_rewrite = aof_rewrite;
    tm.mem_usage = mem_usage;
    tm.digest = digest;
    tm.free = value_free;
    rr_type = RedisModule_CreateDataType(ctx, RR_TYPE_NAME, RR_ENCVER, &tm);
    if (!rr_type)
        return REDISMODULE_ERR;
    for (size_t i = 0; i < sizeof rbf_cmds / sizeof rbf_cmds[0]; i++)
        if (RedisModule_CreateCommand(ctx, rbf_cmds[i].name, rbf_cmds[i].fn, rbf_cmds[i].flags, 1,
                                      1, 1) != REDISMODULE_OK)
            return REDISMODULE_ERR;
    if (bf) {
        rr_req q;
        req_init(&q);
        q.planned = 1;
        q.eps = rr_bf_error;
        q.capacity = rr_bf_capacity;
        plan_out o;
        plan_run(&q, &o);
        if (o.err) {
            RedisModule_Log(ctx, "warning", "rbf: BF defaults cannot be planned: %s", o.err);
            return REDISMODULE_ERR;
        }
        rr_bf_default = o.cfg;
        rr_bf_default_fp = o.fp;
        rr_bf_default_mpc = o.mpc;
        for (size_t i = 0; i < sizeof bf_cmds / sizeof bf_cmds[0]; i++)
            if (RedisModule_CreateCommand(ctx, bf_cmds[i].name, bf_cmds[i].fn, bf_cmds[i].flags, 1,
                                          1, 1) != REDISMODULE_OK) {
                RedisModule_Log(ctx, "warning", "rbf: cannot register %s (is RedisBloom loaded?)",
                                bf_cmds[i].name);
                return REDISMODULE_ERR;
            }
    }
    for (int i = 0; i < RR_WORKERS; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker_main, NULL) != 0)
            return REDISMODULE_ERR;
        pthread_detach(t);
    }
    return REDISMODULE_OK;
}
