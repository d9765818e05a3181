/*
 * args.c -- the module's argument parsing and error replies: keywords,
 * numbers, and the options of a reservation (RBF.RESERVE, RBF.INSERT).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "rr.h"

int rr_arg_is(RedisModuleString *s, const char *word)
{
    size_t n;
    const char *p = RedisModule_StringPtrLen(s, &n);
    return n == strlen(word) && strncasecmp(p, word, n) == 0;
}

/* At most cap - 4 bytes of s for an error message, bytes outside printable
 * ASCII shown as '?', "..." if cut. */
void rr_printable(RedisModuleString *s, char *out, size_t cap)
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
int rr_parse_u64(RedisModuleString *s, uint64_t *out)
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

int rr_parse_rate(RedisModuleString *s, double *out)
{
    double d;
    if (RedisModule_StringToDouble(s, &d) != REDISMODULE_OK || !(d > 0.0 && d < 1.0))
        return -1;
    *out = d;
    return 0;
}

int rr_reply_errf(RedisModuleCtx *ctx, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return RedisModule_ReplyWithError(ctx, buf);
}

static const char *const opt_names[O_COUNT] = {"ERROR_RATE", "MEMORY", "CAPACITY", "BITS",
                                               "HASHES", "SIGMA", "MESSAGES", "PHASES",
                                               "HASHING", "RECYCLE", "SEED", "LAYOUT"};

void rr_req_init(rr_req *q)
{
    memset(q, 0, sizeof *q);
    q->phases = 1;
    q->hashing = RBF_COLLIDING;
    q->recycle = RBF_NON_RETAINING;
    q->layout = RBF_LAYOUT_FLAT;
}

/* Parse RESERVE options argv[from..to).  0, or -1 after replying an error. */
int rr_parse_reserve(RedisModuleCtx *ctx, RedisModuleString **argv, int from, int to, rr_req *q)
{
    rr_req_init(q);
    for (int i = from; i < to; i += 2) {
        int o = -1;
        for (int j = 0; j < O_COUNT; j++)
            if (rr_arg_is(argv[i], opt_names[j]))
                o = j;
        if (o < 0) {
            char shown[44];
            rr_printable(argv[i], shown, sizeof shown);
            return rr_reply_errf(ctx, "ERR unknown option '%s' (argument %d)", shown, i), -1;
        }
        if (q->given & (1u << o))
            return rr_reply_errf(ctx, "ERR option %s given twice", opt_names[o]), -1;
        if (i + 1 >= to)
            return rr_reply_errf(ctx, "ERR option %s needs a value", opt_names[o]), -1;
        q->given |= 1u << o;
        RedisModuleString *a = argv[i + 1];
        int bad = 0;
        uint64_t u = 0;
        switch (o) {
        case O_ERROR_RATE:
            bad = rr_parse_rate(a, &q->eps);
            if (bad)
                return rr_reply_errf(ctx, "ERR ERROR_RATE must be a number between 0 and 1 (exclusive)"), -1;
            break;
        case O_MEMORY:
            bad = rr_parse_u64(a, &u) || u == 0 || u > UINT64_MAX / 8;
            q->mem_bits = u * 8;
            break;
        case O_CAPACITY: bad = rr_parse_u64(a, &q->capacity) || q->capacity == 0; break;
        case O_BITS: bad = rr_parse_u64(a, &q->bits) || q->bits == 0; break;
        case O_HASHES:
            bad = rr_parse_u64(a, &q->hashes) || q->hashes == 0 || q->hashes > RBF_MAX_HASHES;
            if (bad)
                return rr_reply_errf(ctx, "ERR HASHES must be an integer from 1 to %u", RBF_MAX_HASHES), -1;
            break;
        case O_SIGMA: bad = rr_parse_u64(a, &q->sigma) || q->sigma == 0; break;
        case O_MESSAGES: bad = rr_parse_u64(a, &q->messages) || q->messages == 0; break;
        case O_PHASES:
            if (rr_arg_is(a, "1"))
                q->phases = 1;
            else if (rr_arg_is(a, "2"))
                q->phases = 2;
            else
                return rr_reply_errf(ctx, "ERR PHASES must be 1 or 2"), -1;
            break;
        case O_HASHING:
            if (rr_arg_is(a, "colliding"))
                q->hashing = RBF_COLLIDING;
            else if (rr_arg_is(a, "non-colliding"))
                q->hashing = RBF_NON_COLLIDING;
            else
                return rr_reply_errf(ctx, "ERR HASHING must be colliding or non-colliding"), -1;
            break;
        case O_RECYCLE:
            if (rr_arg_is(a, "retaining"))
                q->recycle = RBF_RETAINING;
            else if (rr_arg_is(a, "non-retaining"))
                q->recycle = RBF_NON_RETAINING;
            else
                return rr_reply_errf(ctx, "ERR RECYCLE must be retaining or non-retaining"), -1;
            break;
        case O_LAYOUT:
            if (rr_arg_is(a, "flat"))
                q->layout = RBF_LAYOUT_FLAT;
            else if (rr_arg_is(a, "blocked"))
                q->layout = RBF_LAYOUT_BLOCKED;
            else
                return rr_reply_errf(ctx, "ERR LAYOUT must be flat or blocked"), -1;
            break;
        case O_SEED:
            bad = rr_parse_u64(a, &q->seed);
            if (bad)
                return rr_reply_errf(ctx, "ERR SEED must be an unsigned 64-bit decimal integer"), -1;
            break;
        default: break;
        }
        if (bad)
            return rr_reply_errf(ctx, "ERR %s must be a positive integer%s", opt_names[o],
                              o == O_MEMORY ? " (bytes)" : ""),
                   -1;
    }
    unsigned planned = (1u << O_ERROR_RATE) | (1u << O_MEMORY) | (1u << O_CAPACITY);
    unsigned explicit_ = (1u << O_BITS) | (1u << O_HASHES) | (1u << O_SIGMA) | (1u << O_MESSAGES);
    int has = (q->given & (1u << O_MEMORY)) != 0;
    int hcap = (q->given & (1u << O_CAPACITY)) != 0;
    if ((q->given & planned) && (q->given & explicit_))
        return rr_reply_errf(ctx, "ERR give either ERROR_RATE with MEMORY or CAPACITY, or BITS, HASHES "
                               "and SIGMA or MESSAGES, not both"),
               -1;
    if (q->given & planned) {
        if (!(q->given & (1u << O_ERROR_RATE)))
            return rr_reply_errf(ctx, "ERR MEMORY and CAPACITY need ERROR_RATE"), -1;
        if (has == hcap)
            return rr_reply_errf(ctx, "ERR ERROR_RATE needs exactly one of MEMORY or CAPACITY"), -1;
        if (q->layout == RBF_LAYOUT_BLOCKED && q->phases == 2)
            return rr_reply_errf(ctx, "ERR LAYOUT blocked with PHASES 2 cannot be planned (the library "
                                   "has no blocked two-phase planner): give BITS, HASHES and SIGMA"),
                   -1;
        if (q->layout == RBF_LAYOUT_BLOCKED && has && q->mem_bits < RBF_BLOCK_BITS)
            return rr_reply_errf(ctx, "ERR MEMORY with LAYOUT blocked must be at least 64 bytes "
                                   "(one 512-bit block)"),
                   -1;
        q->planned = 1;
        return 0;
    }
    if (!(q->given & (1u << O_BITS)) || !(q->given & (1u << O_HASHES)))
        return rr_reply_errf(ctx, "ERR reservation needs ERROR_RATE with MEMORY or CAPACITY, or BITS "
                               "and HASHES with SIGMA or MESSAGES"),
               -1;
    if (!!q->sigma == !!q->messages)
        return rr_reply_errf(ctx, "ERR BITS and HASHES need exactly one of SIGMA or MESSAGES"), -1;
    if (q->layout == RBF_LAYOUT_BLOCKED) {
        /* bits per filter (floor(BITS / PHASES)) in whole 512-bit blocks */
        uint64_t per = q->bits / q->phases, step = (uint64_t)RBF_BLOCK_BITS * q->phases;
        if (per % RBF_BLOCK_BITS != 0 || per == 0) {
            uint64_t lo = per / RBF_BLOCK_BITS * step;
            uint64_t hi = lo <= UINT64_MAX - step ? lo + step : lo;
            if (lo == 0)
                return rr_reply_errf(ctx, "ERR BITS %llu with LAYOUT blocked%s: the bits per filter "
                                       "must be a multiple of 512; give BITS %llu or more",
                                  (unsigned long long)q->bits,
                                  q->phases == 2 ? " and PHASES 2" : "", (unsigned long long)hi),
                       -1;
            return rr_reply_errf(ctx, "ERR BITS %llu with LAYOUT blocked%s: the bits per filter must "
                                   "be a multiple of 512; nearest BITS are %llu and %llu",
                              (unsigned long long)q->bits, q->phases == 2 ? " and PHASES 2" : "",
                              (unsigned long long)lo, (unsigned long long)hi),
                   -1;
        }
    }
    return 0;
}

/* The configuration of an explicit request (seed drawn if not given). */
void rr_req_config(const rr_req *q, rbf_config *c)
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


int rr_reply_wrongtype(RedisModuleCtx *ctx)
{
    return RedisModule_ReplyWithError(ctx, "WRONGTYPE Operation against a key holding the wrong kind of value");
}
