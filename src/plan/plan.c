/*
 * plan.c -- capacity planning (MODEL.md 5, paper sections V-B and V-C).
 *
 * For memory M and target average rate eps, each policy's best k
 * (1..max_hashes, smallest k on ties) maximises the expected messages per
 * cycle.  The sigma-bounded and two-phase answers come from the renewal
 * pass (src/model/sigma/renewal.c), stopped at the first sigma whose rate is over eps:
 * f_sigma^1 is a running g-weighted average of the increasing rho(b), so
 * it never decreases with sigma, and E[N_0] grows with sigma, so the
 * largest feasible sigma is the best one.  f_o and f_a are likewise
 * non-decreasing in N (averages of an increasing sequence; for f_a,
 * f_a(N+1) >= f_a(N) iff r_{N+1} >= mean r_i), and f_w is increasing.
 *
 * The searches are in plan_sigma.c (sigma-bounded and two-phase, with the
 * bounds that prune k values) and plan_nbound.c (the N-bounded policies);
 * this file checks the arguments, runs them and answers the capacity
 * question (least memory for a number of messages).
 */
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"
#include "rbf_alloc.h"
#include "rbf_abi.h"

void rbf_plan_options_init(rbf_plan_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->max_hashes = 32;
    o->hashing = RBF_COLLIDING;
    o->recycle = RBF_NON_RETAINING;
    o->progress = NULL;
    o->progress_ctx = NULL;
    o->method = RBF_MODEL_AUTO;
}

static void set_gain(rbf_plan_choice *c, double base)
{
    c->gain_vs_worst_case = (c->feasible && base > 0.0) ? c->expected_messages / base : 0.0;
}

static int check_plan_args(double eps, const rbf_plan_options *o)
{
    if (!(eps > 0.0 && eps < 1.0))
        return RBF_EINVAL;
    if (o && (o->max_hashes < 1 || o->max_hashes > MODEL_MAX_HASHES ||
              (o->hashing != RBF_COLLIDING && o->hashing != RBF_NON_COLLIDING) ||
              (o->recycle != RBF_NON_RETAINING && o->recycle != RBF_RETAINING) ||
              (o->policies & ~(uint64_t)RBF_PLAN_ALL) != 0 || !RBF_RESERVED_ZERO(o) ||
              (o->method != RBF_MODEL_EXACT && o->method != RBF_MODEL_ASYMPTOTIC &&
               o->method != RBF_MODEL_AUTO)))
        return RBF_EINVAL;
    return RBF_OK;
}

static uint64_t plan_policies(const rbf_plan_options *o)
{
    return o->policies ? o->policies : RBF_PLAN_ALL;
}

/* rbf_plan_memory, the policies of o->policies.  The capacity search
 * hands over its own policy's answer (two: two-phase) when it has it at
 * exactly `bits` (known, may be NULL). */
static int plan_memory(uint64_t bits, double eps, const rbf_plan_options *o, rbf_plan *out,
                       int two, const rbf_plan_choice *known)
{
    memset(out, 0, sizeof *out);
    out->bits = bits;
    out->target_fp = eps;
    plan_prog pp = {o->progress, o->progress_ctx, 0, bits};
    const unsigned K = o->max_hashes;
    const int nc = o->hashing == RBF_NON_COLLIDING, ret = o->recycle == RBF_RETAINING;
    const uint64_t pol = plan_policies(o);
    int rc;
    for (int ph = 0; ph < 2; ph++) {
        if (!(pol & (ph ? RBF_PLAN_TWO_PHASE : RBF_PLAN_SIGMA_BOUNDED)))
            continue;
        rbf_plan_choice *ch = ph ? &out->two_phase : &out->sigma_bounded;
        if (known && ph == two) {
            *ch = *known;
            continue;
        }
        const uint64_t Mf = ph ? bits / 2 : bits;
        if ((rc = rbf__plan_sigma(Mf, eps, K, nc, ret, ph, 0.0, plan_fast(o->method, Mf), &pp, ch,
                                  NULL, NULL, NULL)) != RBF_OK)
            return rc;
    }
    if ((pol & RBF_PLAN_N_BOUNDED) &&
        (rc = rbf__plan_nbounded(bits, eps, K, plan_fast(o->method, bits), &pp, out)) != RBF_OK)
        return rc;
    double base = out->worst_case.feasible ? out->worst_case.expected_messages : 0.0;
    set_gain(&out->sigma_bounded, base);
    set_gain(&out->average_n, base);
    set_gain(&out->oracle_n, base);
    set_gain(&out->worst_case, base);
    set_gain(&out->two_phase, base);
    return RBF_OK;
}

int rbf_plan_memory(uint64_t bits, double eps, const rbf_plan_options *o, rbf_plan *out)
{
    rbf_plan_options def;
    if (!o) {
        rbf_plan_options_init(&def);
        o = &def;
    }
    int rc = check_plan_args(eps, o);
    if (rc)
        return rc;
    if (!out || bits < 1)
        return RBF_EINVAL;
    return plan_memory(bits, eps, o, out, 0, NULL);
}

/* The capacity search's state: one policy (two: two-phase, each filter
 * M/2 bits), its target, and the last full search: its answer, and what it
 * learnt of each k (memo), which prunes the k a few bits below. */
typedef struct cap_search {
    const rbf_plan_options *o;
    double eps, target;
    int two, nc, ret;
    plan_prog pp;
    uint64_t full_mf;          /* filter bits of the last full search (0: none) */
    rbf_plan_choice full_choice; /* its answer */
    plan_kmemo memo;
} cap_search;

static uint64_t filter_bits(const cap_search *cs, uint64_t M)
{
    return cs->two ? M / 2 : M;
}

/* The full search at M (every k): its capacity (0: none reaches eps). */
static int cap_full(cap_search *cs, uint64_t M, double *cap)
{
    const uint64_t Mf = filter_bits(cs, M);
    rbf_plan_choice ch;
    const plan_kmemo ref = cs->memo;
    int rc = rbf__plan_sigma(Mf, cs->eps, cs->o->max_hashes, cs->nc, cs->ret, cs->two, 0.0,
                             plan_fast(cs->o->method, Mf), &cs->pp, &ch, NULL, &ref, &cs->memo);
    if (rc)
        return rc;
    cs->full_mf = Mf;
    cs->full_choice = ch;
    *cap = ch.feasible ? ch.expected_messages : 0.0;
    return RBF_OK;
}

/* Does memory M hold the target?  k values are run only while their
 * bound (from the memo with this margin, when margin > 0 and M is below
 * it) reaches the target, and each stops at the target. */
static int cap_holds(cap_search *cs, uint64_t M, double margin, int *holds)
{
    plan_kmemo ref = cs->memo;
    ref.margin = margin;
    const uint64_t Mf = filter_bits(cs, M);
    if (Mf == cs->full_mf) {
        *holds = cs->full_choice.feasible && cs->full_choice.expected_messages >= cs->target;
        return RBF_OK;
    }
    rbf_plan_choice ch;
    int rc = rbf__plan_sigma(Mf, cs->eps, cs->o->max_hashes, cs->nc, cs->ret, cs->two, cs->target,
                             plan_fast(cs->o->method, Mf), &cs->pp, &ch, NULL,
                             margin > 0.0 ? &ref : NULL, NULL);
    if (rc)
        return rc;
    *holds = ch.feasible && ch.expected_messages >= cs->target;
    return RBF_OK;
}

/* One k's capacity at M (0: infeasible). */
static int cap_one_k(cap_search *cs, uint64_t M, unsigned k, double *cap)
{
    int feas = 0;
    uint64_t sigma;
    double en0 = 0.0, fp;
    int rc = rbf__plan_sigma_k_prog(filter_bits(cs, M), k, cs->nc, cs->ret, cs->two, cs->o->method,
                                    cs->eps, &cs->pp, &feas, &sigma, &en0, &fp);
    *cap = (rc == RBF_OK && feas) ? en0 : 0.0;
    return rc;
}

/* Proportional steps with k alone from *M (where its capacity is cap),
 * then up by doubling steps (at most to maxm, where k is known to hold the
 * target) to a memory where k holds the target. */
static int cap_converge(cap_search *cs, uint64_t *Mp, unsigned k, double cap, uint64_t maxm)
{
    uint64_t M = *Mp;
    int rc;
    for (int iter = 0; iter < 8; iter++) {
        double nm = ceil((double)M * (cs->target / cap));
        if (nm > (double)maxm)
            nm = (double)maxm;
        uint64_t next = nm < 4.0 ? 4 : (uint64_t)nm;
        if ((next > M ? next - M : M - next) <= 2)
            break;
        M = next;
        if ((rc = cap_one_k(cs, M, k, &cap)) != RBF_OK)
            return rc;
        if (!(cap > 0.0))
            break; /* k no longer reaches eps here: walk up */
    }
    for (uint64_t w = 1; cap < cs->target; w *= 2) {
        if (M >= maxm)
            return RBF_EINVAL; /* more than 2^56 bits */
        M = M + w > maxm ? maxm : M + w;
        if ((rc = cap_one_k(cs, M, k, &cap)) != RBF_OK)
            return rc;
    }
    *Mp = M;
    return RBF_OK;
}

/* Least memory whose (one- or two-phase) sigma-bounded capacity reaches
 * `messages`, assuming capacity is non-decreasing in M (docs/models.md
 * says how exact):
 *   1. a starting point: capacity is nearly proportional to memory, so
 *      from the classic sizing, the k of the largest capacity bound there
 *      and proportional steps with that k alone land within a few bits of
 *      where it holds the target;
 *   2. a full search there (it holds the target: its capacity is at least
 *      that k's); if another k wins, proportional steps with that k;
 *   3. below, "does M hold N?" by steps of doubling width, then
 *      bisection: a k runs only if the memo's bound on its capacity there
 *      reaches N (about one k per step), and stops once it holds N;
 *   4. the answer's "no" one bit below, checked with a wider margin. */
static int plan_messages_any(uint64_t messages, double eps, const rbf_plan_options *o, int two,
                             uint64_t *bits, rbf_plan *out)
{
    rbf_plan_options def;
    if (!o) {
        rbf_plan_options_init(&def);
        o = &def;
    }
    int rc = check_plan_args(eps, o);
    if (rc)
        return rc;
    if (!bits || messages < 1 || messages > ((uint64_t)1 << 50))
        return RBF_EINVAL;
    const uint64_t MAXM = (uint64_t)1 << 56;
    cap_search cs;
    memset(&cs, 0, sizeof cs);
    cs.o = o;
    cs.eps = eps;
    cs.target = (double)messages;
    cs.two = two;
    cs.nc = o->hashing == RBF_NON_COLLIDING;
    cs.ret = o->recycle == RBF_RETAINING;
    cs.pp = (plan_prog){o->progress, o->progress_ctx, 0, 1};
    const double target = cs.target;

    /* 1. the classic sizing M ~ N log2(1/eps)/ln 2, the k of the largest
     *    cheap bound there, and that k's capacity */
    double guess = target * log2(1.0 / eps) / log(2.0) * (two ? 2.0 : 1.0);
    uint64_t M = guess < 4.0 ? 4 : (guess > (double)MAXM ? MAXM : (uint64_t)guess);
    double cap = 0.0;
    unsigned k0 = 0;
    for (;;) {
        k0 = rbf__plan_sigma_guess_k(filter_bits(&cs, M), eps, o->max_hashes, cs.nc, two);
        if (k0 && (rc = cap_one_k(&cs, M, k0, &cap)) != RBF_OK)
            return rc;
        if (cap > 0.0)
            break;
        if (M >= MAXM)
            return RBF_EINVAL; /* more than 2^56 bits */
        M = M > MAXM / 2 ? MAXM : M * 2;
    }
    if ((rc = cap_converge(&cs, &M, k0, cap, MAXM)) != RBF_OK)
        return rc;
    /* 2. the full search at M (its capacity >= k0's >= target) */
    if ((rc = cap_full(&cs, M, &cap)) != RBF_OK)
        return rc;
    while (cap < target) {
        if (M >= MAXM)
            return RBF_EINVAL;
        M = M + M / 64 + 1 > MAXM ? MAXM : M + M / 64 + 1;
        if ((rc = cap_full(&cs, M, &cap)) != RBF_OK)
            return rc;
    }
    /* another k holds more here: its own proportional steps, down from M
     * (where it holds the target), so that the walk below is short */
    if (cs.full_choice.hashes != k0 && cap > target) {
        uint64_t M1 = M;
        if ((rc = cap_converge(&cs, &M1, cs.full_choice.hashes, cap, M)) != RBF_OK)
            return rc;
        M = M1;
    }
    /* 3. bracket lo < N <= hi below M, then bisect */
    uint64_t hi = M, lo = 1;
    int holds;
    for (uint64_t w = 1;; w *= 2) {
        uint64_t t = hi > w + 1 ? hi - w : 1;
        if (t <= 1) {
            lo = 1;
            break;
        }
        if ((rc = cap_holds(&cs, t, 4.0, &holds)) != RBF_OK)
            return rc;
        if (!holds) {
            lo = t;
            break;
        }
        hi = t;
    }
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if ((rc = cap_holds(&cs, mid, 4.0, &holds)) != RBF_OK)
            return rc;
        if (holds)
            hi = mid;
        else
            lo = mid;
    }
    /* the memo's bounds allow for the capacity's small falls as memory
     * grows, to first order: the answer's "no" is checked again with four
     * times that allowance (and the walk goes on down if it was wrong) */
    while (hi > 1) {
        if ((rc = cap_holds(&cs, hi - 1, 16.0, &holds)) != RBF_OK)
            return rc;
        if (!holds)
            break;
        hi--;
    }
    *bits = hi;
    if (!out)
        return RBF_OK;
    const int known = filter_bits(&cs, hi) == cs.full_mf;
    return plan_memory(hi, eps, o, out, two, known ? &cs.full_choice : NULL);
}

int rbf_plan_messages(uint64_t messages, double eps, const rbf_plan_options *o, uint64_t *bits,
                      rbf_plan *out)
{
    return plan_messages_any(messages, eps, o, 0, bits, out);
}

int rbf_plan_messages_two_phase(uint64_t messages, double eps, const rbf_plan_options *o,
                                uint64_t *bits, rbf_plan *out)
{
    return plan_messages_any(messages, eps, o, 1, bits, out);
}
