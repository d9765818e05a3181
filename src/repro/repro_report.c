/*
 * repro_report.c -- the report of the reproduce module: the figures,
 * claims and notes the steps register, written as report.md and
 * claims.json.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "rbf.h"
#include "repro_internal.h"

/* ---- report items */

int repro_figure_add(repro_ctx *c, const char *name, char *title, char *caption, char *data)
{
    int full = c->nfigs == sizeof c->figs / sizeof c->figs[0];
    if (!title || !caption || !data || full) {
        free(title);
        free(caption);
        free(data);
        if (!full)
            return repro_oom(c);
        cli_fail("reproduce", "too many figures: %s left out", name);
        c->failed = 1;
        return -1;
    }
    repro_figure *f = &c->figs[c->nfigs++];
    snprintf(f->name, sizeof f->name, "%s", name);
    f->title = title;
    f->caption = caption;
    f->data = data;
    f->drawn = 0;
    return 0;
}

static void claim_free(repro_claim *k)
{
    free(k->id);
    free(k->claim);
    free(k->where);
    free(k->paper);
    free(k->ours);
    free(k->note);
}

/* A heap copy of s; NULL stays NULL.  Sets *oom when out of memory. */
static char *dup_or_null(const char *s, int *oom)
{
    if (!s)
        return NULL;
    char *d = repro_strdupf("%s", s);
    *oom |= d == NULL;
    return d;
}

int repro_claim_add(repro_ctx *c, const char *id, const char *claim, const char *where,
                    const char *paper, int holds, const char *note, const char *ours_fmt, ...)
{
    if (c->nclaims == c->cap_claims) {
        size_t cap = c->cap_claims ? 2 * c->cap_claims : 16;
        repro_claim *p = realloc(c->claims, cap * sizeof *p);
        if (!p)
            return repro_oom(c);
        c->claims = p;
        c->cap_claims = cap;
    }
    int oom = 0;
    repro_claim k = {.holds = holds};
    k.id = dup_or_null(id, &oom);
    k.claim = dup_or_null(claim, &oom);
    k.where = dup_or_null(where, &oom);
    k.paper = dup_or_null(paper, &oom);
    k.note = dup_or_null(note, &oom);
    va_list ap;
    va_start(ap, ours_fmt);
    k.ours = repro_vstrdupf(ours_fmt, ap);
    va_end(ap);
    if (oom || !k.ours || !k.id || !k.claim || !k.where || !k.paper) {
        claim_free(&k);
        return repro_oom(c);
    }
    c->claims[c->nclaims++] = k;
    return 0;
}

int repro_note(repro_ctx *c, const char *fmt, ...)
{
    if (c->nnotes == c->cap_notes) {
        size_t cap = c->cap_notes ? 2 * c->cap_notes : 8;
        char **p = realloc(c->notes, cap * sizeof *p);
        if (!p)
            return repro_oom(c);
        c->notes = p;
        c->cap_notes = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    char *s = repro_vstrdupf(fmt, ap);
    va_end(ap);
    if (!s)
        return repro_oom(c);
    c->notes[c->nnotes++] = s;
    return 0;
}

void repro_ctx_free(repro_ctx *c)
{
    for (size_t i = 0; i < c->nfigs; i++) {
        free(c->figs[i].title);
        free(c->figs[i].caption);
        free(c->figs[i].data);
    }
    for (size_t i = 0; i < c->nclaims; i++)
        claim_free(&c->claims[i]);
    free(c->claims);
    for (size_t i = 0; i < c->nnotes; i++)
        free(c->notes[i]);
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

/* The head of report.md: what was run, with which sizes. */
static void report_head(FILE *fp, const repro_ctx *c, double seconds)
{
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
}

static void report_figures(FILE *fp, const repro_ctx *c)
{
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
}

/* The claims table, then the claims' notes and the run's notes. */
static void report_claims(FILE *fp, const repro_ctx *c)
{
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
}

int repro_write_report(repro_ctx *c, double seconds)
{
    FILE *fp = repro_open(c, "report.md");
    if (!fp)
        return -1;
    report_head(fp, c, seconds);
    report_figures(fp, c);
    report_claims(fp, c);
    fprintf(fp, "Machine-readable: `claims.json` holds the same table.\n");
    int rc = repro_close(c, fp, "report.md");
    if (write_claims_json(c, seconds) != 0)
        rc = -1;
    return rc;
}
