/*
 * positions.c -- the keyed hash and the k positions of a message: the
 * scalar reference (the faster paths are chosen in path.c).
 */
#include "avx512.h"
#include "filter_internal.h"
#include "positions.h"

uint64_t rbf_hash(const rbf *f, const void *key, size_t len)
{
    static const char empty[1] = {0};
    if (!key)
        key = empty;
    return XXH3_64bits_withSeed(key, len, f ? f->cfg.seed : 0);
}

/* ---- positions
 *
 * The hash seeds a splitmix64 stream (Steele, Lea, Flood 2014): an additive
 * Weyl sequence through a strong 64-bit finaliser, so each word is a
 * full-avalanche function of the hash and the words are independent for
 * our purposes.  Each word becomes a position by multiply-shift, floor(x M
 * / 2^64), uniform on 0..M-1 up to a bias below M / 2^64.  Non-colliding
 * hashing redraws a word whenever its position repeats an earlier one,
 * which gives a uniform k-subset (sampling without replacement).  */

/* The blocked layout (docs/semantics.md): the first word of the stream
 * picks the block by multiply-shift over the m / 512 blocks; the words
 * after it are cut into seven 9-bit fields each (bits 0-8, 9-17, ...,
 * 54-62; bit 63 is unused), read in that order, and each field is an
 * offset inside the block.  Colliding takes the first k fields,
 * non-colliding skips a field that repeats an earlier offset.  The block
 * and the offsets come from different words, so they are independent. */
uint64_t rbf__block_of(const struct rbf *f, uint64_t hash)
{
    return reduce(rbf_splitmix64_mix(hash + RBF_GOLDEN), f->m / RBF_BLOCK_BITS);
}

static void positions_blocked(const struct rbf *f, uint64_t hash, uint64_t *pos)
{
    const unsigned k = f->cfg.hashes;
    const uint64_t base = rbf__block_of(f, hash) * RBF_BLOCK_BITS;
    uint64_t s = hash + RBF_GOLDEN, w = 0;
    unsigned field = 7;
    if (f->cfg.hashing == RBF_COLLIDING) {
        for (unsigned i = 0; i < k; i++) {
            if (field == 7) {
                s += RBF_GOLDEN;
                w = rbf_splitmix64_mix(s);
                field = 0;
            }
            pos[i] = base + ((w >> (9 * field++)) & 511);
        }
        return;
    }
    uint64_t seen[RBF_BLOCK_BITS / 64] = {0};
    for (unsigned i = 0; i < k;) {
        if (field == 7) {
            s += RBF_GOLDEN;
            w = rbf_splitmix64_mix(s);
            field = 0;
        }
        uint64_t o = (w >> (9 * field++)) & 511;
        uint64_t bit = UINT64_C(1) << (o & 63);
        if (!(seen[o >> 6] & bit)) {
            seen[o >> 6] |= bit;
            pos[i++] = base + o;
        }
    }
}

void rbf__positions(const struct rbf *f, uint64_t hash, uint64_t *pos)
{
    const unsigned k = f->cfg.hashes;
    if (f->cfg.layout == RBF_LAYOUT_BLOCKED) {
        positions_blocked(f, hash, pos);
        return;
    }
    const uint64_t m = f->m;
    uint64_t s = hash;
    if (f->cfg.hashing == RBF_COLLIDING) {
        for (unsigned i = 0; i < k; i++) {
            s += RBF_GOLDEN;
            pos[i] = reduce(rbf_splitmix64_mix(s), m);
        }
        return;
    }
    for (unsigned i = 0; i < k;) {
        s += RBF_GOLDEN;
        uint64_t p = reduce(rbf_splitmix64_mix(s), m);
        unsigned j = 0;
        while (j < i && pos[j] != p)
            j++;
        if (j == i)
            pos[i++] = p;
    }
}

void rbf__positions_fast(const struct rbf *f, uint64_t hash, uint64_t *pos)
{
#ifdef RBF_HAVE_AVX512
    if (f->simd & RBF_SIMD_VEC) {
        positions_avx512(f, hash, pos);
        return;
    }
#endif
    rbf__positions(f, hash, pos);
}

int rbf_positions(const rbf *f, uint64_t hash, uint64_t *pos)
{
    if (!f || !pos)
        return RBF_EINVAL;
    rbf__positions(f, hash, pos);
    return (int)f->cfg.hashes;
}
