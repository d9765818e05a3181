/*
 * cli_util.h -- the util module: option parsing, usage and failure
 * messages, JSON output, clocks and progress, shared by the rbf command,
 * the benchmarks, the reproduce module and the fuzz harnesses.
 *
 * Exit statuses: 0 success, 1 runtime failure, 2 usage error.  A usage error
 * prints ONE line on stderr naming the bad option and pointing at --help.
 * --help prints to stdout and exits 0.  stdout is checked (ferror/fflush)
 * before exit so a full disk is an error, not a silent loss.
 */
#ifndef RBF_CLI_UTIL_H
#define RBF_CLI_UTIL_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_USAGE 2

/* ---- usage errors: print "rbf CMD: MESSAGE (try 'rbf CMD --help')" on
 * stderr and return CLI_EXIT_USAGE, so handlers can `return cli_usage(...)`. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Runtime failure: "rbf CMD: MESSAGE" on stderr ("rbf: MESSAGE" when cmd
 * is NULL), returns CLI_EXIT_FAIL. */
int cli_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Report what getopt_long found wrong (unknown option, missing value) as a
 * usage error.  Call with opterr = 0 when getopt_long returns '?' or ':'.
 * `argv` and the index of the failing argument are used to name it. */
int cli_bad_option(const char *cmd, int argc, char **argv, const struct option *longopts);

/* Reset getopt state before parsing a subcommand's arguments. */
void cli_getopt_reset(void);

/* ---- numbers.  All return 0 on success or -1 with *err set to a static
 * description ("not a number", "out of range", ...). */

/* Unsigned count with optional suffix: k/K M G T P E (x10^3n) or
 * Ki Mi Gi Ti Pi Ei (x2^10n).  Decimal fractions are accepted when the
 * result is a whole number ("1.5k" = 1500).  No sign, no overflow. */
int cli_parse_count(const char *s, uint64_t *out, const char **err);

/* Memory size in BYTES: a count as above, optionally followed by "B"
 * ("64MiB", "1GB", "512KiB", "4096", "64M").  K is accepted for k. */
int cli_parse_bytes(const char *s, uint64_t *out, const char **err);

/* Unsigned integer within [lo, hi] (no suffixes). */
int cli_parse_uint(const char *s, uint64_t lo, uint64_t hi, uint64_t *out, const char **err);

/* Finite double within the open interval (lo, hi) or closed when the
 * inclusive flag is set. */
int cli_parse_double(const char *s, double lo, double hi, int lo_incl, int hi_incl, double *out,
                     const char **err);

/* Enumerations used by several commands. */
int cli_parse_hashing(const char *s, int *non_colliding);   /* colliding|non-colliding */
int cli_parse_recycle(const char *s, int *retaining);       /* non-retaining|retaining */

/* ---- option values, for getopt_long case bodies.  Each parses ARG, stores
 * the value and returns CLI_EXIT_OK, or prints a usage error and returns
 * CLI_EXIT_USAGE, so a case body reads
 *     if ((rc = cli_opt_hashing(CMD, optarg, &nc))) return rc;
 * OPT is the option as the user writes it ("--bits").  Every bad value, in
 * these helpers and in the commands' own checks, is reported by
 * cli_bad_value in one form:
 *     rbf CMD: OPT: invalid value 'ARG': WHY; expected WHAT (try 'rbf CMD --help')
 * (WHY and WHAT each left out when NULL; WHAT is a printf format). */
int cli_bad_value(const char *cmd, const char *opt, const char *arg, const char *why,
                  const char *expected_fmt, ...) __attribute__((format(printf, 5, 6)));

/* A count (cli_parse_count) of at least MIN. */
int cli_opt_count(const char *cmd, const char *opt, const char *arg, uint64_t min, uint64_t *out);

/* An integer in [LO, HI] (cli_parse_uint). */
int cli_opt_uint(const char *cmd, const char *opt, const char *arg, uint64_t lo, uint64_t hi,
                 uint64_t *out);

/* A memory size in bytes (cli_parse_bytes), 1 to 2^61 - 1 (its bits fit in 64). */
int cli_opt_bytes(const char *cmd, const char *opt, const char *arg, uint64_t *out);

/* A probability strictly between 0 and 1 (--fp). */
int cli_opt_prob(const char *cmd, const char *opt, const char *arg, double *out);

/* --hashing colliding|non-colliding. */
int cli_opt_hashing(const char *cmd, const char *arg, int *non_colliding);

/* --recycle non-retaining|retaining. */
int cli_opt_recycle(const char *cmd, const char *arg, int *retaining);

/* --layout flat|blocked; *blocked is 1 for blocked. */
int cli_opt_layout(const char *cmd, const char *arg, int *blocked);

/* --phases 1|2. */
int cli_opt_phases(const char *cmd, const char *arg, unsigned *phases);

/* --threads T, 0 to MAX; 0 means every online processor (the command turns
 * it into a count with cli_online_processors when it needs one). */
int cli_opt_threads(const char *cmd, const char *arg, unsigned max, unsigned *out);

/* The number of online processors, 1 to MAX. */
unsigned cli_online_processors(unsigned max);

/* The words those options take, for output: "colliding"/"non-colliding",
 * "non-retaining"/"retaining". */
const char *cli_hashing_name(int non_colliding);
const char *cli_recycle_name(int retaining);
/* --method's name of an rbf_model_method: exact, paper, fast or auto */
const char *cli_method_name(int method);
const char *cli_layout_name(int blocked); /* "flat" / "blocked" */

/* After the options: "unexpected argument 'WORD'" if any operand is left
 * (argv[optind]), else CLI_EXIT_OK. */
int cli_no_operands(const char *cmd, int argc, char **argv);

/* ---- output */

/* Flush stdout and check it (cmd NULL for the top level): returns CLI_EXIT_OK, or prints an error and
 * returns CLI_EXIT_FAIL if anything written to stdout was lost.  A closed
 * pipe (EPIPE) returns CLI_EXIT_OK quietly. */
int cli_finish_stdout(const char *cmd);

/* A double in JSON: shortest round-trip form ("%.17g" trimmed); null when
 * not finite. */
void cli_json_double(FILE *fp, double v);

/* One more member of an object: `, "name": v` (v as cli_json_double). */
void cli_json_field(FILE *fp, const char *name, double v);

/* A JSON string with escapes. */
void cli_json_string(FILE *fp, const char *s);

/* ---- clocks: monotonic wall time, and CPU time of the whole process (for
 * measurements on a machine shared with other work), in seconds */
double cli_wall_seconds(void);
double cli_cpu_seconds(void);

/* ---- progress on stderr, only when stderr is a terminal and the work is
 * long.  cli_progress_begin(label, total); cli_progress_update(done) as
 * often as you like (it redraws at most ~10 times a second);
 * cli_progress_end() clears the line.  Suitable as an
 * rbf_model_progress_fn via cli_progress_cb. */
void cli_progress_begin(const char *label, uint64_t total);
void cli_progress_update(uint64_t done);
void cli_progress_end(void);
int cli_progress_cb(void *ctx, uint64_t done, uint64_t total);

#endif
