/*
 * test_predict.c -- rbf_predict (include/rbf_predict.h): for each row of
 * its table, the model it names and the value that model gives when called
 * directly with the parameters a filter of that configuration has (bits per
 * filter = bits / phases); the one case without a model; bad input; and the
 * status-returning cycle accessors.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rbf_model.h"
#include "rbf_predict.h"

static rbf_config cfg_of(uint64_t bits, unsigned k, uint64_t sigma, uint64_t messages,
                         unsigned phases, rbf_layout layout)
{
    rbf_config c;
    rbf_config_init(&c);
    c.bits = bits;
    c.hashes = k;
    c.sigma = sigma;
    c.messages = messages;
    c.phases = phases;
    c.layout = layout;
    return c;
}

static rbf_model_params params_of(uint64_t bits_per_filter, unsigned k)
{
    rbf_model_params p;
    rbf_model_params_init(&p);
    p.bits_per_filter = bits_per_filter;
    p.hashes = k;
    return p;
}

static void flat_sigma(void **state)
{
    (void)state;
    rbf_config c = cfg_of(1000, 3, 300, 0, 1, RBF_LAYOUT_FLAT);
    c.recycle = RBF_RETAINING;
    rbf_prediction pr;
    assert_int_equal(rbf_predict(&c, NULL, &pr), RBF_OK);
    rbf_model_params p = params_of(1000, 3);
    assert_int_equal(p.bits, 1000); /* bits_per_filter is bits under its own name */
    p.recycle = RBF_RETAINING;
    rbf_model_sigma_result r;
    assert_int_equal(rbf_model_sigma(&p, 300, &r), RBF_OK);
    assert_true(pr.fp == r.fp && pr.messages_per_cycle == r.expected_messages);
    assert_true(pr.fp > 0.001 && pr.fp < 0.5);
    assert_int_equal(pr.model, RBF_PREDICT_SIGMA);
    assert_string_equal(pr.name, "f_sigma^1");
    assert_string_equal(pr.method, "rbf_model_sigma");
    assert_null(pr.reason);
    assert_int_equal(pr.bits_per_filter, 1000);
}

static void flat_two_phase_sigma(void **state)
{
    (void)state;
    rbf_config c = cfg_of(1000, 3, 200, 0, 2, RBF_LAYOUT_FLAT);
    rbf_prediction pr;
    assert_int_equal(rbf_predict(&c, NULL, &pr), RBF_OK);
    rbf_model_params p = params_of(500, 3);
    rbf_model_two_phase_result r;
    assert_int_equal(rbf_model_two_phase(&p, 200, &r), RBF_OK);
    assert_true(pr.fp == r.fp && pr.messages_per_cycle == r.expected_messages);
    assert_int_equal(pr.model, RBF_PREDICT_SIGMA_TWO_PHASE);
    assert_string_equal(pr.name, "f_sigma^2");
    assert_int_equal(pr.bits_per_filter, 500);
}

static void flat_nbounded(void **state)
{
    (void)state;
    rbf_config c = cfg_of(1000, 5, 0, 200, 1, RBF_LAYOUT_FLAT);
    c.recycle = RBF_RETAINING; /* changes nothing N-bounded */
    rbf_model_params p = params_of(1000, 5);
    rbf_model_n_result r;
    assert_int_equal(rbf_model_nbounded(&p, 200, &r), RBF_OK);
    rbf_prediction pr;
    assert_int_equal(rbf_predict(&c, NULL, &pr), RBF_OK);
    assert_true(pr.fp == r.exact_real && pr.messages_per_cycle == 200.0);
    assert_string_equal(pr.name, "exact_real");
    rbf_predict_options o;
    rbf_predict_options_init(&o);
    o.oracle = 1;
    assert_int_equal(rbf_predict(&c, &o, &pr), RBF_OK);
    assert_true(pr.fp == r.exact_oracle);
    assert_string_equal(pr.name, "exact_oracle");
    assert_int_equal(pr.model, RBF_PREDICT_NBOUNDED);
}

static void flat_two_phase_nbounded(void **state)
{
    (void)state;
    rbf_config c = cfg_of(2000, 5, 0, 200, 2, RBF_LAYOUT_FLAT);
    rbf_model_params p = params_of(1000, 5);
    rbf_model_cycle_spec s;
    rbf_model_cycle_spec_init(&s);
    s.phases = 2;
    s.messages = 200;
    rbf_model_cycles *cy = NULL;
    assert_int_equal(rbf_model_cycles_new(&p, &s, &cy), RBF_OK);
    double want = -1;
    assert_int_equal(rbf_model_cycles_get_fp(cy, &want), RBF_OK);
    assert_true(want == rbf_model_cycles_fp(cy));
    double mean = 0;
    uint64_t max = 0;
    double pmf = -1;
    assert_int_equal(rbf_model_cycles_get_mean(cy, &mean), RBF_OK);
    assert_int_equal(rbf_model_cycles_get_max(cy, &max), RBF_OK);
    assert_int_equal(rbf_model_cycles_get_pmf(cy, max, &pmf), RBF_OK);
    assert_true(mean >= 200.0 && mean == rbf_model_cycles_mean(cy));
    assert_true(max >= 200 && pmf > 0 && pmf == rbf_model_cycles_pmf(cy, max));
    rbf_model_cycles_free(cy);
    rbf_prediction pr;
    assert_int_equal(rbf_predict(&c, NULL, &pr), RBF_OK);
    assert_true(pr.fp == want && want > 0 && want < 1);
    assert_true(pr.messages_per_cycle == 200.0);
    assert_int_equal(pr.model, RBF_PREDICT_NBOUNDED_TWO_PHASE);
    assert_string_equal(pr.name, "f_N^2_real");
    assert_string_equal(pr.method, "rbf_model_cycles");
}

static void blocked(void **state)
{
    (void)state;
    rbf_config c = cfg_of(5120, 4, 2000, 0, 1, RBF_LAYOUT_BLOCKED);
    rbf_model_params p = params_of(5120, 4);
    p.layout = RBF_LAYOUT_BLOCKED;
    rbf_model_blocked_sigma_result r;
    assert_int_equal(rbf_model_blocked_sigma(&p, 2000, &r), RBF_OK);
    rbf_prediction pr;
    assert_int_equal(rbf_predict(&c, NULL, &pr), RBF_OK);
    assert_true(pr.fp == r.fp && pr.messages_per_cycle == r.expected_messages);
    assert_string_equal(pr.name, "blocked f_sigma^1");
    assert_int_equal(pr.layout, RBF_LAYOUT_BLOCKED);
    /* the flat model of the same memory answers differently */
    rbf_prediction flat;
    c.layout = RBF_LAYOUT_FLAT;
    assert_int_equal(rbf_predict(&c, NULL, &flat), RBF_OK);
    assert_true(fabs(flat.fp - pr.fp) > 1e-9 * flat.fp);

    c = cfg_of(5120, 4, 0, 600, 1, RBF_LAYOUT_BLOCKED);
    rbf_model_blocked_n_result n;
    assert_int_equal(rbf_model_blocked_nbounded(&p, 600, &n), RBF_OK);
    assert_int_equal(rbf_predict(&c, NULL, &pr), RBF_OK);
    assert_true(pr.fp == n.exact_real && pr.messages_per_cycle == 600.0);
    assert_string_equal(pr.name, "blocked exact_real");
}

static void no_model(void **state)
{
    (void)state;
    rbf_config c = cfg_of(10240, 4, 0, 600, 2, RBF_LAYOUT_BLOCKED);
    rbf_prediction pr;
    assert_int_equal(rbf_predict(&c, NULL, &pr), RBF_ENOMODEL);
    assert_true(isnan(pr.fp));
    assert_true(pr.messages_per_cycle == 600.0);
    assert_int_equal(pr.model, RBF_PREDICT_NONE);
    assert_null(pr.name);
    assert_non_null(pr.reason);
    assert_non_null(strstr(pr.reason, "two-phase N-bounded blocked"));
}

static void bad_input(void **state)
{
    (void)state;
    rbf_prediction pr;
    rbf_config c = cfg_of(1000, 3, 1000, 0, 1, RBF_LAYOUT_FLAT); /* sigma = M: outside */
    assert_int_equal(rbf_predict(&c, NULL, &pr), RBF_EINVAL);
    assert_true(isnan(pr.fp));
    assert_non_null(pr.reason);
    assert_int_equal(rbf_predict(NULL, NULL, &pr), RBF_EINVAL);
    assert_int_equal(rbf_predict(&c, NULL, NULL), RBF_EINVAL);
    c.sigma = 300;
    rbf_predict_options o;
    rbf_predict_options_init(&o);
    o.reserved_[0] = 1;
    assert_int_equal(rbf_predict(&c, &o, &pr), RBF_EINVAL);
    rbf_predict_options_init(&o);
    o.oracle = 2;
    assert_int_equal(rbf_predict(&c, &o, &pr), RBF_EINVAL);
    rbf_model_params p;
    assert_int_equal(rbf_predict_params(NULL, NULL, &p), RBF_EINVAL);
    double v;
    uint64_t u;
    assert_int_equal(rbf_model_cycles_get_fp(NULL, &v), RBF_EINVAL);
    assert_int_equal(rbf_model_cycles_get_mean(NULL, &v), RBF_EINVAL);
    assert_int_equal(rbf_model_cycles_get_max(NULL, &u), RBF_EINVAL);
    assert_int_equal(rbf_model_cycles_get_pmf(NULL, 1, &v), RBF_EINVAL);
}

static int cancel(void *ctx, uint64_t done, uint64_t total)
{
    (void)done;
    (void)total;
    ++*(int *)ctx;
    return 1;
}

static void progress_cancels(void **state)
{
    (void)state;
    rbf_config c = cfg_of(1 << 20, 4, 0, 100000, 1, RBF_LAYOUT_FLAT);
    int calls = 0;
    rbf_predict_options o;
    rbf_predict_options_init(&o);
    o.progress = cancel;
    o.progress_ctx = &calls;
    o.method = RBF_MODEL_EXACT;
    rbf_prediction pr;
    assert_int_equal(rbf_predict(&c, &o, &pr), RBF_ECANCELED);
    assert_true(calls >= 1);
    assert_true(isnan(pr.fp));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(flat_sigma),        cmocka_unit_test(flat_two_phase_sigma),
        cmocka_unit_test(flat_nbounded),     cmocka_unit_test(flat_two_phase_nbounded),
        cmocka_unit_test(blocked),           cmocka_unit_test(no_model),
        cmocka_unit_test(bad_input),         cmocka_unit_test(progress_cancels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
