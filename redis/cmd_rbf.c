/*
 * cmd_rbf.c -- the RBF.* commands: RESERVE, ADD, MADD, EXISTS, MEXISTS,
 * INSERT, RECYCLE and INFO (SCANDUMP and LOADCHUNK are in dump.c).
 *
 * Every command first waits for a plan running on its key (plan.c), so
 * that commands take effect in the order they arrived.  Answers are
 * booleans (RESP3 #t/#f; RESP2 integers 1/0, as always), RBF.INFO a map
 * (RESP2: the flat array of field, value pairs, as always).  Writes
 * replicate as RBF.* commands only, so a replica or an AOF replay needs
 * nothing but the module.
 */
#include <math.h>
#include <string.h>

#include "rr.h"

/* Replicate an insert of items into key: RBF.ADD for one answer, RBF.MADD
 * for an array. */
static void replicate_items(RedisModuleCtx *ctx, RedisModuleString *key, RedisModuleString **items,
                            size_t n, int kind)
{
    if (kind == REPLY_ONE)
        RedisModule_Replicate(ctx, "RBF.ADD", "ss", key, items[0]);
    else
        RedisModule_Replicate(ctx, "RBF.MADD", "v", items - 1, n + 1);
}

void rr_insert_items(RedisModuleCtx *ctx, rr_value *v, RedisModuleString **items, size_t n,
                     int kind)
{
    rr_dumps_before_insert(v, items, n);
    uint64_t before = rbf_cycles(v->f);
    if (kind == REPLY_ONE) {
        size_t len;
        const char *p = RedisModule_StringPtrLen(items[0], &len);
        RedisModule_ReplyWithBool(ctx, rbf_insert(v->f, p, len));
    } else {
        RedisModule_ReplyWithArray(ctx, (long)n);
        for (size_t i = 0; i < n; i++) {
            size_t len;
            const char *p = RedisModule_StringPtrLen(items[i], &len);
            RedisModule_ReplyWithBool(ctx, rbf_insert(v->f, p, len));
        }
    }
    atomic_fetch_add(&rr_count.recycles, rbf_cycles(v->f) - before);
}

int rr_cmd_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (rr_begin(ctx, rr_cmd_reserve, argv, argc, argc < 2))
        return REDISMODULE_OK;
    RedisModuleKey *k;
    rr_value *v;
    if (!rr_open_value(ctx, argv[1], REDISMODULE_READ, &k, &v))
        return REDISMODULE_OK;
    RedisModule_CloseKey(k);
    if (v)
        return RedisModule_ReplyWithError(ctx, "ERR item exists");
    rr_req q;
    if (rr_parse_reserve(ctx, argv, 2, argc, &q) != 0)
        return REDISMODULE_OK;
    return rr_reserve(ctx, argv[1], &q, NULL, 0, REPLY_OK);
}

/* Insert argv[2..] into the existing filter at argv[1] (replying as kind
 * says), or reply the error; bf_create: create a missing key with the BF
 * defaults (BF.ADD, BF.MADD). */
static int add_common(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int kind,
                      int bf_create)
{
    RedisModuleKey *k;
    rr_value *v;
    if (!rr_open_value(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &k, &v))
        return REDISMODULE_OK;
    size_t n = (size_t)argc - 2;
    if (!v) {
        RedisModule_CloseKey(k);
        if (!bf_create)
            return RedisModule_ReplyWithError(ctx, "ERR not found");
        rbf_config c = rr_opt.bf_default, tmp;
        rbf_config_init(&tmp);
        c.seed = tmp.seed;
        return rr_create_and_reply(ctx, argv[1], &c, rr_opt.bf_default_fp, rr_opt.bf_default_mpc,
                                   argv + 2, n, kind);
    }
    if (!v->f) {
        RedisModule_CloseKey(k);
        return rr_reply_restoring(ctx, v);
    }
    rr_insert_items(ctx, v, argv + 2, n, kind);
    RedisModule_CloseKey(k);
    replicate_items(ctx, argv[1], argv + 2, n, kind);
    return REDISMODULE_OK;
}

int rr_cmd_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (rr_begin(ctx, rr_cmd_add, argv, argc, argc != 3))
        return REDISMODULE_OK;
    return add_common(ctx, argv, argc, REPLY_ONE, 0);
}

int rr_cmd_madd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (rr_begin(ctx, rr_cmd_madd, argv, argc, argc < 3))
        return REDISMODULE_OK;
    return add_common(ctx, argv, argc, REPLY_ARRAY, 0);
}

int rr_bf_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (rr_begin(ctx, rr_bf_add, argv, argc, argc != 3))
        return REDISMODULE_OK;
    return add_common(ctx, argv, argc, REPLY_ONE, 1);
}

int rr_bf_madd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (rr_begin(ctx, rr_bf_madd, argv, argc, argc < 3))
        return REDISMODULE_OK;
    return add_common(ctx, argv, argc, REPLY_ARRAY, 1);
}

static int exists_common(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int multi)
{
    RedisModuleKey *k;
    rr_value *v;
    if (!rr_open_value(ctx, argv[1], REDISMODULE_READ, &k, &v))
        return REDISMODULE_OK;
    if (v && !v->f) {
        RedisModule_CloseKey(k);
        return rr_reply_restoring(ctx, v);
    }
    if (multi)
        RedisModule_ReplyWithArray(ctx, argc - 2);
    for (int i = 2; i < argc; i++) {
        size_t len;
        const char *p = RedisModule_StringPtrLen(argv[i], &len);
        RedisModule_ReplyWithBool(ctx, v ? rbf_contains(v->f, p, len) : 0);
    }
    RedisModule_CloseKey(k);
    return REDISMODULE_OK;
}

int rr_cmd_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (rr_begin(ctx, rr_cmd_exists, argv, argc, argc != 3))
        return REDISMODULE_OK;
    return exists_common(ctx, argv, argc, 0);
}

int rr_cmd_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (rr_begin(ctx, rr_cmd_mexists, argv, argc, argc < 3))
        return REDISMODULE_OK;
    return exists_common(ctx, argv, argc, 1);
}

int rr_bf_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (rr_begin(ctx, rr_bf_exists, argv, argc, argc != 3))
        return REDISMODULE_OK;
    return exists_common(ctx, argv, argc, 0);
}

int rr_bf_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (rr_begin(ctx, rr_bf_mexists, argv, argc, argc < 3))
        return REDISMODULE_OK;
    return exists_common(ctx, argv, argc, 1);
}

/* Position of the ITEMS keyword at or after `from`, or -1 after replying. */
static int find_items(RedisModuleCtx *ctx, RedisModuleString **argv, int argc, int from)
{
    for (int i = from; i < argc; i++)
        if (rr_arg_is(argv[i], "ITEMS")) {
            if (i + 1 >= argc)
                return RedisModule_ReplyWithError(ctx, "ERR ITEMS needs at least one item"), -1;
            return i;
        }
    return RedisModule_ReplyWithError(ctx, "ERR ITEMS missing"), -1;
}

/* The items after ITEMS into the existing filter of k: one answer each,
 * replicated as RBF.MADD. */
static int insert_existing(RedisModuleCtx *ctx, RedisModuleKey *k, rr_value *v,
                           RedisModuleString **argv, int it, int argc)
{
    if (!v->f) {
        RedisModule_CloseKey(k);
        return rr_reply_restoring(ctx, v);
    }
    size_t n = (size_t)(argc - it - 1);
    rr_insert_items(ctx, v, argv + it + 1, n, REPLY_ARRAY);
    RedisModule_CloseKey(k);
    /* RBF.MADD key items: the key is argv[1], the items follow ITEMS */
    RedisModuleString *save = argv[it];
    argv[it] = argv[1];
    RedisModule_Replicate(ctx, "RBF.MADD", "v", argv + it, n + 1);
    argv[it] = save;
    return REDISMODULE_OK;
}

/* RBF.INSERT key [NOCREATE] [reserve options] ITEMS item... */
int rr_cmd_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (rr_begin(ctx, rr_cmd_insert, argv, argc, argc < 4))
        return REDISMODULE_OK;
    int it = find_items(ctx, argv, argc, 2);
    if (it < 0)
        return REDISMODULE_OK;
    int nocreate = 0, from = 2;
    if (from < it && rr_arg_is(argv[from], "NOCREATE")) {
        nocreate = 1;
        from++;
    }
    RedisModuleKey *k;
    rr_value *v;
    if (!rr_open_value(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &k, &v))
        return REDISMODULE_OK;
    rr_req q;
    int have_opts = from < it;
    if (have_opts && rr_parse_reserve(ctx, argv, from, it, &q) != 0) {
        RedisModule_CloseKey(k);
        return REDISMODULE_OK;
    }
    if (v)
        return insert_existing(ctx, k, v, argv, it, argc);
    RedisModule_CloseKey(k);
    if (nocreate)
        return RedisModule_ReplyWithError(ctx, "ERR not found");
    if (!have_opts)
        return RedisModule_ReplyWithError(ctx, "ERR not found: give RESERVE options before ITEMS "
                                               "to create the filter");
    return rr_reserve(ctx, argv[1], &q, argv + it + 1, (size_t)(argc - it - 1), REPLY_ARRAY);
}

/* BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING]
 * ITEMS item... */
int rr_bf_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (rr_begin(ctx, rr_bf_insert, argv, argc, argc < 4))
        return REDISMODULE_OK;
    int it = find_items(ctx, argv, argc, 2);
    if (it < 0)
        return REDISMODULE_OK;
    rr_req q;
    rr_req_init(&q);
    q.planned = 1;
    q.given = (1u << O_ERROR_RATE) | (1u << O_CAPACITY);
    q.eps = rr_opt.bf_error;
    q.capacity = rr_opt.bf_capacity;
    int nocreate = 0, custom = 0;
    for (int i = 2; i < it; i++) {
        uint64_t x;
        if (rr_arg_is(argv[i], "NOCREATE")) {
            nocreate = 1;
        } else if (rr_arg_is(argv[i], "NONSCALING")) {
        } else if (rr_arg_is(argv[i], "CAPACITY") && i + 1 < it) {
            if (rr_parse_u64(argv[++i], &q.capacity) != 0 || q.capacity == 0)
                return RedisModule_ReplyWithError(ctx, "ERR CAPACITY must be a positive integer");
            custom = 1;
        } else if (rr_arg_is(argv[i], "ERROR") && i + 1 < it) {
            if (rr_parse_rate(argv[++i], &q.eps) != 0)
                return RedisModule_ReplyWithError(ctx, "ERR ERROR must be between 0 and 1 (exclusive)");
            custom = 1;
        } else if (rr_arg_is(argv[i], "EXPANSION") && i + 1 < it &&
                   rr_parse_u64(argv[i + 1], &x) == 0) {
            i++;
        } else {
            return RedisModule_ReplyWithError(ctx, "ERR unknown or incomplete option before ITEMS");
        }
    }
    if (nocreate && custom)
        return RedisModule_ReplyWithError(ctx, "ERR NOCREATE cannot be used with CAPACITY or ERROR");
    RedisModuleKey *k;
    rr_value *v;
    if (!rr_open_value(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &k, &v))
        return REDISMODULE_OK;
    if (v)
        return insert_existing(ctx, k, v, argv, it, argc);
    RedisModule_CloseKey(k);
    if (nocreate)
        return RedisModule_ReplyWithError(ctx, "ERR not found");
    size_t n = (size_t)(argc - it - 1);
    if (!custom) {
        rbf_config c = rr_opt.bf_default, tmp;
        rbf_config_init(&tmp);
        c.seed = tmp.seed;
        return rr_create_and_reply(ctx, argv[1], &c, rr_opt.bf_default_fp, rr_opt.bf_default_mpc,
                                   argv + it + 1, n, REPLY_ARRAY);
    }
    return rr_reserve(ctx, argv[1], &q, argv + it + 1, n, REPLY_ARRAY);
}

int rr_cmd_recycle(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (rr_begin(ctx, rr_cmd_recycle, argv, argc, argc != 2))
        return REDISMODULE_OK;
    RedisModuleKey *k;
    rr_value *v;
    if (!rr_open_value(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE, &k, &v))
        return REDISMODULE_OK;
    if (!v) {
        RedisModule_CloseKey(k);
        return RedisModule_ReplyWithError(ctx, "ERR not found");
    }
    if (!v->f) {
        RedisModule_CloseKey(k);
        return rr_reply_restoring(ctx, v);
    }
    rr_dumps_before_recycle(v);
    rbf_recycle(v->f);
    atomic_fetch_add(&rr_count.recycles, 1);
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

static void reply_model_value(RedisModuleCtx *ctx, const rr_model *m, int which)
{
    int st = atomic_load_explicit(&((rr_model *)m)->state, memory_order_acquire);
    if (st == RR_MODEL_PENDING) {
        RedisModule_ReplyWithCString(ctx, "pending");
        return;
    }
    RedisModule_ReplyWithDouble(ctx, which ? m->mpc : m->fp);
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
    case 17: RedisModule_ReplyWithLongLong(ctx, (long long)rr_value_mem(v)); break;
    default:
        RedisModule_ReplyWithCString(ctx, c.layout == RBF_LAYOUT_BLOCKED ? "blocked" : "flat");
        break;
    }
}

int rr_cmd_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (rr_begin(ctx, rr_cmd_info, argv, argc, argc != 2 && argc != 3))
        return REDISMODULE_OK;
    rr_value *v;
    if (!rr_open_ready(ctx, argv[1], &v))
        return REDISMODULE_OK;
    if (argc == 3) {
        for (size_t i = 0; i < INFO_FIELDS; i++)
            if (rr_arg_is(argv[2], info_names[i])) {
                info_field(ctx, v, i);
                return REDISMODULE_OK;
            }
        return RedisModule_ReplyWithError(ctx, "ERR unknown INFO field");
    }
    RedisModule_ReplyWithMap(ctx, (long)INFO_FIELDS);
    for (size_t i = 0; i < INFO_FIELDS; i++) {
        RedisModule_ReplyWithCString(ctx, info_names[i]);
        info_field(ctx, v, i);
    }
    return REDISMODULE_OK;
}
