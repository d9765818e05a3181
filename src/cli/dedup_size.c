/*
 * dedup_size.c -- how `rbf dedup` sizes its filter: the flat and the
 * blocked planners at the memory given, the default layout chosen between
 * them, and what --stats prints about the plan and the run.
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "dedup.h"
#include "rbf.h"
#include "rbf_model.h"
#include "rbf_predict.h"

#define CMD "dedup"

/* The filter is planned at its true size: the planner's default method
 * (RBF_MODEL_AUTO) answers in well under a second at any memory up to
 * 2^44 bits (docs/models.md 3b). */


/* Plan a flat filter of `bits` total bits for average rate eps. */
void dedup_plan_flat(uint64_t bits, double eps, unsigned phases, int progress, dedup_sizing *out)
{
    rbf_plan_options po;
    rbf_plan_options_init(&po);
    if (progress)
        po.progress = cli_progress_cb;
    rbf_plan plan;
    if (progress)
        cli_progress_begin("rbf dedup: planning", 0);
    int rc = rbf_plan_memory(bits, eps, &po, &plan);
    if (progress)
        cli_progress_end();
    memset(out, 0, sizeof *out);
    if (rc == RBF_ENOMEM) {
        out->ok = -1;
        return;
    }
    if (rc < 0)
        return;
    const rbf_plan_choice *ch = phases == 2 ? &plan.two_phase : &plan.sigma_bounded;
    if (!ch->feasible || ch->sigma == 0 || ch->hashes == 0)
        return;
    out->ok = 1;
    out->hashes = ch->hashes;
    out->sigma = ch->sigma;
    out->fp = ch->fp;
    out->expected_lines = ch->expected_messages;
}

/* Plan a one-phase blocked filter (bits a multiple of 512) by the blocked
 * planner. */
void dedup_plan_blocked(uint64_t bits, double eps, dedup_sizing *out)
{
    rbf_plan_options po;
    rbf_plan_options_init(&po);
    rbf_plan_choice ch;
    memset(out, 0, sizeof *out);
    int rc = rbf_plan_blocked_memory(bits, eps, &po, &ch);
    if (rc == RBF_ENOMEM) {
        out->ok = -1;
        return;
    }
    if (rc < 0 || !ch.feasible || ch.sigma == 0 || ch.hashes == 0)
        return;
    out->ok = 1;
    out->hashes = ch.hashes;
    out->sigma = ch.sigma;
    out->fp = ch.fp;
    out->expected_lines = ch.expected_messages;
}

typedef struct blocked_job {
    uint64_t bits;
    double eps;
    dedup_sizing sz;
} blocked_job;

static void *blocked_thread(void *arg)
{
    blocked_job *j = arg;
    dedup_plan_blocked(j->bits, j->eps, &j->sz);
    return NULL;
}

/* The default layout: blocked (sized by the blocked planner) when its
 * lines per cycle at the target rate are within 5% of the flat plan's in
 * the same memory, flat otherwise.  Two phases: flat (the library has no
 * blocked two-phase planner).  The two plans run side by side. */
#define DEDUP_BLOCKED_WITHIN 0.95


void dedup_choose_layout(layout_choice *lc)
{
    uint64_t bits = lc->bytes * 8;
    lc->decided = 1;
    lc->blocked = 0;
    lc->have_blocked = 0;
    lc->blk_bits = bits - bits % 512;
    if (lc->phases == 2 || lc->blk_bits == 0) {
        dedup_plan_flat(bits, lc->eps, lc->phases, 1, &lc->flat);
        return;
    }
    blocked_job job = {.bits = lc->blk_bits, .eps = lc->eps};
    pthread_t th;
    int threaded = pthread_create(&th, NULL, blocked_thread, &job) == 0;
    dedup_plan_flat(bits, lc->eps, 1, !threaded, &lc->flat);
    if (threaded)
        pthread_join(th, NULL);
    else
        dedup_plan_blocked(job.bits, job.eps, &job.sz);
    lc->blk = job.sz;
    lc->have_blocked = 1;
    if (lc->blk.ok == 1 &&
        (lc->flat.ok != 1 ||
         lc->blk.expected_lines >= DEDUP_BLOCKED_WITHIN * lc->flat.expected_lines))
        lc->blocked = 1;
}

int dedup_choose_layout_cb(void *ctx)
{
    layout_choice *lc = ctx;
    dedup_choose_layout(lc);
    if (lc->flat.ok < 0 || lc->blk.ok < 0) {
        cli_fail(CMD, "out of memory while planning");
        return -1;
    }
    return lc->blocked;
}

void dedup_print_plans(const layout_choice *lc)
{
    if (!lc->decided)
        return;
    if (lc->flat.ok == 1)
        fprintf(stderr, "flat plan: k %u, sigma %" PRIu64 ", %.6g lines per cycle, fp %.9g\n",
                lc->flat.hashes, lc->flat.sigma, lc->flat.expected_lines, lc->flat.fp);
    else
        fprintf(stderr, "flat plan: none reaches the target\n");
    if (!lc->have_blocked)
        fprintf(stderr, "blocked plan: none (%s)\n",
                lc->phases == 2 ? "no blocked two-phase planner" : "memory under one block");
    else if (lc->blk.ok == 1)
        fprintf(stderr,
                "blocked plan: k %u, sigma %" PRIu64 ", %.6g lines per cycle, fp %.9g (%.4g of "
                "the flat plan's lines per cycle)\n",
                lc->blk.hashes, lc->blk.sigma, lc->blk.expected_lines, lc->blk.fp,
                lc->flat.ok == 1 ? lc->blk.expected_lines / lc->flat.expected_lines : NAN);
    else
        fprintf(stderr, "blocked plan: none reaches the target\n");
    if (lc->given >= 0)
        fprintf(stderr, "layout: %s (given by --layout; the planners would choose %s)\n",
                lc->given ? "blocked" : "flat", lc->blocked ? "blocked" : "flat");
    else
        fprintf(stderr,
                "layout chosen: %s (blocked when within 5%% of the flat plan's lines per cycle)\n",
                lc->blocked ? "blocked" : "flat");
}

void dedup_print_stats(const rbf *f, uint64_t lines_read, uint64_t lines_written,
                       const rbf_config *cfg, uint64_t bytes, const dedup_sizing *sz,
                       int blocked_model)
{
    rbf_stats st;
    rbf_get_stats(f, &st);
    fprintf(stderr,
            "lines read: %" PRIu64 "\n"
            "lines written: %" PRIu64 "\n"
            "recycles: %" PRIu64 "\n",
            lines_read, lines_written, st.cycles);
    if (cfg->phases == 2)
        fprintf(stderr, "bits set: %" PRIu64 " active, %" PRIu64 " frozen, of %" PRIu64
                        " per half\n",
                st.bits_set, st.frozen_bits_set, st.bits);
    else
        fprintf(stderr, "bits set: %" PRIu64 " of %" PRIu64 "\n", st.bits_set, st.bits);
    fprintf(stderr,
            "memory: %" PRIu64 " bytes (%" PRIu64 " bits, %u phase%s, %s layout)\n"
            "hashes: %u\n"
            "sigma: %" PRIu64 "\n"
            "seed: %" PRIu64 "\n",
            bytes, cfg->bits, cfg->phases, cfg->phases == 2 ? "s" : "",
            cli_layout_name(cfg->layout == RBF_LAYOUT_BLOCKED), cfg->hashes, cfg->sigma,
            cfg->seed);
    /* what the models say about the filter that ran (the library's one
     * prediction entry point); the sizing's numbers where none applies */
    rbf_prediction pr;
    if (rbf_predict(cfg, NULL, &pr) == RBF_OK) {
        fprintf(stderr,
                "expected lines per cycle: %.6g\n"
                "predicted fp: %.9g\n"
                "model: %s\n",
                pr.messages_per_cycle, pr.fp, pr.name);
        return;
    }
    fprintf(stderr,
            "expected lines per cycle: %.6g\n"
            "predicted fp: %.9g%s\n",
            sz->expected_lines, sz->fp,
            cfg->layout == RBF_LAYOUT_BLOCKED
                ? (blocked_model ? " (the blocked planner's model)"
                                 : " (the flat layout's model: the blocked layout's "
                                   "rate is somewhat higher)")
                : "");
}
