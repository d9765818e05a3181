/*
 * rr.h -- what the files of the Redis module share (internal).
 *
 * The module's files, by concern:
 *   module.c    loading: options, commands and their key specs, INFO, events
 *   args.c      argument parsing and error replies
 *   value.c     a key's value: lifecycle, the data type's methods (RDB, AOF,
 *               digest, copy, lazy free), memory admission
 *   plan.c      reservations: the worker threads, the planner, the models,
 *               and the commands that wait while a key's plan runs
 *   dump.c      RBF.SCANDUMP and RBF.LOADCHUNK
 *   cmd_rbf.c   the RBF.* commands
 *   cmd_bf.c    the RedisBloom-shaped BF.* commands (load argument BF-COMPAT)
 * The module API itself is declared in redismodule_api.h.
 */
#ifndef RBF_REDIS_RR_H
#define RBF_REDIS_RR_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <rbf.h>
#include <rbf_model.h>
#include <rbf_predict.h>

#include "redismodule_api.h"

#define RR_MODULE_NAME "rbf"
#define RR_TYPE_NAME "rbf-filtr" /* exactly 9 characters */
#ifdef RBF_REDIS_ENCVER          /* test builds only: a "newer" encoding */
#define RR_ENCVER RBF_REDIS_ENCVER
#else
#define RR_ENCVER 1
#endif
/* Largest planned reservation (bytes, MEMORY or CAPACITY's lower bound)
 * planned inline where the client cannot wait (MULTI, Lua). */
#define RR_INLINE_PLAN_BYTES (128u << 10)

/* ------------------------------------------------------------ options */

typedef struct rr_options {
    size_t chunk;        /* AOF / RDB chunk bytes */
    size_t dump_chunk;   /* SCANDUMP chunk bytes */
    long long dump_timeout_ms; /* an idle dump is dropped after this */
    uint64_t dump_memory;      /* copy-on-write bytes of all dumps together */
    double bf_error;     /* BF.* auto-creation: error rate and capacity */
    uint64_t bf_capacity;
    rbf_config bf_default; /* their plan, made at load */
    double bf_default_fp, bf_default_mpc;
    int bf_compat;
} rr_options;
extern rr_options rr_opt;
extern RedisModuleType *rr_type;

/* Counters of INFO rbf (updated from any thread). */
typedef struct rr_counters {
    atomic_ullong filters, bytes, recycles, plans_waiting, plan_waiters, plans_cancelled;
    atomic_ullong dumps_open, dump_bytes, dumps_dropped_idle, dumps_dropped_memory;
} rr_counters;
extern rr_counters rr_count;

/* ------------------------------------------------------------ values */

/* Model values: shared by a value and the worker computing them. */
enum { RR_MODEL_PENDING = 0, RR_MODEL_READY = 1, RR_MODEL_NONE = 2 };
typedef struct rr_model {
    atomic_int state;
    atomic_int refs;
    atomic_int cancel; /* the value was freed: stop computing */
    double fp, mpc;
    rbf_config cfg; /* what to compute for */
} rr_model;

typedef struct rr_dump rr_dump;

typedef struct rr_value {
    rbf *f;          /* NULL while a LOADCHUNK restore is incomplete */
    rr_model *model; /* NULL while restoring */
    uint64_t fbytes; /* the filter's bit arrays, bytes */
    rr_dump *dumps;  /* SCANDUMPs in progress (dump.c) */
    /* LOADCHUNK assembly */
    uint8_t *load;
    size_t load_len, load_have;
} rr_value;

void *rr_alloc(size_t n);
void rr_free(void *p);
uint64_t rr_config_bytes(const rbf_config *c);
rr_value *rr_value_new(void);
void rr_value_set_filter(rr_value *v, rbf *f, rr_model *m);
void rr_value_drop_filter(rr_value *v);
size_t rr_value_mem(const rr_value *v);
void rr_type_methods(RedisModuleTypeMethods *tm);
/* Whether `need` more bytes may be allocated: 0, or -1 after replying. */
int rr_check_room(RedisModuleCtx *ctx, uint64_t need);

/* Open key; 1 with *v set (NULL if the key is empty), or 0 after replying
 * WRONGTYPE. */
int rr_open_value(RedisModuleCtx *ctx, RedisModuleString *name, int mode, RedisModuleKey **k,
                  rr_value **v);
/* A filter to read, ready for use: 1 with *v set (the key closed: the
 * value stays valid while this command runs), or 0 after replying. */
int rr_open_ready(RedisModuleCtx *ctx, RedisModuleString *name, rr_value **v);
int rr_reply_restoring(RedisModuleCtx *ctx, const rr_value *v);

/* ------------------------------------------------------------ arguments */

int rr_arg_is(RedisModuleString *s, const char *word);
void rr_printable(RedisModuleString *s, char *out, size_t cap);
int rr_parse_u64(RedisModuleString *s, uint64_t *out);
int rr_parse_rate(RedisModuleString *s, double *out);
int rr_reply_errf(RedisModuleCtx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int rr_reply_wrongtype(RedisModuleCtx *ctx);

enum {
    O_ERROR_RATE, O_MEMORY, O_CAPACITY, O_BITS, O_HASHES, O_SIGMA, O_MESSAGES,
    O_PHASES, O_HASHING, O_RECYCLE, O_SEED, O_LAYOUT, O_COUNT
};

/* A reservation request: planned (ERROR_RATE with MEMORY or CAPACITY) or
 * explicit (BITS, HASHES, SIGMA or MESSAGES). */
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

void rr_req_init(rr_req *q);
/* Parse RESERVE options argv[from..to): 0, or -1 after replying. */
int rr_parse_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int from, int to, rr_req *q);
void rr_req_config(const rr_req *q, rbf_config *c);

/* ------------------------------------------------------------ planning */

/* How a reservation replies once the filter exists. */
enum { REPLY_OK, REPLY_ARRAY, REPLY_ONE };

typedef struct rr_plan_out {
    rbf_config cfg;
    double fp, mpc;
    const char *err; /* NULL on success */
} rr_plan_out;

int rr_workers_start(void);
void rr_plan_run(const rr_req *q, rr_plan_out *o);
rr_model *rr_model_start(const rbf_config *cfg, double fp, double mpc);
void rr_model_release(rr_model *m);
/* Reserve key as q says (the key is known to be empty), then insert the
 * items and reply as `kind` says. */
int rr_reserve(RedisModuleCtx *ctx, RedisModuleString *key, const rr_req *q,
               RedisModuleString **items, size_t n, int kind);
/* Create key with configuration c and model values (fp NaN: compute), then
 * insert the items and reply. */
int rr_create_and_reply(RedisModuleCtx *ctx, RedisModuleString *key, const rbf_config *c,
                        double fp, double mpc, RedisModuleString **items, size_t n, int kind);
/* Every command on a key calls this first: while a plan for that key is
 * running, the command waits for it (1: blocked or refused, the caller
 * returns at once) and runs again, in arrival order, once the filter
 * exists; 0: go on. */
int rr_wait_for_plan(RedisModuleCtx *ctx, RedisModuleCmdFunc fn, RedisModuleString **argv,
                     int argc);
/* The start of every command: a wrong number of arguments (bad_arity)
 * is answered, then rr_wait_for_plan.  1: answered or waiting, the caller
 * returns at once; 0: go on. */
int rr_begin(RedisModuleCtx *ctx, RedisModuleCmdFunc self, RedisModuleString **argv, int argc,
             int bad_arity);
/* Cancel the plans of key name in db (-1: in every database), of every key
 * in db (name NULL), as DEL, RENAME, FLUSHDB or SWAPDB do. */
void rr_cancel_plans(int db, RedisModuleString *name, const char *why);
/* RENAME src dst with dst being planned: cancel dst's plan where src exists
 * (in the plan's database), as the RENAME will then overwrite the key; a
 * RENAME whose source is missing fails and leaves the plan alone.  ctx: a
 * detached context, or NULL where the server cannot tell (then cancel). */
void rr_cancel_plans_renamed_onto(RedisModuleCtx *ctx, int db, RedisModuleString *dst,
                                  RedisModuleString *src);

/* ------------------------------------------------------------ inserting */

/* Insert items into v's filter (the dumps told first), replying 0/1 per
 * item (array) or one answer; the recycles are counted. */
void rr_insert_items(RedisModuleCtx *ctx, rr_value *v, RedisModuleString **items, size_t n,
                     int kind);

/* ------------------------------------------------------------ dumps */

int rr_cmd_scandump(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int rr_cmd_loadchunk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
/* Before a write to v's filter: the dumps keep what it may change. */
void rr_dumps_before_insert(rr_value *v, RedisModuleString **items, size_t n);
void rr_dumps_before_recycle(rr_value *v);
/* Close every dump of v (its filter is going away). */
void rr_dumps_close(rr_value *v);
uint64_t rr_dumps_held(const rr_value *v);
/* Drop the dumps idle for longer than DUMP-TIMEOUT (the module's timer). */
void rr_dumps_expire(void);

/* ------------------------------------------------------------ commands */

int rr_cmd_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int rr_cmd_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int rr_cmd_madd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int rr_cmd_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int rr_cmd_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int rr_cmd_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int rr_cmd_recycle(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int rr_cmd_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

int rr_bf_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int rr_bf_add(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int rr_bf_madd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int rr_bf_insert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int rr_bf_exists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int rr_bf_mexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int rr_bf_info(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int rr_bf_card(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);

#endif /* RBF_REDIS_RR_H */
