/*
 * model_fn.h -- `rbf model`'s false-negative and two-phase N-bounded part
 * (cmd_model_fn.c), called by cmd_model.c once the options are parsed.
 */
#ifndef RBF_CLI_MODEL_FN_H
#define RBF_CLI_MODEL_FN_H

#include <stdint.h>

typedef struct cli_model_fn_args {
    uint64_t bits, sigma, messages;
    unsigned hashes, phases;
    int nc, ret, oracle, json;
    int method;     /* RBF_MODEL_AUTO, _EXACT or _ASYMPTOTIC (--method) */
    const char *fn; /* workload spec or NULL */
    int have_new_fraction;
    double new_fraction;
    const uint64_t *forget; /* --forget: gaps in ticks, or NULL */
    size_t nforget;
    uint64_t arrivals; /* --arrivals (trace:FILE), 0: the whole trace */
    unsigned replicas; /* --replicas (trace:FILE), 0: automatic */
} cli_model_fn_args;

/* Parse --forget's gaps: G, G1,G2,... or A:B[:STEP] (at most 10000).
 * Returns 0 and a malloc'ed array, or -1 with *err set. */
int cli_parse_gaps(const char *s, uint64_t **out, size_t *n, const char **err);

int cli_model_fn(const cli_model_fn_args *a);

/* The first members of rbf model --fn's JSON object, from its opening brace
 * to "oracle": the filter asked about (cmd_model_fn.c). */
void cli_model_fn_json_head(const cli_model_fn_args *a);

/* Read --fn trace:FILE for command cmd: 0 with *ids and t's arrivals and
 * distinct set (t otherwise zero; free(*ids) when done), or the exit
 * status after saying what is wrong (cmd_model_trace.c). */
struct rbf_model_trace;
int cli_trace_read(const char *cmd, const char *path, uint32_t **ids, struct rbf_model_trace *t);

/* The text of rbf model --help, on standard output (cmd_model_help.c). */
void cli_model_help(void);

struct rbf_model_params;
struct rbf_model_cycle_spec;
/* --fn trace:FILE (cmd_model_trace.c) */
int cli_model_trace(const cli_model_fn_args *a, const struct rbf_model_params *p,
                    const struct rbf_model_cycle_spec *s);

struct rbf_plan_options;
/* rbf plan --remember W [--miss D] (cmd_plan_fn.c) */
int cli_plan_remember(uint64_t bits, double eps, uint64_t remember, double miss,
                      struct rbf_plan_options *o, int json);

/* What rbf plan --remember and --fn trace:FILE print of the filter they
 * chose (cmd_plan_fn.c).  JSON: the members from "hashing" to "fp" ("phases":
 * null when no filter meets the targets); then the caller's own rates; then
 * cli_plan_fn_json_end: "least_bits" (null unless no filter was found and a
 * least memory was) and the closing brace.  Text: the rows from phases to
 * expected_messages. */
void cli_plan_fn_json_filter(uint64_t bits, const struct rbf_plan_options *o, int feasible,
                             unsigned phases, unsigned hashes, uint64_t sigma, double expected,
                             double fp);
void cli_plan_fn_json_end(int feasible, uint64_t least);
void cli_plan_fn_text_filter(unsigned phases, unsigned hashes, uint64_t sigma, double expected);

/* rbf plan --fn trace:FILE --miss D (cmd_plan_trace.c) */
int cli_plan_trace(uint64_t bits, double eps, const char *path, uint64_t arrivals, double miss,
                   struct rbf_plan_options *o, int json);

#endif
