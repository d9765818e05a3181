/*
 * dump.c -- RBF.SCANDUMP and RBF.LOADCHUNK (and BF.SCANDUMP, BF.LOADCHUNK).
 *
 * A dump is the filter's image in chunks of at most DUMP-CHUNK bytes, as
 * the filter was at the dump's first call (cursor 0), while the filter
 * goes on taking writes: the library's dump API (rbf_dump_*) keeps a copy
 * of each page a write changes before the dump has read it.  The cursor
 * returned with a chunk is (dump id << 40) | (offset just past the chunk);
 * the next call must pass exactly that cursor, and [0, nil] ends the dump.
 * Any number of dumps of one key may run at once.  An abandoned dump is
 * dropped after DUMP-TIMEOUT seconds idle, and the copies of all dumps
 * together are bounded by DUMP-MEMORY bytes: past it the oldest dump is
 * dropped.  The next cursor of a dropped dump gets an error that says why.
 *
 * LOADCHUNK takes the chunks in order: the one ending at offset len(data)
 * starts a restore into an empty key (a client's header chunk onto a live
 * filter is refused; the replication link and AOF files written by earlier
 * versions may still replace one), each next one continues where the
 * previous ended, and the last one verifies the image and makes the filter
 * usable.
 *
 * The registry of dumps is locked: a value may be freed on the server's
 * lazy-free thread (FLUSHALL ASYNC), which closes its dumps there.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "rr.h"

#define CURSOR_BITS 40 /* the offset's bits in a cursor */
#define CURSOR_MASK ((UINT64_C(1) << CURSOR_BITS) - 1)
#define ID_MAX 0x7fffffu /* ids: 1 .. 2^23 - 1, so a cursor stays a positive long long */
#define DROPPED_RING 256

struct rr_dump {
    rr_dump *next;          /* in the value's list */
    rr_dump *older, *newer; /* in the registry, oldest first */
    rr_value *v;
    rbf_dump *d;
    uint32_t id;
    long long used_ms; /* the last call */
    uint64_t held;     /* copies counted in rr_count.dump_bytes */
};

enum { WHY_IDLE = 1, WHY_MEMORY, WHY_NOMEM, WHY_KEY };

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static rr_dump *oldest, *newest;
static uint32_t last_id;
static struct {
    uint32_t id;
    int why;
} dropped[DROPPED_RING];
static unsigned dropped_next;

/* ---- the registry (reg_mu held) */

static void unlink_dump(rr_dump *x)
{
    if (x->older)
        x->older->newer = x->newer;
    else
        oldest = x->newer;
    if (x->newer)
        x->newer->older = x->older;
    else
        newest = x->older;
    for (rr_dump **pp = &x->v->dumps; *pp; pp = &(*pp)->next)
        if (*pp == x) {
            *pp = x->next;
            break;
        }
    atomic_fetch_sub(&rr_count.dumps_open, 1);
    atomic_fetch_sub(&rr_count.dump_bytes, x->held);
    rbf_dump_close(x->d);
    rr_free(x);
}

/* Remember why dump x goes, for its next cursor. */
static void note_dropped(const rr_dump *x, int why)
{
    dropped[dropped_next % DROPPED_RING].id = x->id;
    dropped[dropped_next % DROPPED_RING].why = why;
    dropped_next++;
}

static void drop_dump(rr_dump *x, int why)
{
    note_dropped(x, why);
    if (why == WHY_IDLE)
        atomic_fetch_add(&rr_count.dumps_dropped_idle, 1);
    else
        atomic_fetch_add(&rr_count.dumps_dropped_memory, 1);
    unlink_dump(x);
}

static void update_held(rr_dump *x)
{
    uint64_t h = rbf_dump_held(x->d);
    if (h >= x->held)
        atomic_fetch_add(&rr_count.dump_bytes, h - x->held);
    else
        atomic_fetch_sub(&rr_count.dump_bytes, x->held - h);
    x->held = h;
}

/* Past DUMP-MEMORY: drop the oldest dumps until the copies fit. */
static void enforce_memory(void)
{
    while (oldest && atomic_load(&rr_count.dump_bytes) > rr_opt.dump_memory)
        drop_dump(oldest, WHY_MEMORY);
}

/* ---- what the rest of the module calls */

void rr_dumps_close(rr_value *v)
{
    if (!v->dumps)
        return;
    pthread_mutex_lock(&reg_mu);
    while (v->dumps) {
        note_dropped(v->dumps, WHY_KEY);
        unlink_dump(v->dumps);
    }
    pthread_mutex_unlock(&reg_mu);
}

uint64_t rr_dumps_held(const rr_value *v)
{
    uint64_t h = 0;
    for (const rr_dump *x = v->dumps; x; x = x->next)
        h += x->held + sizeof *x;
    return h;
}

void rr_dumps_before_insert(rr_value *v, RedisModuleString **items, size_t n)
{
    if (!v->dumps || n == 0)
        return;
    const void **keys = rr_alloc(n * sizeof *keys);
    size_t *lens = rr_alloc(n * sizeof *lens);
    if (keys && lens)
        for (size_t i = 0; i < n; i++)
            keys[i] = RedisModule_StringPtrLen(items[i], &lens[i]);
    pthread_mutex_lock(&reg_mu);
    rr_dump *x = v->dumps;
    while (x) {
        rr_dump *next = x->next;
        int rc = keys && lens ? rbf_dump_before_insert(x->d, keys, lens, n) : RBF_ENOMEM;
        if (rc != RBF_OK)
            drop_dump(x, WHY_NOMEM);
        else
            update_held(x);
        x = next;
    }
    enforce_memory();
    pthread_mutex_unlock(&reg_mu);
    rr_free(keys);
    rr_free(lens);
}

void rr_dumps_before_recycle(rr_value *v)
{
    if (!v->dumps)
        return;
    pthread_mutex_lock(&reg_mu);
    rr_dump *x = v->dumps;
    while (x) {
        rr_dump *next = x->next;
        if (rbf_dump_before_recycle(x->d) != RBF_OK)
            drop_dump(x, WHY_NOMEM);
        else
            update_held(x);
        x = next;
    }
    enforce_memory();
    pthread_mutex_unlock(&reg_mu);
}

void rr_dumps_expire(void)
{
    if (!oldest)
        return;
    long long now = RedisModule_Milliseconds();
    pthread_mutex_lock(&reg_mu);
    rr_dump *x = oldest;
    while (x) {
        rr_dump *next = x->newer;
        if (now - x->used_ms > rr_opt.dump_timeout_ms)
            drop_dump(x, WHY_IDLE);
        x = next;
    }
    pthread_mutex_unlock(&reg_mu);
}

/* ---- RBF.SCANDUMP key cursor */

static int reply_dropped(RedisModuleCtx *ctx, uint32_t id)
{
    int why = 0;
    pthread_mutex_lock(&reg_mu);
    for (unsigned i = 0; i < DROPPED_RING; i++)
        if (dropped[i].id == id)
            why = dropped[i].why;
    pthread_mutex_unlock(&reg_mu);
    if (why == WHY_IDLE)
        return rr_reply_errf(ctx, "ERR this SCANDUMP was dropped: idle for more than DUMP-TIMEOUT "
                                  "(%lld s); start again at 0",
                             rr_opt.dump_timeout_ms / 1000);
    if (why == WHY_MEMORY)
        return rr_reply_errf(ctx, "ERR this SCANDUMP was dropped: the copies kept for dumps in "
                                  "progress passed DUMP-MEMORY (%llu bytes) and it was the "
                                  "oldest; start again at 0",
                             (unsigned long long)rr_opt.dump_memory);
    if (why == WHY_NOMEM)
        return RedisModule_ReplyWithError(ctx, "ERR this SCANDUMP was dropped: out of memory for "
                                               "its copies; start again at 0");
    if (why == WHY_KEY)
        return RedisModule_ReplyWithError(ctx, "ERR this SCANDUMP was dropped: its key was "
                                               "deleted, renamed, moved, overwritten or restored "
                                               "over while it ran; start again at 0 (on the "
                                               "key's present name)");
    return RedisModule_ReplyWithError(ctx, "ERR invalid or stale SCANDUMP cursor: start again at 0");
}

static rr_dump *open_dump(rr_value *v)
{
    rr_dump *x = rr_alloc(sizeof *x);
    if (!x)
        return NULL;
    memset(x, 0, sizeof *x);
    if (rbf_dump_open(v->f, &x->d) != RBF_OK) {
        rr_free(x);
        return NULL;
    }
    x->v = v;
    x->used_ms = RedisModule_Milliseconds();
    pthread_mutex_lock(&reg_mu);
    last_id = last_id % ID_MAX + 1;
    x->id = last_id;
    x->next = v->dumps;
    v->dumps = x;
    x->older = newest;
    if (newest)
        newest->newer = x;
    else
        oldest = x;
    newest = x;
    atomic_fetch_add(&rr_count.dumps_open, 1);
    pthread_mutex_unlock(&reg_mu);
    return x;
}

int rr_cmd_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (rr_begin(ctx, rr_cmd_scandump, argv, argc, argc != 3))
        return REDISMODULE_OK;
    long long cur;
    if (RedisModule_StringToLongLong(argv[2], &cur) != REDISMODULE_OK || cur < 0)
        return RedisModule_ReplyWithError(ctx, "ERR cursor must be a non-negative integer");
    rr_value *v;
    if (!rr_open_ready(ctx, argv[1], &v))
        return REDISMODULE_OK;
    rr_dump *x = NULL;
    if (cur == 0) {
        x = open_dump(v);
        if (!x)
            return RedisModule_ReplyWithError(ctx, "ERR out of memory for the dump");
    } else {
        uint32_t id = (uint32_t)((uint64_t)cur >> CURSOR_BITS);
        uint64_t off = (uint64_t)cur & CURSOR_MASK;
        for (x = v->dumps; x && x->id != id; x = x->next)
            ;
        if (!x)
            return reply_dropped(ctx, id);
        if (off != rbf_dump_offset(x->d))
            return RedisModule_ReplyWithError(ctx, "ERR invalid or stale SCANDUMP cursor: start "
                                                   "again at 0");
    }
    x->used_ms = RedisModule_Milliseconds();
    uint64_t left = rbf_dump_size(x->d) - rbf_dump_offset(x->d);
    if (left == 0) {
        pthread_mutex_lock(&reg_mu);
        unlink_dump(x);
        pthread_mutex_unlock(&reg_mu);
        RedisModule_ReplyWithArray(ctx, 2);
        RedisModule_ReplyWithLongLong(ctx, 0);
        return RedisModule_ReplyWithNull(ctx);
    }
    size_t n = left < rr_opt.dump_chunk ? (size_t)left : rr_opt.dump_chunk;
    uint8_t *buf = rr_alloc(n);
    if (!buf)
        return RedisModule_ReplyWithError(ctx, "ERR out of memory for the dump chunk");
    size_t got = 0;
    pthread_mutex_lock(&reg_mu);
    int rc = rbf_dump_read(x->d, buf, n, &got);
    uint32_t id = x->id;
    if (rc != RBF_OK)
        drop_dump(x, WHY_NOMEM);
    else
        update_held(x);
    pthread_mutex_unlock(&reg_mu);
    if (rc != RBF_OK) {
        rr_free(buf);
        return reply_dropped(ctx, id);
    }
    uint64_t next = ((uint64_t)id << CURSOR_BITS) | rbf_dump_offset(x->d);
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, (long long)next);
    RedisModule_ReplyWithStringBuffer(ctx, (const char *)buf, got);
    rr_free(buf);
    return REDISMODULE_OK;
}

/* ---- RBF.LOADCHUNK key cursor data */

/* The first chunk: start a restore into v (created in k if NULL).  0, or
 * -1 after replying. */
static int restore_begin(RedisModuleCtx *ctx, RedisModuleKey *k, rr_value **vp,
                         const uint8_t *data, size_t n)
{
    uint64_t total = 0;
    if (rbf_image_size(data, n, &total) != RBF_OK || n > total)
        return RedisModule_ReplyWithError(ctx, "ERR first chunk is not an rbf image header"), -1;
    rr_value *v = *vp;
    int flags = RedisModule_GetContextFlags(ctx);
    if (v && v->f &&
        !(flags & (REDISMODULE_CTX_FLAGS_REPLICATED | REDISMODULE_CTX_FLAGS_LOADING)))
        return RedisModule_ReplyWithError(ctx, "ERR the key holds a filter: a restore's first "
                                               "chunk goes to an empty key (DEL it first)"),
               -1;
    if (rr_check_room(ctx, 2 * total) != 0)
        return -1;
    uint8_t *buf = total <= SIZE_MAX ? rr_alloc((size_t)total) : NULL;
    if (!buf)
        return RedisModule_ReplyWithError(ctx, "ERR out of memory for the restore"), -1;
    if (!v) {
        v = rr_value_new();
        if (!v) {
            rr_free(buf);
            return RedisModule_ReplyWithError(ctx, "ERR out of memory"), -1;
        }
        RedisModule_ModuleTypeSetValue(k, rr_type, v);
        *vp = v;
    }
    rr_value_drop_filter(v);
    rr_free(v->load);
    v->load = buf;
    v->load_len = (size_t)total;
    v->load_have = 0;
    return 0;
}

int rr_cmd_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (rr_begin(ctx, rr_cmd_loadchunk, argv, argc, argc != 4))
        return REDISMODULE_OK;
    long long cur;
    if (RedisModule_StringToLongLong(argv[2], &cur) != REDISMODULE_OK || cur <= 0)
        return RedisModule_ReplyWithError(ctx, "ERR cursor must be a positive integer");
    size_t n;
    const uint8_t *data = (const uint8_t *)RedisModule_StringPtrLen(argv[3], &n);
    uint64_t end = (uint64_t)cur & CURSOR_MASK;
    if (n == 0 || n > end)
        return RedisModule_ReplyWithError(ctx, "ERR chunk does not match its cursor");
    uint64_t start = end - n;
    RedisModuleKey *k;
    rr_value *v;
    if (!rr_open_value(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &k, &v))
        return REDISMODULE_OK;
    if (start == 0) {
        if (restore_begin(ctx, k, &v, data, n) != 0) {
            RedisModule_CloseKey(k);
            return REDISMODULE_OK;
        }
    } else if (!v || v->f || !v->load || start != v->load_have || end > v->load_len) {
        RedisModule_CloseKey(k);
        return RedisModule_ReplyWithError(ctx, v && v->load ? "ERR chunk out of order: LOADCHUNK "
                                                              "takes the chunks in SCANDUMP order"
                                                            : "ERR no restore in progress: the "
                                                              "first chunk must come first");
    }
    memcpy(v->load + start, data, n);
    v->load_have = (size_t)end;
    /* as RBF.LOADCHUNK, also when it came as BF.LOADCHUNK */
    RedisModule_Replicate(ctx, "RBF.LOADCHUNK", "sss", argv[1], argv[2], argv[3]);
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
        m = rr_model_start(&c, NAN, NAN);
    }
    if (!m) {
        rbf_free(f);
        RedisModule_DeleteKey(k);
        RedisModule_CloseKey(k);
        return rr_reply_errf(ctx, "ERR restored image rejected: %s",
                             rc != RBF_OK ? rbf_strerror(rc) : "out of memory");
    }
    rr_value_set_filter(v, f, m);
    RedisModule_CloseKey(k);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
}
