/*
 * dedup.h -- the parts of `rbf dedup` (src/cli): its options
 * (dedup_opts.c), the sizing of its filter (dedup_size.c), the shared
 * filter of a Redis server (dedup_remote.c) and the run (cmd_dedup.c).
 */
#ifndef RBF_CLI_DEDUP_H
#define RBF_CLI_DEDUP_H

#include <stdint.h>

#include "rbf.h"

#define DEDUP_DEFAULT_MEMORY ((uint64_t)64 << 20)
#define DEDUP_DEFAULT_FP 0.001

typedef struct dedup_sizing {
    int ok;                /* 1: planned; 0: no feasible plan; -1: out of memory */
    unsigned hashes;
    uint64_t sigma;        /* per filter (per half for two phases) */
    double fp;             /* the model's average rate at the plan */
    double expected_lines; /* per cycle */
} dedup_sizing;


/* The default layout: blocked (sized by the blocked planner) when its
 * lines per cycle at the target rate are within 5% of the flat plan's in
 * the same memory, flat otherwise (dedup_choose_layout). */
typedef struct layout_choice {
    uint64_t bytes;
    double eps;
    unsigned phases;
    int decided;       /* the plans below were made */
    int given;         /* --layout: -1 not given, 0 flat, 1 blocked */
    int blocked;       /* the choice */
    int have_blocked;  /* blk was planned */
    dedup_sizing flat, blk;
    uint64_t blk_bits;
} layout_choice;

/* Plan a flat filter of `bits` total bits for average rate eps. */
void dedup_plan_flat(uint64_t bits, double eps, unsigned phases, int progress, dedup_sizing *out);
/* Plan a one-phase blocked filter of `bits` bits (whole blocks). */
void dedup_plan_blocked(uint64_t bits, double eps, dedup_sizing *out);
void dedup_choose_layout(layout_choice *lc);
/* For dedup_remote: decide the layout (ctx a layout_choice); 1 blocked, 0 flat. */
int dedup_choose_layout_cb(void *ctx);
void dedup_print_plans(const layout_choice *lc);
void dedup_print_stats(const rbf *f, uint64_t lines_read, uint64_t lines_written,
                       const rbf_config *cfg, uint64_t bytes, const dedup_sizing *sz,
                       int blocked_model);

/* The command line, parsed and checked (dedup_parse_options). */
typedef struct dedup_opts {
    uint64_t bytes, seed, phases, field;
    double eps;
    int have_seed, stats, trace, blocked, layout_given;
    int sep, missing_keep, repeated, nul, on_error_pass;
    const char *url, *key, *json_path;
} dedup_opts;

/* DEDUP_GO_ON, or the exit status (usage errors reported, --help printed). */
#define DEDUP_GO_ON (-1)
int dedup_parse_options(int argc, char **argv, dedup_opts *o);

#endif
