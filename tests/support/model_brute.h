/*
 * model_brute.h -- brute-force reference for the model tests: dense Markov
 * chains whose transition matrices are built by enumerating every hash
 * outcome of a message (all M^k position tuples colliding, all ordered
 * k-tuples of distinct positions non-colliding), solved by dense Gaussian
 * elimination.  For tiny M only (M^k tuples per state).
 */
#ifndef RBF_TEST_MODEL_BRUTE_H
#define RBF_TEST_MODEL_BRUTE_H

#include <stdint.h>

/* One-phase sigma-bounded: stationary average rate and E[N_0] (expected
 * messages until the filter holds >= sigma bits).  Returns 0 or -1.
 * Retaining: with correlated = 0 the retained message lands in the fresh
 * filter like an independent message (the paper's tau(i,0) tau(0,j), which
 * MODEL.md's renewal formula equals); with correlated = 1 it keeps its own
 * positions, whose number of distinct bits is biased upward by having
 * triggered the recycle (the real filter; colliding hashing only differs). */
int brute_sigma(unsigned M, unsigned k, int nc, int ret, int correlated, unsigned sigma, double *fp,
                double *en0);

/* Two-phase non-retaining on the joint chain (active bits, frozen bits),
 * M = bits of each filter: the stationary rate of
 * 1 - (1 - rho(active)) (1 - rho(frozen)). */
int brute_two_phase(unsigned M, unsigned k, int nc, unsigned sigma, double *fp);

/* N-bounded exact rates by powers of the dense transition matrix of one
 * message (unconditioned, and conditioned on setting a bit). */
int brute_nbounded(unsigned M, unsigned k, int nc, unsigned N, double *exact_worst,
                   double *exact_oracle, double *exact_real);

/* Dense solve of A x = b (n x n, row-major, partial pivoting); x into b. */
int brute_solve(double *a, double *b, unsigned n);

#endif
