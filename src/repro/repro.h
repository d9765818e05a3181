/*
 * repro.h -- the reproduce module: regenerate the paper's figures and a
 * report whose claims table is computed from the data (`rbf reproduce`,
 * docs/reproduce.md).
 *
 * The module uses the public APIs of the models and the simulator
 * (rbf_model.h, rbf_sim.h) and the util module (cli_util.h) for messages,
 * clocks, JSON and progress; the CLI only parses options into
 * repro_options and calls repro_run.
 */
#ifndef RBF_REPRO_H
#define RBF_REPRO_H

#include <stdint.h>

/* Run sizes.  REPRO_QUICK is for the CLI test, REPRO_DEFAULT for
 * `make reproduce`, REPRO_FULL at the paper's sample sizes (MODEL.md 7). */
typedef enum { REPRO_QUICK = 0, REPRO_DEFAULT = 1, REPRO_FULL = 2 } repro_mode;

typedef struct repro_options {
    const char *out;  /* output directory, created with its parents */
    repro_mode mode;
    uint64_t seed;    /* every random stream derives from it */
    unsigned threads; /* 1..64 worker threads */
} repro_options;

/* Defaults: out "report", REPRO_DEFAULT, seed 1, the online processors
 * (at most 64). */
void repro_options_init(repro_options *o);

/* Run every step, write the figures, report.md and claims.json into o->out.
 * Progress and failures go to stderr.  Returns 0 when everything was
 * written, -1 when the directory could not be created, a step or a file
 * failed (memory included) or gnuplot is missing; whatever could be
 * written is still written.  A claim that does not hold is a result, not
 * a failure. */
int repro_run(const repro_options *o);

#endif
