/*
 * test_fault.c -- fault injection, as SQLite does it: through the public
 * allocator hook (rbf_set_allocator), fail the n-th allocation, for every n,
 * in every public entry point that allocates, and check that
 *   - the call returns exactly RBF_ENOMEM (no other code, no crash),
 *   - nothing is left allocated afterwards (the hook counts live blocks, so
 *     a leak fails here even without ASan or valgrind),
 *   - an output handle is NULL after a failure,
 *   - once n passes the number of allocations the call makes, it succeeds
 *     and its result equals the result of a run without any hook.
 * The last point also proves the entry point allocates through the hook at
 * all (a call that made no allocation through it fails the test).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rbf.h"
#include "rbf_model.h"
#include "rbf_sim.h"

/* ---- the failing allocator */

static atomic_long fa_count; /* allocations attempted since the reset */
static atomic_long fa_fail;  /* the attempt that fails (1-based); 0: none */
static atomic_long fa_live;  /* blocks allocated and not freed */
static atomic_long fa_failed; /* failures injected since the reset */

static void *fa_malloc(void *ctx, size_t n)
{
    (void)ctx;
    long c = atomic_fetch_add(&fa_count, 1) + 1;
    if (c == atomic_load(&fa_fail)) {
        atomic_fetch_add(&fa_failed, 1);
        return NULL;
    }
    void *p = malloc(n);
    if (p)
        atomic_fetch_add(&fa_live, 1);
    return p;
}

static void *fa_realloc(void *ctx, void *p, size_t n)
{
    (void)ctx;
    long c = atomic_fetch_add(&fa_count, 1) + 1;
    if (c == atomic_load(&fa_fail)) {
        atomic_fetch_add(&fa_failed, 1);
        return NULL;
    }
    void *q = realloc(p, n);
    if (q && !p)
        atomic_fetch_add(&fa_live, 1);
    return q;
}

static void fa_free(void *ctx, void *p)
{
    (void)ctx;
    if (p) {
        atomic_fetch_sub(&fa_live, 1);
        free(p);
    }
}

static void *fa_calloc(void *ctx, size_t n, size_t size)
{
    void *p = fa_malloc(ctx, n * size); /* the test sizes never overflow */
    if (p)
        memset(p, 0, n * size);
    return p;
}

/* Without calloc (the library zeroes), and with it (the library must not
 * assume either). */
static const rbf_allocator failing_plain = {fa_malloc, fa_realloc, fa_free, NULL, NULL, {NULL}};
static const rbf_allocator failing_calloc = {fa_malloc, fa_realloc, fa_free, NULL, fa_calloc, {NULL}};
static const rbf_allocator *failing = &failing_plain;

static void fa_reset(long fail_at)
{
    atomic_store(&fa_count, 0);
    atomic_store(&fa_fail, fail_at);
    atomic_store(&fa_live, 0);
    atomic_store(&fa_failed, 0);
}

/* One entry point under test.  run() performs the call and returns its
 * status; check() (after a success) compares the result with the reference
 * computed without a hook; release() frees whatever run() produced (also
 * after a failure: it must cope with NULL handles).  With fallback set,
 * a failed allocation may also be answered another way (an optional
 * table: the same values, found more slowly): a success after a failure
 * must then pass check() too. */
typedef struct fault_case {
    const char *name;
    int (*run)(void *st);
    void (*check)(void *st);
    void (*release)(void *st);
    void *st;
    int fallback;
} fault_case;

/* Fail allocation 1, 2, ... until the call succeeds without a failure. */
static void run_faults(const fault_case *fc)
{
    assert_int_equal(rbf_set_allocator(failing), RBF_OK);
    /* RBF_TEST_SHRINK (valgrind): every allocation point up to the 32nd,
     * then one in 31 (the run to completion, with no failure, always). */
    const char *sh = getenv("RBF_TEST_SHRINK");
    const long stride = sh && atol(sh) > 1 ? 31 : 1;
    long n, tried = 0, fell_back = 0;
    for (n = 1;; n += n < 32 ? 1 : stride) {
        tried++;
        fa_reset(n);
        int rc = fc->run(fc->st);
        if (atomic_load(&fa_failed) == 0) {
            /* n is past the last allocation: a clean success */
            if (rc != RBF_OK)
                fail_msg("%s: no failure injected at %ld, yet status %d", fc->name, n, rc);
            atomic_store(&fa_fail, 0); /* the check itself must not fail */
            fc->check(fc->st);
            fc->release(fc->st);
            if (atomic_load(&fa_live) != 0)
                fail_msg("%s: %ld blocks leaked after a success", fc->name, (long)fa_live);
            break;
        }
        if (rc == RBF_OK && fc->fallback) {
            /* answered without the failed block: the same values */
            long keep = atomic_load(&fa_fail);
            atomic_store(&fa_fail, 0);
            fc->check(fc->st);
            atomic_store(&fa_fail, keep);
            fell_back++;
        } else if (rc != RBF_ENOMEM) {
            fail_msg("%s: allocation %ld failed, status %d (%s), wanted RBF_ENOMEM", fc->name, n,
                     rc, rbf_strerror(rc));
        }
        fc->release(fc->st);
        if (atomic_load(&fa_live) != 0)
            fail_msg("%s: allocation %ld failed and %ld blocks leaked", fc->name, n,
                     (long)fa_live);
    }
    assert_int_equal(rbf_set_allocator(NULL), RBF_OK);
    /* the successful call made at least n - stride allocations */
    if (n < 2)
        fail_msg("%s: made no allocation through the hook", fc->name);
    print_message("%s: %ld allocation points failed one at a time, each cleanly%s", fc->name,
                  tried - 1, stride > 1 ? " (RBF_TEST_SHRINK: one in 31 past the 32nd)" : "");
    if (fell_back)
        print_message(" (%ld answered without the failed block, the same values)", fell_back);
    print_message("\n");
}

/* ---- filters */

static rbf_config filter_config(unsigned phases, uint64_t sigma, uint64_t messages)
{
    rbf_config c;
    rbf_config_init(&c);
    c.bits = 1 << 14;
    c.hashes = 4;
    c.sigma = sigma;
    c.messages = messages;
    c.phases = phases;
    c.seed = 42;
    return c;
}

typedef struct new_st {
    rbf_config cfg;
    rbf *f;
} new_st;

static int new_run(void *p)
{
    new_st *s = p;
    s->f = (rbf *)(uintptr_t)1; /* must be overwritten with NULL on failure */
    int rc = rbf_new(&s->cfg, &s->f);
    if (rc != RBF_OK && s->f != NULL)
        fail_msg("rbf_new failed (%d) but left a handle", rc);
    return rc;
}

static void new_check(void *p)
{
    new_st *s = p;
    assert_non_null(s->f);
    assert_int_equal(rbf_insert(s->f, "a", 1), 1);
    assert_int_equal(rbf_insert(s->f, "a", 1), 0);
}

static void new_release(void *p)
{
    new_st *s = p;
    rbf_free(s->f);
    s->f = NULL;
}

static void test_fault_new(void **state)
{
    (void)state;
    failing = &failing_calloc;
    new_st s0 = {filter_config(2, 5000, 0), NULL};
    fault_case c0 = {"rbf_new two-phase, hook with calloc", new_run, new_check, new_release, &s0, 0};
    run_faults(&c0);
    failing = &failing_plain;
    new_st s1 = {filter_config(1, 5000, 0), NULL};
    fault_case c1 = {"rbf_new one-phase", new_run, new_check, new_release, &s1, 0};
    run_faults(&c1);
    new_st s2 = {filter_config(2, 0, 100), NULL};
    fault_case c2 = {"rbf_new two-phase", new_run, new_check, new_release, &s2, 0};
    run_faults(&c2);
    new_st s3 = {filter_config(2, 2000, 0), NULL};
    s3.cfg.concurrent = 1; /* the per-thread slots are one more allocation */
    fault_case c3 = {"rbf_new concurrent two-phase", new_run, new_check, new_release, &s3, 0};
    run_faults(&c3);
}

/* A saved filter, its image, and its answers on a probe set. */
typedef struct load_st {
    void *image;
    size_t len;
    char path[4096];
    uint8_t want[256];
    rbf *f;
} load_st;

static void probe(const rbf *f, uint8_t *out)
{
    char key[16];
    for (unsigned i = 0; i < 256; i++) {
        int n = snprintf(key, sizeof key, "k%u", i);
        out[i] = (uint8_t)rbf_contains(f, key, (size_t)n);
    }
}

static void load_prepare(load_st *s, unsigned phases)
{
    rbf_config c = filter_config(phases, phases == 1 ? 3000 : 0, phases == 1 ? 0 : 300);
    rbf *f;
    assert_int_equal(rbf_new(&c, &f), RBF_OK);
    char key[16];
    for (unsigned i = 0; i < 700; i += 2) {
        int n = snprintf(key, sizeof key, "k%u", i);
        assert_true(rbf_insert(f, key, (size_t)n) >= 0);
    }
    probe(f, s->want);
    uint64_t size;
    assert_int_equal(rbf_save_size(f, &size), RBF_OK);
    s->len = (size_t)size;
    s->image = malloc(s->len);
    assert_non_null(s->image);
    assert_int_equal(rbf_save_buffer(f, s->image, s->len), RBF_OK);
    const char *t = getenv("TMPDIR");
    snprintf(s->path, sizeof s->path, "%s/rbf-fault-%ld-%u.rbf", t && *t ? t : "/tmp",
             (long)getpid(), phases);
    assert_int_equal(rbf_save(f, s->path), RBF_OK);
    rbf_free(f);
    s->f = NULL;
}

static int load_buffer_run(void *p)
{
    load_st *s = p;
    return rbf_load_buffer(s->image, s->len, &s->f);
}

static int load_file_run(void *p)
{
    load_st *s = p;
    return rbf_load(s->path, &s->f);
}

static void load_check(void *p)
{
    load_st *s = p;
    uint8_t got[256];
    probe(s->f, got);
    assert_memory_equal(got, s->want, sizeof got);
}

static void load_release(void *p)
{
    load_st *s = p;
    rbf_free(s->f);
    s->f = NULL;
}

static void test_fault_load(void **state)
{
    (void)state;
    for (unsigned phases = 1; phases <= 2; phases++) {
        load_st s;
        memset(&s, 0, sizeof s);
        load_prepare(&s, phases);
        fault_case cb = {"rbf_load_buffer", load_buffer_run, load_check, load_release, &s, 0};
        run_faults(&cb);
        fault_case cf = {"rbf_load", load_file_run, load_check, load_release, &s, 0};
        run_faults(&cf);
        unlink(s.path);
        free(s.image);
    }
}

typedef struct save_st {
    rbf *f;
    char path[4096];
} save_st;

static int save_run(void *p)
{
    save_st *s = p;
    return rbf_save(s->f, s->path);
}

static void save_check(void *p)
{
    save_st *s = p;
    rbf *g;
    assert_int_equal(rbf_load(s->path, &g), RBF_OK);
    assert_int_equal(rbf_contains(g, "x", 1), 1);
    rbf_free(g);
}

static void no_release(void *p) { (void)p; }

static void test_fault_save(void **state)
{
    (void)state;
    save_st s;
    rbf_config c = filter_config(1, 3000, 0);
    assert_int_equal(rbf_new(&c, &s.f), RBF_OK); /* made without the hook */
    assert_int_equal(rbf_insert(s.f, "x", 1), 1);
    const char *t = getenv("TMPDIR");
    snprintf(s.path, sizeof s.path, "%s/rbf-fault-save-%ld.rbf", t && *t ? t : "/tmp",
             (long)getpid());
    fault_case fc = {"rbf_save", save_run, save_check, no_release, &s, 0};
    run_faults(&fc);
    unlink(s.path);
    rbf_free(s.f);
}

/* ---- models */

typedef struct curve_st {
    int which; /* 0 sigma curve, 1 two-phase curve, 2 n-bounded curve, 3 sigma point, 4 n point */
    double ref[64];
    double got[64];
} curve_st;

#define CURVE_M 600u
#define CURVE_SMAX 40u

static int curve_compute(int which, double *out)
{
    rbf_model_params p;
    rbf_model_params_init(&p);
    p.bits = CURVE_M;
    p.hashes = 3;
    int rc = RBF_OK;
    switch (which) {
    case 0: {
        double fp[CURVE_SMAX + 1], en[CURVE_SMAX + 1];
        rc = rbf_model_sigma_curve(&p, CURVE_SMAX, fp, en);
        if (rc == RBF_OK)
            for (unsigned i = 0; i < 32; i++)
                out[i] = fp[i + 8] + en[i + 8];
        break;
    }
    case 1: {
        rbf_model_two_phase_result r[CURVE_SMAX + 1];
        rc = rbf_model_two_phase_curve(&p, CURVE_SMAX, r);
        if (rc == RBF_OK)
            for (unsigned i = 0; i < 32; i++)
                out[i] = r[i + 8].fp + r[i + 8].expected_messages;
        break;
    }
    case 2: {
        rbf_model_n_result r[32];
        rc = rbf_model_nbounded_curve(&p, 32, r);
        if (rc == RBF_OK)
            for (unsigned i = 0; i < 32; i++)
                out[i] = r[i].exact_real + r[i].exact_oracle;
        break;
    }
    case 3: {
        rbf_model_sigma_result r;
        p.method = RBF_MODEL_PAPER;
        rc = rbf_model_sigma(&p, 30, &r);
        if (rc == RBF_OK)
            out[0] = r.fp;
        break;
    }
    case 4: {
        rbf_model_n_result r;
        rc = rbf_model_nbounded(&p, 50, &r);
        if (rc == RBF_OK)
            out[0] = r.exact_real;
        break;
    }
    default: { /* 2^30 bits: the fast exact N-bounded rates (nexact.c) */
        rbf_model_n_result r;
        p.bits = UINT64_C(1) << 30;
        p.hashes = 7;
        rc = rbf_model_nbounded(&p, 1000000, &r);
        if (rc == RBF_OK)
            out[0] = r.exact_real + r.exact_oracle + r.exact_worst;
        break;
    }
    }
    return rc;
}

static int curve_run(void *p)
{
    curve_st *s = p;
    return curve_compute(s->which, s->got);
}

static void curve_check(void *p)
{
    curve_st *s = p;
    unsigned n = s->which >= 3 ? 1 : 32;
    for (unsigned i = 0; i < n; i++)
        assert_true(s->got[i] == s->ref[i]);
}

static void test_fault_models(void **state)
{
    (void)state;
    static const char *const names[] = {"rbf_model_sigma_curve", "rbf_model_two_phase_curve",
                                        "rbf_model_nbounded_curve", "rbf_model_sigma (paper)",
                                        "rbf_model_nbounded", "rbf_model_nbounded (fast, 2^30 bits)"};
    for (int w = 0; w < 6; w++) {
        curve_st s;
        memset(&s, 0, sizeof s);
        s.which = w;
        assert_int_equal(curve_compute(w, s.ref), RBF_OK);
        fault_case fc = {names[w], curve_run, curve_check, no_release, &s, 0};
        run_faults(&fc);
    }
}

typedef struct plan_st {
    int which; /* 0 memory, 1 messages, 2 messages two-phase */
    rbf_plan ref, got;
    uint64_t ref_bits, got_bits;
} plan_st;

static int plan_compute(int which, rbf_plan *out, uint64_t *bits)
{
    rbf_plan_options o;
    rbf_plan_options_init(&o);
    o.max_hashes = 8;
    switch (which) {
    case 0: *bits = 4000; return rbf_plan_memory(4000, 0.01, &o, out);
    case 1: return rbf_plan_messages(300, 0.01, &o, bits, out);
    default: return rbf_plan_messages_two_phase(300, 0.01, &o, bits, out);
    }
}

static int plan_run(void *p)
{
    plan_st *s = p;
    return plan_compute(s->which, &s->got, &s->got_bits);
}

static void plan_check(void *p)
{
    plan_st *s = p;
    assert_int_equal(s->got_bits, s->ref_bits);
    assert_int_equal(s->got.sigma_bounded.hashes, s->ref.sigma_bounded.hashes);
    assert_int_equal(s->got.sigma_bounded.sigma, s->ref.sigma_bounded.sigma);
    assert_true(s->got.sigma_bounded.expected_messages == s->ref.sigma_bounded.expected_messages);
    assert_int_equal(s->got.average_n.messages, s->ref.average_n.messages);
    assert_int_equal(s->got.two_phase.sigma, s->ref.two_phase.sigma);
}

static void test_fault_plan(void **state)
{
    (void)state;
    static const char *const names[] = {"rbf_plan_memory", "rbf_plan_messages",
                                        "rbf_plan_messages_two_phase"};
    for (int w = 0; w < 3; w++) {
        plan_st s;
        memset(&s, 0, sizeof s);
        s.which = w;
        assert_int_equal(plan_compute(w, &s.ref, &s.ref_bits), RBF_OK);
        fault_case fc = {names[w], plan_run, plan_check, no_release, &s, 0};
        run_faults(&fc);
    }
}


/* ---- the models added in 2.0: points, blocked layout, cycles, false
 * negatives, planning for both errors.  Each case: a value computed without
 * a hook is the reference. */

typedef struct more_st {
    int which;
    double ref[4], got[4];
} more_st;

static int more_compute(int which, double *out)
{
    rbf_model_params p;
    rbf_model_params_init(&p);
    p.bits = 2048;
    p.hashes = 3;
    int rc;
    switch (which) {
    case 0: {
        const uint64_t sig[3] = {100, 700, 1500};
        rbf_model_sigma_result r[3];
        p.method = RBF_MODEL_ASYMPTOTIC;
        rc = rbf_model_sigma_points(&p, sig, 3, r);
        if (rc == RBF_OK)
            out[0] = r[0].fp + r[1].fp + r[2].expected_messages;
        return rc;
    }
    case 1: {
        rbf_model_blocked_sigma_result r;
        p.layout = RBF_MODEL_LAYOUT_BLOCKED;
        rc = rbf_model_blocked_sigma(&p, 700, &r);
        if (rc == RBF_OK)
            out[0] = r.fp + r.expected_messages;
        return rc;
    }
    case 2: {
        rbf_model_blocked_n_result r;
        p.layout = RBF_MODEL_LAYOUT_BLOCKED;
        rc = rbf_model_blocked_nbounded(&p, 200, &r);
        if (rc == RBF_OK)
            out[0] = r.exact_real + r.exact_oracle;
        return rc;
    }
    case 3: {
        rbf_model_cycle_spec cs;
        rbf_model_cycle_spec_init(&cs);
        cs.sigma = 600;
        rbf_model_cycles *c = NULL;
        rc = rbf_model_cycles_new(&p, &cs, &c);
        if (rc == RBF_OK) {
            out[0] = rbf_model_cycles_mean(c) + rbf_model_forget(c, 100, RBF_MODEL_FROM_TICK, 0);
            rbf_model_cycles_free(c);
        } else if (c) {
            fail_msg("rbf_model_cycles_new failed (%d) but left a handle", rc);
        }
        return rc;
    }
    case 4:
    case 5:
    case 6: {
        /* a uniform workload (4), or gaps given (a trace's), in order (5)
         * or not (6, sorted by the model): the survival tables' blocks and
         * the sort's copy */
        enum { NG = 400 };
        uint64_t g[NG];
        double pr[NG];
        for (unsigned i = 0; i < NG; i++) {
            unsigned j = which == 6 ? (i * 7u) % NG : i; /* 7 and 400: a permutation */
            g[i] = 1 + j * 3u;
            pr[i] = 1.0 / (1.0 + j);
        }
        rbf_model_cycle_spec cs;
        rbf_model_cycle_spec_init(&cs);
        cs.sigma = 600;
        rbf_model_workload w;
        memset(&w, 0, sizeof w);
        if (which == 4) {
            w.kind = RBF_MODEL_WL_UNIFORM;
            w.pool = 500;
        } else {
            w.kind = RBF_WORKLOAD_TRACE;
            w.new_fraction = 0.05;
            w.gaps = g;
            w.gap_prob = pr;
            w.gap_count = NG;
        }
        rbf_model_fn_result r;
        rc = rbf_model_fn(&p, &cs, &w, &r);
        if (rc == RBF_OK)
            out[0] = which == 4 ? r.fn : r.fn + r.forgotten;
        return rc;
    }
    case 7: {
        /* the non-colliding hash-by-hash chain (its per-hash factor rows) */
        rbf_model_n_result r;
        p.hashing = RBF_NON_COLLIDING;
        p.method = RBF_MODEL_EXACT;
        rc = rbf_model_nbounded(&p, 300, &r);
        if (rc == RBF_OK)
            out[0] = r.exact_real + r.exact_oracle + r.exact_worst;
        return rc;
    }
    default: {
        rbf_plan_options o;
        rbf_plan_options_init(&o);
        o.max_hashes = 6;
        rbf_plan_remember_result r;
        uint64_t least = 0;
        rc = rbf_plan_remember(2048, 0.01, 30, 0.05, &o, &r, &least);
        if (rc == RBF_OK)
            out[0] = (double)r.sigma + (double)r.phases + r.miss;
        return rc;
    }
    }
}

static int more_run(void *p)
{
    more_st *s = p;
    return more_compute(s->which, s->got);
}

static void more_check(void *p)
{
    more_st *s = p;
    assert_true(s->got[0] == s->ref[0]);
}

static void test_fault_models_2(void **state)
{
    (void)state;
    static const char *const names[] = {"rbf_model_sigma_points", "rbf_model_blocked_sigma",
                                        "rbf_model_blocked_nbounded", "rbf_model_cycles_new",
                                        "rbf_model_fn", "rbf_model_fn (gaps in order)",
                                        "rbf_model_fn (gaps out of order)",
                                        "rbf_model_nbounded (non-colliding, exact)",
                                        "rbf_plan_remember"};
    for (int w = 0; w < 9; w++) {
        more_st s;
        memset(&s, 0, sizeof s);
        s.which = w;
        assert_int_equal(more_compute(w, s.ref), RBF_OK);
        /* the gaps' dense survival tables are optional (5, 6) */
        fault_case fc = {names[w], more_run, more_check, no_release, &s, w == 5 || w == 6};
        run_faults(&fc);
    }
}

/* ---- simulator */

typedef struct sim_st {
    rbf_sim_config cfg;
    rbf_sim_result ref, got;
} sim_st;

static int sim_run(void *p)
{
    sim_st *s = p;
    memset(&s->got, 0, sizeof s->got);
    return rbf_sim_run(&s->cfg, &s->got);
}

static void sim_check(void *p)
{
    sim_st *s = p;
    assert_int_equal(s->got.total.arrivals, s->ref.total.arrivals);
    assert_int_equal(s->got.total.fp_first, s->ref.total.fp_first);
    assert_int_equal(s->got.total.cycles, s->ref.total.cycles);
    assert_true(s->got.fp.mean == s->ref.fp.mean);
}

static void sim_release(void *p)
{
    sim_st *s = p;
    rbf_sim_result_free(&s->got);
}

static void test_fault_sim(void **state)
{
    (void)state;
    static const char *const workloads[] = {"uniform:300", "zipf:300:1.1", "fading:0.3:50"};
    for (int w = 0; w < 3; w++) {
        sim_st s;
        memset(&s, 0, sizeof s);
        rbf_sim_config_init(&s.cfg);
        s.cfg.filter.bits = 1000;
        s.cfg.filter.hashes = 3;
        s.cfg.filter.sigma = 300;
        s.cfg.arrivals = 2000;
        s.cfg.epochs = 2;
        s.cfg.threads = 1; /* one worker: the n-th allocation is the same one every run */
        s.cfg.seed = 7;
        const char *why = NULL;
        assert_int_equal(rbf_sim_workload_parse(workloads[w], &s.cfg.workload, &why), RBF_OK);
        assert_int_equal(rbf_sim_run(&s.cfg, &s.ref), RBF_OK);
        fault_case fc = {workloads[w], sim_run, sim_check, sim_release, &s, 0};
        run_faults(&fc);
        rbf_sim_result_free(&s.ref);
    }
}

/* ---- trace reading: the ids of every line, the table and the arrays
 * growing (3000 lines, 1500 distinct, one line longer than the read
 * buffer), with each allocation failing in turn */

typedef struct trace_st {
    char path[64];
    uint32_t *ref, *ids;
    uint64_t nref, n;
    uint32_t dref, d;
} trace_st;

static int trace_run(void *p)
{
    trace_st *t = p;
    return rbf_sim_trace_read(t->path, &t->ids, &t->n, &t->d);
}

static void trace_check(void *p)
{
    trace_st *t = p;
    assert_int_equal(t->n, t->nref);
    assert_int_equal(t->d, t->dref);
    assert_memory_equal(t->ids, t->ref, t->n * sizeof *t->ids);
}

static void trace_release(void *p)
{
    trace_st *t = p;
    free(t->ids); /* plain malloc, by the API's contract */
    t->ids = NULL;
}

static void test_fault_trace_read(void **state)
{
    (void)state;
    trace_st t;
    memset(&t, 0, sizeof t);
    strcpy(t.path, "/tmp/rbf_fault_trace_XXXXXX");
    int fd = mkstemp(t.path);
    assert_true(fd >= 0);
    FILE *fp = fdopen(fd, "w");
    assert_non_null(fp);
    for (int i = 0; i < 3000; i++) {
        if (i == 1000) /* one line of 70000 bytes: it spans two reads */
            for (int j = 0; j < 70000; j++)
                fputc('x', fp);
        fprintf(fp, "w%d\n", i % 1500);
    }
    fputs("no newline at the end", fp);
    assert_int_equal(fclose(fp), 0);
    assert_int_equal(rbf_sim_trace_read(t.path, &t.ref, &t.nref, &t.dref), RBF_OK);
    assert_int_equal(t.nref, 3001);
    assert_int_equal(t.dref, 1502);
    assert_int_equal(t.ref[0], 0);
    assert_int_equal(t.ref[1500], 0);  /* "w0" again */
    assert_int_equal(t.ref[1000], 1000); /* "xx...x" "w1000": the long line */
    assert_int_equal(t.ref[2500], 1500); /* "w1000" itself, new there */
    assert_int_equal(t.ref[3000], 1501);
    fault_case fc = {"rbf_sim_trace_read", trace_run, trace_check, trace_release, &t, 0};
    run_faults(&fc);
    free(t.ref);
    unlink(t.path);
}

static void test_allocator_arguments(void **state)
{
    (void)state;
    rbf_allocator a = failing_plain;
    a.free = NULL;
    assert_int_equal(rbf_set_allocator(&a), RBF_EINVAL);
    a = failing_plain;
    a.malloc = NULL;
    assert_int_equal(rbf_set_allocator(&a), RBF_EINVAL);
    a = failing_plain;
    a.reserved_[2] = &a;
    assert_int_equal(rbf_set_allocator(&a), RBF_EINVAL);
    /* the refused hook was not installed: a filter still comes from libc */
    fa_reset(1);
    rbf_config c = filter_config(1, 100, 0);
    rbf *f;
    assert_int_equal(rbf_new(&c, &f), RBF_OK);
    assert_int_equal(atomic_load(&fa_count), 0);
    rbf_free(f);
    assert_int_equal(rbf_set_allocator(NULL), RBF_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allocator_arguments), cmocka_unit_test(test_fault_new),
        cmocka_unit_test(test_fault_load),          cmocka_unit_test(test_fault_save),
        cmocka_unit_test(test_fault_models),        cmocka_unit_test(test_fault_plan), cmocka_unit_test(test_fault_models_2),
        cmocka_unit_test(test_fault_sim), cmocka_unit_test(test_fault_trace_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
