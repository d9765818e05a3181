/*
 * module.c -- rbf-redis: recycling Bloom filters as a Redis module.  This
 * file loads it: the load arguments, the data type, the commands with
 * their key specs and flags, the INFO section, the server events and the
 * command filter that cancel plans, the dump timer, and the allocator
 * hook that puts the filters in the server's memory accounting.
 *
 * One key holds one rbf filter (a module data type).  docs/redis.md is the
 * user's manual; rr.h is the map of the code.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "rr.h"

rr_options rr_opt = {
    .chunk = (size_t)16 << 20,
    /* A SCANDUMP call costs about its chunk: the server copies the reply,
     * and blocks of 8 MiB and more come fresh from the system each time
     * (page faults), so the default stays below (docs/redis.md). */
    .dump_chunk = (size_t)4 << 20,
    .dump_timeout_ms = 60000,
    .dump_memory = (uint64_t)256 << 20,
    .bf_error = 0.01,
    .bf_capacity = 100,
};

/* ------------------------------------------------------------ allocator */

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
 * memset would fault in the whole filter at once inside RBF.RESERVE.
 * Servers from 7.4 have TryCalloc, which fails instead of panicking; on
 * older ones RedisModule_Calloc panics on failure, so every reservation's
 * memory admission (rr_check_room) runs before the filter is allocated;
 * small blocks keep TryAlloc there. */
static void *hook_calloc(void *ctx, size_t n, size_t size)
{
    (void)ctx;
    if (n && size > SIZE_MAX / n)
        return NULL;
    size_t bytes = n * size;
    if (bytes == 0)
        bytes = 1;
    if (RedisModule_TryCalloc)
        return RedisModule_TryCalloc(1, bytes);
    if (bytes < ((size_t)1 << 20)) {
        void *p = RedisModule_TryAlloc(bytes);
        if (p)
            memset(p, 0, bytes);
        return p;
    }
    return RedisModule_Calloc(1, bytes);
}

/* ------------------------------------------------------------ commands */

typedef struct cmd_def {
    const char *name;
    RedisModuleCmdFunc fn;
    const char *flags;
    uint64_t key_flags; /* the key spec of the key at argv[1] */
    int arity;
    const char *summary;
} cmd_def;

#define KEY_READ (REDISMODULE_CMD_KEY_RO | REDISMODULE_CMD_KEY_ACCESS)
#define KEY_META (REDISMODULE_CMD_KEY_RO)
#define KEY_UPDATE (REDISMODULE_CMD_KEY_RW | REDISMODULE_CMD_KEY_UPDATE)
#define KEY_CREATE (REDISMODULE_CMD_KEY_RW | REDISMODULE_CMD_KEY_INSERT)
#define KEY_CLEAR (REDISMODULE_CMD_KEY_RW | REDISMODULE_CMD_KEY_DELETE)

/* Flags: deny-oom on every command that may allocate (a write may copy
 * pages for a dump in progress; SCANDUMP allocates its chunk); fast only
 * where no path is O(M) (an insert may recycle, which clears M bits). */
static const cmd_def rbf_cmds[] = {
    {"rbf.reserve", rr_cmd_reserve, "write deny-oom", KEY_CREATE, -2,
     "Create a recycling Bloom filter, planned by error rate or given exactly"},
    {"rbf.add", rr_cmd_add, "write deny-oom", KEY_UPDATE, 3,
     "Add an item; true if it was new"},
    {"rbf.madd", rr_cmd_madd, "write deny-oom", KEY_UPDATE, -3,
     "Add items; true for each that was new"},
    {"rbf.exists", rr_cmd_exists, "readonly fast", KEY_READ, 3,
     "Whether an item is held"},
    {"rbf.mexists", rr_cmd_mexists, "readonly fast", KEY_READ, -3,
     "Whether each item is held"},
    {"rbf.insert", rr_cmd_insert, "write deny-oom", KEY_UPDATE, -4,
     "Add items, creating the filter if asked"},
    {"rbf.recycle", rr_cmd_recycle, "write deny-oom", KEY_CLEAR, 2,
     "Start a new cycle now"},
    {"rbf.info", rr_cmd_info, "readonly fast", KEY_META, -2,
     "The filter's configuration, counters and model values"},
    {"rbf.scandump", rr_cmd_scandump, "readonly deny-oom", KEY_READ, 3,
     "Read the filter's image in chunks"},
    {"rbf.loadchunk", rr_cmd_loadchunk, "write deny-oom", KEY_UPDATE, 4,
     "Restore a filter from the chunks of RBF.SCANDUMP"},
};

static const cmd_def bf_cmds[] = {
    {"bf.reserve", rr_bf_reserve, "write deny-oom", KEY_CREATE, -4,
     "Create a filter for a capacity and error rate (RedisBloom's syntax)"},
    {"bf.add", rr_bf_add, "write deny-oom", KEY_UPDATE, 3, "Add an item"},
    {"bf.madd", rr_bf_madd, "write deny-oom", KEY_UPDATE, -3, "Add items"},
    {"bf.exists", rr_bf_exists, "readonly fast", KEY_READ, 3, "Whether an item is held"},
    {"bf.mexists", rr_bf_mexists, "readonly fast", KEY_READ, -3, "Whether each item is held"},
    {"bf.insert", rr_bf_insert, "write deny-oom", KEY_UPDATE, -4,
     "Add items, creating the filter unless NOCREATE"},
    {"bf.info", rr_bf_info, "readonly fast", KEY_META, -2, "The filter's information"},
    {"bf.card", rr_bf_card, "readonly fast", KEY_META, 2, "Items reported new"},
    {"bf.scandump", rr_cmd_scandump, "readonly deny-oom", KEY_READ, 3,
     "Read the filter's image in chunks"},
    {"bf.loadchunk", rr_cmd_loadchunk, "write deny-oom", KEY_UPDATE, 4,
     "Restore a filter from the chunks of BF.SCANDUMP"},
};

static const RedisModuleCommandInfoVersion info_version = {
    1, sizeof(RedisModuleCommandHistoryEntry), sizeof(RedisModuleCommandKeySpec),
    sizeof(RedisModuleCommandArg)};

static int register_command(RedisModuleCtx *ctx, const cmd_def *d)
{
    if (RedisModule_CreateCommand(ctx, d->name, d->fn, d->flags, 1, 1, 1) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    RedisModuleCommand *cmd = RedisModule_GetCommand(ctx, d->name);
    if (!cmd)
        return REDISMODULE_ERR;
    /* one key, at argv[1], with what the command does to it: read-only ACL
     * users (%R~) may then run the readers */
    RedisModuleCommandKeySpec specs[2];
    memset(specs, 0, sizeof specs);
    specs[0].flags = d->key_flags;
    specs[0].begin_search_type = REDISMODULE_KSPEC_BS_INDEX;
    specs[0].bs.index.pos = 1;
    specs[0].find_keys_type = REDISMODULE_KSPEC_FK_RANGE;
    specs[0].fk.range.lastkey = 0;
    specs[0].fk.range.keystep = 1;
    specs[0].fk.range.limit = 0;
    RedisModuleCommandInfo info;
    memset(&info, 0, sizeof info);
    info.version = &info_version;
    info.summary = d->summary;
    info.since = "1.0.0";
    info.arity = d->arity;
    info.key_specs = specs;
    if (RedisModule_SetCommandInfo(cmd, &info) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    if (RedisModule_AddACLCategory && RedisModule_SetCommandACLCategories &&
        RedisModule_SetCommandACLCategories(cmd, RR_MODULE_NAME) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    return REDISMODULE_OK;
}

/* ------------------------------------------------------------ INFO rbf */

static void info_cb(RedisModuleInfoCtx *ctx, int for_crash_report)
{
    (void)for_crash_report;
    RedisModule_InfoAddSection(ctx, "");
#define F(name) RedisModule_InfoAddFieldULongLong(ctx, #name, atomic_load(&rr_count.name))
    F(filters);
    F(bytes);
    F(recycles);
    F(plans_waiting);
    F(plan_waiters);
    F(plans_cancelled);
    F(dumps_open);
    F(dump_bytes);
    F(dumps_dropped_idle);
    F(dumps_dropped_memory);
#undef F
    RedisModule_InfoAddFieldCString(ctx, "version", RBF_VERSION_STRING);
}

/* ------------------------------------------------------------ plan cancellation */

/* The database of the client a filtered command comes from, where the
 * server can tell (7.2 and later); -1 (every database) otherwise. */
static int filter_db(RedisModuleCommandFilterCtx *fctx)
{
    if (!RedisModule_CommandFilterGetClientId || !RedisModule_GetClientInfoById)
        return -1;
    RedisModuleClientInfo ci;
    memset(&ci, 0, sizeof ci);
    ci.version = 1;
    unsigned long long id = RedisModule_CommandFilterGetClientId(fctx);
    if (RedisModule_GetClientInfoById(&ci, id) != REDISMODULE_OK)
        return -1;
    return ci.db;
}

/* A context of the module's own, for looking keys up from the command
 * filter (NULL where the server lacks what that needs). */
static RedisModuleCtx *filter_ctx;

/* DEL, UNLINK, RENAME, RENAMENX and MOVE of a key being planned cancel its
 * plan before they run: the reservation came first, so the key they name
 * is that filter.  A RENAME onto the key cancels it only when its source
 * exists (else it fails); a RENAMENX onto it would find the key there and
 * change nothing. */
static void command_filter(RedisModuleCommandFilterCtx *fctx)
{
    int argc = RedisModule_CommandFilterArgsCount(fctx);
    if (argc < 2)
        return;
    size_t len;
    const char *name = RedisModule_StringPtrLen(RedisModule_CommandFilterArgGet(fctx, 0), &len);
    int last;
    const char *why;
    if ((len == 3 && strncasecmp(name, "del", 3) == 0) ||
        (len == 6 && strncasecmp(name, "unlink", 6) == 0)) {
        last = argc - 1;
        why = "the key was deleted";
    } else if ((len == 6 && strncasecmp(name, "rename", 6) == 0) ||
               (len == 8 && strncasecmp(name, "renamenx", 8) == 0)) {
        int db = filter_db(fctx);
        RedisModuleString *src = RedisModule_CommandFilterArgGet(fctx, 1);
        rr_cancel_plans(db, src, "the key was renamed");
        if (len == 6 && argc == 3)
            rr_cancel_plans_renamed_onto(filter_ctx, db, RedisModule_CommandFilterArgGet(fctx, 2),
                                         src);
        return;
    } else if (len == 4 && strncasecmp(name, "move", 4) == 0) {
        last = 1;
        why = "the key was moved";
    } else {
        return;
    }
    int db = filter_db(fctx);
    for (int i = 1; i <= last && i < argc; i++)
        rr_cancel_plans(db, RedisModule_CommandFilterArgGet(fctx, i), why);
}

static void on_flush(RedisModuleCtx *ctx, RedisModuleEvent eid, uint64_t sub, void *data)
{
    (void)ctx;
    (void)eid;
    if (sub != REDISMODULE_SUBEVENT_FLUSHDB_START)
        return;
    const RedisModuleFlushInfo *fi = data;
    rr_cancel_plans(fi->dbnum, NULL, "the database was flushed");
}

static void on_swapdb(RedisModuleCtx *ctx, RedisModuleEvent eid, uint64_t sub, void *data)
{
    (void)ctx;
    (void)eid;
    (void)sub;
    const RedisModuleSwapDbInfo *si = data;
    rr_cancel_plans(si->dbnum_first, NULL, "the database was swapped (SWAPDB)");
    rr_cancel_plans(si->dbnum_second, NULL, "the database was swapped (SWAPDB)");
}

static void dump_timer(RedisModuleCtx *ctx, void *data)
{
    (void)data;
    rr_dumps_expire();
    RedisModule_CreateTimer(ctx, 1000, dump_timer, NULL);
}

/* ------------------------------------------------------------ loading */

/* The load arguments, in pairs: 0, or -1 after logging what is wrong. */
static int parse_options(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    for (int i = 0; i < argc; i += 2) {
        uint64_t u;
        if (i + 1 >= argc) {
            RedisModule_Log(ctx, "warning", "rbf: load argument without a value");
            return -1;
        }
        RedisModuleString *a = argv[i], *b = argv[i + 1];
        if (rr_arg_is(a, "BF-COMPAT") && (rr_arg_is(b, "yes") || rr_arg_is(b, "no"))) {
            rr_opt.bf_compat = rr_arg_is(b, "yes");
        } else if (rr_arg_is(a, "BF-ERROR-RATE") && rr_parse_rate(b, &rr_opt.bf_error) == 0) {
        } else if (rr_arg_is(a, "BF-CAPACITY") && rr_parse_u64(b, &u) == 0 && u > 0 &&
                   u <= 100000000) {
            rr_opt.bf_capacity = u;
        } else if (rr_arg_is(a, "CHUNK-BYTES") && rr_parse_u64(b, &u) == 0 && u >= 1024 &&
                   u <= ((uint64_t)256 << 20)) {
            rr_opt.chunk = rr_opt.dump_chunk = (size_t)u;
        } else if (rr_arg_is(a, "DUMP-TIMEOUT") && rr_parse_u64(b, &u) == 0 && u >= 1 &&
                   u <= 86400 * 365) {
            rr_opt.dump_timeout_ms = (long long)u * 1000;
        } else if (rr_arg_is(a, "DUMP-MEMORY") && rr_parse_u64(b, &u) == 0 && u >= 4096) {
            rr_opt.dump_memory = u;
        } else {
            RedisModule_Log(ctx, "warning",
                            "rbf: bad load argument (BF-COMPAT yes|no, BF-ERROR-RATE eps, "
                            "BF-CAPACITY n, CHUNK-BYTES n, DUMP-TIMEOUT seconds, DUMP-MEMORY "
                            "bytes)");
            return -1;
        }
    }
    return 0;
}

/* The BF.* defaults, planned once. */
static int plan_bf_defaults(RedisModuleCtx *ctx)
{
    rr_req q;
    rr_req_init(&q);
    q.planned = 1;
    q.eps = rr_opt.bf_error;
    q.capacity = rr_opt.bf_capacity;
    rr_plan_out o;
    rr_plan_run(&q, &o);
    if (o.err) {
        RedisModule_Log(ctx, "warning", "rbf: BF defaults cannot be planned: %s", o.err);
        return -1;
    }
    rr_opt.bf_default = o.cfg;
    rr_opt.bf_default_fp = o.fp;
    rr_opt.bf_default_mpc = o.mpc;
    return 0;
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
    __attribute__((visibility("default")));

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
    if (rbf_redis_api_init(ctx, RR_MODULE_NAME, RBF_VERSION_NUMBER) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    if (parse_options(ctx, argv, argc) != 0)
        return REDISMODULE_ERR;
    RedisModule_SetModuleOptions(ctx, REDISMODULE_OPTIONS_HANDLE_IO_ERRORS);
    static const rbf_allocator hook = {hook_malloc, hook_realloc, hook_free, NULL, hook_calloc,
                                       {NULL}};
    if (rbf_set_allocator(&hook) != RBF_OK)
        return REDISMODULE_ERR;
    RedisModuleTypeMethods tm;
    rr_type_methods(&tm);
    rr_type = RedisModule_CreateDataType(ctx, RR_TYPE_NAME, RR_ENCVER, &tm);
    if (!rr_type)
        return REDISMODULE_ERR;
    if (RedisModule_AddACLCategory && RedisModule_SetCommandACLCategories &&
        RedisModule_AddACLCategory(ctx, RR_MODULE_NAME) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    for (size_t i = 0; i < sizeof rbf_cmds / sizeof rbf_cmds[0]; i++)
        if (register_command(ctx, &rbf_cmds[i]) != REDISMODULE_OK)
            return REDISMODULE_ERR;
    if (rr_opt.bf_compat) {
        if (plan_bf_defaults(ctx) != 0)
            return REDISMODULE_ERR;
        for (size_t i = 0; i < sizeof bf_cmds / sizeof bf_cmds[0]; i++)
            if (register_command(ctx, &bf_cmds[i]) != REDISMODULE_OK) {
                RedisModule_Log(ctx, "warning", "rbf: cannot register %s (does the server have "
                                                "its own BF.* commands, as Redis 8 and "
                                                "RedisBloom do? then load without BF-COMPAT)",
                                bf_cmds[i].name);
                return REDISMODULE_ERR;
            }
    }
    if (RedisModule_GetDetachedThreadSafeContext && RedisModule_SelectDb &&
        RedisModule_KeyExists)
        filter_ctx = RedisModule_GetDetachedThreadSafeContext(ctx);
    if (RedisModule_RegisterInfoFunc(ctx, info_cb) != REDISMODULE_OK ||
        !RedisModule_RegisterCommandFilter(ctx, command_filter, 0))
        return REDISMODULE_ERR;
    RedisModuleEvent flush = {REDISMODULE_EVENT_FLUSHDB, 1}, swap = {REDISMODULE_EVENT_SWAPDB, 1};
    if (RedisModule_SubscribeToServerEvent(ctx, flush, on_flush) != REDISMODULE_OK ||
        RedisModule_SubscribeToServerEvent(ctx, swap, on_swapdb) != REDISMODULE_OK)
        return REDISMODULE_ERR;
    RedisModule_CreateTimer(ctx, 1000, dump_timer, NULL);
    if (rr_workers_start() != 0)
        return REDISMODULE_ERR;
    return REDISMODULE_OK;
}
