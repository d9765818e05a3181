/*
 * redismodule_api.h -- the part of the Redis module API that rbf-redis uses.
 *
 * Written for this project from the Redis documentation ("Modules API
 * reference" and "Modules native types" on redis.io); it is not Redis's
 * redismodule.h and declares only what the module (redis/ sources) calls.  The ABI it relies
 * on is the one Redis has kept since 4.0: the server passes
 * RedisModule_OnLoad a context whose first word is the lookup function
 * GetApi(name, &fnptr), and every other function is fetched by its name
 * ("RedisModule_" + the short name below) through it.
 *
 * The function table is an X-macro, RMAPI_FUNCS(X): X(return type, short
 * name, (parameters)).  rbf_redis.c expands it once to define the pointers
 * and once to look each of them up.
 */
#ifndef RBF_REDISMODULE_API_H
#define RBF_REDISMODULE_API_H

#include <stddef.h>
#include <stdint.h>

/* Opaque server objects. */
typedef struct RedisModuleCtx RedisModuleCtx;
typedef struct RedisModuleString RedisModuleString;
typedef struct RedisModuleKey RedisModuleKey;
typedef struct RedisModuleType RedisModuleType;
typedef struct RedisModuleIO RedisModuleIO;
typedef struct RedisModuleDigest RedisModuleDigest;
typedef struct RedisModuleBlockedClient RedisModuleBlockedClient;
typedef struct RedisModuleServerInfoData RedisModuleServerInfoData;
typedef struct RedisModuleCommand RedisModuleCommand;
typedef struct RedisModuleInfoCtx RedisModuleInfoCtx;
typedef struct RedisModuleCommandFilterCtx RedisModuleCommandFilterCtx;
typedef struct RedisModuleCommandFilter RedisModuleCommandFilter;

/* Return codes of most API functions. */
#define REDISMODULE_OK 0
#define REDISMODULE_ERR 1

/* API version given to SetModuleAttribs. */
#define REDISMODULE_APIVER_1 1

/* OpenKey modes. */
#define REDISMODULE_READ (1 << 0)
#define REDISMODULE_WRITE (1 << 1)

/* KeyType results (the ones this module tests). */
#define REDISMODULE_KEYTYPE_EMPTY 0
#define REDISMODULE_KEYTYPE_MODULE 6

/* ReplyWithArray length to be set later with ReplySetArrayLength. */
#define REDISMODULE_POSTPONED_ARRAY_LEN (-1L)

/* GetContextFlags bits used here. */
#define REDISMODULE_CTX_FLAGS_LUA (1 << 0)
#define REDISMODULE_CTX_FLAGS_MULTI (1 << 1)
#define REDISMODULE_CTX_FLAGS_MAXMEMORY (1 << 8)
#define REDISMODULE_CTX_FLAGS_REPLICATED (1 << 12)
#define REDISMODULE_CTX_FLAGS_LOADING (1 << 13)
#define REDISMODULE_CTX_FLAGS_DENY_BLOCKING (1 << 21)

/* SetModuleOptions: the module checks IsIOError itself while loading. */
#define REDISMODULE_OPTIONS_HANDLE_IO_ERRORS (1 << 0)

/* Command key specs (RedisModule_SetCommandInfo, Redis 7.0): the key-spec
 * flags and the two ways of finding a command's keys used here. */
#define REDISMODULE_CMD_KEY_RO (1ULL << 0)
#define REDISMODULE_CMD_KEY_RW (1ULL << 1)
#define REDISMODULE_CMD_KEY_OW (1ULL << 2)
#define REDISMODULE_CMD_KEY_RM (1ULL << 3)
#define REDISMODULE_CMD_KEY_ACCESS (1ULL << 4)
#define REDISMODULE_CMD_KEY_UPDATE (1ULL << 5)
#define REDISMODULE_CMD_KEY_INSERT (1ULL << 6)
#define REDISMODULE_CMD_KEY_DELETE (1ULL << 7)
typedef enum {
    REDISMODULE_KSPEC_BS_INVALID = 0,
    REDISMODULE_KSPEC_BS_UNKNOWN,
    REDISMODULE_KSPEC_BS_INDEX,
    REDISMODULE_KSPEC_BS_KEYWORD
} RedisModuleKeySpecBeginSearchType;
typedef enum {
    REDISMODULE_KSPEC_FK_OMITTED = 0,
    REDISMODULE_KSPEC_FK_UNKNOWN,
    REDISMODULE_KSPEC_FK_RANGE,
    REDISMODULE_KSPEC_FK_KEYNUM
} RedisModuleKeySpecFindKeysType;
typedef struct RedisModuleCommandKeySpec {
    const char *notes;
    uint64_t flags;
    RedisModuleKeySpecBeginSearchType begin_search_type;
    union {
        struct {
            int pos;
        } index;
        struct {
            const char *keyword;
            int startfrom;
        } keyword;
    } bs;
    RedisModuleKeySpecFindKeysType find_keys_type;
    union {
        struct {
            int lastkey;
            int keystep;
            int limit;
        } range;
        struct {
            int keynumidx;
            int firstkey;
            int keystep;
        } keynum;
    } fk;
} RedisModuleCommandKeySpec;
/* Command arguments are not described (args stays NULL): the structure is
 * declared only so that its size can be given in the version record. */
typedef struct RedisModuleCommandArg {
    const char *name;
    int type;
    int key_spec_index;
    const char *token;
    const char *summary;
    const char *since;
    int flags;
    const char *deprecated_since;
    struct RedisModuleCommandArg *subargs;
    const char *display_text;
} RedisModuleCommandArg;
typedef struct RedisModuleCommandHistoryEntry {
    const char *since;
    const char *changes;
} RedisModuleCommandHistoryEntry;
typedef struct RedisModuleCommandInfoVersion {
    int version;
    size_t sizeof_historyentry;
    size_t sizeof_keyspec;
    size_t sizeof_arg;
} RedisModuleCommandInfoVersion;
typedef struct RedisModuleCommandInfo {
    const RedisModuleCommandInfoVersion *version;
    const char *summary;
    const char *complexity;
    const char *since;
    RedisModuleCommandHistoryEntry *history;
    const char *tips;
    int arity;
    RedisModuleCommandKeySpec *key_specs;
    RedisModuleCommandArg *args;
} RedisModuleCommandInfo;

/* Server events (SubscribeToServerEvent): which, and the data of the two
 * this module follows. */
typedef struct RedisModuleEvent {
    uint64_t id;
    uint64_t dataver;
} RedisModuleEvent;
#define REDISMODULE_EVENT_FLUSHDB 2
#define REDISMODULE_EVENT_SWAPDB 11
#define REDISMODULE_SUBEVENT_FLUSHDB_START 0
typedef struct RedisModuleFlushInfo {
    uint64_t version;
    int32_t sync;
    int32_t dbnum; /* -1: every database */
} RedisModuleFlushInfo;
typedef struct RedisModuleSwapDbInfo {
    uint64_t version;
    int32_t dbnum_first;
    int32_t dbnum_second;
} RedisModuleSwapDbInfo;

/* GetClientInfoById (version 1 of the structure). */
typedef struct RedisModuleClientInfo {
    uint64_t version;
    uint64_t flags;
    uint64_t id;
    char addr[46];
    uint16_t port;
    uint16_t db;
} RedisModuleClientInfo;

/* Callback types. */
typedef int (*RedisModuleCmdFunc)(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
typedef void *(*RedisModuleTypeLoadFunc)(RedisModuleIO *rdb, int encver);
typedef void (*RedisModuleTypeSaveFunc)(RedisModuleIO *rdb, void *value);
typedef void (*RedisModuleTypeRewriteFunc)(RedisModuleIO *aof, RedisModuleString *key, void *value);
typedef size_t (*RedisModuleTypeMemUsageFunc)(const void *value);
typedef void (*RedisModuleTypeDigestFunc)(RedisModuleDigest *digest, void *value);
typedef void (*RedisModuleTypeFreeFunc)(void *value);
typedef void (*RedisModuleBlockedPrivFree)(RedisModuleCtx *ctx, void *privdata);
typedef size_t (*RedisModuleTypeFreeEffortFunc)(RedisModuleString *key, const void *value);
typedef void (*RedisModuleTypeUnlinkFunc)(RedisModuleString *key, const void *value);
typedef void *(*RedisModuleTypeCopyFunc)(RedisModuleString *fromkey, RedisModuleString *tokey,
                                         const void *value);
typedef void (*RedisModuleInfoFunc)(RedisModuleInfoCtx *ctx, int for_crash_report);
typedef void (*RedisModuleEventCallback)(RedisModuleCtx *ctx, RedisModuleEvent eid,
                                         uint64_t subevent, void *data);
typedef void (*RedisModuleCommandFilterFunc)(RedisModuleCommandFilterCtx *filter);
typedef void (*RedisModuleTimerProc)(RedisModuleCtx *ctx, void *data);

/* Data type methods, version 3 of the structure (Redis 6.0 and later: the
 * server reads the later fields only when `version` says they are there).
 * The auxiliary data and defragmentation callbacks stay NULL. */
#define RBF_REDIS_TYPE_METHOD_VERSION 3
typedef struct RedisModuleTypeMethods {
    uint64_t version;
    RedisModuleTypeLoadFunc rdb_load;
    RedisModuleTypeSaveFunc rdb_save;
    RedisModuleTypeRewriteFunc aof_rewrite;
    RedisModuleTypeMemUsageFunc mem_usage;
    RedisModuleTypeDigestFunc digest;
    RedisModuleTypeFreeFunc free;
    void *aux_load;
    void *aux_save;
    int aux_save_triggers;
    RedisModuleTypeFreeEffortFunc free_effort;
    RedisModuleTypeUnlinkFunc unlink;
    RedisModuleTypeCopyFunc copy;
    void *defrag;
} RedisModuleTypeMethods;

/* clang-format off */
#define RMAPI_FUNCS(X) \
    X(void, SetModuleAttribs, (RedisModuleCtx *ctx, const char *name, int ver, int apiver)) \
    X(int, IsModuleNameBusy, (const char *name)) \
    X(int, SetModuleOptions, (RedisModuleCtx *ctx, int options)) \
    X(int, CreateCommand, (RedisModuleCtx *ctx, const char *name, RedisModuleCmdFunc cmdfunc, \
                           const char *strflags, int firstkey, int lastkey, int keystep)) \
    X(RedisModuleType *, CreateDataType, (RedisModuleCtx *ctx, const char *name, int encver, \
                                          void *typemethods)) \
    X(void *, Alloc, (size_t bytes)) \
    X(void *, TryAlloc, (size_t bytes)) \
    X(void *, Calloc, (size_t nmemb, size_t size)) \
    X(void *, Realloc, (void *ptr, size_t bytes)) \
    X(void, Free, (void *ptr)) \
    X(size_t, MallocSize, (void *ptr)) \
    X(void, Log, (RedisModuleCtx *ctx, const char *level, const char *fmt, ...)) \
    X(int, GetContextFlags, (RedisModuleCtx *ctx)) \
    X(RedisModuleKey *, OpenKey, (RedisModuleCtx *ctx, RedisModuleString *keyname, int mode)) \
    X(void, CloseKey, (RedisModuleKey *key)) \
    X(int, DeleteKey, (RedisModuleKey *key)) \
    X(int, KeyType, (RedisModuleKey *key)) \
    X(RedisModuleType *, ModuleTypeGetType, (RedisModuleKey *key)) \
    X(void *, ModuleTypeGetValue, (RedisModuleKey *key)) \
    X(int, ModuleTypeSetValue, (RedisModuleKey *key, RedisModuleType *mt, void *value)) \
    X(const char *, StringPtrLen, (const RedisModuleString *str, size_t *len)) \
    X(int, StringToLongLong, (const RedisModuleString *str, long long *ll)) \
    X(int, StringToDouble, (const RedisModuleString *str, double *d)) \
    X(RedisModuleString *, CreateString, (RedisModuleCtx *ctx, const char *ptr, size_t len)) \
    X(RedisModuleString *, CreateStringFromString, (RedisModuleCtx *ctx, const RedisModuleString *str)) \
    X(void, FreeString, (RedisModuleCtx *ctx, RedisModuleString *str)) \
    X(int, WrongArity, (RedisModuleCtx *ctx)) \
    X(int, ReplyWithError, (RedisModuleCtx *ctx, const char *err)) \
    X(int, ReplyWithLongLong, (RedisModuleCtx *ctx, long long ll)) \
    X(int, ReplyWithSimpleString, (RedisModuleCtx *ctx, const char *msg)) \
    X(int, ReplyWithArray, (RedisModuleCtx *ctx, long len)) \
    X(void, ReplySetArrayLength, (RedisModuleCtx *ctx, long len)) \
    X(int, ReplyWithStringBuffer, (RedisModuleCtx *ctx, const char *buf, size_t len)) \
    X(int, ReplyWithCString, (RedisModuleCtx *ctx, const char *buf)) \
    X(int, ReplyWithDouble, (RedisModuleCtx *ctx, double d)) \
    X(int, ReplyWithNull, (RedisModuleCtx *ctx)) \
    X(int, ReplicateVerbatim, (RedisModuleCtx *ctx)) \
    X(int, Replicate, (RedisModuleCtx *ctx, const char *cmdname, const char *fmt, ...)) \
    X(void, SaveUnsigned, (RedisModuleIO *io, uint64_t value)) \
    X(uint64_t, LoadUnsigned, (RedisModuleIO *io)) \
    X(void, SaveDouble, (RedisModuleIO *io, double value)) \
    X(double, LoadDouble, (RedisModuleIO *io)) \
    X(void, SaveStringBuffer, (RedisModuleIO *io, const char *str, size_t len)) \
    X(char *, LoadStringBuffer, (RedisModuleIO *io, size_t *lenptr)) \
    X(int, IsIOError, (RedisModuleIO *io)) \
    X(void, EmitAOF, (RedisModuleIO *io, const char *cmdname, const char *fmt, ...)) \
    X(void, DigestAddStringBuffer, (RedisModuleDigest *md, const char *ele, size_t len)) \
    X(void, DigestEndSequence, (RedisModuleDigest *md)) \
    X(RedisModuleBlockedClient *, BlockClient, (RedisModuleCtx *ctx, RedisModuleCmdFunc reply_callback, \
                                                RedisModuleCmdFunc timeout_callback, \
                                                RedisModuleBlockedPrivFree free_privdata, \
                                                long long timeout_ms)) \
    X(int, UnblockClient, (RedisModuleBlockedClient *bc, void *privdata)) \
    X(void *, GetBlockedClientPrivateData, (RedisModuleCtx *ctx)) \
    X(RedisModuleServerInfoData *, GetServerInfo, (RedisModuleCtx *ctx, const char *section)) \
    X(void, FreeServerInfo, (RedisModuleCtx *ctx, RedisModuleServerInfoData *data)) \
    X(unsigned long long, ServerInfoGetFieldUnsigned, (RedisModuleServerInfoData *data, \
                                                       const char *field, int *out_err)) \
    X(const char *, ServerInfoGetFieldC, (RedisModuleServerInfoData *data, const char *field)) \
    X(int, GetSelectedDb, (RedisModuleCtx *ctx)) \
    X(int, ReplyWithBool, (RedisModuleCtx *ctx, int b)) \
    X(int, ReplyWithMap, (RedisModuleCtx *ctx, long len)) \
    X(RedisModuleCommand *, GetCommand, (RedisModuleCtx *ctx, const char *name)) \
    X(int, SetCommandInfo, (RedisModuleCommand *command, const RedisModuleCommandInfo *info)) \
    X(int, RegisterInfoFunc, (RedisModuleCtx *ctx, RedisModuleInfoFunc cb)) \
    X(int, InfoAddSection, (RedisModuleInfoCtx *ctx, const char *name)) \
    X(int, InfoAddFieldULongLong, (RedisModuleInfoCtx *ctx, const char *field, \
                                   unsigned long long value)) \
    X(int, InfoAddFieldCString, (RedisModuleInfoCtx *ctx, const char *field, const char *value)) \
    X(int, SubscribeToServerEvent, (RedisModuleCtx *ctx, RedisModuleEvent event, \
                                    RedisModuleEventCallback callback)) \
    X(RedisModuleCommandFilter *, RegisterCommandFilter, (RedisModuleCtx *ctx, \
                                                          RedisModuleCommandFilterFunc cb, \
                                                          int flags)) \
    X(int, CommandFilterArgsCount, (RedisModuleCommandFilterCtx *fctx)) \
    X(RedisModuleString *, CommandFilterArgGet, (RedisModuleCommandFilterCtx *fctx, int pos)) \
    X(uint64_t, CreateTimer, (RedisModuleCtx *ctx, long long period, RedisModuleTimerProc cb, \
                              void *data)) \
    X(long long, Milliseconds, (void)) \
    X(int, StringCompare, (const RedisModuleString *a, const RedisModuleString *b))

/* Functions of newer servers, looked up by name and left NULL where the
 * server lacks them (docs/redis.md says what each one adds):
 *   TryCalloc (7.4)                   zeroed filters that fail instead of panicking
 *   AddACLCategory (7.4)              the module's own ACL category, @rbf
 *   SetCommandACLCategories (7.2)     its commands in it
 *   CommandFilterGetClientId (7.2)    with GetClientInfoById (6.0): the database of a
 *                                     DEL or RENAME that cancels a plan
 *   GetDetachedThreadSafeContext (6.0.9), SelectDb, KeyExists (7.0)
 *                                     whether a RENAME's source exists, so that a
 *                                     RENAME that fails does not cancel the plan of
 *                                     its destination */
#define RMAPI_OPTIONAL(X) \
    X(void *, TryCalloc, (size_t nmemb, size_t size)) \
    X(int, AddACLCategory, (RedisModuleCtx *ctx, const char *name)) \
    X(int, SetCommandACLCategories, (RedisModuleCommand *command, const char *categories)) \
    X(unsigned long long, CommandFilterGetClientId, (RedisModuleCommandFilterCtx *fctx)) \
    X(int, GetClientInfoById, (void *ci, uint64_t id)) \
    X(RedisModuleCtx *, GetDetachedThreadSafeContext, (RedisModuleCtx *ctx)) \
    X(int, SelectDb, (RedisModuleCtx *ctx, int newid)) \
    X(int, KeyExists, (RedisModuleCtx *ctx, RedisModuleString *keyname))
/* clang-format on */

#define RMAPI_DECLARE(ret, name, args) extern ret(*RedisModule_##name) args;
RMAPI_FUNCS(RMAPI_DECLARE)
RMAPI_OPTIONAL(RMAPI_DECLARE)
#undef RMAPI_DECLARE

/* Look every function of RMAPI_FUNCS up through the context's GetApi and
 * register the module's name; REDISMODULE_ERR if one is missing (a server
 * older than 7.0) or the name is taken.  Those of RMAPI_OPTIONAL are
 * looked up too, and stay NULL where the server lacks them. */
int rbf_redis_api_init(RedisModuleCtx *ctx, const char *name, int ver);

#endif /* RBF_REDISMODULE_API_H */
