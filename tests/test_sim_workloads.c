/*
 * test_sim_workloads.c -- the simulator's samplers and workloads: spec
 * parsing, the generator's streams, the alias table and Zipf (chi-square),
 * the fading workload's birth fraction and age law (chi-square), trace
 * loading, epochs splitting a trace, and determinism across thread counts.
 *
 * Statistical checks use fixed seeds and reject at the 99.9% level: a
 * correct sampler fails one of them with probability 1e-3 per check for a
 * random seed; with the seeds fixed, the outcome is reproducible.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <gsl/gsl_cdf.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "rbf_sim.h"
#include "sim/sim_internal.h"

/* Pearson chi-square of counts against expected counts; cells with
 * expectation below 5 are pooled into one. Returns 1 if accepted at 99.9%. */
static int chi_square_ok(const uint64_t *obs, const double *expct, size_t n, const char *what)
{
    double chi = 0, pool_o = 0, pool_e = 0;
    size_t cells = 0;
    for (size_t i = 0; i < n; i++) {
        if (expct[i] < 5) {
            pool_o += (double)obs[i];
            pool_e += expct[i];
            continue;
        }
        double d = (double)obs[i] - expct[i];
        chi += d * d / expct[i];
        cells++;
    }
    if (pool_e >= 5) {
        double d = pool_o - pool_e;
        chi += d * d / pool_e;
        cells++;
    }
    double crit = gsl_cdf_chisq_Qinv(1e-3, (double)(cells - 1));
    if (chi > crit)
        print_error("%s: chi-square %.1f > %.1f (%zu cells)\n", what, chi, crit, cells);
    return chi <= crit;
}

static void parse_specs(void **state)
{
    (void)state;
    rbf_sim_workload w;
    const char *why;
    assert_int_equal(rbf_sim_workload_parse("uniform:1000", &w, &why), RBF_OK);
    assert_int_equal(w.kind, RBF_SIM_UNIFORM);
    assert_int_equal(w.pool, 1000);
    assert_int_equal(rbf_sim_workload_parse("zipf:50:1.25", &w, &why), RBF_OK);
    assert_int_equal(w.kind, RBF_SIM_ZIPF);
    assert_int_equal(w.pool, 50);
    assert_true(w.exponent == 1.25);
    assert_int_equal(rbf_sim_workload_parse("fading:0.1:500", &w, &why), RBF_OK);
    assert_int_equal(w.kind, RBF_SIM_FADING);
    assert_true(w.new_fraction == 0.1 && w.lifetime == 500);
    const char *spec = "trace:dir/a:b.txt";
    assert_int_equal(rbf_sim_workload_parse(spec, &w, &why), RBF_OK);
    assert_int_equal(w.kind, RBF_SIM_TRACE);
    assert_ptr_equal(w.trace_path, spec + 6); /* points into the spec, colons allowed */
    const char *bad[] = {"", "uniform", "uniform:", "uniform:0", "uniform:-5", "uniform:1k",
                         "uniform:10x", "zipf:10", "zipf:10:", "zipf:0:1", "zipf:10:-1",
                         "zipf:10:abc", "fading:0:10", "fading:1.5:10", "fading:0.5:0",
                         "fading:0.5", "trace:", "trace", "normal:5", "Uniform:5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why = NULL;
        if (rbf_sim_workload_parse(bad[i], &w, &why) != RBF_EINVAL)
            print_error("accepted '%s'\n", bad[i]);
        assert_int_equal(rbf_sim_workload_parse(bad[i], &w, &why), RBF_EINVAL);
        assert_non_null(why);
        assert_null(strchr(why, '\n'));
    }
}

static void rng_streams(void **state)
{
    (void)state;
    sim_rng a, b, c;
    rbf__sim_rng_seed(&a, 1, 0);
    rbf__sim_rng_seed(&b, 1, 0);
    rbf__sim_rng_seed(&c, 1, 1);
    int diff = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t x = sim_rng_next(&a), y = sim_rng_next(&b), z = sim_rng_next(&c);
        assert_true(x == y);
        diff += x != z;
    }
    assert_int_equal(diff, 1000);
    /* Uniformity of reduce(next, 10) and of the doubles' deciles. */
    uint64_t cnt[10] = {0}, dec[10] = {0};
    double e[10];
    const int n = 1000000;
    for (int i = 0; i < n; i++) {
        cnt[sim_reduce(sim_rng_next(&a), 10)]++;
        double u = sim_rng_double(&a);
        assert_true(u >= 0 && u < 1);
        dec[(int)(u * 10)]++;
    }
    for (int i = 0; i < 10; i++)
        e[i] = n / 10.0;
    assert_true(chi_square_ok(cnt, e, 10, "reduce"));
    assert_true(chi_square_ok(dec, e, 10, "double"));
}

static void alias_table(void **state)
{
    (void)state;
    /* Arbitrary weights with zeros and one dominant cell. */
    const double w[] = {0, 1, 2, 3, 0, 5, 8, 13, 21, 34, 55, 0.5, 0.25, 200};
    const size_t n = sizeof w / sizeof w[0];
    sim_alias a;
    assert_int_equal(rbf__sim_alias_init(&a, w, n), RBF_OK);
    sim_rng r;
    rbf__sim_rng_seed(&r, 7, 0);
    uint64_t cnt[sizeof w / sizeof w[0]] = {0};
    double e[sizeof w / sizeof w[0]], sum = 0;
    const uint64_t draws = 2000000;
    for (size_t i = 0; i < n; i++)
        sum += w[i];
    for (uint64_t t = 0; t < draws; t++)
        cnt[sim_alias_draw(&a, sim_rng_next(&r))]++;
    for (size_t i = 0; i < n; i++)
        e[i] = (double)draws * w[i] / sum;
    assert_int_equal(cnt[0], 0);
    assert_int_equal(cnt[4], 0);
    assert_true(chi_square_ok(cnt, e, n, "alias"));
    rbf__sim_alias_free(&a);
    rbf__sim_alias_free(NULL);
    /* Bad inputs. */
    const double neg[] = {1, -1};
    const double zero[] = {0, 0};
    assert_int_equal(rbf__sim_alias_init(&a, neg, 2), RBF_EINVAL);
    assert_int_equal(rbf__sim_alias_init(&a, zero, 2), RBF_EINVAL);
    assert_int_equal(rbf__sim_alias_init(&a, w, 0), RBF_EINVAL);
}

static void zipf_frequencies(void **state)
{
    (void)state;
    const double exps[] = {0.0, 0.8, 1.0, 1.5};
    for (size_t j = 0; j < sizeof exps / sizeof exps[0]; j++) {
        const uint64_t n = 200, draws = 2000000;
        sim_alias a;
        assert_int_equal(rbf__sim_zipf_init(&a, n, exps[j]), RBF_OK);
        sim_rng r;
        rbf__sim_rng_seed(&r, 11, j);
        uint64_t cnt[200] = {0};
        double e[200], h = 0;
        for (uint64_t t = 0; t < draws; t++)
            cnt[sim_alias_draw(&a, sim_rng_next(&r))]++;
        /* Expected r^-s / H computed here with pow, independently. */
        for (uint64_t i = 0; i < n; i++)
            h += pow((double)(i + 1), -exps[j]);
        for (uint64_t i = 0; i < n; i++)
            e[i] = (double)draws * pow((double)(i + 1), -exps[j]) / h;
        assert_true(chi_square_ok(cnt, e, n, "zipf"));
        rbf__sim_alias_free(&a);
    }
}

/* Fading: births with probability R; repeats pick age a (births before the
 * newest) with P ~ p^a, p = exp(-1/(L R)), truncated to the ring. */
static void fading_law(void **state)
{
    (void)state;
    const double R = 0.2, L = 50; /* L R = 10 births: the ring holds 512 */
    sim_fading fw;
    assert_int_equal(rbf__sim_fading_init(&fw, R, L), RBF_OK);
    assert_int_equal(fw.window, 512);
    sim_rng r;
    rbf__sim_rng_seed(&r, 3, 0);
    const uint64_t n = 2000000, warm = 10000;
    uint64_t births = 0, repeats = 0, ages[64] = {0};
    for (uint64_t t = 0; t < warm + n; t++) {
        int birth;
        uint64_t idx = sim_fading_next(&fw, &r, &birth);
        if (t == 0)
            assert_int_equal(birth, 1); /* the first arrival is always new */
        assert_true(idx < fw.births);
        if (t < warm)
            continue;
        if (birth) {
            births++;
            assert_int_equal(idx, fw.births - 1);
            continue;
        }
        repeats++;
        uint64_t age = fw.births - 1 - idx;
        assert_true(age < fw.window);
        ages[age < 63 ? age : 63]++;
    }
    /* Births: binomial(n, R) within 3.3 standard deviations (99.9%). */
    double sd = sqrt((double)n * R * (1 - R));
    assert_true(fabs((double)births - (double)n * R) < 3.3 * sd);
    /* Ages: geometric with ratio p (the ring's truncation at 512 is e^-51). */
    double p = exp(-1 / (L * R)), e[64];
    for (int a = 0; a < 63; a++)
        e[a] = (double)repeats * (1 - p) * pow(p, a);
    e[63] = (double)repeats * pow(p, 63);
    assert_true(chi_square_ok(ages, e, 64, "fading ages"));
    /* Bad parameters; R = 1 makes every arrival a birth. */
    assert_int_equal(rbf__sim_fading_init(&fw, 0, 10), RBF_EINVAL);
    assert_int_equal(rbf__sim_fading_init(&fw, 1.5, 10), RBF_EINVAL);
    assert_int_equal(rbf__sim_fading_init(&fw, 0.5, 0), RBF_EINVAL);
    assert_int_equal(rbf__sim_fading_init(&fw, 1, 10), RBF_OK);
    for (int t = 0; t < 100; t++) {
        int birth;
        assert_int_equal(sim_fading_next(&fw, &r, &birth), (uint64_t)t);
        assert_int_equal(birth, 1);
    }
}

static char *temp_file(const char *content, size_t len)
{
    char *path = strdup("/tmp/rbf_test_trace_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, content, len), (ssize_t)len);
    close(fd);
    return path;
}

static void trace_loading(void **state)
{
    (void)state;
    const char text[] = "alpha\nbeta\nalpha\r\n\ngamma"; /* no final newline */
    char *path = temp_file(text, sizeof text - 1);
    sim_trace t;
    assert_int_equal(rbf__sim_trace_load(path, &t), RBF_OK);
    assert_int_equal(t.lines, 5);
    assert_int_equal(t.ids, 5); /* "alpha\r" differs from "alpha"; "" is a message */
    assert_int_equal(t.line_id[0], 0);
    assert_int_equal(t.line_id[1], 1);
    assert_int_equal(t.line_id[2], 2);
    assert_int_equal(t.line_id[3], 3);
    assert_int_equal(t.line_id[4], 4);
    assert_true(t.hashes[0] == XXH3_64bits("alpha", 5));
    assert_true(t.hashes[2] == XXH3_64bits("alpha\r", 6));
    assert_true(t.hashes[3] == XXH3_64bits("", 0));
    assert_true(t.hashes[4] == XXH3_64bits("gamma", 5));
    rbf__sim_trace_free(&t);
    unlink(path);
    free(path);

    char *path2 = temp_file("x\ny\nx\nx\n", 8);
    assert_int_equal(rbf__sim_trace_load(path2, &t), RBF_OK);
    assert_int_equal(t.lines, 4);
    assert_int_equal(t.ids, 2);
    assert_int_equal(t.line_id[2], 0);
    assert_int_equal(t.line_id[3], 0);
    rbf__sim_trace_free(&t);
    unlink(path2);
    free(path2);

    char *empty = temp_file("", 0);
    assert_int_equal(rbf__sim_trace_load(empty, &t), RBF_EINVAL);
    unlink(empty);
    free(empty);
    assert_int_equal(rbf__sim_trace_load("/nonexistent/rbf/trace", &t), RBF_EIO);
}

/* A trace split over epochs: every line counted once; a line's repeats in
 * the same part are repeats, and the counts match the sequence API. */
static void trace_epochs(void **state)
{
    (void)state;
    /* 1000 lines over 50 distinct words, a fixed pseudo-random order. */
    char *buf = malloc(1000 * 8);
    size_t len = 0;
    uint64_t hs[1000];
    uint64_t x = 5;
    for (int i = 0; i < 1000; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        int word = (int)((x >> 33) % 50);
        int n = sprintf(buf + len, "w%d\n", word);
        hs[i] = XXH3_64bits(buf + len, (size_t)n - 1);
        len += (size_t)n;
    }
    char *path = temp_file(buf, len);
    char spec[64];
    snprintf(spec, sizeof spec, "trace:%s", path);
    rbf_sim_config c;
    rbf_sim_config_init(&c);
    c.filter.hashes = 3;
    c.filter.sigma = 40;
    c.filter.bits = 200;
    assert_int_equal(rbf_sim_workload_parse(spec, &c.workload, NULL), RBF_OK);
    c.epochs = 4;
    c.threads = 2;
    rbf_sim_result r;
    assert_int_equal(rbf_sim_run(&c, &r), RBF_OK);
    assert_int_equal(r.total.arrivals, 1000);
    /* epoch e hashes line h as mix(h ^ key_e), key_e the first draw of
     * the (seed, e) stream: the sequence API given those hashes counts the
     * same */
    for (unsigned e = 0; e < 4; e++) {
        sim_rng g;
        rbf__sim_rng_seed(&g, c.seed, e);
        const uint64_t key = sim_rng_next(&g);
        uint64_t he[250];
        for (unsigned i = 0; i < 250; i++)
            he[i] = rbf_splitmix64_mix(hs[250 * e + i] ^ key);
        rbf_sim_counts k;
        assert_int_equal(rbf_sim_sequence(&c, he, 250, &k, NULL), RBF_OK);
        assert_memory_equal(&k, &r.epoch_counts[e], sizeof k);
        /* the repeats are the lines' own, whatever the hash */
        rbf_sim_counts k0;
        assert_int_equal(rbf_sim_sequence(&c, hs + 250 * e, 250, &k0, NULL), RBF_OK);
        assert_int_equal(k0.repeats, k.repeats);
    }
    /* another seed, other hash functions: other counts (200 bits, a few
     * recycles an epoch), the same arrivals */
    rbf_sim_result r2;
    c.seed = 7;
    assert_int_equal(rbf_sim_run(&c, &r2), RBF_OK);
    assert_int_equal(r2.total.arrivals, 1000);
    assert_int_equal(r2.total.repeats, r.total.repeats);
    assert_memory_not_equal(&r2.total, &r.total, sizeof r.total);
    c.seed = 1;
    rbf_sim_result_free(&r2);
    rbf_sim_result_free(&r);
    /* Warm-up: the first 100 lines of each part run but are not counted. */
    c.warmup = 100;
    assert_int_equal(rbf_sim_run(&c, &r), RBF_OK);
    assert_int_equal(r.total.arrivals, 600);
    rbf_sim_result_free(&r);
    unlink(path);
    free(path);
    free(buf);
    /* A missing trace is an I/O error. */
    c.workload.trace_path = "/nonexistent/rbf/trace";
    assert_int_equal(rbf_sim_run(&c, &r), RBF_EIO);
}

/* Same seed, same numbers, whatever the thread count; another seed, other
 * numbers. */
static void determinism(void **state)
{
    (void)state;
    const char *specs[] = {"uniform:1000", "zipf:5000:1.1", "fading:0.3:200"};
    for (size_t s = 0; s < 3; s++) {
        rbf_sim_config c;
        rbf_sim_config_init(&c);
        c.filter.hashes = 4;
        c.filter.sigma = 350;
        c.filter.phases = s == 2 ? 2 : 1;
        c.filter.bits = s == 2 ? 2000 : 1000;
        assert_int_equal(rbf_sim_workload_parse(specs[s], &c.workload, NULL), RBF_OK);
        c.arrivals = 30000;
        c.warmup = 500;
        c.epochs = 5;
        rbf_sim_result r1, r3, other;
        c.threads = 1;
        assert_int_equal(rbf_sim_run(&c, &r1), RBF_OK);
        c.threads = 3;
        assert_int_equal(rbf_sim_run(&c, &r3), RBF_OK);
        assert_int_equal(r1.threads, 1);
        assert_int_equal(r3.threads, 3);
        assert_memory_equal(r1.epoch_counts, r3.epoch_counts, 5 * sizeof(rbf_sim_counts));
        assert_true(r1.fp.mean == r3.fp.mean && r1.fp.ci_low == r3.fp.ci_low);
        c.seed = 2;
        assert_int_equal(rbf_sim_run(&c, &other), RBF_OK);
        assert_memory_not_equal(r1.epoch_counts, other.epoch_counts, 5 * sizeof(rbf_sim_counts));
        /* Epochs differ from each other too (independent streams). */
        assert_memory_not_equal(&r1.epoch_counts[0], &r1.epoch_counts[1], sizeof(rbf_sim_counts));
        assert_int_equal(r1.total.arrivals, 150000);
        assert_int_equal(r1.total.anomalies, 0);
        rbf_sim_result_free(&r1);
        rbf_sim_result_free(&r3);
        rbf_sim_result_free(&other);
    }
}

/* The statistics: mean and 99% t interval recomputed here from the
 * per-epoch rates, with the t quantile of 6 degrees of freedom from a
 * table (3.707428, not GSL). */
static void statistics(void **state)
{
    (void)state;
    rbf_sim_config c;
    rbf_sim_config_init(&c);
    c.filter.hashes = 3;
    c.filter.sigma = 300;
    c.arrivals = 20000;
    rbf_sim_result r;
    assert_int_equal(rbf_sim_run(&c, &r), RBF_OK);
    assert_int_equal(r.epochs, 7);
    double m = 0, ss = 0;
    for (int i = 0; i < 7; i++) {
        const rbf_sim_counts *k = &r.epoch_counts[i];
        double fp = (double)k->fp_first / (double)k->new_arrivals;
        assert_true(fabs(fp - r.epoch_rates[i].fp) < 1e-15);
        assert_true(fabs(r.epoch_rates[i].fp_first - (double)k->fp_first / 20000.0) < 1e-15);
        assert_true(fabs(r.epoch_rates[i].fp_each - (double)k->fp_each / 20000.0) < 1e-15);
        assert_true(k->fp_each >= k->fp_first);
        m += fp;
    }
    m /= 7;
    for (int i = 0; i < 7; i++)
        ss += (r.epoch_rates[i].fp - m) * (r.epoch_rates[i].fp - m);
    double half = 3.707428 * sqrt(ss / 6) / sqrt(7.0);
    assert_true(fabs(r.fp.mean - m) < 1e-12);
    assert_true(fabs(r.fp.ci_low - (m - half)) < 1e-7 * m);
    assert_true(fabs(r.fp.ci_high - (m + half)) < 1e-7 * m);
    assert_int_equal(r.fp.has_ci, 1);
    rbf_sim_result_free(&r);
    /* One epoch: no interval. */
    c.epochs = 1;
    assert_int_equal(rbf_sim_run(&c, &r), RBF_OK);
    assert_int_equal(r.fp.has_ci, 0);
    assert_true(r.fp.ci_low == r.fp.mean && r.fp.ci_high == r.fp.mean);
    rbf_sim_result_free(&r);
}

static int cancel_at_once(void *ctx, uint64_t done, uint64_t total)
{
    (void)done;
    (void)total;
    ++*(int *)ctx;
    return 1;
}

static void config_and_cancel(void **state)
{
    (void)state;
    rbf_sim_config c;
    rbf_sim_config_init(&c);
    const char *why;
    assert_int_equal(rbf_sim_config_check(&c, &why), RBF_EINVAL); /* no k, no threshold */
    c.filter.hashes = 3;
    c.filter.sigma = 300;
    assert_int_equal(rbf_sim_config_check(&c, &why), RBF_OK);
    assert_null(why);
    c.epochs = 0;
    assert_int_equal(rbf_sim_config_check(&c, &why), RBF_EINVAL);
    c.epochs = 7;
    c.oracle = 1; /* oracle needs messages */
    assert_int_equal(rbf_sim_config_check(&c, &why), RBF_EINVAL);
    c.oracle = 0;
    c.arrivals = 0;
    assert_int_equal(rbf_sim_config_check(&c, &why), RBF_EINVAL);
    c.arrivals = 100000;
    c.workload.pool = 0;
    assert_int_equal(rbf_sim_config_check(&c, &why), RBF_EINVAL);
    rbf_sim_result r;
    assert_int_equal(rbf_sim_run(&c, &r), RBF_EINVAL);
    assert_null(r.epoch_counts);
    assert_int_equal(rbf_sim_run(&c, NULL), RBF_EINVAL);
    c.workload.pool = 1000;
    /* A long run cancelled by its progress callback. */
    int calls = 0;
    c.arrivals = 2000000000;
    c.epochs = 2;
    c.threads = 2;
    c.progress = cancel_at_once;
    c.progress_ctx = &calls;
    assert_int_equal(rbf_sim_run(&c, &r), RBF_ECANCELED);
    assert_true(calls >= 1);
    assert_null(r.epoch_counts);
    rbf_sim_result_free(&r);
    rbf_sim_result_free(NULL);
    assert_string_equal(rbf_strerror(RBF_ECANCELED), "canceled by the progress callback");
    assert_string_equal(rbf_strerror(RBF_ENOMODEL), "no model exists for this configuration");
    /* The two-phase N-bounded filter has a model now (docs/models.md 9.1). */
    c.filter.sigma = 0;
    c.filter.messages = 100;
    c.filter.phases = 2;
    c.filter.bits = 2000;
    double fp;
    const char *name;
    assert_int_equal(rbf_sim_model(&c, &fp, &name), RBF_OK);
    assert_string_equal(name, "f_N^2_real");
    assert_true(fp > 0.0 && fp < 0.1);
}

/* Pool workloads drive the filter by precomputed positions
 * (rbf_insert_positions) unless rbf__sim_use_positions is 0: both paths
 * must give the same counts, every variant (one/two phases, sigma and N,
 * retaining, non-colliding, oracle, uniform and Zipf). */
static void positions_path(void **state)
{
    (void)state;
    struct { unsigned phases; uint64_t sigma, n; int ret, nc, oracle; const char *wl; } v[] = {
        {1, 300, 0, 0, 0, 0, "uniform:1000"}, {1, 300, 0, 1, 0, 0, "zipf:2000:1"},
        {1, 300, 0, 0, 1, 0, "uniform:3000"}, {2, 150, 0, 0, 0, 0, "uniform:1000"},
        {2, 150, 0, 1, 1, 0, "zipf:500:0.5"}, {1, 0, 100, 0, 0, 0, "uniform:1000"},
        {1, 0, 100, 0, 0, 1, "uniform:1000"}, {2, 0, 80, 0, 0, 0, "zipf:3000:1.2"},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        rbf_sim_config c;
        rbf_sim_config_init(&c);
        c.filter.bits = 1000;
        c.filter.hashes = 3;
        c.filter.phases = v[i].phases;
        c.filter.sigma = v[i].sigma;
        c.filter.messages = v[i].n;
        c.filter.recycle = v[i].ret ? RBF_RETAINING : RBF_NON_RETAINING;
        c.filter.hashing = v[i].nc ? RBF_NON_COLLIDING : RBF_COLLIDING;
        c.oracle = v[i].oracle;
        assert_int_equal(rbf_sim_workload_parse(v[i].wl, &c.workload, NULL), RBF_OK);
        c.arrivals = 30000;
        c.warmup = 1000;
        c.epochs = 2;
        c.threads = 1;
        rbf_sim_result a, b;
        rbf__sim_use_positions = 1;
        assert_int_equal(rbf_sim_run(&c, &a), RBF_OK);
        rbf__sim_use_positions = 0;
        assert_int_equal(rbf_sim_run(&c, &b), RBF_OK);
        rbf__sim_use_positions = 1;
        assert_memory_equal(&a.total, &b.total, sizeof a.total);
        assert_true(a.total.cycles > 0);
        /* the steady state (first to last recycle): the block path takes
         * its snapshots inside a block of arrivals, the other one at a time */
        assert_memory_equal(a.epoch_steady, b.epoch_steady, c.epochs * sizeof *a.epoch_steady);
        for (unsigned e = 0; e < c.epochs; e++) {
            const rbf_sim_counts *w = &a.epoch_counts[e], *st = &a.epoch_steady[e];
            if (w->cycles >= 2) { /* the complete cycles after the first */
                assert_int_equal(st->cycles, w->cycles - 1);
                assert_true(st->arrivals > 0 && st->arrivals < w->arrivals);
                assert_true(st->false_negatives <= w->false_negatives);
            }
        }
        rbf_sim_result_free(&a);
        rbf_sim_result_free(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_specs),     cmocka_unit_test(rng_streams),
        cmocka_unit_test(alias_table),     cmocka_unit_test(zipf_frequencies),
        cmocka_unit_test(fading_law),      cmocka_unit_test(trace_loading),
        cmocka_unit_test(trace_epochs),    cmocka_unit_test(determinism),
        cmocka_unit_test(statistics),      cmocka_unit_test(config_and_cancel),
        cmocka_unit_test(positions_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
