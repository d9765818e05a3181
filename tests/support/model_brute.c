/*
 * model_brute.c -- see model_brute.h.  Deliberately simple and slow: it
 * shares no code with src/model/.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_brute.h"

int brute_solve(double *a, double *b, unsigned n)
{
    for (unsigned c = 0; c < n; c++) {
        unsigned p = c;
        for (unsigned r = c + 1; r < n; r++)
            if (fabs(a[r * n + c]) > fabs(a[p * n + c]))
                p = r;
        if (a[p * n + c] == 0.0)
            return -1;
        for (unsigned q = 0; q < n; q++) {
            double t = a[c * n + q];
            a[c * n + q] = a[p * n + q];
            a[p * n + q] = t;
        }
        double t = b[c];
        b[c] = b[p];
        b[p] = t;
        for (unsigned r = 0; r < n; r++) {
            if (r == c)
                continue;
            double f = a[r * n + c] / a[c * n + c];
            for (unsigned q = 0; q < n; q++)
                a[r * n + q] -= f * a[c * n + q];
            b[r] -= f * b[c];
        }
    }
    for (unsigned c = 0; c < n; c++)
        b[c] /= a[c * n + c];
    return 0;
}

/* Enumerate the outcomes of one message in a filter whose set bits are
 * 0..b-1: out_new[d] = P(d new bits), out_fresh[d][e] = P(d new bits and
 * e distinct positions in all), both sized (k+1) and (k+1)^2. */
static void outcomes(unsigned M, unsigned k, int nc, unsigned b, double *out_new, double *joint)
{
    memset(out_new, 0, (k + 1) * sizeof *out_new);
    if (joint)
        memset(joint, 0, (k + 1) * (k + 1) * sizeof *joint);
    unsigned pos[64];
    double total = 0.0;
    unsigned long long count = 0;
    for (unsigned i = 0; i < k; i++)
        pos[i] = 0;
    for (;;) {
        int ok = 1;
        if (nc)
            for (unsigned i = 0; i < k && ok; i++)
                for (unsigned j = i + 1; j < k; j++)
                    if (pos[i] == pos[j])
                        ok = 0;
        if (ok) {
            unsigned d = 0, e = 0;
            for (unsigned i = 0; i < k; i++) {
                int dup = 0;
                for (unsigned j = 0; j < i; j++)
                    if (pos[j] == pos[i])
                        dup = 1;
                if (!dup) {
                    e++;
                    if (pos[i] >= b)
                        d++;
                }
            }
            out_new[d] += 1.0;
            if (joint)
                joint[d * (k + 1) + e] += 1.0;
            count++;
        }
        unsigned i = 0;
        while (i < k && ++pos[i] == M)
            pos[i++] = 0;
        if (i == k)
            break;
    }
    total = (double)count;
    for (unsigned d = 0; d <= k; d++)
        out_new[d] /= total;
    if (joint)
        for (unsigned t = 0; t < (k + 1) * (k + 1); t++)
            joint[t] /= total;
}

/* Transition matrix of the sigma-bounded chain on states 0..sigma. */
static double *sigma_matrix(unsigned M, unsigned k, int nc, int ret, int correlated, unsigned sigma,
                            double *rho)
{
    unsigned n = sigma + 1;
    double *P = calloc((size_t)n * n, sizeof *P);
    double *nw = malloc((k + 1) * sizeof *nw);
    double *jt = malloc((k + 1) * (k + 1) * sizeof *jt);
    double *fresh = malloc((k + 1) * sizeof *fresh);
    outcomes(M, k, nc, 0, fresh, NULL); /* a message into an empty filter */
    for (unsigned b = 0; b <= sigma; b++) {
        outcomes(M, k, nc, b, nw, jt);
        rho[b] = nw[0];
        for (unsigned d = 0; d <= k; d++)
            for (unsigned e = 0; e <= k; e++) {
                double pr = jt[d * (k + 1) + e];
                if (pr == 0.0)
                    continue;
                if (b + d <= sigma)
                    P[b * n + b + d] += pr;
                else if (!ret)
                    P[b * n + 0] += pr;
                else if (correlated)
                    P[b * n + e] += pr; /* the message's own e positions */
                else
                    for (unsigned f = 1; f <= k && f <= sigma; f++)
                        P[b * n + f] += pr * fresh[f]; /* as if a fresh message */
            }
    }
    free(nw);
    free(jt);
    free(fresh);
    return P;
}

/* Stationary distribution of an n-state chain: pi (P - I) = 0, sum = 1. */
static int stationary(const double *P, unsigned n, double *pi)
{
    double *A = calloc((size_t)n * n, sizeof *A);
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < n; j++)
            A[j * n + i] = P[i * n + j] - (i == j ? 1.0 : 0.0);
    for (unsigned i = 0; i < n; i++) {
        A[(n - 1) * n + i] = 1.0;
        pi[i] = 0.0;
    }
    pi[n - 1] = 1.0;
    int rc = brute_solve(A, pi, n);
    free(A);
    return rc;
}

int brute_sigma(unsigned M, unsigned k, int nc, int ret, int correlated, unsigned sigma, double *fp,
                double *en0)
{
    if (sigma > 256 || M > 16 || k > 8)
        return -1; /* brute force is for tiny chains only */
    unsigned n = sigma + 1;
    double *rho = malloc(n * sizeof *rho);
    double *P = sigma_matrix(M, k, nc, ret, correlated, sigma, rho);
    double *pi = malloc(n * sizeof *pi);
    int rc = stationary(P, n, pi);
    double s = 0.0;
    for (unsigned b = 0; b < n; b++)
        s += pi[b] * rho[b];
    *fp = s;
    /* E[N_0]: E_b = 1 + sum_d P(d | b) E_{b+d} for b < sigma, E = 0 beyond */
    double *A = calloc((size_t)sigma * (size_t)sigma + 1u, sizeof *A);
    double *e = calloc((size_t)sigma + 1u, sizeof *e);
    double *nw = malloc((k + 1) * sizeof *nw);
    for (unsigned b = 0; b < sigma; b++) {
        outcomes(M, k, nc, b, nw, NULL);
        A[b * sigma + b] += 1.0;
        for (unsigned d = 0; d <= k; d++)
            if (b + d < sigma)
                A[b * sigma + b + d] -= nw[d];
        e[b] = 1.0;
    }
    if (sigma > 0 && brute_solve(A, e, sigma))
        rc = -1;
    *en0 = sigma > 0 ? e[0] : 0.0;
    free(A);
    free(e);
    free(nw);
    free(rho);
    free(P);
    free(pi);
    return rc;
}

int brute_two_phase(unsigned M, unsigned k, int nc, unsigned sigma, double *fp)
{
    if (sigma > 32 || M > 16 || k > 8)
        return -1;
    unsigned n = sigma + 1, n2 = n * n;
    double *rho = malloc(n * sizeof *rho);
    double *P = sigma_matrix(M, k, nc, 0, 0, sigma, rho);
    double *Q = calloc((size_t)n2 * n2, sizeof *Q);
    /* joint state a * n + f; a recycle (a -> 0 in P from a state whose
     * message would pass sigma) makes the old active state frozen */
    double *nw = malloc((k + 1) * sizeof *nw);
    for (unsigned a = 0; a < n; a++) {
        outcomes(M, k, nc, a, nw, NULL);
        for (unsigned f = 0; f < n; f++)
            for (unsigned d = 0; d <= k; d++) {
                if (nw[d] == 0.0)
                    continue;
                unsigned to = a + d <= sigma ? (a + d) * n + f : 0 * n + a;
                Q[(a * n + f) * n2 + to] += nw[d];
            }
    }
    double *pi = malloc(n2 * sizeof *pi);
    int rc = stationary(Q, n2, pi);
    double s = 0.0;
    for (unsigned a = 0; a < n; a++)
        for (unsigned f = 0; f < n; f++)
            s += pi[a * n + f] * (1.0 - (1.0 - rho[a]) * (1.0 - rho[f]));
    *fp = s;
    free(rho);
    free(P);
    free(Q);
    free(nw);
    free(pi);
    return rc;
}

int brute_nbounded(unsigned M, unsigned k, int nc, unsigned N, double *exact_worst,
                   double *exact_oracle, double *exact_real)
{
    if (M > 16 || k > 8 || N == 0)
        return -1;
    unsigned n = M + 1;
    double *T = calloc((size_t)n * (k + 1), sizeof *T);
    double *rho = malloc(n * sizeof *rho);
    for (unsigned b = 0; b <= M; b++) {
        outcomes(M, k, nc, b, T + b * (k + 1), NULL);
        rho[b] = T[b * (k + 1)];
    }
    double *p = calloc(n, sizeof *p), *q = calloc(n, sizeof *q);
    p[0] = 1.0;
    double so = 0.0;
    for (unsigned m = 0; m <= N; m++) {
        double e = 0.0;
        for (unsigned b = 0; b <= M; b++)
            e += p[b] * rho[b];
        if (m == N)
            *exact_worst = e;
        else
            so += e;
        memset(q, 0, n * sizeof *q);
        for (unsigned b = 0; b <= M; b++)
            for (unsigned d = 0; d <= k && b + d <= M; d++)
                q[b + d] += p[b] * T[b * (k + 1) + d];
        memcpy(p, q, n * sizeof *p);
    }
    *exact_oracle = so / N;
    memset(p, 0, n * sizeof *p);
    p[0] = 1.0;
    double efp = 0.0;
    int inf = 0;
    for (unsigned c = 0; c < N; c++) {
        for (unsigned b = 0; b <= M; b++) {
            if (p[b] == 0.0)
                continue;
            if (rho[b] >= 1.0)
                inf = 1;
            else
                efp += p[b] * rho[b] / (1.0 - rho[b]);
        }
        memset(q, 0, n * sizeof *q);
        for (unsigned b = 0; b <= M; b++)
            if (p[b] > 0.0 && rho[b] < 1.0)
                for (unsigned d = 1; d <= k && b + d <= M; d++)
                    q[b + d] += p[b] * T[b * (k + 1) + d] / (1.0 - rho[b]);
        memcpy(p, q, n * sizeof *p);
    }
    *exact_real = inf ? 1.0 : efp / (N + efp);
    free(T);
    free(rho);
    free(p);
    free(q);
    return 0;
}
