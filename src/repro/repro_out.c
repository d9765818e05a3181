/*
 * repro_out.c -- files of the reproduce module: strings, seeds, progress
 * lines, files in the output directory and running gnuplot on the scripts.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_util.h"
#include "repro_internal.h"

char *repro_vstrdupf(const char *fmt, va_list ap)
{
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (s)
        vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

char *repro_strdupf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = repro_vstrdupf(fmt, ap);
    va_end(ap);
    return s;
}

int repro_oom(repro_ctx *c)
{
    cli_fail("reproduce", "out of memory");
    c->failed = 1;
    return -1;
}

/* The first output of the splitmix64 stream seeded with x: a cheap
 * bijective mix, enough to decorrelate the seeds of neighbouring jobs. */
static uint64_t mix64(uint64_t x)
{
    return rbf_splitmix64(&x);
}

uint64_t repro_job_seed(const repro_ctx *c, unsigned step, uint64_t index)
{
    return mix64(mix64(mix64(c->seed) ^ step) ^ index);
}

void repro_log(const char *fmt, ...)
{
    va_list ap;
    fputs("rbf reproduce: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}

/* ---- files */

/* "DIR/name" on the heap, or NULL (reported). */
static char *path_in(repro_ctx *c, const char *name)
{
    char *p = repro_strdupf("%s/%s", c->out, name);
    if (!p)
        repro_oom(c);
    return p;
}

FILE *repro_open(repro_ctx *c, const char *name)
{
    char *p = path_in(c, name);
    if (!p)
        return NULL;
    FILE *fp = fopen(p, "w");
    if (!fp) {
        cli_fail("reproduce", "cannot write %s: %s", p, strerror(errno));
        c->failed = 1;
    }
    free(p);
    return fp;
}

int repro_close(repro_ctx *c, FILE *fp, const char *name)
{
    int bad = ferror(fp);
    if (fclose(fp) != 0)
        bad = 1;
    if (bad) {
        cli_fail("reproduce", "write error on %s/%s", c->out, name);
        c->failed = 1;
        return -1;
    }
    return 0;
}

/* ---- gnuplot */

/* The names of a figure's files: "fig3" -> "fig3.gp", ...  Figure names
 * are short constants, so a fixed buffer holds them. */
typedef struct fig_file {
    char s[32];
} fig_file;

static fig_file fig_file_of(const char *name, const char *ext)
{
    fig_file f;
    snprintf(f.s, sizeof f.s, "%s.%s", name, ext);
    return f;
}

FILE *repro_gp_begin(repro_ctx *c, const char *name, int width, int height)
{
    FILE *gp = repro_open(c, fig_file_of(name, "gp").s);
    if (!gp)
        return NULL;
    fprintf(gp,
            "# %s.gp -- written by `rbf reproduce`; restyle freely and rerun\n"
            "#   gnuplot %s.gp                      (in this directory: %s.png and %s.svg)\n"
            "#   gnuplot -e 'formats=\"png\"' %s.gp   (one format only)\n"
            "# Data: %s*.csv (comma separated, first line = column names).\n"
            "if (!exists(\"formats\")) formats = \"png svg\"\n"
            "do for [fmt in formats] {\n"
            "if (fmt eq \"png\") {\n"
            "  set terminal pngcairo size %d,%d enhanced font 'Sans,11' linewidth 1.5\n"
            "} else {\n"
            "  set terminal svg size %d,%d dynamic enhanced font 'Sans,11' linewidth 1.5 "
            "background '#ffffff'\n"
            "}\n"
            "set output '%s.'.fmt\n"
            "reset\n"
            "set encoding utf8\n"
            "set datafile separator ','\n"
            "set datafile columnheaders\n"
            "set grid lc rgb '#d8d8d8' lw 0.8\n"
            "set border lw 1\n"
            "set key opaque box lc rgb '#bbbbbb' samplen 2 spacing 1.1\n",
            name, name, name, name, name, name, width, height, width, height, name);
    return gp;
}

/* Is DIR/name a non-empty regular file?  0 also when out of memory
 * (reported). */
static int nonempty_file(repro_ctx *c, const char *name)
{
    char *p = path_in(c, name);
    if (!p)
        return 0;
    struct stat st;
    int ok = stat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
    free(p);
    return ok;
}

/* Run `gnuplot SCRIPT` with DIR as working directory, stdout and stderr
 * appended to DIR/gnuplot.log.  Returns gnuplot's exit status or -1. */
static int run_gnuplot(repro_ctx *c, const char *script)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        /* only async-signal-safe calls between fork and exec */
        if (chdir(c->out) != 0)
            _exit(126);
        int log = open("gnuplot.log", O_WRONLY | O_APPEND | O_CREAT, 0666);
        if (log < 0 || dup2(log, STDOUT_FILENO) < 0 || dup2(log, STDERR_FILENO) < 0)
            _exit(126);
        close(log);
        execlp("gnuplot", "gnuplot", script, (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int repro_gp_end(repro_ctx *c, FILE *gp, const char *name)
{
    fprintf(gp, "unset multiplot\nunset output\n}\n");
    fig_file script = fig_file_of(name, "gp");
    int rc = repro_close(c, gp, script.s);
    if (rc == 0 && c->have_gnuplot) {
        int st = run_gnuplot(c, script.s);
        if (st != 0 || !nonempty_file(c, fig_file_of(name, "png").s) ||
            !nonempty_file(c, fig_file_of(name, "svg").s)) {
            cli_fail("reproduce", "gnuplot failed on %s/%s (exit %d): see %s/gnuplot.log", c->out,
                     script.s, st, c->out);
            c->failed = 1;
            rc = -1;
        }
    }
    for (size_t i = 0; i < c->nfigs; i++)
        if (!strcmp(c->figs[i].name, name))
            c->figs[i].drawn = rc == 0 && c->have_gnuplot;
    return rc;
}
