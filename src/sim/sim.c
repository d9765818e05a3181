/*
 * sim.c -- the simulator: ground-truth bookkeeping beside the real filter,
 * the epochs on worker threads, the statistics across epochs and the model
 * prediction.  Definitions: docs/simulator.md.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_cdf.h>

#include "sim_internal.h"
#include "rbf_alloc.h"
#include "rbf_abi.h"

/* ---- configuration */

/* 1 if the n reserved words are all zero (the ABI policy of rbf_base.h). */
void rbf_sim_config_init(rbf_sim_config *cfg)
{
    if (!cfg)
        return;
    memset(cfg, 0, sizeof *cfg);
    rbf_config_init(&cfg->filter);
    cfg->filter.seed = 0; /* unused: message hashes are random already */
    cfg->filter.bits = 1000;
    cfg->workload.kind = RBF_WORKLOAD_UNIFORM;
    cfg->workload.pool = 1000;
    cfg->arrivals = 100000;
    cfg->epochs = 7;
    cfg->seed = 1;
}

int rbf_sim_config_check(const rbf_sim_config *cfg, const char **why)
{
    const char *w = NULL;
    if (!cfg) {
        w = "configuration is NULL";
        goto done;
    }
    int rc = rbf_config_check(&cfg->filter, &w);
    if (rc != RBF_OK) {
        if (why)
            *why = w;
        return rc;
    }
    const rbf_sim_workload *wl = &cfg->workload;
    if (!RBF_RESERVED_ZERO(cfg) || !RBF_RESERVED_ZERO(wl))
        w = "a field this version of the library does not know is set (fill the "
            "configuration with rbf_sim_config_init first)";
    else if (cfg->oracle && cfg->filter.messages == 0)
        w = "the oracle policy needs messages (N-bounded)";
    else if (cfg->epochs == 0)
        w = "epochs must be at least 1";
    else if (wl->kind != RBF_WORKLOAD_TRACE && cfg->arrivals == 0)
        w = "arrivals must be at least 1";
    else if (wl->kind != RBF_WORKLOAD_TRACE && cfg->arrivals > UINT64_MAX / 2 - cfg->warmup)
        w = "arrivals plus warm-up too large";
    else if ((wl->kind == RBF_WORKLOAD_UNIFORM || wl->kind == RBF_WORKLOAD_ZIPF) &&
             (wl->pool == 0 || wl->pool >= UINT32_MAX))
        w = "the pool must hold 1 to 4294967294 messages";
    else if (wl->kind == RBF_WORKLOAD_ZIPF && !(wl->exponent >= 0 && wl->exponent <= 100))
        w = "the Zipf exponent must be within 0..100";
    else if (wl->kind == RBF_WORKLOAD_FADING &&
             (!(wl->new_fraction > 0 && wl->new_fraction <= 1) || !(wl->lifetime > 0) ||
              !isfinite(wl->lifetime)))
        w = "fading needs R in (0, 1] and a lifetime L > 0";
    else if (wl->kind == RBF_WORKLOAD_TRACE && (!wl->trace_path || !*wl->trace_path))
        w = "trace needs a file name";
    else if (wl->kind > RBF_WORKLOAD_TRACE)
        w = "unknown workload kind";
done:
    if (why)
        *why = w;
    return w ? RBF_EINVAL : RBF_OK;
}

/* The positions table of pool workloads (run_epoch); tests switch it off
 * to check that both paths give the same numbers. */
int rbf__sim_use_positions = 1;

/* ---- one epoch's bookkeeping
 *
 * Per message, one 64-bit word: bit 0 = it arrived before in this epoch,
 * bit 1 = its current holding spell began with a false positive (count-
 * each), bits 2.. = the cycle in which it was last truly held, numbered
 * from 2 (0 = never).  Cycle c is the filter's recycle count + 2, so with
 * lag = phases - 1 a message is held iff held_cycle + lag >= c: one-phase
 * holds only the current cycle, two-phase the current and the previous one
 * (the frozen filter).  "Never" (0) fails the test because c >= 2. */

enum { AFTER_KEEP = 0, AFTER_NEXT = 1, AFTER_SAME = 2 };

typedef struct sim_epoch {
    rbf *f;
    uint64_t cyc;     /* current cycle number (recycles + 2) */
    uint64_t lag;     /* phases - 1 */
    int after;        /* where the triggering message is held after a recycle */
    int oracle;
    uint64_t oracle_n;   /* N */
    uint64_t oracle_new; /* truly new arrivals in this cycle */
    rbf_sim_counts c;
    rbf_sim_counts first, last; /* c at the first and at the last recycle */
} sim_epoch;

/* the counts `now` were taken right after a recycle */
static void sim_snap(sim_epoch *e, const rbf_sim_counts *now)
{
    if (now->cycles == 1)
        e->first = *now;
    e->last = *now;
}

/* One arrival of the message whose word is *st and hash is `hash`.
 * Returns the RBF_SIM_F* flags (callers that do not need them let the
 * compiler drop the work). */
/* When `pos` is not NULL it holds the message's k positions (precomputed
 * with rbf_positions) and the filter is driven by rbf_insert_positions,
 * which is rbf_insert_hash on `hash` without recomputing them; the loops
 * pass a constant NULL or not, so each compiles to one path. */
/* The bookkeeping of one arrival after the filter answered `ri`; `flagged`
 * (a constant): ri carries RBF_RECYCLED (the positions calls). */
static inline __attribute__((always_inline)) unsigned sim_account(sim_epoch *e, uint64_t *st,
                                                                  unsigned ri, int flagged)
{
    const uint64_t v = *st;
    const uint64_t hc = v >> 2;
    const unsigned held = hc + e->lag >= e->cyc;
    const unsigned before = (unsigned)(v & 1);
    const unsigned fpflag = (unsigned)(v >> 1) & 1;
    const unsigned rn = ri & 1u; /* 1 new, 0 seen */
    const unsigned isnew = !held;
    const unsigned fp = isnew & (rn ^ 1);
    const unsigned each = fp | (held & fpflag);
    e->c.arrivals++;
    e->c.new_arrivals += isnew;
    e->c.fp_first += fp;
    e->c.fp_each += each;
    e->c.repeats += before;
    e->c.false_negatives += before & rn;
    e->c.anomalies += held & rn;
    const unsigned newflag = fp | (held & fpflag); /* isnew ? fp : fpflag, without a branch */

    uint64_t cyc2;
    if (e->oracle) {
        cyc2 = e->cyc;
        if (isnew && ++e->oracle_new >= e->oracle_n) {
            rbf_recycle(e->f);
            e->oracle_new = 0;
            cyc2++;
        }
    } else if (flagged) {
        cyc2 = e->cyc + (ri >> 1); /* RBF_RECYCLED: at most one recycle per insertion */
    } else if (rn | e->lag) {
        /* One-phase filters recycle only on a bit-setting insertion, which
         * they report new: skip the stats call on the others. */
        cyc2 = rbf_cycles(e->f) + 2;
    } else {
        cyc2 = e->cyc;
    }
    uint64_t nhc = e->cyc; /* no recycle: all its bits are now set in the active filter */
    unsigned recycled = 0;
    if (__builtin_expect(cyc2 != e->cyc, 0)) {
        recycled = 1;
        e->c.cycles++;
        sim_snap(e, &e->c);
        /* sigma non-retaining: forgotten (its old hc is at most cyc - 1, so
         * it is not held in cyc + 1); retaining: in the fresh filter;
         * N-bounded: inserted, then its filter was cleared or frozen. */
        nhc = e->after == AFTER_KEEP ? hc : e->after == AFTER_NEXT ? cyc2 : e->cyc;
        e->cyc = cyc2;
    }
    *st = nhc << 2 | (uint64_t)newflag << 1 | 1;
    return isnew * RBF_SIM_FNEW | fp * RBF_SIM_FFP | each * RBF_SIM_FEACH |
           before * RBF_SIM_FREPEAT | (before & rn) * RBF_SIM_FFN | recycled * RBF_SIM_FRECYCLE;
}

static inline __attribute__((always_inline)) unsigned sim_step(sim_epoch *e, uint64_t *st,
                                                               uint64_t hash, const uint64_t *pos)
{
    const unsigned ri = pos ? (unsigned)rbf_insert_positions(e->f, pos)
                            : (unsigned)rbf_insert_hash(e->f, hash);
    return sim_account(e, st, ri, pos != NULL);
}

static int epoch_open(const rbf_sim_config *cfg, sim_epoch *e)
{
    memset(e, 0, sizeof *e);
    rbf_config fc = cfg->filter;
    if (cfg->oracle)
        fc.messages = UINT64_MAX; /* the simulator recycles, never the filter */
    int rc = rbf_new(&fc, &e->f);
    if (rc != RBF_OK)
        return rc;
    e->cyc = 2;
    e->lag = cfg->filter.phases == 2 ? 1 : 0;
    e->oracle = cfg->oracle;
    e->oracle_n = cfg->filter.messages;
    if (cfg->filter.sigma)
        e->after = cfg->filter.recycle == RBF_RETAINING ? AFTER_NEXT : AFTER_KEEP;
    else
        e->after = AFTER_SAME;
    return RBF_OK;
}

/* ---- the shared run state */

typedef struct sim_shared {
    const rbf_sim_config *cfg;
    sim_alias zipf;
    sim_trace trace;
    rbf_sim_counts *counts; /* per epoch */
    rbf_sim_counts *steady; /* per epoch: from the first recycle to the last */
    _Atomic uint64_t next_epoch;
    _Atomic uint64_t done;  /* arrivals run, all epochs */
    _Atomic int cancel;
    _Atomic int error;      /* first error of a worker */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned running;       /* workers not finished (under mu) */
} sim_shared;

/* Arrivals per chunk between progress updates and cancellation checks. */
#define SIM_CHUNK 65536u

/* sim_account over a block of at most 1023 arrivals whose filter answers
 * carry RBF_RECYCLED, with the six per-arrival counters packed into one
 * word: a table indexed by (arrived before, false-positive spell, held,
 * reported new) gives each arrival's increments in 10-bit fields, and bit
 * 62 its new false-positive flag (= its fp_each increment).  One add per
 * arrival instead of six, and few enough live values that the loop keeps
 * them in registers.  The same counts as sim_account, arrival by arrival
 * (test_sim_workloads' positions_path compares the two paths). */
enum { PK_NEW = 0, PK_FP = 10, PK_EACH = 20, PK_REP = 30, PK_FN = 40, PK_ANOM = 50 };
#define PK(b, f, h, r)                                                                  \
    ((uint64_t)!(h) << PK_NEW | (uint64_t)(!(h) & !(r)) << PK_FP |                      \
     (uint64_t)((!(h) & !(r)) | ((h) & (f))) << PK_EACH | (uint64_t)(b) << PK_REP |     \
     (uint64_t)((b) & (r)) << PK_FN | (uint64_t)((h) & (r)) << PK_ANOM |                \
     (uint64_t)((!(h) & !(r)) | ((h) & (f))) << 62)
#define PK4(h, r) PK(0, 0, h, r), PK(1, 0, h, r), PK(0, 1, h, r), PK(1, 1, h, r)
/* index: before | fpflag << 1 | held << 2 | reported new << 3 */
static const uint64_t pk_table[16] = {PK4(0, 0), PK4(1, 0), PK4(0, 1), PK4(1, 1)};

static inline void account_block(sim_epoch *ep, uint64_t *state, const uint32_t *ids,
                                 const uint8_t *res, unsigned m)
{
    uint64_t cyc = ep->cyc, cycles = 0, acc = 0;
    const uint64_t lag = ep->lag;
    const int after = ep->after;
    for (unsigned j = 0; j < m; j++) {
        uint64_t *st = &state[ids[j]];
        const uint64_t v = *st, hc = v >> 2;
        const unsigned ri = res[j];
        const unsigned held = hc + lag >= cyc;
        const uint64_t pk = pk_table[(v & 3) | held << 2 | (ri & 1u) << 3];
        acc += pk;
        uint64_t nhc = cyc;
        if (__builtin_expect(ri >> 1, 0)) { /* RBF_RECYCLED */
            cycles++;
            rbf_sim_counts now = ep->c;
            const uint64_t f = 1023;
            now.arrivals += j + 1;
            now.new_arrivals += acc >> PK_NEW & f;
            now.fp_first += acc >> PK_FP & f;
            now.fp_each += acc >> PK_EACH & f;
            now.repeats += acc >> PK_REP & f;
            now.false_negatives += acc >> PK_FN & f;
            now.anomalies += acc >> PK_ANOM & f;
            now.cycles += cycles;
            sim_snap(ep, &now);
            nhc = after == AFTER_KEEP ? hc : after == AFTER_NEXT ? cyc + 1 : cyc;
            cyc++;
        }
        *st = nhc << 2 | (pk >> 62 & 1) << 1 | 1;
    }
    const uint64_t f = 1023;
    ep->c.arrivals += m;
    ep->c.new_arrivals += acc >> PK_NEW & f;
    ep->c.fp_first += acc >> PK_FP & f;
    ep->c.fp_each += acc >> PK_EACH & f;
    ep->c.repeats += acc >> PK_REP & f;
    ep->c.false_negatives += acc >> PK_FN & f;
    ep->c.anomalies += acc >> PK_ANOM & f;
    ep->c.cycles += cycles;
    ep->cyc = cyc;
}

/* Run `n` arrivals of a pool workload (uniform or Zipf). */
/* The loops work on local copies of the epoch and the generator: the
 * compiler then knows the stores into state[] cannot touch the counters,
 * and keeps them in registers. */
static void run_pool(sim_epoch *ep, sim_rng *rp, const sim_alias *zipf, uint64_t pool,
                     uint64_t *state, const uint64_t *hashes, const uint64_t *pos, unsigned k,
                     uint64_t n)
{
    sim_epoch e = *ep;
    sim_rng r = *rp;
    if (pos && !e.oracle) {
        /* A block at a time: the draws (they do not depend on the filter),
         * the filter's answers in one call, then the bookkeeping in order:
         * the same sequence as one arrival at a time.  (The oracle
         * recycles the filter itself between arrivals: below.) */
        uint32_t ids[256];
        uint8_t res[256];
        for (uint64_t t = 0; t < n; t += 256) {
            unsigned m = n - t < 256 ? (unsigned)(n - t) : 256u;
            if (zipf)
                for (unsigned j = 0; j < m; j++)
                    ids[j] = (uint32_t)sim_alias_draw(zipf, sim_rng_next(&r));
            else
                for (unsigned j = 0; j < m; j++)
                    ids[j] = (uint32_t)sim_reduce(sim_rng_next(&r), pool);
            (void)rbf_insert_positions_many(e.f, pos, ids, m, res);
            account_block(&e, state, ids, res, m);
        }
    } else if (pos && zipf) {
        for (uint64_t t = 0; t < n; t++) {
            uint64_t id = sim_alias_draw(zipf, sim_rng_next(&r));
            (void)sim_step(&e, &state[id], 0, pos + id * k);
        }
    } else if (pos) {
        for (uint64_t t = 0; t < n; t++) {
            uint64_t id = sim_reduce(sim_rng_next(&r), pool);
            (void)sim_step(&e, &state[id], 0, pos + id * k);
        }
    } else if (zipf) {
        for (uint64_t t = 0; t < n; t++) {
            uint64_t id = sim_alias_draw(zipf, sim_rng_next(&r));
            (void)sim_step(&e, &state[id], hashes[id], NULL);
        }
    } else {
        for (uint64_t t = 0; t < n; t++) {
            uint64_t id = sim_reduce(sim_rng_next(&r), pool);
            (void)sim_step(&e, &state[id], hashes[id], NULL);
        }
    }
    *ep = e;
    *rp = r;
}

static void run_fading(sim_epoch *ep, sim_rng *rp, sim_fading *fwp, uint64_t *state,
                       uint64_t *hashes, uint64_t n)
{
    sim_epoch e = *ep;
    sim_rng r = *rp;
    sim_fading fw = *fwp;
    const uint64_t mask = fw.window - 1;
    for (uint64_t t = 0; t < n; t++) {
        int birth;
        uint64_t slot = sim_fading_next(&fw, &r, &birth) & mask;
        if (birth) {
            state[slot] = 0;
            hashes[slot] = sim_rng_next(&r);
        }
        (void)sim_step(&e, &state[slot], hashes[slot], NULL);
    }
    *ep = e;
    *rp = r;
    *fwp = fw;
}

/* The epoch's own hash function: the lines' XXH3 values under a key drawn
 * from (seed, epoch), through a bijection, so that equal lines stay equal,
 * distinct lines distinct, and epochs are independent draws of the hash,
 * as the random hash keys of deployed filters are (docs/simulator.md 3).
 * Mixed at each arrival: a table per epoch would cost the whole trace's
 * distinct lines at every epoch. */
static void run_trace(sim_epoch *ep, const sim_trace *tr, uint64_t key, uint64_t *state,
                      uint64_t from, uint64_t n)
{
    sim_epoch e = *ep;
    for (uint64_t t = from; t < from + n; t++) {
        uint32_t id = tr->line_id[t];
        (void)sim_step(&e, &state[id], rbf_splitmix64_mix(tr->hashes[id] ^ key), NULL);
    }
    *ep = e;
}

/* Run epoch `ep` completely.  Returns RBF_OK, an error or RBF_ECANCELED. */
static int run_epoch(sim_shared *sh, uint64_t ep)
{
    const rbf_sim_config *cfg = sh->cfg;
    const rbf_sim_workload *wl = &cfg->workload;
    sim_epoch e;
    int rc = epoch_open(cfg, &e);
    if (rc != RBF_OK)
        return rc;
    sim_rng rng;
    rbf__sim_rng_seed(&rng, cfg->seed, ep);

    uint64_t nstate = 0, warm = cfg->warmup, count = cfg->arrivals, from = 0;
    sim_fading fw;
    switch (wl->kind) {
    case RBF_WORKLOAD_UNIFORM:
    case RBF_WORKLOAD_ZIPF: nstate = wl->pool; break;
    case RBF_WORKLOAD_FADING:
        rbf__sim_fading_init(&fw, wl->new_fraction, wl->lifetime);
        nstate = fw.window;
        break;
    case RBF_WORKLOAD_TRACE: {
        /* Epoch ep replays lines [ep L / E, (ep+1) L / E). */
        uint64_t lines = sh->trace.lines, E = cfg->epochs;
        from = (uint64_t)(((unsigned __int128)lines * ep) / E);
        uint64_t to = (uint64_t)(((unsigned __int128)lines * (ep + 1)) / E);
        uint64_t len = to - from;
        warm = warm < len ? warm : len;
        count = len - warm;
        nstate = sh->trace.ids;
        break;
    }
    }
    uint64_t *state = rbf__calloc((size_t)nstate, sizeof *state);
    uint64_t *hashes = NULL, key = 0;
    if (wl->kind == RBF_WORKLOAD_TRACE)
        key = sim_rng_next(&rng); /* the epoch's hash key (run_trace) */
    if (state && wl->kind != RBF_WORKLOAD_TRACE) {
        hashes = rbf__malloc((size_t)nstate * sizeof *hashes);
        if (hashes && wl->kind != RBF_WORKLOAD_FADING)
            for (uint64_t i = 0; i < nstate; i++)
                hashes[i] = sim_rng_next(&rng);
    }
    if (!state || (wl->kind != RBF_WORKLOAD_TRACE && !hashes)) {
        rbf__free(state);
        rbf__free(hashes);
        rbf_free(e.f);
        return RBF_ENOMEM;
    }

    /* A pool's positions, computed once per epoch, when the table is small
     * (at most 2^22 words): the filter then skips the hashing. */
    uint64_t *pos = NULL;
    const unsigned k = cfg->filter.hashes;
    if ((wl->kind == RBF_WORKLOAD_UNIFORM || wl->kind == RBF_WORKLOAD_ZIPF) && rbf__sim_use_positions &&
        nstate <= (UINT64_C(1) << 22) / k) {
        pos = rbf__malloc((size_t)nstate * k * sizeof *pos);
        if (!pos) {
            rbf__free(state);
            rbf__free(hashes);
            rbf_free(e.f);
            return RBF_ENOMEM;
        }
        for (uint64_t i = 0; i < nstate; i++)
            (void)rbf_positions(e.f, hashes[i], pos + i * k);
    }
    const sim_alias *zipf = wl->kind == RBF_WORKLOAD_ZIPF ? &sh->zipf : NULL;
    uint64_t total = warm + count, at = 0;
    rc = RBF_OK;
    while (at < total) {
        if (at == warm) { /* warm-up over: count from here on */
            memset(&e.c, 0, sizeof e.c);
            memset(&e.first, 0, sizeof e.first);
            memset(&e.last, 0, sizeof e.last);
        }
        uint64_t stop = at < warm ? warm : total;
        uint64_t n = stop - at < SIM_CHUNK ? stop - at : SIM_CHUNK;
        switch (wl->kind) {
        case RBF_WORKLOAD_UNIFORM:
        case RBF_WORKLOAD_ZIPF:
            run_pool(&e, &rng, zipf, wl->pool, state, hashes, pos, cfg->filter.hashes, n);
            break;
        case RBF_WORKLOAD_FADING: run_fading(&e, &rng, &fw, state, hashes, n); break;
        case RBF_WORKLOAD_TRACE: run_trace(&e, &sh->trace, key, state, from + at, n); break;
        }
        at += n;
        atomic_fetch_add_explicit(&sh->done, n, memory_order_relaxed);
        if (atomic_load_explicit(&sh->cancel, memory_order_relaxed)) {
            rc = RBF_ECANCELED;
            break;
        }
    }
    if (warm == total) /* nothing counted */
        memset(&e.c, 0, sizeof e.c);
    sh->counts[ep] = e.c;
    if (warm != total && e.last.cycles >= 2) {
        rbf_sim_counts *d = &sh->steady[ep];
        d->arrivals = e.last.arrivals - e.first.arrivals;
        d->new_arrivals = e.last.new_arrivals - e.first.new_arrivals;
        d->fp_first = e.last.fp_first - e.first.fp_first;
        d->fp_each = e.last.fp_each - e.first.fp_each;
        d->repeats = e.last.repeats - e.first.repeats;
        d->false_negatives = e.last.false_negatives - e.first.false_negatives;
        d->cycles = e.last.cycles - e.first.cycles;
        d->anomalies = e.last.anomalies - e.first.anomalies;
    }
    rbf__free(state);
    rbf__free(hashes);
    rbf__free(pos);
    rbf_free(e.f);
    return rc;
}

static void *worker(void *arg)
{
    sim_shared *sh = arg;
    for (;;) {
        if (atomic_load(&sh->cancel))
            break;
        uint64_t ep = atomic_fetch_add(&sh->next_epoch, 1);
        if (ep >= sh->cfg->epochs)
            break;
        int rc = run_epoch(sh, ep);
        if (rc != RBF_OK) {
            int expected = 0;
            if (rc != RBF_ECANCELED)
                atomic_compare_exchange_strong(&sh->error, &expected, rc);
            atomic_store(&sh->cancel, 1);
            break;
        }
    }
    pthread_mutex_lock(&sh->mu);
    sh->running--;
    pthread_cond_signal(&sh->cv);
    pthread_mutex_unlock(&sh->mu);
    return NULL;
}

/* ---- statistics */

static void rates_of(const rbf_sim_counts *c, rbf_sim_rates *r)
{
    r->fp = c->new_arrivals ? (double)c->fp_first / (double)c->new_arrivals : 0;
    r->fp_first = c->arrivals ? (double)c->fp_first / (double)c->arrivals : 0;
    r->fp_each = c->arrivals ? (double)c->fp_each / (double)c->arrivals : 0;
    r->fn = c->repeats ? (double)c->false_negatives / (double)c->repeats : 0;
    r->messages_per_cycle = c->cycles ? (double)c->new_arrivals / (double)c->cycles : 0;
}

/* Mean, sample standard deviation and two-sided Student-t interval at
 * `level` of x[0..n-1] at the given stride (n >= 1), the interval clipped
 * to [0, hi] (a rate cannot leave [0, 1]; a count is >= 0; hi = INFINITY
 * and lo unclipped for rbf_sim_interval, which takes any data): the
 * statistics of every rate in a result (level 0.99) and of
 * rbf_sim_interval. */
static void stat_of(const double *x, size_t stride, unsigned n, double level, rbf_sim_stat *s,
                    double lo, double hi)
{
    double mean = 0;
    for (unsigned i = 0; i < n; i++)
        mean += x[i * stride];
    mean /= n;
    double ss = 0;
    for (unsigned i = 0; i < n; i++) {
        double d = x[i * stride] - mean;
        ss += d * d;
    }
    s->mean = mean;
    s->ci_low = s->ci_high = mean;
    s->stddev = 0;
    s->has_ci = n >= 2;
    if (n >= 2) {
        s->stddev = sqrt(ss / (n - 1));
        double t = gsl_cdf_tdist_Pinv(1 - (1 - level) / 2, (double)(n - 1));
        double half = t * s->stddev / sqrt((double)n);
        s->ci_low = mean - half < lo ? lo : mean - half;
        s->ci_high = mean + half > hi ? hi : mean + half;
    }
}

int rbf_sim_interval(const double *x, unsigned n, double level, rbf_sim_stat *out)
{
    if (!out)
        return RBF_EINVAL;
    memset(out, 0, sizeof *out);
    if (!x || n == 0 || !(level > 0 && level < 1))
        return RBF_EINVAL;
    stat_of(x, 1, n, level, out, -INFINITY, INFINITY);
    return RBF_OK;
}

/* The level of every interval in a result. */
#define SIM_LEVEL 0.99

/* A rate of `num` events in `den` trials over the whole run with no event
 * (or nothing but events) gives epochs that all agree, and a Student-t
 * interval of zero width: it would say the rate is exactly 0 (or 1).  The
 * interval is then widened to the exact binomial (Clopper-Pearson) bound at
 * the same level, as if the trials were independent: [0, 1 - a^(1/den)]
 * (or [a^(1/den), 1]), a = (1 - level) / 2 (0 events in 10^6 repeats:
 * [0, 5.3e-6]).  Correlated trials would only widen it further. */
static void stat_edge(rbf_sim_stat *s, uint64_t num, uint64_t den)
{
    if (!s->has_ci || den == 0 || (num != 0 && num != den))
        return;
    double b = pow((1.0 - SIM_LEVEL) / 2.0, 1.0 / (double)den);
    if (num == 0 && s->ci_high < 1.0 - b)
        s->ci_high = 1.0 - b;
    if (num == den && s->ci_low > b)
        s->ci_low = b;
}

static void summarise(rbf_sim_result *out)
{
    unsigned n = out->epochs;
    memset(&out->total, 0, sizeof out->total);
    for (unsigned i = 0; i < n; i++) {
        const rbf_sim_counts *c = &out->epoch_counts[i];
        out->total.arrivals += c->arrivals;
        out->total.new_arrivals += c->new_arrivals;
        out->total.fp_first += c->fp_first;
        out->total.fp_each += c->fp_each;
        out->total.repeats += c->repeats;
        out->total.false_negatives += c->false_negatives;
        out->total.cycles += c->cycles;
        out->total.anomalies += c->anomalies;
        rates_of(c, &out->epoch_rates[i]);
    }
    const size_t stride = sizeof(rbf_sim_rates) / sizeof(double);
    const double *base = (const double *)out->epoch_rates;
#define RATE_OF(field) base + offsetof(rbf_sim_rates, field) / sizeof(double), stride, n, SIM_LEVEL
    stat_of(RATE_OF(fp), &out->fp, 0.0, 1.0);
    stat_of(RATE_OF(fp_first), &out->fp_first, 0.0, 1.0);
    stat_of(RATE_OF(fp_each), &out->fp_each, 0.0, 1.0);
    stat_of(RATE_OF(fn), &out->fn, 0.0, 1.0);
    stat_of(RATE_OF(messages_per_cycle), &out->messages_per_cycle, 0.0, INFINITY);
#undef RATE_OF
    const rbf_sim_counts *t = &out->total;
    stat_edge(&out->fp, t->fp_first, t->new_arrivals);
    stat_edge(&out->fp_first, t->fp_first, t->arrivals);
    stat_edge(&out->fp_each, t->fp_each, t->arrivals);
    stat_edge(&out->fn, t->false_negatives, t->repeats);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- the run */

int rbf_sim_run(const rbf_sim_config *cfg, rbf_sim_result *out)
{
    if (!out)
        return RBF_EINVAL;
    memset(out, 0, sizeof *out);
    int rc = rbf_sim_config_check(cfg, NULL);
    if (rc != RBF_OK)
        return rc;
    double t0 = now_seconds();

    sim_shared *sh = rbf__calloc(1, sizeof *sh);
    if (!sh)
        return RBF_ENOMEM;
    sh->cfg = cfg;
    const rbf_sim_workload *wl = &cfg->workload;
    if (wl->kind == RBF_WORKLOAD_ZIPF)
        rc = rbf__sim_zipf_init(&sh->zipf, wl->pool, wl->exponent);
    else if (wl->kind == RBF_WORKLOAD_TRACE)
        rc = rbf__sim_trace_load(wl->trace_path, &sh->trace);
    sh->counts = rbf__calloc(cfg->epochs, sizeof *sh->counts);
    sh->steady = rbf__calloc(cfg->epochs, sizeof *sh->steady);
    out->epoch_rates = rbf__calloc(cfg->epochs, sizeof *out->epoch_rates);
    if (rc == RBF_OK && (!sh->counts || !sh->steady || !out->epoch_rates))
        rc = RBF_ENOMEM;

    unsigned threads = cfg->threads;
    if (threads == 0) {
        long np = sysconf(_SC_NPROCESSORS_ONLN);
        threads = np > 0 ? (unsigned)np : 1;
    }
    if (threads > cfg->epochs)
        threads = cfg->epochs;

    uint64_t per_epoch = wl->kind == RBF_WORKLOAD_TRACE ? sh->trace.lines / cfg->epochs + 1
                                                   : cfg->warmup + cfg->arrivals;
    uint64_t grand = per_epoch * cfg->epochs;
    pthread_t *tid = NULL;
    unsigned started = 0;
    if (rc == RBF_OK) {
        pthread_mutex_init(&sh->mu, NULL);
        pthread_cond_init(&sh->cv, NULL);
        tid = rbf__calloc(threads, sizeof *tid);
        if (!tid)
            rc = RBF_ENOMEM;
        sh->running = threads;
        for (unsigned i = 0; rc == RBF_OK && i < threads; i++) {
            if (pthread_create(&tid[i], NULL, worker, sh) != 0)
                break;
            started++;
        }
        pthread_mutex_lock(&sh->mu);
        sh->running -= threads - started;
        pthread_mutex_unlock(&sh->mu);
        if (started == 0 && rc == RBF_OK) {
            /* No thread could start: run on this one. */
            sh->running = 1;
            worker(sh);
        }
        /* Wait, reporting progress from this thread only. */
        pthread_mutex_lock(&sh->mu);
        while (sh->running > 0) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 100000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&sh->cv, &sh->mu, &ts);
            if (cfg->progress && sh->running > 0) {
                pthread_mutex_unlock(&sh->mu);
                if (cfg->progress(cfg->progress_ctx, atomic_load(&sh->done), grand))
                    atomic_store(&sh->cancel, 1);
                pthread_mutex_lock(&sh->mu);
            }
        }
        pthread_mutex_unlock(&sh->mu);
        for (unsigned i = 0; i < started; i++)
            pthread_join(tid[i], NULL);
        rbf__free(tid);
        pthread_mutex_destroy(&sh->mu);
        pthread_cond_destroy(&sh->cv);
        if (atomic_load(&sh->error))
            rc = atomic_load(&sh->error);
        else if (atomic_load(&sh->cancel))
            rc = RBF_ECANCELED;
    }
    rbf__sim_alias_free(&sh->zipf);
    rbf__sim_trace_free(&sh->trace);
    if (rc != RBF_OK) {
        rbf__free(sh->counts);
        rbf__free(sh->steady);
        rbf__free(sh);
        rbf__free(out->epoch_rates);
        memset(out, 0, sizeof *out);
        return rc;
    }
    out->epochs = cfg->epochs;
    out->epoch_counts = sh->counts;
    out->epoch_steady = sh->steady;
    out->threads = started ? started : 1;
    rbf__free(sh);
    summarise(out);
    out->elapsed_seconds = now_seconds() - t0;
    return RBF_OK;
}

void rbf_sim_result_free(rbf_sim_result *r)
{
    if (!r)
        return;
    rbf__free(r->epoch_counts);
    rbf__free(r->epoch_steady);
    rbf__free(r->epoch_rates);
    memset(r, 0, sizeof *r);
}

/* ---- a given sequence */

int rbf_sim_sequence(const rbf_sim_config *cfg, const uint64_t *hashes, size_t n,
                     rbf_sim_counts *counts, uint8_t *flags)
{
    if (!cfg || !counts || (n && !hashes))
        return RBF_EINVAL;
    const char *why;
    int rc = rbf_config_check(&cfg->filter, &why);
    if (rc != RBF_OK)
        return rc;
    if (cfg->oracle && cfg->filter.messages == 0)
        return RBF_EINVAL;
    uint32_t *ids = rbf__malloc((n ? n : 1) * sizeof *ids);
    uint64_t distinct = 0;
    if (!ids)
        return RBF_ENOMEM;
    rc = rbf__sim_dense_ids(hashes, n, ids, NULL, &distinct);
    uint64_t *state = rc == RBF_OK ? rbf__calloc((size_t)distinct + 1, sizeof *state) : NULL;
    sim_epoch e;
    if (rc == RBF_OK && !state)
        rc = RBF_ENOMEM;
    if (rc == RBF_OK)
        rc = epoch_open(cfg, &e);
    if (rc == RBF_OK) {
        for (size_t i = 0; i < n; i++) {
            unsigned fl = sim_step(&e, &state[ids[i]], hashes[i], NULL);
            if (flags)
                flags[i] = (uint8_t)fl;
        }
        *counts = e.c;
        rbf_free(e.f);
    }
    rbf__free(state);
    rbf__free(ids);
    return rc;
}
