/*
 * redismodule_api.c -- look the module API up by name (see redismodule_api.h).
 */
#include "redismodule_api.h"

#include <string.h>

#define RMAPI_DEFINE(ret, name, args) ret(*RedisModule_##name) args = NULL;
RMAPI_FUNCS(RMAPI_DEFINE)
RMAPI_OPTIONAL(RMAPI_DEFINE)
#undef RMAPI_DEFINE

int rbf_redis_api_init(RedisModuleCtx *ctx, const char *name, int ver)
{
    /* The first word of the context is GetApi(name, &fnptr). */
    void *first;
    memcpy(&first, (const void *)ctx, sizeof first);
    int (*getapi)(const char *, void *);
    memcpy(&getapi, &first, sizeof getapi);
    if (!getapi)
        return REDISMODULE_ERR;
#define RMAPI_FETCH(ret, nm, args)                                                  \
    if (getapi("RedisModule_" #nm, (void *)&RedisModule_##nm) != REDISMODULE_OK || \
        !RedisModule_##nm)                                                          \
        return REDISMODULE_ERR;
    RMAPI_FUNCS(RMAPI_FETCH)
#undef RMAPI_FETCH
#define RMAPI_TRY(ret, nm, args)                                               \
    if (getapi("RedisModule_" #nm, (void *)&RedisModule_##nm) != REDISMODULE_OK) \
        RedisModule_##nm = NULL;
    RMAPI_OPTIONAL(RMAPI_TRY)
#undef RMAPI_TRY
    if (RedisModule_IsModuleNameBusy(name))
        return REDISMODULE_ERR;
    RedisModule_SetModuleAttribs(ctx, name, ver, REDISMODULE_APIVER_1);
    return REDISMODULE_OK;
}
