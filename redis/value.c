/*
 * value.c -- a key's value: its lifecycle, the data type's methods (RDB,
 * AOF rewrite, DEBUG DIGEST, COPY, MEMORY USAGE, lazy free), opening keys,
 * and the memory admission of new filters.
 *
 * Every image (RDB, AOF rewrite, digest, SCANDUMP/LOADCHUNK) is the
 * library's portable image (rbf_save_buffer / rbf_load_buffer,
 * docs/file-format.md): it holds the configuration, the seed, the counters
 * and both bit arrays, with a checksum.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rr.h"

RedisModuleType *rr_type;
rr_counters rr_count;

void *rr_alloc(size_t n)
{
    return RedisModule_TryAlloc(n ? n : 1);
}

void rr_free(void *p)
{
    if (p)
        RedisModule_Free(p);
}

uint64_t rr_config_bytes(const rbf_config *c)
{
    uint64_t m = c->phases == 2 ? c->bits / 2 : c->bits;
    return (m / 64 + (m % 64 != 0)) * 8 * c->phases;
}

rr_value *rr_value_new(void)
{
    rr_value *v = rr_alloc(sizeof *v);
    if (v)
        memset(v, 0, sizeof *v);
    return v;
}

/* Install filter f (owned from now on) into v with model m (one reference
 * handed over; may be NULL). */
void rr_value_set_filter(rr_value *v, rbf *f, rr_model *m)
{
    rbf_config c;
    rbf_get_config(f, &c);
    v->f = f;
    v->model = m;
    v->fbytes = rr_config_bytes(&c);
    atomic_fetch_add(&rr_count.filters, 1);
    atomic_fetch_add(&rr_count.bytes, v->fbytes);
}

/* May run on a lazy-free thread (UNLINK, FLUSHALL ASYNC): only the
 * thread-safe allocator and atomics here, and dump.c's locked registry. */
void rr_value_drop_filter(rr_value *v)
{
    rr_dumps_close(v);
    if (v->f) {
        atomic_fetch_sub(&rr_count.filters, 1);
        atomic_fetch_sub(&rr_count.bytes, v->fbytes);
        rbf_free(v->f);
        v->f = NULL;
    }
    if (v->model) {
        atomic_store(&v->model->cancel, 1);
        rr_model_release(v->model);
        v->model = NULL;
    }
    v->fbytes = 0;
}

static void value_free(void *p)
{
    rr_value *v = p;
    if (!v)
        return;
    rr_value_drop_filter(v);
    rr_free(v->load);
    rr_free(v);
}

size_t rr_value_mem(const rr_value *v)
{
    return sizeof *v + (v->f ? (size_t)v->fbytes + 256 : 0) + (v->model ? sizeof *v->model : 0) +
           (size_t)rr_dumps_held(v) + v->load_len;
}

/* ------------------------------------------------------------ key access */

int rr_open_value(RedisModuleCtx *ctx, RedisModuleString *name, int mode, RedisModuleKey **k,
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
        rr_reply_wrongtype(ctx);
        return 0;
    }
    *v = RedisModule_ModuleTypeGetValue(*k);
    return 1;
}

int rr_reply_restoring(RedisModuleCtx *ctx, const rr_value *v)
{
    return rr_reply_errf(ctx, "ERR filter restore incomplete: LOADCHUNK has %llu of %llu bytes",
                         (unsigned long long)v->load_have, (unsigned long long)v->load_len);
}

int rr_open_ready(RedisModuleCtx *ctx, RedisModuleString *name, rr_value **v)
{
    RedisModuleKey *k;
    if (!rr_open_value(ctx, name, REDISMODULE_READ, &k, v))
        return 0;
    RedisModule_CloseKey(k);
    if (!*v) {
        RedisModule_ReplyWithError(ctx, "ERR not found");
        return 0;
    }
    if (!(*v)->f) {
        rr_reply_restoring(ctx, *v);
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------ memory admission */

static uint64_t phys_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || psz <= 0)
        return UINT64_MAX;
    return (uint64_t)pages * (uint64_t)psz;
}

/* The memory limit of the server's control group (v2, then v1), or
 * UINT64_MAX where there is none. */
static uint64_t cgroup_limit(void)
{
    static const char *const files[] = {"/sys/fs/cgroup/memory.max",
                                        "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        FILE *fp = fopen(files[i], "r");
        if (!fp)
            continue;
        char buf[64] = {0};
        char *got = fgets(buf, sizeof buf, fp);
        fclose(fp);
        if (!got || strncmp(buf, "max", 3) == 0)
            return UINT64_MAX;
        unsigned long long v = strtoull(buf, NULL, 10);
        return v ? (uint64_t)v : UINT64_MAX;
    }
    return UINT64_MAX;
}

int rr_check_room(RedisModuleCtx *ctx, uint64_t need)
{
    /* what the primary or the AOF did must be applied: a replica or a
     * loading server never refuses (that would diverge) */
    if (RedisModule_GetContextFlags(ctx) &
        (REDISMODULE_CTX_FLAGS_REPLICATED | REDISMODULE_CTX_FLAGS_LOADING))
        return 0;
    uint64_t used = 0, maxmem = 0;
    char policy[32] = "noeviction";
    RedisModuleServerInfoData *inf = RedisModule_GetServerInfo(ctx, "memory");
    if (inf) {
        int err = 0;
        used = RedisModule_ServerInfoGetFieldUnsigned(inf, "used_memory", &err);
        if (err)
            used = 0;
        maxmem = RedisModule_ServerInfoGetFieldUnsigned(inf, "maxmemory", &err);
        if (err)
            maxmem = 0;
        const char *p = RedisModule_ServerInfoGetFieldC(inf, "maxmemory_policy");
        if (p)
            snprintf(policy, sizeof policy, "%s", p);
        RedisModule_FreeServerInfo(ctx, inf);
    }
    if (maxmem) {
        /* under an eviction policy a large filter is admitted as a large
         * SET is: the server evicts other keys to make room */
        if (strcmp(policy, "noeviction") != 0)
            return 0;
        if (need > maxmem || used > maxmem - need)
            return rr_reply_errf(ctx, "ERR the filter needs %llu bytes: more than maxmemory allows "
                                      "(%llu of %llu in use, maxmemory-policy noeviction)",
                                 (unsigned long long)need, (unsigned long long)used,
                                 (unsigned long long)maxmem),
                   -1;
        return 0;
    }
    uint64_t limit = phys_bytes(), cg = cgroup_limit();
    const char *what = "this machine's memory";
    if (cg < limit) {
        limit = cg;
        what = "the memory limit of the server's control group";
    }
    if (need > limit || used > limit - need)
        return rr_reply_errf(ctx, "ERR the filter needs %llu bytes: more than is left of %s "
                                  "(%llu of %llu in use); set maxmemory to admit by policy",
                             (unsigned long long)need, what, (unsigned long long)used,
                             (unsigned long long)limit),
               -1;
    return 0;
}

/* ------------------------------------------------------------ data type methods */

/* An image for the save paths (RDB, AOF rewrite, digest), where a missing
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

/* RDB, encoding version 1:
 *   kind (0 filter, 1 incomplete restore)
 *   kind 0: image length, model state, model fp, model mpc, chunk count,
 *           the image in chunks
 *   kind 1: image length, bytes so far, chunk count, those bytes in chunks */

static void save_chunks(RedisModuleIO *io, const uint8_t *p, size_t len)
{
    uint64_t nchunks = len / rr_opt.chunk + (len % rr_opt.chunk != 0);
    RedisModule_SaveUnsigned(io, nchunks);
    for (size_t off = 0; off < len; off += rr_opt.chunk) {
        size_t n = len - off < rr_opt.chunk ? len - off : rr_opt.chunk;
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
    if (RedisModule_IsIOError(io) || kind > 1 || len > SIZE_MAX || len < 128 + 8)
        return NULL;
    rr_value *v = rr_value_new();
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
    rr_model *m = rr_model_start(&c, st == RR_MODEL_READY ? fp : NAN, mpc);
    if (!m) {
        rbf_free(f);
        rr_free(v);
        return NULL;
    }
    rr_value_set_filter(v, f, m);
    return v;
}

static void emit_chunks(RedisModuleIO *aof, RedisModuleString *key, const uint8_t *p, size_t len)
{
    for (size_t off = 0; off < len; off += rr_opt.chunk) {
        size_t n = len - off < rr_opt.chunk ? len - off : rr_opt.chunk;
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
    return rr_value_mem(value);
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

/* COPY: a value of its own (the filter copied, the model values kept; an
 * incomplete restore is copied as far as it got).  NULL, which COPY
 * reports as an error, when out of memory. */
static void *value_copy(RedisModuleString *from, RedisModuleString *to, const void *value)
{
    (void)from;
    (void)to;
    const rr_value *v = value;
    rr_value *w = rr_value_new();
    if (!w)
        return NULL;
    if (!v->f) {
        w->load = rr_alloc(v->load_len);
        if (!w->load) {
            rr_free(w);
            return NULL;
        }
        memcpy(w->load, v->load, v->load_have);
        w->load_len = v->load_len;
        w->load_have = v->load_have;
        return w;
    }
    rbf *g = NULL;
    if (rbf_copy(v->f, &g) != RBF_OK) {
        rr_free(w);
        return NULL;
    }
    int ready = atomic_load(&v->model->state) == RR_MODEL_READY;
    rbf_config c;
    rbf_get_config(g, &c);
    rr_model *m = rr_model_start(&c, ready ? v->model->fp : NAN, ready ? v->model->mpc : NAN);
    if (!m) {
        rbf_free(g);
        rr_free(w);
        return NULL;
    }
    rr_value_set_filter(w, g, m);
    return w;
}

/* The work of freeing a value, for the server's choice between freeing it
 * at once and on its lazy-free thread (UNLINK, FLUSHALL ASYNC, lazy
 * expiry and eviction where configured): one unit per 4 KiB page, so a
 * filter of 256 KiB or more (64 pages, the server's threshold) is freed
 * off the main thread. */
static size_t free_effort(RedisModuleString *key, const void *value)
{
    (void)key;
    const rr_value *v = value;
    return 1 + (size_t)(v->fbytes / 4096) + v->load_len / 4096;
}

/* Called on the main thread when the key is removed, before the value is
 * freed (perhaps on another thread): the dumps go now, while the main
 * thread owns their registry's order. */
static void value_unlink(RedisModuleString *key, const void *value)
{
    (void)key;
    rr_dumps_close((rr_value *)value);
}

void rr_type_methods(RedisModuleTypeMethods *tm)
{
    memset(tm, 0, sizeof *tm);
    tm->version = RBF_REDIS_TYPE_METHOD_VERSION;
    tm->rdb_load = rdb_load;
    tm->rdb_save = rdb_save;
    tm->aof_rewrite = aof_rewrite;
    tm->mem_usage = mem_usage;
    tm->digest = digest;
    tm->free = value_free;
    tm->free_effort = free_effort;
    tm->unlink = value_unlink;
    tm->copy = value_copy;
}
