/*
 * util.c -- option errors, number parsing, JSON and progress for the CLI.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_util.h"
#include "rbf_model.h"

int cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "rbf %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (try 'rbf %s --help')\n", cmd);
    return CLI_EXIT_USAGE;
}

int cli_fail(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    if (cmd)
        fprintf(stderr, "rbf %s: ", cmd);
    else
        fputs("rbf: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return CLI_EXIT_FAIL;
}

void cli_getopt_reset(void)
{
    optind = 0; /* glibc: 0 also resets its internal state */
    opterr = 0;
}

int cli_bad_option(const char *cmd, int argc, char **argv, const struct option *longopts)
{
    /* getopt_long leaves optind past the failing argument (or past its
     * missing value); the failing word is the one just before. */
    int i = optind - 1;
    if (i < 1)
        i = 1;
    if (i >= argc)
        i = argc - 1;
    const char *word = argv[i];
    if (optopt && !(word[0] == '-' && word[1] == '-')) {
        /* A known option that needs a value, or an unknown short option.
         * (A long option given a value it does not take also sets optopt,
         * to its val: that case is named below.) */
        for (const struct option *o = longopts; o && o->name; o++)
            if (o->val == optopt && o->has_arg == required_argument)
                return cli_usage(cmd, "option '%s' needs a value", word);
        return cli_usage(cmd, "unknown option '-%c'", optopt);
    }
    if (word[0] == '-' && word[1] == '-') {
        size_t n = strcspn(word + 2, "=");
        for (const struct option *o = longopts; o && o->name; o++)
            if (strlen(o->name) == n && !strncmp(o->name, word + 2, n)) {
                if (o->has_arg == no_argument && word[2 + n] == '=')
                    return cli_usage(cmd, "option '--%s' takes no value", o->name);
                return cli_usage(cmd, "option '--%s' needs a value", o->name);
            }
        /* getopt_long also rejects ambiguous abbreviations */
        return cli_usage(cmd, "unknown or ambiguous option '%s'", word);
    }
    return cli_usage(cmd, "unknown option '%s'", word);
}

/* ---- numbers */

static int parse_scaled(const char *s, int allow_bytes, uint64_t *out, const char **err)
{
    if (!s || !*s) {
        *err = "empty value";
        return -1;
    }
    const char *p = s;
    if (!isdigit((unsigned char)*p)) {
        *err = (*p == '-') ? "must not be negative" : "not a number";
        return -1;
    }
    /* a power of two, 2^40 */
    if (p[0] == '2' && p[1] == '^' && isdigit((unsigned char)p[2])) {
        char *end;
        unsigned long e = strtoul(p + 2, &end, 10);
        if (allow_bytes && *end == 'B')
            end++;
        if (*end) {
            *err = "bad power of two (use e.g. 2^40)";
            return -1;
        }
        if (e > 63) {
            *err = "too large";
            return -1;
        }
        *out = (uint64_t)1 << e;
        return 0;
    }
    /* mantissa: digits [. digits] as an exact rational num / den */
    unsigned __int128 num = 0, den = 1;
    const unsigned __int128 cap = (unsigned __int128)UINT64_MAX * 1000000;
    while (isdigit((unsigned char)*p)) {
        num = num * 10 + (unsigned)(*p++ - '0');
        if (num > cap) {
            *err = "too large";
            return -1;
        }
    }
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p)) {
            *err = "not a number";
            return -1;
        }
        while (isdigit((unsigned char)*p)) {
            if (den < (unsigned __int128)1000000000000000000ULL) {
                num = num * 10 + (unsigned)(*p - '0');
                den *= 10;
                if (num > cap * 10) {
                    *err = "too large";
                    return -1;
                }
            } else if (*p != '0') {
                *err = "too many decimals";
                return -1;
            }
            p++;
        }
    }
    unsigned __int128 mult = 1;
    unsigned base = 1000;
    int exp = 0;
    /* a decimal exponent, 1e12 (1E12; a bare E is still exa) */
    if ((*p == 'e' || *p == 'E') && isdigit((unsigned char)p[1])) {
        char *end;
        unsigned long e = strtoul(p + 1, &end, 10);
        if (e > 38) {
            *err = "too large";
            return -1;
        }
        for (unsigned long i = 0; i < e; i++)
            mult *= 10;
        p = end;
    } else {
        switch (*p) {
        case 'k': case 'K': exp = 1; break;
        case 'M': exp = 2; break;
        case 'G': exp = 3; break;
        case 'T': exp = 4; break;
        case 'P': exp = 5; break;
        case 'E': exp = 6; break;
        default: break;
        }
    }
    if (exp) {
        p++;
        if (*p == 'i') {
            base = 1024;
            p++;
        }
        for (int i = 0; i < exp; i++)
            mult *= base;
    }
    if (allow_bytes && *p == 'B')
        p++;
    if (*p) {
        *err = allow_bytes ? "bad size (use e.g. 4096, 64KiB, 64MiB, 1GiB, 1GB)"
                           : "bad number (use e.g. 1000, 10k, 1M, 16Mi, 1e12, 2^40)";
        return -1;
    }
    /* num * mult / den must be a whole number that fits in 64 bits. */
    unsigned __int128 hi = num * mult; /* num <= 1.8e25, mult <= 1.2e18: may overflow */
    if (mult != 0 && hi / mult != num) {
        *err = "too large";
        return -1;
    }
    if (hi % den != 0) {
        *err = "not a whole number";
        return -1;
    }
    hi /= den;
    if (hi > UINT64_MAX) {
        *err = "too large";
        return -1;
    }
    *out = (uint64_t)hi;
    return 0;
}

int cli_parse_count(const char *s, uint64_t *out, const char **err)
{
    return parse_scaled(s, 0, out, err);
}

int cli_parse_bytes(const char *s, uint64_t *out, const char **err)
{
    return parse_scaled(s, 1, out, err);
}

int cli_parse_uint(const char *s, uint64_t lo, uint64_t hi, uint64_t *out, const char **err)
{
    if (!s || !*s) {
        *err = "empty value";
        return -1;
    }
    if (*s == '-') {
        *err = "must not be negative";
        return -1;
    }
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p)) {
            *err = "not a whole number";
            return -1;
        }
    errno = 0;
    unsigned long long v = strtoull(s, NULL, 10);
    if (errno == ERANGE || v > hi || v < lo) {
        *err = "out of range";
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}

int cli_parse_double(const char *s, double lo, double hi, int lo_incl, int hi_incl, double *out,
                     const char **err)
{
    if (!s || !*s) {
        *err = "empty value";
        return -1;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || end == s || isspace((unsigned char)*s)) {
        *err = "not a number";
        return -1;
    }
    if (!isfinite(v) || (errno == ERANGE && v != 0)) {
        *err = "out of range";
        return -1;
    }
    if ((lo_incl ? v < lo : v <= lo) || (hi_incl ? v > hi : v >= hi)) {
        *err = "out of range";
        return -1;
    }
    *out = v;
    return 0;
}

int cli_parse_hashing(const char *s, int *non_colliding)
{
    if (!strcmp(s, "colliding"))
        *non_colliding = 0;
    else if (!strcmp(s, "non-colliding"))
        *non_colliding = 1;
    else
        return -1;
    return 0;
}

int cli_parse_recycle(const char *s, int *retaining)
{
    if (!strcmp(s, "non-retaining"))
        *retaining = 0;
    else if (!strcmp(s, "retaining"))
        *retaining = 1;
    else
        return -1;
    return 0;
}

/* ---- option values: every bad value is reported by cli_bad_value, in one
 * form: "rbf CMD: OPT: invalid value 'ARG': WHY; expected WHAT". */

int cli_bad_value(const char *cmd, const char *opt, const char *arg, const char *why,
                  const char *expected_fmt, ...)
{
    char expected[256] = "";
    if (expected_fmt) {
        va_list ap;
        va_start(ap, expected_fmt);
        vsnprintf(expected, sizeof expected, expected_fmt, ap);
        va_end(ap);
    }
    return cli_usage(cmd, "%s: invalid value '%s'%s%s%s%s", opt, arg ? arg : "", why ? ": " : "",
                     why ? why : "", expected[0] ? "; expected " : "", expected);
}

int cli_opt_count(const char *cmd, const char *opt, const char *arg, uint64_t min, uint64_t *out)
{
    const char *err;
    if (cli_parse_count(arg, out, &err))
        return cli_bad_value(cmd, opt, arg, err, "a count of at least %llu (1000, 1k, 2Mi, 1e12, 2^40)",
                             (unsigned long long)min);
    if (*out < min)
        return cli_bad_value(cmd, opt, arg, "too small", "a count of at least %llu",
                             (unsigned long long)min);
    return CLI_EXIT_OK;
}

int cli_opt_uint(const char *cmd, const char *opt, const char *arg, uint64_t lo, uint64_t hi,
                 uint64_t *out)
{
    const char *err;
    if (cli_parse_uint(arg, lo, hi, out, &err))
        return cli_bad_value(cmd, opt, arg, err, "a whole number from %llu to %llu",
                             (unsigned long long)lo, (unsigned long long)hi);
    return CLI_EXIT_OK;
}

int cli_opt_bytes(const char *cmd, const char *opt, const char *arg, uint64_t *out)
{
    const char *err;
    if (cli_parse_bytes(arg, out, &err))
        return cli_bad_value(cmd, opt, arg, err, "a size in bytes (4096, 64KiB, 1MB, ...)");
    if (*out == 0)
        return cli_bad_value(cmd, opt, arg, "too small", "at least 1 byte");
    if (*out > UINT64_MAX / 8)
        return cli_bad_value(cmd, opt, arg, "too large", "at most 2^61 - 1 bytes");
    return CLI_EXIT_OK;
}

int cli_opt_prob(const char *cmd, const char *opt, const char *arg, double *out)
{
    const char *err;
    if (cli_parse_double(arg, 0.0, 1.0, 0, 0, out, &err))
        return cli_bad_value(cmd, opt, arg, err, "a number between 0 and 1, both excluded");
    return CLI_EXIT_OK;
}

int cli_opt_hashing(const char *cmd, const char *arg, int *non_colliding)
{
    if (cli_parse_hashing(arg, non_colliding))
        return cli_bad_value(cmd, "--hashing", arg, NULL, "colliding or non-colliding");
    return CLI_EXIT_OK;
}

int cli_opt_recycle(const char *cmd, const char *arg, int *retaining)
{
    if (cli_parse_recycle(arg, retaining))
        return cli_bad_value(cmd, "--recycle", arg, NULL, "non-retaining or retaining");
    return CLI_EXIT_OK;
}

int cli_opt_threads(const char *cmd, const char *arg, unsigned max, unsigned *out)
{
    uint64_t v;
    int rc = cli_opt_uint(cmd, "--threads", arg, 0, max, &v);
    if (rc)
        return rc;
    *out = (unsigned)v;
    return CLI_EXIT_OK;
}

unsigned cli_online_processors(unsigned max)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        return 1;
    return (unsigned long)n > max ? max : (unsigned)n;
}
int cli_opt_layout(const char *cmd, const char *arg, int *blocked)
{
    if (!strcmp(arg, "flat"))
        *blocked = 0;
    else if (!strcmp(arg, "blocked"))
        *blocked = 1;
    else
        return cli_bad_value(cmd, "--layout", arg, NULL, "flat or blocked");
    return CLI_EXIT_OK;
}

const char *cli_layout_name(int blocked) { return blocked ? "blocked" : "flat"; }

const char *cli_hashing_name(int non_colliding)
{
    return non_colliding ? "non-colliding" : "colliding";
}

const char *cli_recycle_name(int retaining) { return retaining ? "retaining" : "non-retaining"; }

const char *cli_method_name(int method)
{
    switch (method) {
    case RBF_MODEL_EXACT:
        return "exact";
    case RBF_MODEL_PAPER:
        return "paper";
    case RBF_MODEL_ASYMPTOTIC:
        return "fast";
    default:
        return "auto";
    }
}

int cli_opt_phases(const char *cmd, const char *arg, unsigned *phases)
{
    uint64_t v;
    const char *err;
    if (cli_parse_uint(arg, 1, 2, &v, &err))
        return cli_bad_value(cmd, "--phases", arg, NULL, "1 or 2");
    *phases = (unsigned)v;
    return CLI_EXIT_OK;
}

int cli_no_operands(const char *cmd, int argc, char **argv)
{
    if (optind < argc)
        return cli_usage(cmd, "unexpected argument '%s'", argv[optind]);
    return CLI_EXIT_OK;
}

/* ---- output */

int cli_finish_stdout(const char *cmd)
{
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        if (errno == EPIPE)
            return CLI_EXIT_OK;
        return cli_fail(cmd, "error writing output: %s", strerror(errno ? errno : EIO));
    }
    return CLI_EXIT_OK;
}

void cli_json_double(FILE *fp, double v)
{
    if (!isfinite(v)) {
        fputs("null", fp);
        return;
    }
    char buf[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    fputs(buf, fp);
}

void cli_json_field(FILE *fp, const char *name, double v)
{
    fprintf(fp, ", \"%s\": ", name);
    cli_json_double(fp, v);
}

void cli_json_string(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", fp); break;
        case '\\': fputs("\\\\", fp); break;
        case '\n': fputs("\\n", fp); break;
        case '\r': fputs("\\r", fp); break;
        case '\t': fputs("\\t", fp); break;
        default:
            if (*p < 0x20)
                fprintf(fp, "\\u%04x", *p);
            else
                fputc(*p, fp);
        }
    }
    fputc('"', fp);
}

/* ---- progress */

static struct {
    int on;
    const char *label;
    uint64_t total;
    double start, last;
    int drawn;
} prog;

static double clock_seconds(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double cli_wall_seconds(void) { return clock_seconds(CLOCK_MONOTONIC); }

double cli_cpu_seconds(void) { return clock_seconds(CLOCK_PROCESS_CPUTIME_ID); }

void cli_progress_begin(const char *label, uint64_t total)
{
    prog.on = isatty(STDERR_FILENO) && getenv("RBF_NO_PROGRESS") == NULL;
    prog.label = label;
    prog.total = total;
    prog.start = cli_wall_seconds();
    prog.last = prog.start;
    prog.drawn = 0;
}

void cli_progress_update(uint64_t done)
{
    if (!prog.on)
        return;
    double t = cli_wall_seconds();
    /* Show nothing for work that ends within a second; then redraw at 10 Hz. */
    if (t - prog.start < 1.0 || t - prog.last < 0.1)
        return;
    prog.last = t;
    double frac = prog.total ? (double)done / (double)prog.total : 0;
    if (frac > 1)
        frac = 1;
    int width = 30, fill = (int)(frac * width);
    double el = t - prog.start;
    double eta = frac > 0 ? el * (1 - frac) / frac : 0;
    fprintf(stderr, "\r%s [%.*s%*s] %5.1f%%  %.0fs left ", prog.label, fill,
            "##############################", width - fill, "", 100 * frac, eta);
    fflush(stderr);
    prog.drawn = 1;
}

void cli_progress_end(void)
{
    if (prog.on && prog.drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    prog.on = 0;
    prog.drawn = 0;
}

int cli_progress_cb(void *ctx, uint64_t done, uint64_t total)
{
    (void)ctx;
    if (prog.total != total)
        prog.total = total;
    cli_progress_update(done);
    return 0;
}
