/*
 * rbf_splitmix.h -- splitmix64 (Steele, Lea & Flood 2014), the one copy in
 * the project (base module, internal).
 *
 * An additive Weyl sequence (the golden-ratio increment) through a strong
 * 64-bit finaliser: each output is a full-avalanche function of the state.
 * The filter extends a message's hash into k positions with it, the
 * simulator and the benchmarks seed and draw their generators with it.
 * The constants are part of the saved-file contract: positions depend on
 * them.
 */
#ifndef RBF_SPLITMIX_H
#define RBF_SPLITMIX_H

#include <stdint.h>

#define RBF_GOLDEN UINT64_C(0x9e3779b97f4a7c15)

/* The finaliser alone (a bijection of 64-bit words). */
static inline uint64_t rbf__splitmix64_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* The next output of the stream whose state is *x. */
static inline uint64_t rbf__splitmix64(uint64_t *x)
{
    *x += RBF_GOLDEN;
    return rbf__splitmix64_mix(*x);
}

#endif
