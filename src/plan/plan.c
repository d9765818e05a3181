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
              !RBF_RESERVED_ZERO(o) ||
              (o->method != RBF_MODEL_EXACT && o->method != RBF_MODEL_ASYMPTOTIC &&
               o->method != RBF_MODEL_AUTO)))
        return RBF_EINVAL;
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
    memset(out, 0, sizeof *out);
    out->bits = bits;
    out->target_fp = eps;
    plan_prog pp = {o->progress, o->progress_ctx, 0, bits};
    unsigned K = o->max_hashes;
    if ((rc = rbf__plan_sigma(bits, eps, K, (o->hashing == RBF_NON_COLLIDING), (o->recycle == RBF_RETAINING), 0, 0.0,
                         plan_fast(o->method, bits), &pp,
                         &out->sigma_bounded, NULL)) != RBF_OK)
        return rc;
    if ((rc = rbf__plan_sigma(bits / 2, eps, K, (o->hashing == RBF_NON_COLLIDING), (o->recycle == RBF_RETAINING), 1, 0.0,
                         plan_fast(o->method, bits / 2), &pp,
                         &out->two_phase, NULL)) != RBF_OK)
        return rc;
    if ((rc = rbf__plan_nbounded(bits, eps, K, plan_fast(o->method, bits), &pp, out)) != RBF_OK)
        return rc;
    double base = out->worst_case.feasible ? out->worst_case.expected_messages : 0.0;
    set_gain(&out->sigma_bounded, base);
    set_gain(&out->average_n, base);
    set_gain(&out->oracle_n, base);
    set_gain(&out->worst_case, base);
    set_gain(&out->two_phase, base);
    return RBF_OK;
}

/* Least memory whose (one- or two-phase) sigma-bounded capacity reaches
 * `messages`, by a proportional search followed by bisection, assuming
 * capacity is non-decreasing in M (docs/models.md says how exact). */
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
    plan_prog pp = {o->progress, o->progress_ctx, 0, 1};
    rbf_plan_choice ch;
    double target = (double)messages;
    /* The full capacities computed so far, per filter size: "does M hold
     * N?" is then answered from them (a k holds N iff its capacity does:
     * the same decision as the pass stopped at N). */
    uint64_t memo_m[8];
    double memo_cap[8];
    unsigned memo_n = 0;
#define CAP_AT(Mv, tgt, capv)                                                                     \
    do {                                                                                          \
        uint64_t Mf_ = two ? (Mv) / 2 : (Mv);                                                     \
        int hit_ = 0;                                                                             \
        for (unsigned i_ = 0; i_ < memo_n && i_ < 8; i_++)                                        \
            if (memo_m[i_] == Mf_) {                                                              \
                (capv) = memo_cap[i_];                                                            \
                hit_ = 1;                                                                         \
            }                                                                                     \
        if (hit_)                                                                                 \
            break;                                                                                \
        rc = rbf__plan_sigma(Mf_, eps, o->max_hashes, (o->hashing == RBF_NON_COLLIDING), (o->recycle == RBF_RETAINING), two, (tgt),     \
                        plan_fast(o->method, Mf_), &pp,                                           \
                        &ch, NULL);                                                               \
        if (rc)                                                                                   \
            return rc;                                                                            \
        (capv) = ch.feasible ? ch.expected_messages : 0.0;                                        \
        if ((tgt) <= 0.0) {                                                                       \
            memo_m[memo_n % 8] = Mf_;                                                             \
            memo_cap[memo_n % 8] = (capv);                                                        \
            memo_n++;                                                                             \
        }                                                                                         \
    } while (0)
    /* 1. Capacity is nearly proportional to memory: from the classic
     *    sizing M ~ N log2(1/eps)/ln 2, a few full evaluations and
     *    proportional steps land within a few bits. */
    double guess = target * log2(1.0 / eps) / log(2.0) * (two ? 2.0 : 1.0);
    uint64_t M = guess < 2.0 ? 2 : (guess > (double)MAXM ? MAXM : (uint64_t)guess);
    double cap;
    for (int iter = 0; iter < 4; iter++) {
        CAP_AT(M, 0.0, cap);
        double nm;
        if (cap <= 0.0)
            nm = (double)M * 2.0;
        else
            nm = ceil((double)M * (target / cap));
        if (nm > (double)MAXM)
            nm = (double)MAXM;
        uint64_t next = nm < 2.0 ? 2 : (uint64_t)nm;
        if (cap > 0.0 && (next > M ? next - M : M - next) <= 2) {
            M = next;
            break;
        }
        if (next >= MAXM && M >= MAXM)
            return RBF_EINVAL; /* more than 2^56 bits */
        M = next;
    }
    /* 2. Bracket cap(lo) < N <= cap(hi) by steps of doubling width, asking
     *    only "does M hold N?" (cheaper: the pass stops at N messages and
     *    k values whose bound is below N are skipped); 3. bisect. */
    uint64_t lo = 1, hi = 0;
    CAP_AT(M, target, cap);
    if (cap >= target) {
        hi = M;
        for (uint64_t w = 1;; w *= 2) {
            uint64_t t = hi > w + 1 ? hi - w : 1;
            if (t <= 1) {
                lo = 1;
                break;
            }
            CAP_AT(t, target, cap);
            if (cap >= target) {
                hi = t;
            } else {
                lo = t;
                break;
            }
        }
    } else {
        lo = M;
        for (uint64_t w = 1;; w *= 2) {
            if (lo >= MAXM)
                return RBF_EINVAL;
            uint64_t t = lo + w > MAXM ? MAXM : lo + w;
            CAP_AT(t, target, cap);
            if (cap >= target) {
                hi = t;
                break;
            }
            lo = t;
        }
    }
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        CAP_AT(mid, target, cap);
        if (cap >= target)
            hi = mid;
        else
            lo = mid;
    }
#undef CAP_AT
    *bits = hi;
    if (out)
        return rbf_plan_memory(hi, eps, o, out);
    return RBF_OK;
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
