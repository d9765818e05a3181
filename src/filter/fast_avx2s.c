/*
 * fast_avx2s.c -- the flat fast paths (fast_tmpl.h) compiled for AVX2 a
 * second time, for flat filters of at most RBF_AVX2_SMALL_BITS (path.c):
 * positions 1 to 4 in a vector, the rest by the scalar multiplies (mulx).
 * In the caches a message is bound by the vector units, which the second
 * vector of fast_avx2.c loads with as many multiplies again; past the
 * second-level cache by how many messages' loads overlap, where the
 * scalar form's extra instructions cost more than they save (Intel Xeon,
 * AVX-512 off, k = 7: 15-18 ns against 18-19 at 128 KiB, 17-18 against
 * 19-20 at 1 MiB, but 25-26 against 22-23 at 2 MiB and 30-31 against 26
 * at 4 MiB).  The same values as every other path (test_flat_avx2).
 */
#include "avx512.h"

#ifdef RBF_HAVE_AVX512
#define FT(name) rbf__favx2s_##name
#include "fast_avx2.h"

#define FT_VEC_POS(hash, p, k, m)                                                                  \
    do {                                                                                           \
        _mm256_storeu_si256((__m256i *)(void *)(p), stream4((hash), 0, (m)));                      \
        for (unsigned ft_i = 4; ft_i < (k); ft_i++)                                                \
            (p)[ft_i] = reduce(rbf_splitmix64_mix((hash) + (uint64_t)(ft_i + 1) * RBF_GOLDEN), (m)); \
    } while (0)
#define FT_FLAT_ONLY 1
#include "fast_tmpl.h"
#else
/* ISO C forbids an empty translation unit. */
typedef int rbf__no_avx2s;
#endif
