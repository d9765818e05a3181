/*
 * path.c -- the choice of a filter's code path, made once: when the filter
 * is made, loaded or copied (rbf__alloc) and when it becomes concurrent or
 * not (rbf_set_concurrent).  The choice is stored in the handle (f->simd,
 * which the paths read, and f->ops, the functions the public calls go to),
 * so the calls themselves test nothing to find their way.
 *
 * The paths, from the configuration and the processor:
 *   concurrent   any concurrent filter (concurrent.c): never a
 *                single-writer SIMD path, whatever the processor;
 *   gather       AVX-512 one-phase colliding flat filters with k <= 8 and
 *                at least 4096 bits: positions by vector, words by gather
 *                (insert_avx512.c); their batches, with AVX-512 VL, by
 *                the per-k code of fast_tmpl.h (fast_avx512.c);
 *   avx512       other flat filters on AVX-512: positions by vector;
 *   blocked mask one-phase colliding blocked filters on AVX-512 or AVX2:
 *                the message as a 512-bit mask (blocked.c; on AVX2 with
 *                k <= 8, test-and-insert by the AVX2 fast path instead);
 *   fast         one-phase colliding filters with k <= 8 elsewhere: the
 *                per-k paths of fast_tmpl.h, portable C or AVX2;
 *   reference    the scalar code (insert.c) for all the rest.
 */
#include <stdlib.h>

#include "avx512.h"
#include "blocked.h"
#include "concurrent.h"
#include "filter_internal.h"
#include "insert.h"

/* The paths, fastest first, each forced off by an environment variable
 * (for tests and benchmarks; each implies those after it in this list):
 *     RBF_NO_SIMD     the scalar reference alone (simd = 0);
 *     RBF_NO_AVX2     no AVX2 path (nor AVX-512): the portable fast paths;
 *     RBF_NO_AVX512   no AVX-512 path: AVX2 where the processor has it.
 * The fast paths (RBF_SIMD_PORT, RBF_SIMD_AVX2, fast_tmpl.h) take
 * one-phase colliding filters with k <= 8 on any processor; the others run
 * the reference, or positions by AVX-512 (RBF_SIMD_VEC). */
unsigned rbf__simd_usable(const rbf_config *cfg, uint64_t m)
{
    if (getenv("RBF_NO_SIMD"))
        return 0;
    const int fast = cfg->phases == 1 && cfg->hashing == RBF_COLLIDING && cfg->hashes <= 8;
#ifdef RBF_HAVE_AVX512
    const int no_avx2 = getenv("RBF_NO_AVX2") != NULL;
    const int no_avx512 = no_avx2 || getenv("RBF_NO_AVX512") != NULL;
    __builtin_cpu_init();
    const int avx2 = !no_avx2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2") &&
                     __builtin_cpu_supports("popcnt");
    if (cfg->layout == RBF_LAYOUT_BLOCKED) {
        /* one-phase colliding: the message as a 512-bit mask (blocked.h) */
        if (cfg->phases != 1 || cfg->hashing != RBF_COLLIDING)
            return 0;
        if (!no_avx512 && __builtin_cpu_supports("avx512f") &&
            __builtin_cpu_supports("avx512vpopcntdq"))
            return RBF_SIMD_BLK512;
        if (avx2)
            return RBF_SIMD_BLK256;
        return fast ? RBF_SIMD_PORT : 0;
    }
    if (no_avx512 || m >= (UINT64_C(1) << 32) || !__builtin_cpu_supports("avx512f") ||
        !__builtin_cpu_supports("avx512dq")) {
        if (!fast)
            return 0;
        return avx2 ? RBF_SIMD_AVX2 : RBF_SIMD_PORT;
    }
    unsigned s = RBF_SIMD_VEC;
    /* the gather path falls back to the scalar one when two of the k
     * positions share a word, 1 - prod_{i<k} (1 - i/words) of the messages
     * (0.18 at 16 words with k = 3, 0.37 at 64 words with k = 8): below
     * 64 words that costs more than the gather saves (1000 bits, k = 3:
     * rbf_insert_hash 12.1 ns with the gather, 10.1 ns without; 8192 bits:
     * rbf_insert 9.4 ns with, 10.3 ns without; rbf bench sim and rbf bench
     * filter --sizes 1KiB --hashes 3) */
    if (__builtin_cpu_supports("avx512cd") && cfg->phases == 1 &&
        cfg->hashing == RBF_COLLIDING && cfg->hashes <= 8 && m >= 4096)
        s |= RBF_SIMD_GATHER;
    return s;
#else
    (void)m;
    return fast ? RBF_SIMD_PORT : 0;
#endif
}

#ifdef RBF_HAVE_AVX512
/* AVX-512 VL (the 256-bit forms), which the gather path's batches use. */
static int avx512vl(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512vl");
}
#endif

/* The functions of the path f->simd names (f not concurrent). */
static void single_writer_ops(const struct rbf *f, struct rbf_ops *o)
{
    const unsigned k = f->cfg.hashes;
    o->ins_key = NULL;
    o->con_key = NULL;
    o->ins_hash = rbf__ref_insert_hash;
    o->con_hash = !f->frozen && f->cfg.hashing == RBF_COLLIDING && f->cfg.layout == RBF_LAYOUT_FLAT
                      ? rbf__ref_contains1_colliding
                      : rbf__ref_contains_hash;
    o->batch = rbf__batch_pipeline;
#ifdef RBF_HAVE_AVX512
    if (f->simd & RBF_SIMD_VEC) {
        if (f->simd & RBF_SIMD_GATHER) { /* k <= 8 */
            o->ins_key = rbf__insert1_gather_key_k[k];
            o->ins_hash = rbf__insert1_gather_hash_k[k];
            /* batches: the per-k pipeline of fast_tmpl.h with the
             * positions by 256-bit AVX-512 multiplies (fast_avx512.c);
             * without AVX-512 VL, the generic pipeline, or for a filter
             * that fits in L2 one gather insertion after the other */
            if (avx512vl())
                o->batch = rbf__favx512_paths.batch[0][k];
            else if (f->nwords <= RBF_BATCH_DIRECT_WORDS)
                o->batch = rbf__batch_gather_direct;
        } else {
            o->ins_hash = rbf__insert_hash_avx512;
        }
        o->con_hash = !f->frozen && f->cfg.hashing == RBF_COLLIDING && k <= 8
                          ? rbf__contains1_gather
                          : rbf__contains_hash_avx512;
        return;
    }
    if (f->simd & (RBF_SIMD_BLK512 | RBF_SIMD_BLK256)) {
        rbf__blk_ops(f, o);
        return;
    }
#endif
    if (f->simd & RBF_SIMD_FAST) { /* k <= 8 */
        const struct rbf_fast_paths *t = fast_paths(f);
        const unsigned l = fast_layout(f);
        o->ins_key = t->ins_key[l][k];
        o->ins_hash = t->ins_hash[l][k];
        o->con_hash = t->con_hash[l][k];
        o->batch = t->batch[l][k];
    }
}

void rbf__choose_path(struct rbf *f)
{
    const unsigned usable = rbf__simd_usable(&f->cfg, f->m);
    if (f->conc) {
        /* the rule: a concurrent filter takes no single-writer SIMD path;
         * its own code may compute positions by vector (the same values) */
        f->simd = 0;
        rbf__conc_use_vec(f, (usable & RBF_SIMD_VEC) != 0);
        f->ops = (struct rbf_ops){
            .ins_hash = rbf__conc_insert_hash,
            .con_hash = rbf__conc_contains_hash,
            .batch = rbf__conc_batch,
        };
    } else {
        f->simd = usable;
        single_writer_ops(f, &f->ops);
    }
    rbf__ipos_ops(f, &f->ops);
}

const char *rbf_path(const rbf *f)
{
    if (!f)
        return "";
    if (f->conc)
        return "concurrent";
    if (f->simd & (RBF_SIMD_VEC | RBF_SIMD_GATHER | RBF_SIMD_BLK512))
        return "avx512";
    if (f->simd & (RBF_SIMD_AVX2 | RBF_SIMD_BLK256))
        return "avx2";
    if (f->simd & RBF_SIMD_PORT)
        return "portable";
    return "reference";
}
