/*
 * fuzz_cli.c -- libFuzzer harness for the rbf command line: the subcommand
 * table of src/cli/cli_main.c (through its entry point rbf_cli_main) and
 * the option parsers of the subcommands.
 *
 * The input is split at NUL bytes and newlines into up to 24 arguments.  The
 * first byte picks the command (model, plan, simulate, or a bare top-level
 * argv).  To keep every run light, inputs are skipped when any number in
 * them exceeds 64 (so a valid command line does tiny work), when they name a
 * path ('/': no reading of arbitrary files such as /dev/zero), or when they
 * would read stdin (dedup) or write files (reproduce, bench); `simulate` runs
 * 2000 arrivals an epoch unless the input says otherwise or names a trace
 * (its default of 100000 takes seconds under the sanitizers, and more with
 * many hashes and epochs; a trace is replayed whole, and --arrivals with it
 * is a usage error).  What is
 * checked: no crash, no leak, no undefined behaviour, and exit statuses in
 * {0, 1, 2}.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Largest number allowed anywhere in the input. */
#define MAX_NUMBER 64.0

/* 1 if some number-like token of `a` (a digit followed by digits, letters,
 * '.', '+', '-') is larger than MAX_NUMBER as a count or as a double. */
static int has_big_number(const char *a)
{
    for (const char *p = a; *p; p++) {
        if (*p < '0' || *p > '9' || (p > a && strchr("0123456789.", p[-1])))
            continue;
        char tok[64];
        size_t n = strspn(p, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.+-");
        if (n >= sizeof tok)
            return 1;
        memcpy(tok, p, n);
        tok[n] = '\0';
        uint64_t v;
        const char *err;
        if (cli_parse_count(tok, &v, &err) == 0 && (double)v > MAX_NUMBER)
            return 1;
        if (strtod(tok, NULL) > MAX_NUMBER)
            return 1;
        /* any prefix strtoull would read, e.g. "999x" */
        if (strtoull(tok, NULL, 0) > (unsigned long long)MAX_NUMBER)
            return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int quiet;
    if (!quiet) { /* the commands' output is not what is tested */
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            close(fd);
        }
        quiet = 1;
    }
    if (size < 1 || size > 512)
        return 0;
    static const char *const cmds[] = {"model", "plan", "simulate", NULL};
    const char *cmd = cmds[data[0] % 4];
    char *buf = malloc(size);
    if (!buf)
        abort();
    memcpy(buf, data + 1, size - 1);
    buf[size - 1] = '\0';
    char *argv[30];
    int argc = 0;
    argv[argc++] = (char *)"rbf";
    if (cmd)
        argv[argc++] = (char *)cmd;
    char *p = buf, *end = buf + size - 1;
    while (p < end && argc < 26) {
        char *q = p;
        while (q < end && *q != '\0' && *q != '\n')
            q++;
        *q = '\0';
        argv[argc++] = p;
        p = q + 1;
    }
    argv[argc] = NULL;
    int skip = 0;
    for (int i = 1; i < argc && !skip; i++)
        skip = has_big_number(argv[i]) || strchr(argv[i], '/') != NULL ||
               (!cmd && i == 1 && strcmp(argv[1], "model") && strcmp(argv[1], "plan") &&
                strcmp(argv[1], "simulate") && argv[1][0] != '-' && strcmp(argv[1], "help"));
    int trace = 0; /* --arrivals is a usage error with a trace workload */
    for (int i = 2; i < argc; i++)
        trace |= strstr(argv[i], "trace:") != NULL;
    if (!skip && !trace && argc > 1 && !strcmp(argv[1], "simulate")) { /* lighter, overridable */
        memmove(argv + 4, argv + 2, (size_t)(argc - 1) * sizeof argv[0]);
        argv[2] = (char *)"--arrivals";
        argv[3] = (char *)"2000";
        argc += 2;
    }
    if (!skip) {
        int rc = rbf_cli_main(argc, argv);
        if (rc < 0 || rc > 2)
            abort();
    }
    free(buf);
    return 0;
}
