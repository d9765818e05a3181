/*
 * concurrent.c -- the thread-safe filter: lock-free inserts, exact
 * thresholds, linearizable recycling (cfg.concurrent = 1).
 *
 * The design, in four parts.
 *
 * 1. Slots.  Each thread has a home slot (a thread-local index, assigned
 *    once per thread from a global counter, modulo RBF_CONC_SLOTS): one
 *    64-byte line holding a `busy` flag, the thread's counters since the
 *    last settling (bits newly set, bit-setting messages, inserts, reported
 *    new) and its unspent budget.  An insert claims its slot with one CAS on
 *    `busy` (a line no other thread writes, unless more threads than slots
 *    share it; a busy slot sends the thread on to the next one), does its
 *    work and releases the slot with a plain release store.  No lock is
 *    shared between inserters.
 *
 * 2. Bits.  A message's k positions become (word index, mask) pairs, one
 *    per distinct word (flat_pairs: the only place that knows the layout).
 *    Their lines are prefetched for writing before the slot is claimed.
 *    When the slot's unspent budget (3) covers every bit of the masks (an
 *    upper bound of the bits the message can set), each word is read with
 *    a relaxed load and, only if one of its bits is clear, updated at once
 *    by an atomic fetch-or (test_or_pairs): a line is held the shortest
 *    time between its read and its write, and a message already there
 *    writes nothing.  The bits newly set, d = sum of popcount(mask & ~old),
 *    come from the old words the fetch-ors return, so every bit's 0 -> 1
 *    transition is counted by exactly one thread and the counts always
 *    equal the popcount of the array; d = 0 means seen.  When the budget
 *    is short, the clear bits are counted first (an upper bound of d, as
 *    bits only go from 0 to 1 while a slot is held), a message with none
 *    is reported seen, and only what they need is taken from the pool.
 *    Two threads inserting the same message at once may both get d > 0 and
 *    both report it new.
 * 3. Budget.  sigma and N are never exceeded because bits and messages are
 *    reserved before they are set: the filter's pools count what has been
 *    handed out this cycle (settled counts plus every slot's counts and
 *    unspent budget), never more than sigma bits and N - 1 messages.  A
 *    slot whose budget is short takes a chunk from the pool with one CAS:
 *    what it needs plus min(chunk, what is left / 16), so chunks shrink as
 *    the pool nears the threshold.  When the pool cannot give what a
 *    message needs, the message takes the slow path: an exclusive section
 *    (4) settles every slot (their counts folded into the filter's, their
 *    budgets returned), re-reads the words and decides exactly as the
 *    single-writer filter does: recycle when b + d > sigma (retaining:
 *    insert into the fresh filter), recycle right after the N-th
 *    bit-setting message, two-phase swaps.  So the concurrent filter
 *    recycles at exactly the single-writer recycle point, and the models
 *    hold unchanged.  Near the threshold a few slow paths settle the
 *    fragments the threads hold (rbf__conc_slow_paths counts them).
 *
 * 4. Exclusive sections (slow path, rbf_recycle, saving).  A mutex
 *    serialises them.  The recycler makes the gate (a generation counter)
 *    odd, then waits until no slot is busy.  An inserter, after its CAS on
 *    `busy`, reads the gate; if odd, it releases its slot and waits until
 *    the gate is even.  Both sides are sequentially consistent (Dekker), so
 *    either the inserter sees the odd gate or the recycler sees it busy: no
 *    insert overlaps an exclusive section, so each takes effect wholly
 *    before or after a recycle.  The section clears in place with relaxed
 *    atomic stores (no spare array: the memory cost is the 8 KiB of slots
 *    and this struct), swaps the two-phase arrays, and makes the gate even
 *    again.  Readers (rbf_contains*, rbf_get_stats) take no slot: they read
 *    the gate before and after their relaxed loads (a seqlock) and retry
 *    when it changed or was odd, so a membership test never mixes bits of
 *    two cycles, and the counts they sum belong to one settled state.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "concurrent.h"
#include "insert.h"
#include "rbf_alloc.h"

#define RBF_CONC_SLOTS 128u       /* per-thread slots per filter (power of two) */
#define RBF_CONC_CHUNK_BITS 4096u /* largest budget chunk a slot takes, in bits */
#define RBF_CONC_CHUNK_MSGS 1024u /* ... and in messages */
#define RBF_CONC_MERGE_MAX 32u    /* merge positions into words up to this k */

typedef struct conc_slot {
    _Alignas(64) atomic_uint busy; /* 1 while a thread inserts through this slot */
    /* Since the last settling; written by the slot's holder only (relaxed
     * load + store), read by rbf_get_stats. */
    _Atomic uint64_t bits;         /* bits newly set */
    _Atomic uint64_t msgs;         /* bit-setting messages */
    _Atomic uint64_t inserts;
    _Atomic uint64_t reported_new; /* stored after inserts, with release */
    /* Unspent budget: only the holder and exclusive sections touch it
     * (ordered by `busy`). */
    uint64_t have_bits;
    uint64_t have_msgs;
} conc_slot;

struct rbf_conc {
    /* Read by every operation, written by exclusive sections only. */
    _Alignas(64) _Atomic uint64_t gate; /* odd while an exclusive section runs */
    _Atomic(uint64_t *) active;
    _Atomic(uint64_t *) frozen;
    uint64_t limit_bits;  /* sigma, or UINT64_MAX */
    uint64_t limit_msgs1; /* N - 1, or UINT64_MAX */
    unsigned vec;         /* positions by AVX-512 */
    int debug;
    /* The pools: budget handed out this cycle (a CAS now and then). */
    _Alignas(64) _Atomic uint64_t pool_bits;
    _Atomic uint64_t pool_msgs;
    /* Settled counts: written in exclusive sections only. */
    _Alignas(64) _Atomic uint64_t b, fb, c, cycles, inserts, reported_new;
    _Atomic uint64_t violations, slow;
    pthread_mutex_t lock; /* serialises exclusive sections */
    conc_slot slots[RBF_CONC_SLOTS];
};

/* ---- small helpers */

#define LD(x) atomic_load_explicit(&(x), memory_order_relaxed)
#define ST(x, v) atomic_store_explicit(&(x), (v), memory_order_relaxed)

static inline uint64_t word_load(const uint64_t *w)
{
    return __atomic_load_n(w, __ATOMIC_RELAXED);
}

/* popcount of a mask, which nearly always has one bit (so without the
 * library call that __builtin_popcountll is on baseline x86-64). */
static inline unsigned pop(uint64_t x)
{
    return RBF_LIKELY(!(x & (x - 1))) ? (x != 0) : (unsigned)__builtin_popcountll(x);
}

/* Atomically OR mask into *w; the number of its bits that were clear.  A
 * one-bit mask (the common case) is one `lock bts`; others a fetch-or (a
 * CAS loop, since the old word is wanted). */
static inline unsigned or_word(uint64_t *w, uint64_t mask)
{
    if (RBF_LIKELY(!(mask & (mask - 1)))) {
        uint64_t bit = 1ULL << (unsigned)__builtin_ctzll(mask); /* this form: lock bts */
        return (__atomic_fetch_or(w, bit, __ATOMIC_RELAXED) & bit) == 0;
    }
    return pop(mask & ~__atomic_fetch_or(w, mask, __ATOMIC_RELAXED));
}

/* Fetch the line of *p for writing (prefetchw): it arrives exclusive, so
 * the atomic OR after the test needs no second trip to take the line from
 * another core's cache.  A NOP on x86-64 processors without it. */
static inline void prefetch_write(const uint64_t *p)
{
#if defined(__x86_64__) && defined(__GNUC__) && !defined(RBF_TSAN)
    __asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
    (void)p;
#endif
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Spin a little, then give the processor away (on a machine with fewer
 * cores than threads, the thread we wait for may need it). */
static inline void backoff(unsigned *n)
{
    if (++*n < 64)
        cpu_relax();
    else
        sched_yield();
}

#if defined(__GNUC__) && !defined(RBF_TSAN)
#define RBF_TLS_MODEL __attribute__((tls_model("initial-exec")))
#else
#define RBF_TLS_MODEL
#endif

static atomic_uint next_thread;
static _Thread_local unsigned home_plus1 RBF_TLS_MODEL;

/* This thread's home slot. */
static inline unsigned home_slot(void)
{
    unsigned h = home_plus1;
    if (RBF_UNLIKELY(!h)) {
        h = atomic_fetch_add_explicit(&next_thread, 1, memory_order_relaxed) % RBF_CONC_SLOTS + 1;
        home_plus1 = h;
    }
    return h - 1;
}

static void wait_open(const struct rbf_conc *c)
{
    unsigned n = 0;
    while (atomic_load_explicit(&c->gate, memory_order_acquire) & 1)
        backoff(&n);
}

/* Claim a slot for one insert: returns it busy, with the gate open. */
static inline conc_slot *claim(struct rbf_conc *c)
{
    unsigned i = home_slot(), n = 0;
    for (;;) {
        conc_slot *s = &c->slots[i];
        unsigned expect = 0;
        if (RBF_LIKELY(atomic_compare_exchange_strong_explicit(
                &s->busy, &expect, 1, memory_order_seq_cst, memory_order_relaxed))) {
            if (RBF_LIKELY(!(atomic_load_explicit(&c->gate, memory_order_seq_cst) & 1)))
                return s;
            atomic_store_explicit(&s->busy, 0, memory_order_release);
            wait_open(c);
            continue;
        }
        i = (i + 1) & (RBF_CONC_SLOTS - 1); /* shared home slot in use: next one */
        if ((++n & (RBF_CONC_SLOTS - 1)) == 0)
            sched_yield();
    }
}

static inline void release(conc_slot *s)
{
    atomic_store_explicit(&s->busy, 0, memory_order_release);
}

static inline void bump(_Atomic uint64_t *x, uint64_t by, memory_order mo)
{
    atomic_store_explicit(x, atomic_load_explicit(x, memory_order_relaxed) + by, mo);
}

/* ---- the layout: positions -> (word, mask) pairs
 *
 * Everything below works on pairs, so another layout only needs its own
 * version of this function. */
static unsigned flat_pairs(const struct rbf *f, const uint64_t *pos, uint64_t *w, uint64_t *m)
{
    const unsigned k = f->cfg.hashes;
    unsigned n = 0;
    if (k > RBF_CONC_MERGE_MAX) { /* correct unmerged too: fetch-or sees its own earlier bits */
        for (unsigned i = 0; i < k; i++) {
            w[i] = pos[i] >> 6;
            m[i] = 1ULL << (pos[i] & 63);
        }
        return k;
    }
    for (unsigned i = 0; i < k; i++) {
        uint64_t wi = pos[i] >> 6, bit = 1ULL << (pos[i] & 63);
        unsigned j = 0;
        while (j < n && w[j] != wi)
            j++;
        if (j == n) {
            w[n] = wi;
            m[n++] = bit;
        } else {
            m[j] |= bit;
        }
    }
    return n;
}

#ifdef RBF_HAVE_AVX512
RBF_AVX512 static RBF_NOINLINE void positions_vec(const struct rbf *f, uint64_t hash, uint64_t *pos)
{
    positions_avx512(f, hash, pos);
}
#endif

/* The pairs of a message's hash; w and m hold RBF_MAX_HASHES entries. */
static inline unsigned hash_pairs(const struct rbf *f, uint64_t hash, uint64_t *w, uint64_t *m)
{
    uint64_t pos[RBF_MAX_HASHES];
#ifdef RBF_HAVE_AVX512
    if (f->conc->vec)
        positions_vec(f, hash, pos);
    else
#endif
        rbf__positions(f, hash, pos);
    return flat_pairs(f, pos, w, m);
}

static inline int all_set_pairs(const uint64_t *a, const uint64_t *w, const uint64_t *m, unsigned n)
{
    uint64_t miss = 0;
    for (unsigned i = 0; i < n; i++)
        miss |= m[i] & ~word_load(&a[w[i]]);
    return miss == 0;
}

static inline unsigned clear_count(const uint64_t *a, const uint64_t *w, const uint64_t *m,
                                   unsigned n)
{
    unsigned d = 0;
    for (unsigned i = 0; i < n; i++)
        d += pop(m[i] & ~word_load(&a[w[i]]));
    return d;
}

static inline unsigned or_pairs(uint64_t *a, const uint64_t *w, const uint64_t *m, unsigned n)
{
    unsigned d = 0;
    for (unsigned i = 0; i < n; i++)
        d += or_word(&a[w[i]], m[i]);
    return d;
}

/* ---- exclusive sections */

static uint64_t popcount_words(const uint64_t *a, uint64_t nwords)
{
    uint64_t pc = 0;
    for (uint64_t i = 0; i < nwords; i++)
        pc += (uint64_t)__builtin_popcountll(word_load(&a[i]));
    return pc;
}

/* Fold every slot into the settled counts and return their budgets: the
 * pools then equal the exact counts.  Exclusive sections only. */
static void settle(struct rbf_conc *c)
{
    uint64_t b = LD(c->b), cc = LD(c->c), ins = LD(c->inserts), rn = LD(c->reported_new);
    for (unsigned i = 0; i < RBF_CONC_SLOTS; i++) {
        conc_slot *s = &c->slots[i];
        b += LD(s->bits);
        cc += LD(s->msgs);
        ins += LD(s->inserts);
        rn += LD(s->reported_new);
        ST(s->bits, 0);
        ST(s->msgs, 0);
        ST(s->inserts, 0);
        ST(s->reported_new, 0);
        s->have_bits = 0;
        s->have_msgs = 0;
    }
    ST(c->b, b);
    ST(c->c, cc);
    ST(c->inserts, ins);
    ST(c->reported_new, rn);
}

static void exclusive_begin(struct rbf_conc *c)
{
    pthread_mutex_lock(&c->lock);
    atomic_fetch_add_explicit(&c->gate, 1, memory_order_seq_cst); /* odd: closed */
    atomic_thread_fence(memory_order_release); /* seqlock: before the data stores */
    for (unsigned i = 0; i < RBF_CONC_SLOTS; i++) {
        unsigned n = 0;
        while (atomic_load_explicit(&c->slots[i].busy, memory_order_seq_cst))
            backoff(&n);
    }
    settle(c);
}

static void debug_check(const struct rbf *f)
{
    struct rbf_conc *c = f->conc;
    const uint64_t *a = LD(c->active), *fr = LD(c->frozen);
    uint64_t b = LD(c->b);
    int bad = popcount_words(a, f->nwords) != b || b > c->limit_bits ||
              (c->limit_msgs1 != UINT64_MAX && LD(c->c) > c->limit_msgs1) ||
              (fr && popcount_words(fr, f->nwords) != LD(c->fb));
    if (bad)
        atomic_fetch_add_explicit(&c->violations, 1, memory_order_relaxed);
}

static void exclusive_end(const struct rbf *f)
{
    struct rbf_conc *c = f->conc;
    ST(c->pool_bits, LD(c->b));
    ST(c->pool_msgs, LD(c->c));
    if (c->debug)
        debug_check(f);
    atomic_fetch_add_explicit(&c->gate, 1, memory_order_release); /* even: open */
    pthread_mutex_unlock(&c->lock);
}

static void clear_words(uint64_t *a, uint64_t nwords)
{
    for (uint64_t i = 0; i < nwords; i++)
        __atomic_store_n(&a[i], 0, __ATOMIC_RELAXED);
}

/* Start a new cycle, as rbf__recycle; in an exclusive section. */
static void recycle_locked(struct rbf *f)
{
    struct rbf_conc *c = f->conc;
    uint64_t *a = LD(c->active), *fr = LD(c->frozen);
    if (fr) {
        clear_words(fr, f->nwords);
        ST(c->frozen, a);
        ST(c->active, fr);
        f->frozen = a;
        f->active = fr;
        ST(c->fb, LD(c->b));
    } else {
        clear_words(a, f->nwords);
    }
    ST(c->b, 0);
    ST(c->c, 0);
    ST(c->cycles, LD(c->cycles) + 1);
}

uint64_t rbf__conc_cycles(const struct rbf *f)
{
    return atomic_load_explicit(&f->conc->cycles, memory_order_acquire);
}

void rbf__conc_recycle(struct rbf *f)
{
    exclusive_begin(f->conc);
    recycle_locked(f);
    exclusive_end(f);
}

/* Pairs with every word once (the masks of repeated words ORed), so that
 * clear_count is exact; returns their number. */
static unsigned merge_pairs(const uint64_t *w, const uint64_t *m, unsigned n, uint64_t *mw,
                            uint64_t *mm)
{
    unsigned u = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned j = 0;
        while (j < u && mw[j] != w[i])
            j++;
        if (j == u) {
            mw[u] = w[i];
            mm[u++] = m[i];
        } else {
            mm[j] |= m[i];
        }
    }
    return u;
}

/* The slow path: the single-writer decision on exact counts.  Returns the
 * result plus RBF_RECYCLED when this insertion recycled the filter. */
static RBF_NOINLINE int insert_slow(struct rbf *f, const uint64_t *w, const uint64_t *m, unsigned n)
{
    struct rbf_conc *c = f->conc;
    uint64_t mw[RBF_MAX_HASHES], mm[RBF_MAX_HASHES];
    if (f->cfg.hashes > RBF_CONC_MERGE_MAX) { /* unmerged: a repeated bit would count twice */
        n = merge_pairs(w, m, n, mw, mm);
        w = mw;
        m = mm;
    }
    exclusive_begin(c);
    atomic_fetch_add_explicit(&c->slow, 1, memory_order_relaxed);
    uint64_t *a = LD(c->active);
    const uint64_t *fr = LD(c->frozen);
    ST(c->inserts, LD(c->inserts) + 1);
    unsigned d = clear_count(a, w, m, n);
    int res = 0, recycled = 0;
    if (d > 0) {
        int seen_frozen = fr && all_set_pairs(fr, w, m, n);
        uint64_t b = LD(c->b), cc = LD(c->c);
        if (b + d > c->limit_bits) { /* sigma would be passed: recycle instead */
            recycle_locked(f);
            recycled = 1;
            if (f->cfg.recycle == RBF_RETAINING) {
                ST(c->b, or_pairs(LD(c->active), w, m, n));
                ST(c->c, 1);
            }
        } else {
            or_pairs(a, w, m, n);
            ST(c->b, b + d);
            ST(c->c, cc + 1);
            if (cc + 1 >= f->limit_msgs) { /* the N-th */
                recycle_locked(f);
                recycled = 1;
            }
        }
        res = !seen_frozen;
        if (res)
            ST(c->reported_new, LD(c->reported_new) + 1);
    }
    exclusive_end(f);
    return res | recycled << 1;
}

/* Take `need` of a budget (what the slot has plus a chunk) from a pool that
 * may not pass `limit`; 0 if the pool cannot give it. */
static RBF_NOINLINE int refill(_Atomic uint64_t *pool, uint64_t limit, uint64_t *have,
                               uint64_t need, uint64_t chunk)
{
    uint64_t want = need - *have;
    uint64_t p = atomic_load_explicit(pool, memory_order_relaxed);
    for (;;) {
        if (p > limit || limit - p < want)
            return 0;
        uint64_t extra = (limit - p - want) / 16;
        if (extra > chunk)
            extra = chunk;
        if (atomic_compare_exchange_weak_explicit(pool, &p, p + want + extra,
                                                  memory_order_relaxed, memory_order_relaxed)) {
            *have += want + extra;
            return 1;
        }
    }
}

/* ---- insert and membership */

/* The fast path when the slot holds budget for every bit of the message
 * (`most` = the bits of its masks, an upper bound of the bits it sets):
 * each word is tested and, only where a bit is clear, fetch-ORed right
 * away, so a line is held the shortest time between its read and its
 * write (another thread taking it between the two costs a second trip) and
 * a message already there writes nothing.  Returns the bits newly set. */
static inline unsigned test_or_pairs(uint64_t *a, const uint64_t *w, const uint64_t *m, unsigned n)
{
    unsigned d = 0;
    for (unsigned i = 0; i < n; i++)
        if (m[i] & ~word_load(&a[w[i]]))
            d += or_word(&a[w[i]], m[i]);
    return d;
}

/* Returns 1 (reported new) or 0, plus RBF_RECYCLED when this insertion
 * recycled the filter (only the slow path does). */
static int insert_pairs(struct rbf *f, const uint64_t *w, const uint64_t *m, unsigned n)
{
    struct rbf_conc *c = f->conc;
    /* The lines are requested before the slot is claimed, so that their
     * trips overlap the claim; a recycle in between only makes the hint
     * stale (the words are read again below, from the active array). */
    const uint64_t *hint = LD(c->active);
    for (unsigned i = 0; i < n; i++)
        prefetch_write(&hint[w[i]]);
    unsigned most = 0;
    for (unsigned i = 0; i < n; i++)
        most += pop(m[i]);
    conc_slot *s = claim(c);
    uint64_t *a = LD(c->active);
    const int bounded_bits = c->limit_bits != UINT64_MAX;
    const int bounded_msgs = c->limit_msgs1 != UINT64_MAX;
    if (RBF_UNLIKELY((bounded_bits && s->have_bits < most) || (bounded_msgs && s->have_msgs == 0))) {
        /* Short of budget: count the clear bits first, and take only what
         * they need (near the threshold this is what the pool can give). */
        unsigned dest = clear_count(a, w, m, n);
        if (dest == 0) { /* every bit set: reported seen */
            bump(&s->inserts, 1, memory_order_relaxed);
            release(s);
            return 0;
        }
        if ((bounded_bits && s->have_bits < dest &&
             !refill(&c->pool_bits, c->limit_bits, &s->have_bits, dest, RBF_CONC_CHUNK_BITS)) ||
            (bounded_msgs && s->have_msgs == 0 &&
             !refill(&c->pool_msgs, c->limit_msgs1, &s->have_msgs, 1, RBF_CONC_CHUNK_MSGS))) {
            release(s);
            return insert_slow(f, w, m, n);
        }
        /* Now have_bits >= dest >= the bits this message will set: bits
         * only go from 0 to 1 while the slot is held. */
    }
    const uint64_t *fr = LD(c->frozen);
    int seen_frozen = fr && all_set_pairs(fr, w, m, n);
    unsigned d = test_or_pairs(a, w, m, n);
    bump(&s->inserts, 1, memory_order_relaxed);
    if (d == 0) { /* already there, or another thread set the bits meanwhile: seen */
        release(s);
        return 0;
    }
    if (bounded_bits)
        s->have_bits -= d;
    if (bounded_msgs)
        s->have_msgs--;
    bump(&s->bits, d, memory_order_relaxed);
    bump(&s->msgs, 1, memory_order_relaxed);
    if (!seen_frozen)
        bump(&s->reported_new, 1, memory_order_release);
    release(s);
    return !seen_frozen;
}

int rbf__conc_insert_hash(struct rbf *f, uint64_t hash)
{
    uint64_t w[RBF_MAX_HASHES], m[RBF_MAX_HASHES];
    unsigned n = hash_pairs(f, hash, w, m);
    return insert_pairs(f, w, m, n) & 1;
}

int rbf__conc_insert_positions(struct rbf *f, const uint64_t *pos)
{
    uint64_t w[RBF_MAX_HASHES], m[RBF_MAX_HASHES];
    unsigned n = flat_pairs(f, pos, w, m);
    return insert_pairs(f, w, m, n);
}

static int contains_pairs(const struct rbf_conc *c, const uint64_t *w, const uint64_t *m,
                          unsigned n)
{
    for (;;) {
        uint64_t g = atomic_load_explicit(&c->gate, memory_order_acquire);
        if (RBF_UNLIKELY(g & 1)) {
            wait_open(c);
            continue;
        }
        const uint64_t *a = LD(c->active), *fr = LD(c->frozen);
        int seen = all_set_pairs(a, w, m, n) || (fr && all_set_pairs(fr, w, m, n));
        atomic_thread_fence(memory_order_acquire);
        if (RBF_LIKELY(atomic_load_explicit(&c->gate, memory_order_relaxed) == g))
            return seen;
    }
}

int rbf__conc_contains_hash(const struct rbf *f, uint64_t hash)
{
    uint64_t w[RBF_MAX_HASHES], m[RBF_MAX_HASHES];
    unsigned n = hash_pairs(f, hash, w, m);
    return contains_pairs(f->conc, w, m, n);
}

/* The batch calls: message by message (each insert claims its slot, so a
 * recycle never waits for a whole batch), with the words of the messages
 * up to RBF_CONC_AHEAD ahead prefetched while one is decided: each insert's
 * atomic operations keep the processor from overlapping its loads with the
 * next message's, so without the prefetches a batch would cost one memory
 * round trip per message. */
#define RBF_CONC_AHEAD 8u
#define RBF_CONC_RING 1024u /* pair entries buffered (16 KiB of stack) */

int64_t rbf__conc_batch(struct rbf *f, int insert, const uint64_t *hashes,
                        const void *const *keys, const size_t *lens, size_t n,
                        uint8_t *results)
{
    uint64_t w[RBF_CONC_RING], m[RBF_CONC_RING];
    unsigned np[RBF_CONC_AHEAD];
    const unsigned k = f->cfg.hashes;
    size_t ahead = RBF_CONC_RING / k < RBF_CONC_AHEAD ? RBF_CONC_RING / k : RBF_CONC_AHEAD;
    int64_t total = 0;
    for (size_t j = 0; j < n && j < ahead; j++)
        np[j] = hash_pairs(f, hashes ? hashes[j] : hash_key(f, keys[j], lens[j]), w + j * k,
                           m + j * k);
    for (size_t i = 0, slot = 0; i < n; i++) {
        uint64_t *sw = w + slot * k, *sm = m + slot * k;
        int res = insert ? insert_pairs(f, sw, sm, np[slot]) & 1
                         : contains_pairs(f->conc, sw, sm, np[slot]);
        if (results)
            results[i] = (uint8_t)res;
        total += res;
        size_t j = i + ahead;
        if (j < n) {
            np[slot] = hash_pairs(f, hashes ? hashes[j] : hash_key(f, keys[j], lens[j]), sw, sm);
            const uint64_t *a = LD(f->conc->active);
            for (unsigned p = 0; p < np[slot]; p++)
                __builtin_prefetch(&a[sw[p]], 1, 2); /* for writing: inserts dominate */
        }
        if (++slot == ahead)
            slot = 0;
    }
    return total;
}

/* ---- counters */

void rbf__conc_stats(const struct rbf *f, rbf_stats *out)
{
    struct rbf_conc *c = f->conc;
    for (;;) {
        uint64_t g = atomic_load_explicit(&c->gate, memory_order_acquire);
        if (g & 1) {
            wait_open(c);
            continue;
        }
        uint64_t b = LD(c->b), fb = LD(c->fb), cc = LD(c->c), cy = LD(c->cycles);
        uint64_t ins = LD(c->inserts), rn = LD(c->reported_new);
        for (unsigned i = 0; i < RBF_CONC_SLOTS; i++) {
            const conc_slot *s = &c->slots[i];
            rn += atomic_load_explicit(&s->reported_new, memory_order_acquire);
            ins += LD(s->inserts); /* after reported_new: never fewer */
            b += LD(s->bits);
            cc += LD(s->msgs);
        }
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&c->gate, memory_order_relaxed) != g)
            continue;
        out->bits_set = b;
        out->frozen_bits_set = fb;
        out->cycle_messages = cc;
        out->cycles = cy;
        out->inserts = ins;
        out->reported_new = rn;
        return;
    }
}

/* ---- saving, attach, detach, hooks */

void rbf__conc_exclusive_begin(const struct rbf *cf)
{
    struct rbf *f = (struct rbf *)(uintptr_t)cf; /* the counters are mutable state */
    struct rbf_conc *c = f->conc;
    exclusive_begin(c);
    f->b = LD(c->b);
    f->fb = LD(c->fb);
    f->c = LD(c->c);
    f->cycles = LD(c->cycles);
    f->inserts = LD(c->inserts);
    f->reported_new = LD(c->reported_new);
}

void rbf__conc_exclusive_end(const struct rbf *f)
{
    exclusive_end(f);
}

int rbf__conc_attach(struct rbf *f)
{
    struct rbf_conc *c = rbf__alloc_lines(sizeof *c);
    if (!c)
        return RBF_ENOMEM;
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        rbf__free_lines(c, sizeof *c);
        return RBF_ENOMEM;
    }
    atomic_init(&c->gate, 0);
    atomic_init(&c->active, f->active);
    atomic_init(&c->frozen, f->frozen);
    c->limit_bits = f->limit_bits;
    c->limit_msgs1 = f->limit_msgs == UINT64_MAX ? UINT64_MAX : f->limit_msgs - 1;
    c->vec = 0; /* rbf__conc_use_vec */
    atomic_init(&c->b, f->b);
    atomic_init(&c->fb, f->fb);
    atomic_init(&c->c, f->c);
    atomic_init(&c->cycles, f->cycles);
    atomic_init(&c->inserts, f->inserts);
    atomic_init(&c->reported_new, f->reported_new);
    atomic_init(&c->pool_bits, f->b);
    atomic_init(&c->pool_msgs, f->c);
    for (unsigned i = 0; i < RBF_CONC_SLOTS; i++)
        atomic_init(&c->slots[i].busy, 0);
    f->conc = c;
    f->cfg.concurrent = 1;
    return RBF_OK;
}

void rbf__conc_detach(struct rbf *f)
{
    struct rbf_conc *c = f->conc;
    if (!c)
        return;
    settle(c);
    f->b = LD(c->b);
    f->fb = LD(c->fb);
    f->c = LD(c->c);
    f->cycles = LD(c->cycles);
    f->inserts = LD(c->inserts);
    f->reported_new = LD(c->reported_new);
    f->active = LD(c->active);
    f->frozen = LD(c->frozen);
    pthread_mutex_destroy(&c->lock);
    rbf__free_lines(c, sizeof *c);
    f->conc = NULL;
    f->cfg.concurrent = 0;
}

void rbf__conc_use_vec(struct rbf *f, int vec)
{
    f->conc->vec = (unsigned)vec;
}

void rbf__conc_set_debug(struct rbf *f, int on)
{
    if (f && f->conc)
        f->conc->debug = on;
}

uint64_t rbf__conc_violations(const struct rbf *f)
{
    return f && f->conc ? LD(f->conc->violations) : 0;
}

uint64_t rbf__conc_slow_paths(const struct rbf *f)
{
    return f && f->conc ? LD(f->conc->slow) : 0;
}
