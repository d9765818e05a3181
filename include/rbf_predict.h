/*
 * rbf_predict.h -- what the models say about a filter configuration.
 *
 * One entry point above the filter and the models: given the rbf_config a
 * filter is (or would be) created with -- any layout, one or two phases,
 * sigma- or N-bounded, either hashing and recycle mode -- rbf_predict
 * answers the average false-positive rate the models give, the messages
 * per cycle, which model and which method answered, or why no model
 * applies.  The simulator, the CLI, `rbf reproduce`, `rbf dedup`, the
 * Redis module and the Python package all ask it, so they agree.
 * `concurrent` and `seed` do not change the prediction and are ignored.
 *
 * Which model answers (docs/models.md):
 *
 *   layout   phases  bound   model (name)                 method
 *   flat     1       sigma   f_sigma^1                    rbf_model_sigma
 *   flat     2       sigma   f_sigma^2                    rbf_model_two_phase
 *   flat     1       N       exact_real / exact_oracle    rbf_model_nbounded
 *   flat     2       N       f_N^2_real / f_N^2_oracle    rbf_model_cycles
 *   blocked  1       sigma   blocked f_sigma^1            rbf_model_blocked_sigma
 *   blocked  2       sigma   blocked f_sigma^2            rbf_model_blocked_two_phase
 *   blocked  1       N       blocked exact_real / _oracle rbf_model_blocked_nbounded
 *   blocked  2       N       none (RBF_ENOMODEL)
 *
 * The N-bounded models are those of the non-retaining filter (the recycle
 * mode changes nothing there: no message triggers a recycle by itself).
 */
#ifndef RBF_PREDICT_H
#define RBF_PREDICT_H

#include "rbf.h"
#include "rbf_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How to predict (rbf_predict_options_init: the real user, no progress,
 * RBF_MODEL_AUTO). */
typedef struct rbf_predict_options {
    int oracle;                /* N-bounded: 0 the real user (the filter counts
                                  bit-setting messages), 1 the oracle (recycles
                                  after exactly N new arrivals) */
    rbf_progress_fn progress;  /* may be NULL; a non-zero return cancels */
    void *progress_ctx;
    rbf_model_method method;   /* sigma-bounded flat one-phase: how the exact
                                  values are computed (RBF_MODEL_AUTO default) */
    uint64_t reserved_[8];     /* zero: room for new fields (rbf_base.h) */
} rbf_predict_options;

RBF_API void rbf_predict_options_init(rbf_predict_options *o);

/* Which model answered. */
typedef enum {
    RBF_PREDICT_NONE = 0,          /* no model applies (see `reason`) */
    RBF_PREDICT_SIGMA = 1,         /* sigma-bounded, one phase */
    RBF_PREDICT_SIGMA_TWO_PHASE = 2,
    RBF_PREDICT_NBOUNDED = 3,      /* N-bounded, one phase */
    RBF_PREDICT_NBOUNDED_TWO_PHASE = 4
} rbf_predict_model;

/* The answer.  Written whole (reserved words zero) by rbf_predict. */
typedef struct rbf_prediction {
    double fp;                 /* average false-positive rate (count-instance);
                                  NaN when no model applies */
    double messages_per_cycle; /* messages per cycle of the active filter:
                                  sigma-bounded E[N_0], the expected
                                  bit-setting messages (the models'
                                  expected_messages); N-bounded: N */
    rbf_predict_model model;   /* which model answered */
    rbf_layout layout;         /* the layout it models */
    const char *name;          /* static: the model's name as the table above
                                  ("f_sigma^1", "blocked exact_real", ...), or
                                  NULL when none applies */
    const char *method;        /* static: the library function that computed
                                  it ("rbf_model_sigma", ...), or NULL */
    const char *reason;        /* static: why no model applies or why it
                                  failed, NULL on success */
    uint64_t bits_per_filter;  /* M': the bits of one filter the models take
                                  (two-phase: bits / 2) */
    uint64_t reserved_[8];     /* written as zero: room for new fields */
} rbf_prediction;

/* The model parameters of a configuration: bits per filter (two-phase:
 * bits / 2), hashes, hashing, recycle mode and layout.  Options may be
 * NULL (defaults); their progress callback and method are copied.  Never
 * fails on a non-NULL `cfg` and `p`; returns RBF_EINVAL otherwise. */
RBF_API int rbf_predict_params(const rbf_config *cfg, const rbf_predict_options *o,
                               rbf_model_params *p);

/* What the models say about `cfg` (`o` may be NULL: defaults).  Returns
 * RBF_OK with *out filled; RBF_ENOMODEL when no model applies (out->reason
 * says why, out->fp is NaN, messages_per_cycle is N for an N-bounded
 * filter); RBF_EINVAL for a configuration outside the model's domain or
 * NULL arguments (out->reason says which); RBF_ENOMEM; RBF_ECANCELED when
 * the progress callback asked to stop. */
RBF_API int rbf_predict(const rbf_config *cfg, const rbf_predict_options *o,
                        rbf_prediction *out);

#ifdef __cplusplus
}
#endif

#endif /* RBF_PREDICT_H */
