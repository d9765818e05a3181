/*
 * plan_blocked.c -- the planner of the blocked layout: the sigma-bounded
 * blocked filter with the most messages per cycle for a memory and a
 * target rate (rbf_plan_blocked_memory), the least memory for a capacity
 * (rbf_plan_blocked_capacity), and the planner of 2.0 the tests compare it
 * with.  Every rate comes from the blocked models (src/model/blocked/).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"
#include "rbf_alloc.h"

/* ---- planning: the sigma-bounded blocked filter for a memory ---- */

/* Blocked fp at sigma for k (Edgeworth sums: the planner evaluates many
 * sigma; the difference from the exact sums is below 1e-5 relative, see
 * docs/models.md). */
static int plan_eval(uint64_t bits, unsigned k, const rbf_plan_options *o, uint64_t sigma,
                     rbf_model_blocked_two_phase_result *r)
{
    rbf_model_params p;
    rbf_model_params_init(&p);
    p.bits = bits;
    p.hashes = k;
    p.hashing = ((o->hashing == RBF_NON_COLLIDING)) ? RBF_NON_COLLIDING : RBF_COLLIDING;
    p.recycle = ((o->recycle == RBF_RETAINING)) ? RBF_RETAINING : RBF_NON_RETAINING;
    p.layout = RBF_MODEL_LAYOUT_BLOCKED;
    return rbf__model_blocked_sigma_w(&p, RBF_MODEL_BLOCK_BITS, sigma, 0, RBF__BLK_EDGEWORTH, 0,
                                      r);
}

/* Largest sigma in [k, bits) with fp <= eps for this k (fp assumed
 * non-decreasing in sigma, as for the flat model), starting near `guess`;
 * 0 if none. */
static int plan_k(uint64_t bits, unsigned k, double eps, const rbf_plan_options *o, uint64_t guess,
                  uint64_t *sigma_out, double *cap, double *fp)
{
    rbf_model_blocked_two_phase_result r;
    uint64_t first = k, last = bits - 1;
    if (first >= bits)
        return RBF_OK;
    if (guess < first)
        guess = first;
    if (guess > last)
        guess = last;
    int rc;
    uint64_t lo = 0, hi = 0; /* lo feasible, hi infeasible (0: not known) */
    uint64_t s = guess;
    for (;;) { /* bracket from the guess */
        if ((rc = plan_eval(bits, k, o, s, &r)))
            return rc;
        if (r.fp <= eps) {
            lo = s;
            if (hi || s == last)
                break;
            uint64_t step = s / 8 + 1;
            s = last - s > step ? s + step : last;
        } else {
            hi = s;
            if (lo)
                break;
            if (s == first)
                break;
            uint64_t step = s / 8 + 1;
            s = s - first > step ? s - step : first;
        }
    }
    if (!lo)
        return RBF_OK; /* not even sigma = k */
    /* Narrow [lo, hi] to adjacent integers.  The rate is smooth and
     * increasing in sigma, so the point where log(fp / eps) crosses zero is
     * interpolated between the ends (regula falsi, with the Illinois rule:
     * an end kept twice in a row has its value halved), with a bisection
     * step whenever the bracket did not halve over two steps: about ten
     * model evaluations at 2^40 bits instead of forty.  The bracket's
     * invariant (lo feasible, hi not) is the bisection's, so the answer is
     * the same largest feasible sigma. */
    if (hi && hi - lo > 1) {
        rbf_model_blocked_two_phase_result rl, rh;
        if ((rc = plan_eval(bits, k, o, lo, &rl)) || (rc = plan_eval(bits, k, o, hi, &rh)))
            return rc;
        double le = log(eps);
        double glo = rl.fp > 0.0 ? log(rl.fp) - le : -1e300;
        double ghi = rh.fp > 0.0 ? log(rh.fp) - le : 1e300;
        int side = 0;
        uint64_t width2 = hi - lo;
        unsigned nstep = 0;
        while (hi - lo > 1) {
            uint64_t mid;
            if (++nstep % 3 == 0 && (hi - lo) * 2 > width2) {
                mid = lo + (hi - lo) / 2; /* slow: bisect */
            } else {
                double fr = glo > -1e299 && ghi < 1e299 && ghi > glo ? -glo / (ghi - glo) : 0.5;
                double x = (double)lo + fr * (double)(hi - lo);
                mid = x <= (double)lo + 1.0 ? lo + 1 : x >= (double)hi - 1.0 ? hi - 1 : (uint64_t)(x + 0.5);
            }
            if (nstep % 3 == 0)
                width2 = hi - lo;
            if ((rc = plan_eval(bits, k, o, mid, &r)))
                return rc;
            double g = r.fp > 0.0 ? log(r.fp) - le : -1e300;
            if (r.fp <= eps) {
                lo = mid;
                glo = g;
                if (side == -1)
                    ghi *= 0.5;
                side = -1;
            } else {
                hi = mid;
                ghi = g;
                if (side == 1)
                    glo *= 0.5;
                side = 1;
            }
        }
    }
    if ((rc = plan_eval(bits, k, o, lo, &r)))
        return rc;
    *sigma_out = lo;
    *cap = r.expected_messages;
    *fp = r.fp;
    return RBF_OK;
}

/* The planner of 2.0 (a walk over k from the flat plan's k, each k's
 * sigma bracketed from the flat plan's sigma): kept as the reference the
 * tests compare the planner below with. */
int rbf__plan_blocked_memory_ref(uint64_t bits, double eps, const rbf_plan_options *o,
                                 rbf_plan_choice *out)
{
    if (!o || !out || !(eps > 0.0 && eps < 1.0) || o->max_hashes < 1 ||
        o->max_hashes > RBF_MAX_HASHES)
        return RBF_EINVAL;
    bits -= bits % RBF_MODEL_BLOCK_BITS;
    if (bits < RBF_MODEL_BLOCK_BITS)
        return RBF_EINVAL;
    memset(out, 0, sizeof *out);
    /* the flat plan on the same memory: the blocked optimum is near its k,
     * at a somewhat smaller sigma */
    rbf_plan_options fo = *o;
    fo.progress = NULL;
    rbf_plan flat;
    int rc = rbf_plan_memory(bits, eps, &fo, &flat);
    if (rc)
        return rc;
    unsigned k0 = flat.sigma_bounded.feasible ? flat.sigma_bounded.hashes : 1;
    uint64_t g0 = flat.sigma_bounded.feasible ? flat.sigma_bounded.sigma : bits / 4;
    /* walk k down and up from k0 while the capacity grows (it is unimodal
     * in k in every case we have computed; docs/models.md) */
    double best = -1.0;
    for (int dir = -1; dir <= 1; dir += 2) {
        double prev = -1.0;
        for (unsigned k = dir < 0 ? k0 : k0 + 1; k >= 1 && k <= o->max_hashes;
             k = dir < 0 ? k - 1 : k + 1) {
            uint64_t s = 0;
            double cap = -1.0, fp = 0.0;
            uint64_t guess = (uint64_t)((double)g0 * 0.97);
            if ((rc = plan_k(bits, k, eps, o, guess, &s, &cap, &fp)))
                return rc;
            if (o->progress && o->progress(o->progress_ctx, k, o->max_hashes))
                return RBF_ECANCELED;
            if (s && (cap > best || (cap == best && k < out->hashes))) {
                best = cap;
                out->feasible = 1;
                out->hashes = k;
                out->sigma = s;
                out->expected_messages = cap;
                out->fp = fp;
            }
            if (s && cap < prev)
                break;
            if (s)
                prev = cap;
            else if (prev >= 0.0)
                break;
        }
    }
    if (out->feasible) {
        /* the reported rate with the default (exact for B <= 64) sums */
        rbf_model_params p;
        rbf_model_params_init(&p);
        p.bits = bits;
        p.hashes = out->hashes;
        p.hashing = ((o->hashing == RBF_NON_COLLIDING)) ? RBF_NON_COLLIDING : RBF_COLLIDING;
        p.recycle = ((o->recycle == RBF_RETAINING)) ? RBF_RETAINING : RBF_NON_RETAINING;
        rbf_model_blocked_sigma_result r;
        if ((rc = rbf_model_blocked_sigma(&p, out->sigma, &r)))
            return rc;
        out->fp = r.fp;
        out->expected_messages = r.expected_messages;
        if (flat.worst_case.feasible && flat.worst_case.expected_messages > 0)
            out->gain_vs_worst_case = out->expected_messages / flat.worst_case.expected_messages;
    }
    return RBF_OK;
}

/* ---- the planner: a mean-field guess, then a few model evaluations ----
 *
 * As B grows the block states at a time t become a law of large numbers:
 * the global set-bit count is B mu(t) (mu the mean bits of one block at
 * Poisson load t) and the rate of a new message is r(t) = E[rho_W(b_t)].
 * In that limit a cycle to sigma = B mu(t*) holds B t* messages at the
 * average rate F(t*) = (1/t*) int_0^t* r = (1/t*) sum_L a_L P(Pois(t*) > L)
 * (the same closed form as the model's [0, t_lo] piece): F grows with t and
 * does not depend on B.  So for each k one bisection on F(t) = eps gives
 * t*_k, the capacity per block; the k with the largest t*_k is where the
 * search starts, and B mu(t*_k), with the slope of log F, is the first
 * sigma tried.  The answer itself comes from the model (the same Edgeworth
 * evaluation and the same criterion as the 2.0 planner: the largest sigma
 * whose rate is <= eps, the rate non-decreasing in sigma): a Newton step
 * from the guess, one past it to bracket the crossing, and regula falsi to
 * adjacent integers.  Finite B moves the crossing by a few sigma units, so
 * a k costs three to five evaluations instead of fifteen.  A neighbouring k
 * is proven worse by one evaluation where possible: a sigma whose E[N_0] is
 * at most the best capacity found and whose rate is above eps bounds that
 * k's capacity below the best (the rate and E[N_0] both grow with sigma). */

typedef struct blk_mf {
    int state;      /* 0 not computed, 1 ready, -1 no crossing below the load cap */
    double tstar;   /* F(t*) = eps: messages per block per cycle */
    rbf__blk_mf *x; /* the block chain and a Poisson window */
} blk_mf;

typedef struct blk_planner {
    double eps;
    unsigned K;
    int nc, ret;
    rbf_model_params p; /* for rbf__blk_mf_new: hashes set per k */
    blk_mf mf[RBF_MAX_HASHES + 1];
    unsigned evals; /* model evaluations (for the tests and the docs) */
} blk_planner;

static void planner_free(blk_planner *pl)
{
    for (unsigned k = 1; k <= RBF_MAX_HASHES; k++)
        if (pl->mf[k].state)
            rbf__blk_mf_free(pl->mf[k].x);
}

static int mf_get(blk_planner *pl, unsigned k, blk_mf **out)
{
    blk_mf *m = &pl->mf[k];
    *out = m;
    if (m->state)
        return RBF_OK;
    pl->p.hashes = k;
    int rc = rbf__blk_mf_new(&pl->p, &m->x);
    if (rc)
        return rc;
    m->state = -1;
    rc = rbf__blk_mf_solve(m->x, 0, pl->eps, &m->tstar);
    if (rc < 0)
        return rc;
    if (rc == 0)
        m->state = 1;
    return RBF_OK;
}

/* One evaluation of the planner's criterion (plan_eval). */
typedef struct kpoint {
    uint64_t s;
    double g; /* log(fp / eps), -1e300 at fp = 0 */
    double en0, fp;
} kpoint;

static int kp_eval(blk_planner *pl, uint64_t bits, unsigned k, const rbf_plan_options *o,
                   uint64_t s, kpoint *kp)
{
    rbf_model_blocked_two_phase_result r;
    int rc = plan_eval(bits, k, o, s, &r);
    if (rc)
        return rc;
    pl->evals++;
    kp->s = s;
    kp->fp = r.fp;
    kp->en0 = r.expected_messages;
    kp->g = r.fp > 0.0 ? log(r.fp) - log(pl->eps) : -1e300;
    return RBF_OK;
}

static uint64_t clamp_s(double v, uint64_t first, uint64_t last)
{
    if (!(v > (double)first))
        return first;
    if (v >= (double)last)
        return last;
    return (uint64_t)(v + 0.5);
}

/* The largest sigma in [k, bits) whose rate is <= eps (0 if none), from
 * the mean-field guess; `start` (if not NULL) is an evaluation already made
 * for this k. */
static int plan_k_fast(blk_planner *pl, uint64_t bits, unsigned k, const rbf_plan_options *o,
                       const kpoint *start, uint64_t *sigma_out, double *cap, double *fp)
{
    const uint64_t B = bits / RBF_MODEL_BLOCK_BITS;
    const uint64_t first = k, last = bits - 1;
    *sigma_out = 0;
    if (first >= bits)
        return RBF_OK;
    blk_mf *m;
    int rc = mf_get(pl, k, &m);
    if (rc)
        return rc;
    /* the guess and the slope of log F per sigma unit */
    double s0 = (double)bits / 2.0, slope = 0.0;
    if (m->state == 1) {
        double mu0, ir0, mu1, ir1, t1;
        if ((rc = rbf__blk_mf_at(m->x, m->tstar, &mu0, &ir0)))
            return rc;
        s0 = (double)B * mu0;
        double ds = s0 * 1e-3 > 1.0 ? s0 * 1e-3 : 1.0;
        rc = rbf__blk_mf_solve(m->x, 1, (s0 + ds) / (double)B, &t1);
        if (rc < 0)
            return rc;
        if (rc == 0 && (rc = rbf__blk_mf_at(m->x, t1, &mu1, &ir1)) == 0 && ir0 > 0.0 && ir1 > 0.0)
            slope = (log(ir1 / t1) - log(ir0 / m->tstar)) / ds;
        if (rc < 0)
            return rc;
    }
    if (!(slope > 0.0) || !isfinite(slope))
        slope = 1.0 / (s0 > 1.0 ? s0 : 1.0); /* a rate about doubling per 70% of s0 */
    kpoint lo = {0, 0, 0, 0}, hi = {0, 0, 0, 0}, cur;
    int have_lo = 0, have_hi = 0;
    if (start)
        cur = *start;
    else if ((rc = kp_eval(pl, bits, k, o, clamp_s(s0, first, last), &cur)))
        return rc;
    kpoint prev = cur;
    int have_prev = 0;
    for (unsigned it = 0, same = 0; it < 200; it++) {
        if (cur.fp <= pl->eps) {
            if (!have_lo || cur.s > lo.s)
                lo = cur;
            have_lo = 1;
            if (cur.s == last)
                break;
        } else {
            if (!have_hi || cur.s < hi.s)
                hi = cur;
            have_hi = 1;
            if (cur.s == first)
                break;
        }
        if (have_lo && have_hi)
            break;
        /* a secant slope from the last two points when it is sensible */
        if (have_prev && cur.s != prev.s && cur.g > -1e299 && prev.g > -1e299) {
            double sl = (cur.g - prev.g) / ((double)cur.s - (double)prev.s);
            if (sl > 0.0 && isfinite(sl))
                slope = sl;
        }
        /* Newton to the crossing, then past it (further each time the
         * point stays on the same side) */
        double g = cur.g > -1e299 ? cur.g : -50.0;
        double step = -g / slope;
        double over = (1.0 + 0.02 * fabs(step)) * (double)(1u << (same < 20 ? same : 20));
        double next = (double)cur.s + step + (g <= 0.0 ? over : -over);
        uint64_t ns = clamp_s(next, first, last);
        if (ns == cur.s)
            ns = g <= 0.0 ? (cur.s < last ? cur.s + 1 : cur.s) : (cur.s > first ? cur.s - 1 : cur.s);
        if (ns == cur.s)
            break;
        prev = cur;
        have_prev = 1;
        same++;
        if ((rc = kp_eval(pl, bits, k, o, ns, &cur)))
            return rc;
        if ((cur.fp <= pl->eps) != (prev.fp <= pl->eps))
            same = 0;
    }
    if (!have_lo)
        return RBF_OK; /* not even sigma = k */
    if (have_hi && hi.s > lo.s + 1) {
        /* regula falsi with the Illinois rule and a bisection step when the
         * bracket did not halve over two steps (as the 2.0 planner) */
        double glo = lo.g, ghi = hi.g;
        int side = 0;
        uint64_t width2 = hi.s - lo.s;
        unsigned nstep = 0;
        while (hi.s - lo.s > 1) {
            uint64_t mid;
            if (++nstep % 3 == 0 && (hi.s - lo.s) * 2 > width2) {
                mid = lo.s + (hi.s - lo.s) / 2;
            } else {
                double fr = glo > -1e299 && ghi < 1e299 && ghi > glo ? -glo / (ghi - glo) : 0.5;
                double xv = (double)lo.s + fr * (double)(hi.s - lo.s);
                mid = xv <= (double)lo.s + 1.0   ? lo.s + 1
                      : xv >= (double)hi.s - 1.0 ? hi.s - 1
                                                 : (uint64_t)(xv + 0.5);
            }
            if (nstep % 3 == 0)
                width2 = hi.s - lo.s;
            if ((rc = kp_eval(pl, bits, k, o, mid, &cur)))
                return rc;
            if (cur.fp <= pl->eps) {
                lo = cur;
                glo = cur.g;
                if (side == -1)
                    ghi *= 0.5;
                side = -1;
            } else {
                hi = cur;
                ghi = cur.g;
                if (side == 1)
                    glo *= 0.5;
                side = 1;
            }
        }
    }
    *sigma_out = lo.s;
    *cap = lo.en0;
    *fp = lo.fp;
    return RBF_OK;
}

/* The flat classic sizing's messages (rbf_plan_memory's worst_case). */
static double flat_worst_case(uint64_t M, double eps, unsigned K)
{
    uint64_t best = 0;
    for (unsigned k = 1; k <= K; k++) {
        uint64_t n = rbf__plan_worst_n(M, k, eps);
        if (n > best)
            best = n;
    }
    return (double)best;
}

static int planner_init(blk_planner *pl, double eps, const rbf_plan_options *o)
{
    if (!o || !(eps > 0.0 && eps < 1.0) || o->max_hashes < 1 || o->max_hashes > RBF_MAX_HASHES)
        return RBF_EINVAL;
    memset(pl, 0, sizeof *pl);
    pl->eps = eps;
    pl->K = o->max_hashes;
    pl->nc = o->hashing == RBF_NON_COLLIDING;
    pl->ret = o->recycle == RBF_RETAINING;
    rbf_model_params_init(&pl->p);
    pl->p.bits = RBF_MODEL_BLOCK_BITS;
    pl->p.hashes = 1;
    pl->p.hashing = pl->nc ? RBF_NON_COLLIDING : RBF_COLLIDING;
    pl->p.recycle = pl->ret ? RBF_RETAINING : RBF_NON_RETAINING;
    pl->p.layout = RBF_MODEL_LAYOUT_BLOCKED;
    return RBF_OK;
}

/* The mean-field best k: the largest t*_k, walking from the classic
 * sizing's k while t* grows (smallest k on ties). */
static int mf_best_k(blk_planner *pl, unsigned *kbest)
{
    double lg = log2(1.0 / pl->eps) * 0.7;
    unsigned kg = lg < 1.0 ? 1u : lg > (double)pl->K ? pl->K : (unsigned)(lg + 0.5);
    blk_mf *m;
    int rc;
    if ((rc = mf_get(pl, kg, &m)))
        return rc;
    unsigned best = kg;
    double bt = m->state == 1 ? m->tstar : -1.0;
    for (int dir = -1; dir <= 1; dir += 2) {
        double prev = bt;
        for (unsigned k = dir < 0 ? kg - 1 : kg + 1; k >= 1 && k <= pl->K;
             k = dir < 0 ? k - 1 : k + 1) {
            if (pl->nc && k > RBF_MODEL_BLOCK_BITS)
                break;
            if ((rc = mf_get(pl, k, &m)))
                return rc;
            double t = m->state == 1 ? m->tstar : -1.0;
            if (t > bt || (t == bt && k < best)) {
                bt = t;
                best = k;
            }
            if (t < prev)
                break;
            prev = t;
        }
    }
    *kbest = best;
    return RBF_OK;
}

/* The plan at `bits`; report = 0 leaves fp and expected_messages as the
 * search's (Edgeworth) values and gain_vs_worst_case 0: what the
 * least-memory search compares while it moves, before the plan it answers
 * with is reported in full (plan_blocked_report). */
static int plan_blocked_report(blk_planner *pl, uint64_t bits, rbf_plan_choice *out);

static int plan_blocked_with(blk_planner *pl, uint64_t bits, const rbf_plan_options *o,
                             rbf_plan_choice *out, int report)
{
    bits -= bits % RBF_MODEL_BLOCK_BITS;
    if (bits < RBF_MODEL_BLOCK_BITS)
        return RBF_EINVAL;
    memset(out, 0, sizeof *out);
    const double eps = pl->eps;
    const uint64_t B = bits / RBF_MODEL_BLOCK_BITS;
    rbf_plan_options fo = *o;
    fo.progress = NULL;
    unsigned k0;
    int rc = mf_best_k(pl, &k0);
    if (rc)
        return rc;
    double best = -1.0;
    for (int dir = -1; dir <= 1; dir += 2) {
        for (unsigned k = dir < 0 ? k0 : k0 + 1; k >= 1 && k <= pl->K;
             k = dir < 0 ? k - 1 : k + 1) {
            kpoint probe, *start = NULL;
            blk_mf *m;
            if ((rc = mf_get(pl, k, &m)))
                return rc;
            if (out->feasible && m->state == 1 && k < bits) {
                /* try to prove this k worse than the best with one point */
                blk_mf *mb = &pl->mf[out->hashes];
                double d = mb->state == 1 ? 1.0 - m->tstar / mb->tstar : 0.0;
                if (d > 1e-4) {
                    double mu, ir;
                    double tp = best / (double)B * (1.0 - 0.5 * d);
                    if ((rc = rbf__blk_mf_at(m->x, tp, &mu, &ir)))
                        return rc;
                    uint64_t sp = clamp_s((double)B * mu, k, bits - 1);
                    if ((rc = kp_eval(pl, bits, k, &fo, sp, &probe)))
                        return rc;
                    if (probe.fp > eps && probe.en0 <= best)
                        break; /* capacity(k) < E[N_0](sp) <= best */
                    start = &probe;
                }
            }
            uint64_t s = 0;
            double cap = -1.0, fp = 0.0;
            if ((rc = plan_k_fast(pl, bits, k, &fo, start, &s, &cap, &fp)))
                return rc;
            if (o->progress && o->progress(o->progress_ctx, k, pl->K))
                return RBF_ECANCELED;
            if (s && (cap > best || (cap == best && k < out->hashes))) {
                best = cap;
                out->feasible = 1;
                out->hashes = k;
                out->sigma = s;
                out->expected_messages = cap;
                out->fp = fp;
                continue;
            }
            if (s || out->feasible)
                break; /* worse than the best: past the peak */
        }
    }
    return report ? plan_blocked_report(pl, bits, out) : RBF_OK;
}

static int plan_blocked_report(blk_planner *pl, uint64_t bits, rbf_plan_choice *out)
{
    int rc;
    bits -= bits % RBF_MODEL_BLOCK_BITS;
    const double eps = pl->eps;
    if (out->feasible) {
        /* the reported rate with the default (exact for B <= 64) sums */
        rbf_model_params p;
        rbf_model_params_init(&p);
        p.bits = bits;
        p.hashes = out->hashes;
        p.hashing = pl->nc ? RBF_NON_COLLIDING : RBF_COLLIDING;
        p.recycle = pl->ret ? RBF_RETAINING : RBF_NON_RETAINING;
        rbf_model_blocked_sigma_result r;
        if ((rc = rbf_model_blocked_sigma(&p, out->sigma, &r)))
            return rc;
        out->fp = r.fp;
        out->expected_messages = r.expected_messages;
        double wc = flat_worst_case(bits, eps, pl->K);
        if (wc > 0.0)
            out->gain_vs_worst_case = out->expected_messages / wc;
    }
    return RBF_OK;
}

int rbf__plan_blocked_memory_evals(uint64_t bits, double eps, const rbf_plan_options *o,
                                   rbf_plan_choice *out, unsigned *evals)
{
    blk_planner pl;
    if (!out)
        return RBF_EINVAL;
    int rc = planner_init(&pl, eps, o);
    if (rc)
        return rc;
    rc = plan_blocked_with(&pl, bits, o, out, 1);
    if (evals)
        *evals = pl.evals;
    planner_free(&pl);
    return rc;
}

int rbf_plan_blocked_memory(uint64_t bits, double eps, const rbf_plan_options *o,
                            rbf_plan_choice *out)
{
    return rbf__plan_blocked_memory_evals(bits, eps, o, out, NULL);
}

/* ---- the inverse: least memory for a capacity ----
 *
 * Blocks B, predicate "the plan at B blocks holds the capacity".  The
 * mean-field capacity per block (the best t*_k) gives the first B; then
 * proportional steps (E[N_0] is close to proportional to B at a fixed
 * rate) until the answer is bracketed, and interpolation between the
 * bracket's capacities (a bisection step when the bracket does not halve)
 * until it is adjacent blocks: the plan at hi holds the capacity, the one
 * at hi - 1 does not. */
int rbf_plan_blocked_capacity(uint64_t capacity, double eps, const rbf_plan_options *o,
                              uint64_t *bits, rbf_plan_choice *out)
{
    if (!bits || !out || capacity < 1 || capacity > ((uint64_t)1 << 50))
        return RBF_EINVAL;
    blk_planner pl;
    int rc = planner_init(&pl, eps, o);
    if (rc)
        return rc;
    const uint64_t BMAX = ((uint64_t)1 << 56) / RBF_MODEL_BLOCK_BITS;
    const double C = (double)capacity;
    rbf_plan_options io = *o;
    io.progress = NULL;
    unsigned k0;
    if ((rc = mf_best_k(&pl, &k0)))
        goto done;
    double per = pl.mf[k0].state == 1 && pl.mf[k0].tstar > 0.0
                     ? pl.mf[k0].tstar
                     : RBF_MODEL_BLOCK_BITS * log(2.0) / log2(1.0 / eps);
    double g = ceil(C / per);
    uint64_t B = g < 1.0 ? 1 : g > (double)BMAX ? BMAX : (uint64_t)g;
    uint64_t lo = 0, hi = 0; /* lo: does not hold (0: none known); hi: holds (0: none known) */
    double cap_lo = 0.0, cap_hi = 0.0;
    rbf_plan_choice ch, ch_hi, ch_lo;
    memset(&ch_hi, 0, sizeof ch_hi);
    memset(&ch_lo, 0, sizeof ch_lo);
    uint64_t done_n = 0, width2 = 0;
    rc = RBF_EINVAL;
    for (unsigned it = 0; it < 200; it++) {
        if ((rc = plan_blocked_with(&pl, B * RBF_MODEL_BLOCK_BITS, &io, &ch, 0)))
            goto done;
        double cap = ch.feasible ? ch.expected_messages : 0.0;
        done_n++;
        if (o->progress && o->progress(o->progress_ctx, done_n, done_n + 2)) {
            rc = RBF_ECANCELED;
            goto done;
        }
        if (cap >= C) {
            hi = B;
            cap_hi = cap;
            ch_hi = ch;
        } else {
            lo = B;
            cap_lo = cap;
            ch_lo = ch;
        }
        if (hi && (hi == 1 || (lo && hi - lo == 1)))
            break;
        uint64_t next;
        if (hi && lo) {
            double fr = cap_hi > cap_lo ? (C - cap_lo) / (cap_hi - cap_lo) : 0.5;
            if (width2 && (hi - lo) * 2 > width2)
                fr = 0.5; /* slow: bisect */
            width2 = hi - lo;
            double x = ceil((double)lo + fr * (double)(hi - lo));
            next = x <= (double)lo + 1.0 ? lo + 1 : x >= (double)hi - 1.0 ? hi - 1 : (uint64_t)x;
        } else if (hi) {
            double x = ceil((double)B * C / cap); /* <= B: cap >= C */
            next = x >= (double)B ? B - 1 : x < 1.0 ? 1 : (uint64_t)x;
        } else {
            if (B >= BMAX) {
                rc = RBF_EINVAL; /* more than 2^56 bits */
                goto done;
            }
            double x = cap > 0.0 ? ceil((double)B * C / cap) : (double)B * 4.0;
            next = x <= (double)B ? B + 1 : x > (double)BMAX ? BMAX : (uint64_t)x;
        }
        B = next;
    }
    if (!hi) {
        rc = RBF_EINVAL;
        goto done;
    }
    /* The search compared the Edgeworth capacities; the answer is decided
     * on the reported ones (rbf_model_blocked_sigma's default sums: exact
     * for B <= 64 and near the top of the support, where they can differ
     * from Edgeworth by percents on two or three blocks): the plan at hi
     * must hold the capacity (else one block more), and the plan at
     * hi - 1 must not (else one block less).  Where the default sums are
     * Edgeworth the search's value is the reported one. */
    int lo_reported = 0;
    for (;;) {
        if ((rc = plan_blocked_report(&pl, hi * RBF_MODEL_BLOCK_BITS, &ch_hi)))
            goto done;
        if (ch_hi.feasible && ch_hi.expected_messages >= C)
            break;
        if (hi >= BMAX) {
            rc = RBF_EINVAL;
            goto done;
        }
        lo = hi; /* does not hold, on the reported values */
        lo_reported = 1;
        hi++;
        if ((rc = plan_blocked_with(&pl, hi * RBF_MODEL_BLOCK_BITS, &io, &ch_hi, 0)))
            goto done;
    }
    while (hi > 1 && !(lo_reported && lo == hi - 1)) {
        if (lo != hi - 1) {
            lo = hi - 1;
            if ((rc = plan_blocked_with(&pl, lo * RBF_MODEL_BLOCK_BITS, &io, &ch_lo, 0)))
                goto done;
            cap_lo = ch_lo.feasible ? ch_lo.expected_messages : 0.0;
        }
        int edgeworth = lo > RBF__BLK_EXACT_MAX &&
                        (!ch_lo.feasible || ch_lo.sigma + 4 * lo <= lo * RBF_MODEL_BLOCK_BITS);
        if (edgeworth && cap_lo < C)
            break;
        ch = ch_lo;
        if ((rc = plan_blocked_report(&pl, lo * RBF_MODEL_BLOCK_BITS, &ch)))
            goto done;
        if (!(ch.feasible && ch.expected_messages >= C))
            break;
        hi = lo; /* one block less holds it after all */
        ch_hi = ch;
        lo = 0;
    }
    *bits = hi * RBF_MODEL_BLOCK_BITS;
    *out = ch_hi;
    rc = RBF_OK;
done:
    planner_free(&pl);
    return rc;
}
