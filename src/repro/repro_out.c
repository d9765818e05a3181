/*
 * reproduce_out.c -- output of `rbf reproduce`: files, gnuplot, the report
 * and claims.json, statistics and the thread pool shared by the steps.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_util.h"
#include "rbf.h"
#include "repro_internal.h"

static char empty_str[1];

static char *vstrdupf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

static char *vstrdupf(const char *fmt, va_list ap)
{
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    if (n < 0)
        return empty_str;
    char *s = malloc((size_t)n + 1);
    if (!s)
        return empty_str;
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

char *repro_strdupf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = vstrdupf(fmt, ap);
    va_end(ap);
    return s;
}

void repro_free_str(char *s)
{
    if (s != empty_str)
        free(s);
}

static char *dupstr(const char *s)
{
    return s ? repro_strdupf("%s", s) : NULL;
}

/* splitmix64 finaliser: a cheap bijective mix, enough to decorrelate the
 * seeds of neighbouring jobs. */
static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
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

static char *path_in(const repro_ctx *c, const char *name)
{
    return repro_strdupf("%s/%s", c->out, name);
}

FILE *repro_open(repro_ctx *c, const char *name)
{
    char *p = path_in(c, name);
    FILE *fp = fopen(p, "w");
    if (!fp) {
        cli_fail("reproduce", "cannot write %s: %s", p, strerror(errno));
        c->failed = 1;
    }
    repro_free_str(p);
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

FILE *repro_gp_begin(repro_ctx *c, const char *name, int width, int height)
{
    char *fname = repro_strdupf("%s.gp", name);
    FILE *gp = repro_open(c, fname);
    repro_free_str(fname);
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

static int nonempty_file(const repro_ctx *c, const char *name)
{
    char *p = path_in(c, name);
    struct stat st;
    int ok = stat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
    repro_free_str(p);
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
        if (chdir(c->out) != 0)
            _exit(126);
        FILE *log = freopen("gnuplot.log", "a", stdout);
        if (!log || dup2(STDOUT_FILENO, STDERR_FILENO) < 0)
            _exit(126);
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
    char *script = repro_strdupf("%s.gp", name);
    int rc = repro_close(c, gp, script);
    if (rc == 0 && c->have_gnuplot) {
        int st = run_gnuplot(c, script);
        char *png = repro_strdupf("%s.png", name), *svg = repro_strdupf("%s.svg", name);
        if (st != 0 || !nonempty_file(c, png) || !nonempty_file(c, svg)) {
            cli_fail("reproduce", "gnuplot failed on %s/%s (exit %d): see %s/gnuplot.log", c->out,
                     script, st, c->out);
            c->failed = 1;
            rc = -1;
        }
        repro_free_str(png);
        repro_free_str(svg);
    }
    repro_free_str(script);
    for (size_t i = 0; i < c->nfigs; i++)
        if (!strcmp(c->figs[i].name, name))
            c->figs[i].drawn = rc == 0 && c->have_gnuplot;
    return rc;
}

/* ---- report items */

void repro_figure_add(repro_ctx *c, const char *name, char *title, char *caption, char *data)
{
    if (c->nfigs == sizeof c->figs / sizeof c->figs[0]) {
        repro_free_str(title);
        repro_free_str(caption);
        repro_free_str(data);
        return;
    }
    repro_figure *f = &c->figs[c->nfigs++];
    snprintf(f->name, sizeof f->name, "%s", name);
    f->title = title;
    f->caption = caption;
    f->data = data;
    f->drawn = 0;
}

void repro_claim_add(repro_ctx *c, const char *id, const char *claim, const char *where,
                     const char *paper, int holds, const char *note, const char *ours_fmt, ...)
{
    if (c->nclaims == c->cap_claims) {
        size_t cap = c->cap_claims ? 2 * c->cap_claims : 16;
        repro_claim *p = realloc(c->claims, cap * sizeof *p);
        if (!p) {
            c->failed = 1;
            return;
        }
        c->claims = p;
        c->cap_claims = cap;
    }
    repro_claim *k = &c->claims[c->nclaims++];
    k->id = dupstr(id);
    k->claim = dupstr(claim);
    k->where = dupstr(where);
    k->paper = dupstr(paper);
    k->holds = holds;
    k->note = dupstr(note);
    va_list ap;
    va_start(ap, ours_fmt);
    k->ours = vstrdupf(ours_fmt, ap);
    va_end(ap);
}

void repro_note(repro_ctx *c, const char *fmt, ...)
{
    if (c->nnotes == c->cap_notes) {
        size_t cap = c->cap_notes ? 2 * c->cap_notes : 8;
        char **p = realloc(c->notes, cap * sizeof *p);
        if (!p)
            return;
        c->notes = p;
        c->cap_notes = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    c->notes[c->nnotes++] = vstrdupf(fmt, ap);
    va_end(ap);
}

void repro_ctx_free(repro_ctx *c)
{
    for (size_t i = 0; i < c->nfigs; i++) {
        repro_free_str(c->figs[i].title);
        repro_free_str(c->figs[i].caption);
        repro_free_str(c->figs[i].data);
    }
    for (size_t i = 0; i < c->nclaims; i++) {
        repro_claim *k = &c->claims[i];
        repro_free_str(k->id);
        repro_free_str(k->claim);
        repro_free_str(k->where);
        repro_free_str(k->paper);
        repro_free_str(k->ours);
        if (k->note)
            repro_free_str(k->note);
    }
    free(c->claims);
    for (size_t i = 0; i < c->nnotes; i++)
        repro_free_str(c->notes[i]);
    free(c->notes);
    memset(c, 0, sizeof *c);
}

/* A markdown table cell: '|' escaped, newlines flattened. */
static void md_cell(FILE *fp, const char *s)
{
    fputc(' ', fp);
    for (const char *p = s ? s : ""; *p; p++) {
        if (*p == '|')
            fputs("\\|", fp);
        else if (*p == '\n')
            fputc(' ', fp);
        else
            fputc(*p, fp);
    }
    fputs(" |", fp);
}

static const char *mode_name(repro_mode m)
{
    return m == REPRO_QUICK ? "--quick" : m == REPRO_FULL ? "--full" : "default";
}

static const char *holds_word(int h)
{
    return h > 0 ? "yes" : h == 0 ? "no" : "n/a";
}

static int write_claims_json(repro_ctx *c, double seconds)
{
    FILE *fp = repro_open(c, "claims.json");
    if (!fp)
        return -1;
    size_t yes = 0, no = 0;
    for (size_t i = 0; i < c->nclaims; i++)
        yes += c->claims[i].holds > 0, no += c->claims[i].holds == 0;
    fprintf(fp, "{\n  \"rbf_version\": ");
    cli_json_string(fp, rbf_version());
    fprintf(fp, ",\n  \"mode\": ");
    cli_json_string(fp, mode_name(c->mode));
    fprintf(fp, ",\n  \"seed\": %llu,\n  \"threads\": %u,\n  \"seconds\": ",
            (unsigned long long)c->seed, c->threads);
    cli_json_double(fp, seconds);
    fprintf(fp, ",\n  \"holds\": %zu,\n  \"fails\": %zu,\n  \"claims\": [\n", yes, no);
    for (size_t i = 0; i < c->nclaims; i++) {
        const repro_claim *k = &c->claims[i];
        fprintf(fp, "    {\"id\": ");
        cli_json_string(fp, k->id);
        fprintf(fp, ", \"claim\": ");
        cli_json_string(fp, k->claim);
        fprintf(fp, ", \"where\": ");
        cli_json_string(fp, k->where);
        fprintf(fp, ", \"paper\": ");
        cli_json_string(fp, k->paper);
        fprintf(fp, ", \"ours\": ");
        cli_json_string(fp, k->ours);
        fprintf(fp, ", \"holds\": %s", k->holds > 0 ? "true" : k->holds == 0 ? "false" : "null");
        if (k->note) {
            fprintf(fp, ", \"note\": ");
            cli_json_string(fp, k->note);
        }
        fprintf(fp, "}%s\n", i + 1 < c->nclaims ? "," : "");
    }
    fprintf(fp, "  ]\n}\n");
    return repro_close(c, fp, "claims.json");
}

int repro_write_report(repro_ctx *c, double seconds)
{
    FILE *fp = repro_open(c, "report.md");
    if (!fp)
        return -1;
    const repro_sizes *s = &c->sz;
    size_t yes = 0, no = 0, na = 0;
    for (size_t i = 0; i < c->nclaims; i++) {
        int h = c->claims[i].holds;
        yes += h > 0, no += h == 0, na += h < 0;
    }
    char na_text[64] = "";
    if (na)
        snprintf(na_text, sizeof na_text, ", %zu could not be evaluated", na);
    fprintf(fp,
            "# Recycling Bloom filters: the paper's results, regenerated\n"
            "\n"
            "Generated by `rbf reproduce` (rbf %s, %s run, seed %llu, %u thread%s) in %.1f s.\n"
            "Every number below is computed by this run: the models (`rbf_model.h`), the\n"
            "simulator driving the library's real filter (`rbf_sim.h`) and the planner.\n"
            "The paper is *Modeling Average False Positive Rates of Recycling Bloom\n"
            "Filters*; section and figure numbers refer to it.\n"
            "\n"
            "**Claims checked: %zu hold, %zu do not%s.** The table is at the end.\n"
            "\n"
            "Sample sizes of this run (the paper's, MODEL.md 7, in brackets):\n"
            "\n"
            "- Fig. 3, σ-bounded: %u (one-phase) and %u (two-phase) epochs of %llu arrivals per\n"
            "  point [7 and 10 epochs of 100,000]; M = 1000 bits, two-phase 500 + 500; a pool of\n"
            "  1000 messages drawn uniformly with replacement.\n"
            "- Fig. 4, N-bounded: %u epochs of %llu arrivals per point [14 of 1,000,000].\n"
            "- Fig. 8 and the count-variant claim (beyond the paper): %u epochs of %llu arrivals\n"
            "  per point.\n"
            "- Figs. 5-7, planner: M = 2^%u .. 2^%u bits; ε from 10^-4 to 10^-1 with %u points\n"
            "  per decade at M = %llu bits; k = 1..%u per policy.\n"
            "\n"
            "Intervals are two-sided 99%% Student-t intervals across epochs (one rate per\n"
            "epoch), as in the paper. Rerun with `rbf reproduce --seed S` for other random\n"
            "streams, `--full` for the paper's sample sizes or larger. Each figure's data are\n"
            "in the CSV files named under it, and its gnuplot script `figN.gp` sits next to\n"
            "them (restyle and rerun `gnuplot figN.gp` in this directory).\n"
            "\n",
            rbf_version(), mode_name(c->mode), (unsigned long long)c->seed, c->threads,
            c->threads == 1 ? "" : "s", seconds, yes, no,
            na_text, s->sigma_epochs1,
            s->sigma_epochs2, (unsigned long long)s->sigma_arrivals, s->n_epochs,
            (unsigned long long)s->n_arrivals, s->fn_epochs, (unsigned long long)s->fn_arrivals,
            s->m_log2_lo, s->m_log2_hi, s->eps_per_decade, (unsigned long long)s->eps_bits,
            s->max_hashes);
    if (!c->have_gnuplot)
        fprintf(fp, "> gnuplot was not found: the figures were not drawn. Install Debian's\n"
                    "> `gnuplot-nox` and run the `figN.gp` scripts in this directory.\n\n");

    fprintf(fp, "## Figures\n\n");
    for (size_t i = 0; i < c->nfigs; i++) {
        const repro_figure *f = &c->figs[i];
        fprintf(fp, "### %s\n\n", f->title);
        if (f->drawn)
            fprintf(fp, "![%s](%s.png)\n\n", f->name, f->name);
        else
            fprintf(fp, "*(%s.png was not drawn: see gnuplot.log)*\n\n", f->name);
        fprintf(fp, "%s\n\nData: %s; script: `%s.gp`; vector image: [%s.svg](%s.svg).\n\n",
                f->caption, f->data, f->name, f->name, f->name);
    }

    fprintf(fp,
            "## Claims\n\n"
            "Every *holds* entry is computed from the data of this run by `rbf reproduce`;\n"
            "a claim that fails is printed as **no** with its numbers.\n\n"
            "| # | Claim | Where in the paper | Paper | This run | Holds |\n"
            "|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < c->nclaims; i++) {
        const repro_claim *k = &c->claims[i];
        fprintf(fp, "| %zu |", i + 1);
        md_cell(fp, k->claim);
        md_cell(fp, k->where);
        md_cell(fp, k->paper);
        md_cell(fp, k->ours);
        fprintf(fp, " %s |\n", k->holds > 0 ? "yes" : k->holds == 0 ? "**no**" : "n/a");
    }
    fprintf(fp, "\n");
    int any_note = 0;
    for (size_t i = 0; i < c->nclaims; i++)
        any_note |= c->claims[i].note != NULL;
    if (any_note) {
        fprintf(fp, "Notes on the claims:\n\n");
        for (size_t i = 0; i < c->nclaims; i++)
            if (c->claims[i].note)
                fprintf(fp, "%zu. (claim %zu, %s) %s\n", i + 1, i + 1,
                        holds_word(c->claims[i].holds), c->claims[i].note);
        fprintf(fp, "\n");
    }
    if (c->nnotes) {
        fprintf(fp, "## Notes\n\n");
        for (size_t i = 0; i < c->nnotes; i++)
            fprintf(fp, "- %s\n", c->notes[i]);
        fprintf(fp, "\n");
    }
    fprintf(fp, "Machine-readable: `claims.json` holds the same table.\n");
    int rc = repro_close(c, fp, "report.md");
    if (write_claims_json(c, seconds) != 0)
        rc = -1;
    return rc;
}

/* ---- thread pool */

typedef struct pool {
    pthread_mutex_t lock;
    size_t next, done, n;
    int rc;
    int (*fn)(void *, size_t);
    void *arg;
} pool;

static void *pool_worker(void *p_)
{
    pool *p = p_;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        if (p->rc != 0 || p->next >= p->n) {
            pthread_mutex_unlock(&p->lock);
            return NULL;
        }
        size_t i = p->next++;
        pthread_mutex_unlock(&p->lock);
        int rc = p->fn(p->arg, i);
        pthread_mutex_lock(&p->lock);
        if (rc != 0 && p->rc == 0)
            p->rc = rc;
        p->done++;
        cli_progress_update(p->done);
        pthread_mutex_unlock(&p->lock);
    }
}

int repro_parallel(repro_ctx *c, const char *label, size_t n, int (*fn)(void *arg, size_t i),
                   void *arg)
{
    pool p = {.next = 0, .done = 0, .n = n, .rc = 0, .fn = fn, .arg = arg};
    pthread_mutex_init(&p.lock, NULL);
    cli_progress_begin(label, n);
    unsigned nt = c->threads ? c->threads : 1;
    if (nt > n)
        nt = (unsigned)(n ? n : 1);
    pthread_t th[64];
    if (nt > 64)
        nt = 64;
    unsigned started = 0;
    for (unsigned t = 1; t < nt; t++)
        if (pthread_create(&th[started], NULL, pool_worker, &p) == 0)
            started++;
    pool_worker(&p); /* the calling thread works too */
    for (unsigned t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    cli_progress_end();
    pthread_mutex_destroy(&p.lock);
    return p.rc;
}
