/*
 * bench_dedup.c -- `rbf bench dedup`: lines per second of `rbf dedup`
 * against awk '!seen[$0]++' (gawk and mawk, whichever are installed) and
 * `sort -u`, each run end to end as a child process (fork/exec, input from
 * a file, output to /dev/null), median of a few runs of the wall time and
 * of the CPU time (user + system: steadier on a shared machine), with the
 * child's peak resident memory, all from wait4's rusage.
 *
 * The input is generated deterministically before any timing: LINES lines,
 * each one of DISTINCT ids drawn uniformly with a fixed splitmix64 stream
 * and printed as a URL-like line ("/item/<16 hex digits>?v=<id mod 97>"),
 * written to a temporary file that is removed afterwards.  Children run
 * with LC_ALL=C so awk and sort compare bytes, as rbf does.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "cli_util.h"
#include "rbf_base.h"

#define BCMD "bench dedup"

static uint64_t sm64(uint64_t *s) { return rbf_splitmix64(s); }

/* Write the input file.  Returns 0 or -1 (errno set). */
static int make_input(const char *path, uint64_t lines, uint64_t distinct)
{
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return -1;
    static char buf[1 << 20];
    setvbuf(fp, buf, _IOFBF, sizeof buf);
    uint64_t s = 20240607;
    for (uint64_t i = 0; i < lines; i++) {
        uint64_t id = sm64(&s) % distinct;
        uint64_t t = id * 0x9e3779b97f4a7c15ULL;
        fprintf(fp, "/item/%016" PRIx64 "?v=%" PRIu64 "\n", sm64(&t), id % 97);
    }
    if (fclose(fp) != 0)
        return -1;
    return 0;
}


/* Find `prog` in PATH (or take it as given if it has a '/').  Returns a
 * malloc'd path or NULL. */
static char *find_prog(const char *prog)
{
    if (strchr(prog, '/'))
        return access(prog, X_OK) == 0 ? strdup(prog) : NULL;
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        size_t n = strcspn(path, ":");
        char *cand = malloc(n + strlen(prog) + 2);
        if (!cand)
            return NULL;
        memcpy(cand, path, n);
        cand[n] = '/';
        strcpy(cand + n + 1, prog);
        if (n > 0 && access(cand, X_OK) == 0)
            return cand;
        free(cand);
        path += n;
        if (*path == ':')
            path++;
    }
    return NULL;
}

/* The rbf binary: this program if it is rbf, else `rbf` next to it. */
static char *find_rbf(void)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 8);
    if (n <= 0)
        return NULL;
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (slash && !strcmp(slash + 1, "rbf"))
        return strdup(self);
    if (slash) {
        strcpy(slash + 1, "rbf");
        if (access(self, X_OK) == 0)
            return strdup(self);
    }
    return NULL;
}

/* Run argv once with stdin from `input` and stdout to /dev/null.  Returns
 * 0 and the wall time, CPU time (user + system) and peak RSS (KiB), or -1
 * if it failed. */
static int run_once(char *const argv[], const char *input, double *secs, double *cpu,
                    long *maxrss_kib)
{
    double t0 = cli_wall_seconds();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int in = open(input, O_RDONLY);
        int out = open("/dev/null", O_WRONLY);
        if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0)
            _exit(126);
        close(in);
        close(out);
        setenv("LC_ALL", "C", 1);
        execv(argv[0], argv);
        _exit(127);
    }
    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0)
        if (errno != EINTR)
            return -1;
    *secs = cli_wall_seconds() - t0;
    *maxrss_kib = ru.ru_maxrss;
    *cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static void usage(FILE *fp)
{
    fprintf(fp,
            "Usage: rbf bench dedup [--lines N] [--distinct D] [--runs R] [--memory SIZE]\n"
            "                       [--input FILE] [--rbf PATH] [--redis URL]\n"
            "\n"
            "Lines per second of 'rbf dedup --memory SIZE' (its default layout, and\n"
            "--layout blocked) against 'cat f | cat' (the floor: reading and piping the\n"
            "bytes), awk '!seen[$0]++' (gawk and mawk, when installed) and 'sort -u', each\n"
            "run end to end with output to\n"
            "/dev/null and LC_ALL=C; the median of R runs (default 3) and each tool's peak\n"
            "memory.  Input: N lines (default 10M) of D distinct ids (default 3M), made\n"
            "deterministically in a temporary file before timing, or --input FILE.\n"
            "--redis URL adds a row for the shared filter of a server with the rbf module\n"
            "('rbf dedup --redis URL --key rbf-bench-dedup-PID-TIME --layout flat'; the key\n"
            "is left on the server).\n");
}

/* The input: the given file, its lines counted into *lines; or, when
 * *input is NULL, *lines lines of `distinct` ids generated into tmpl
 * (*made = 1).  0, or the exit code of the failure reported. */
static int prepare_input(char *tmpl, const char **input, uint64_t *lines, uint64_t distinct,
                         int *made)
{
    if (!*input) {
        int fd = mkstemp(tmpl);
        if (fd < 0)
            return cli_fail(BCMD, "cannot create a temporary file: %s", strerror(errno));
        close(fd);
        fprintf(stderr, "generating %" PRIu64 " lines of %" PRIu64 " distinct ids...\n", *lines,
                distinct);
        if (make_input(tmpl, *lines, distinct) < 0) {
            int e = errno;
            unlink(tmpl);
            return cli_fail(BCMD, "cannot write %s: %s", tmpl, strerror(e));
        }
        *input = tmpl;
        *made = 1;
        return 0;
    }
    FILE *fp = fopen(*input, "rb");
    if (!fp)
        return cli_fail(BCMD, "%s: %s", *input, strerror(errno));
    *lines = 0;
    int ch;
    while ((ch = getc(fp)) != EOF)
        *lines += ch == '\n';
    fclose(fp);
    return 0;
}

int bench_dedup_main(int argc, char **argv)
{
    uint64_t lines = 10000000, distinct = 3000000, runs = 3, bytes = 64ULL << 20;
    const char *input = NULL, *rbf_path = NULL, *redis_url = NULL;
    enum { O_LINES = 256, O_DISTINCT, O_RUNS, O_MEMORY, O_INPUT, O_RBF, O_HELP, O_REDIS };
    static const struct option opts[] = {
        {"lines", required_argument, NULL, O_LINES},
        {"distinct", required_argument, NULL, O_DISTINCT},
        {"runs", required_argument, NULL, O_RUNS},
        {"memory", required_argument, NULL, O_MEMORY},
        {"input", required_argument, NULL, O_INPUT},
        {"rbf", required_argument, NULL, O_RBF},
        {"redis", required_argument, NULL, O_REDIS},
        {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0},
    };
    cli_getopt_reset();
    int c, rc;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case O_LINES:
            if ((rc = cli_opt_count(BCMD, "--lines", optarg, 1, &lines)))
                return rc;
            break;
        case O_DISTINCT:
            if ((rc = cli_opt_count(BCMD, "--distinct", optarg, 1, &distinct)))
                return rc;
            break;
        case O_RUNS:
            if ((rc = cli_opt_uint(BCMD, "--runs", optarg, 1, 99, &runs)))
                return rc;
            break;
        case O_MEMORY:
            if ((rc = cli_opt_bytes(BCMD, "--memory", optarg, &bytes)))
                return rc;
            break;
        case O_INPUT: input = optarg; break;
        case O_RBF: rbf_path = optarg; break;
        case O_REDIS: redis_url = optarg; break;
        case O_HELP:
            usage(stdout);
            return cli_finish_stdout(BCMD);
        default:
            return cli_bad_option(BCMD, argc, argv, opts);
        }
    }
    if ((rc = cli_no_operands(BCMD, argc, argv)))
        return rc;

    char *rbf = rbf_path ? strdup(rbf_path) : find_rbf();
    if (!rbf || access(rbf, X_OK) != 0) {
        free(rbf);
        return cli_fail(BCMD, "cannot find the rbf binary (give --rbf PATH)");
    }
    char tmpl[] = "/tmp/rbf-bench-dedup-XXXXXX";
    int made = 0;
    if ((rc = prepare_input(tmpl, &input, &lines, distinct, &made))) {
        free(rbf);
        return rc;
    }
    struct stat sb;
    uint64_t in_bytes = stat(input, &sb) == 0 ? (uint64_t)sb.st_size : 0;

    char membuf[32];
    snprintf(membuf, sizeof membuf, "%" PRIu64, bytes);
    char *gawk = find_prog("gawk"), *mawk = find_prog("mawk"), *sort = find_prog("sort");
    char *sh = find_prog("sh");
    char redis_key[64];
    snprintf(redis_key, sizeof redis_key, "rbf-bench-dedup-%ld-%ld", (long)getpid(), (long)time(NULL));
    struct {
        const char *label;
        char *argv[12];
    } tools[] = {
        {"rbf dedup", {rbf, (char *)"dedup", (char *)"--memory", membuf, (char *)"--seed",
                       (char *)"1", NULL}},
        {"rbf dedup (blocked)", {rbf, (char *)"dedup", (char *)"--memory", membuf, (char *)"--seed",
                       (char *)"1", (char *)"--layout", (char *)"blocked", NULL}},
        /* the floor: the bytes through two pipes' worth of copying */
        {"cat f | cat", {sh, (char *)"-c", (char *)"cat \"$0\" | cat", (char *)input, NULL}},
        {"gawk '!seen[$0]++'", {gawk, (char *)"!seen[$0]++", NULL}},
        {"mawk '!seen[$0]++'", {mawk, (char *)"!seen[$0]++", NULL}},
        {"sort -u", {sort, (char *)"-u", NULL}},
        /* the shared filter: a new key per bench run, so the first run
         * also reserves (plans) it and the later ones find it full of the
         * same lines (the server inserts every line either way) */
        {"rbf dedup --redis", {redis_url ? rbf : NULL, (char *)"dedup", (char *)"--redis",
                               (char *)redis_url, (char *)"--key", redis_key, (char *)"--memory",
                               membuf, (char *)"--layout", (char *)"flat", NULL}},
    };
    size_t ntools = sizeof tools / sizeof tools[0];
    double med[10] = {0}, medcpu[10] = {0};
    const size_t cat_row = 2;
    rc = CLI_EXIT_OK;

    printf("input: %" PRIu64 " lines, %" PRIu64 " bytes (%s); rbf dedup --memory %" PRIu64
           " bytes; median of %" PRIu64 " runs, LC_ALL=C, output to /dev/null\n",
           lines, in_bytes, made ? "generated" : input, bytes, runs);
    printf("%-20s %9s %12s %9s %9s %13s\n", "tool", "wall s", "lines/s", "CPU s", "peak MiB",
           "rbf speedup");
    fflush(stdout);
    for (size_t t = 0; t < ntools; t++) {
        if (!tools[t].argv[0]) {
            if (t + 1 < ntools || redis_url)
                printf("%-22s (not installed)\n", tools[t].label);
            continue;
        }
        double secs[99], cpus[99];
        long peak = 0;
        int ok = 1;
        for (uint64_t r = 0; r < runs && ok; r++) {
            long rss;
            if (run_once(tools[t].argv, input, &secs[r], &cpus[r], &rss) < 0)
                ok = 0;
            else if (rss > peak)
                peak = rss;
        }
        if (!ok) {
            printf("%-22s (failed)\n", tools[t].label);
            rc = CLI_EXIT_FAIL;
            continue;
        }
        qsort(secs, (size_t)runs, sizeof secs[0], bench_cmp_double);
        qsort(cpus, (size_t)runs, sizeof cpus[0], bench_cmp_double);
        med[t] = secs[runs / 2];
        medcpu[t] = cpus[runs / 2];
        char speed[40] = "";
        if (t > 0 && med[0] > 0 && medcpu[0] > 0)
            snprintf(speed, sizeof speed, "%.1fx (CPU %.1fx)", med[t] / med[0],
                     medcpu[t] / medcpu[0]);
        printf("%-20s %9.3f %12.0f %9.3f %9.1f %13s\n", tools[t].label, med[t],
               (double)lines / med[t], medcpu[t], (double)peak / 1024.0, speed);
        fflush(stdout);
    }
    if (med[0] > 0 && med[cat_row] > 0)
        printf("rbf dedup (default layout, planning included) / cat f | cat: %.2fx wall "
               "(goal: at most 2.5x)\n",
               med[0] / med[cat_row]);
    if (made)
        unlink(tmpl);
    free(rbf);
    free(gawk);
    free(mawk);
    free(sort);
    free(sh);
    int frc = cli_finish_stdout(BCMD);
    return rc != CLI_EXIT_OK ? rc : frc;
}
