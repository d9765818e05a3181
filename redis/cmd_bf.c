/*
 * cmd_bf.c -- the RedisBloom-shaped BF.* commands (load argument BF-COMPAT
 * yes), for clients written against RedisBloom: BF.RESERVE, BF.INFO,
 * BF.CARD (BF.ADD, BF.MADD, BF.EXISTS, BF.MEXISTS and BF.INSERT share
 * their code with the RBF.* commands in cmd_rbf.c, BF.SCANDUMP and
 * BF.LOADCHUNK are RBF.SCANDUMP and RBF.LOADCHUNK in dump.c).  Their replies have RedisBloom's shapes,
 * in RESP2 and RESP3; their writes replicate as RBF.* commands, so a
 * replica or a restart needs no BF-COMPAT.
 */
#include <math.h>
#include <string.h>

#include "rr.h"

/* BF.RESERVE key error_rate capacity [EXPANSION n] [NONSCALING] */
int rr_bf_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (rr_begin(ctx, rr_bf_reserve, argv, argc, argc < 4))
        return REDISMODULE_OK;
    rr_req q;
    rr_req_init(&q);
    q.planned = 1;
    q.given = (1u << O_ERROR_RATE) | (1u << O_CAPACITY);
    if (rr_parse_rate(argv[2], &q.eps) != 0)
        return RedisModule_ReplyWithError(ctx, "ERR error_rate must be between 0 and 1 (exclusive)");
    if (rr_parse_u64(argv[3], &q.capacity) != 0 || q.capacity == 0)
        return RedisModule_ReplyWithError(ctx, "ERR capacity must be a positive integer");
    for (int i = 4; i < argc; i++) {
        uint64_t x;
        if (rr_arg_is(argv[i], "NONSCALING"))
            continue;
        if (rr_arg_is(argv[i], "EXPANSION") && i + 1 < argc && rr_parse_u64(argv[i + 1], &x) == 0) {
            i++;
            continue;
        }
        return RedisModule_ReplyWithError(ctx, "ERR unknown or incomplete option after capacity "
                                               "(EXPANSION n, NONSCALING)");
    }
    RedisModuleKey *k;
    rr_value *v;
    if (!rr_open_value(ctx, argv[1], REDISMODULE_READ, &k, &v))
        return REDISMODULE_OK;
    RedisModule_CloseKey(k);
    if (v)
        return RedisModule_ReplyWithError(ctx, "ERR item exists");
    return rr_reserve(ctx, argv[1], &q, NULL, 0, REPLY_OK);
}

/* Capacity as BF.INFO reports it: the model's messages per cycle. */
static long long bf_capacity(const rr_value *v)
{
    int st = atomic_load(&v->model->state);
    if (st == RR_MODEL_PENDING || isnan(v->model->mpc))
        return 0;
    return (long long)floor(v->model->mpc);
}

/* BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION]: a map in
 * RESP3 (RESP2: the flat array), one field as a one-element array. */
int rr_bf_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (rr_begin(ctx, rr_bf_info, argv, argc, argc != 2 && argc != 3))
        return REDISMODULE_OK;
    rr_value *v;
    if (!rr_open_ready(ctx, argv[1], &v))
        return REDISMODULE_OK;
    rbf_stats s;
    rbf_config c;
    rbf_get_stats(v->f, &s);
    rbf_get_config(v->f, &c);
    long long vals[4] = {bf_capacity(v), (long long)rr_value_mem(v), (long long)c.phases,
                         (long long)s.reported_new};
    static const char *const names[5] = {"Capacity", "Size", "Number of filters",
                                         "Number of items inserted", "Expansion rate"};
    static const char *const fields[5] = {"CAPACITY", "SIZE", "FILTERS", "ITEMS", "EXPANSION"};
    if (argc == 3) {
        for (int i = 0; i < 5; i++)
            if (rr_arg_is(argv[2], fields[i])) {
                RedisModule_ReplyWithArray(ctx, 1);
                if (i == 4)
                    return RedisModule_ReplyWithNull(ctx);
                return RedisModule_ReplyWithLongLong(ctx, vals[i]);
            }
        return RedisModule_ReplyWithError(ctx, "ERR unknown BF.INFO field (CAPACITY, SIZE, FILTERS, "
                                               "ITEMS, EXPANSION)");
    }
    RedisModule_ReplyWithMap(ctx, 5);
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
int rr_bf_card(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (rr_begin(ctx, rr_bf_card, argv, argc, argc != 2))
        return REDISMODULE_OK;
    RedisModuleKey *k;
    rr_value *v;
    if (!rr_open_value(ctx, argv[1], REDISMODULE_READ, &k, &v))
        return REDISMODULE_OK;
    RedisModule_CloseKey(k);
    if (!v)
        return RedisModule_ReplyWithLongLong(ctx, 0);
    if (!v->f)
        return rr_reply_restoring(ctx, v);
    rbf_stats s;
    rbf_get_stats(v->f, &s);
    return RedisModule_ReplyWithLongLong(ctx, (long long)s.reported_new);
}
