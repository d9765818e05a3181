/*
 * bench_filter.c -- `rbf bench filter`: test-and-insert and contains
 * throughput of librbf, side by side with libbloom (Debian libbloom-dev 1.6)
 * and with the machine's own limit for the same memory access pattern, in
 * one process and one run.
 *
 * What is measured, per filter size (default 128 KiB, 4 MiB, 128 MiB):
 *
 *   test-and-insert   rbf_insert (one key per call), rbf_insert_keys (a batch
 *                     per call) and libbloom's bloom_add, over FRESH random
 *                     16-byte keys (every key is new; hashing included);
 *   contains          rbf_contains, rbf_contains_keys and bloom_check, over
 *                     fresh keys (absent: the common case of a filter in a
 *                     packet path) and over keys drawn from a set inserted
 *                     beforehand (present: all k bits are read);
 *   limit             k independent random cache-line accesses per
 *                     operation over a buffer of the same size, with
 *                     precomputed indices and nothing else to do: read-
 *                     modify-write (the pattern of an insertion) and read
 *                     only.  Six kernels (a plain loop, or prefetching 16
 *                     operations ahead into L1 or into L2; 4 KiB pages or
 *                     transparent huge pages) are run and the fastest is
 *                     the limit: the best the memory system does.
 *
 * Method: each measurement is `reps` timed rounds of `keys` operations after
 * one warm-up round; the rounds of all measurements of a size are
 * interleaved (round r of every measurement, then round r+1), so a burst of
 * load from elsewhere hits them alike (--sequential: each measurement's
 * rounds back to back instead); the median round is reported.  A
 * round runs in chunks of `chunk` operations (4096 unless --chunk says
 * otherwise): the chunk's keys (or indices)
 * are generated outside the timed region, so only the filter's work is
 * timed, with its input hot in cache as in a packet path.
 *
 * Filters: rbf is sigma-bounded with sigma = half of its bits (one-phase,
 * colliding, non-retaining unless options say otherwise), so it keeps
 * recycling under fresh keys; the recycles happen inside the timed region,
 * as they would in use.  libbloom is sized by its bit count: bits per entry
 * b with ceil(b ln 2) = k gives its k, and entries = bits / b; it is reset
 * (outside the timed region) before it would pass `entries`, where it is
 * about half full like rbf at sigma.  The contains rows use a second filter
 * of each library holding the same prefilled keys, so both are at the same
 * fill (reported).
 */
#include "bench_filter.h"

/* Fill the chunk's key buffer with n fresh keys. */
static void fresh_keys(ctx *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        make_key(c->keybuf + i * KEY_LEN, c->fresh_stream, c->fresh_next++);
}

/* n keys drawn uniformly from the prefilled set. */
static void present_keys(ctx *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        make_key(c->keybuf + i * KEY_LEN, c->fill_stream, below(rng_next(&c->rng), c->fill_keys));
}

/* One chunk of n operations of measurement m: prepare (untimed), then time. */
static double run_chunk(ctx *c, const measure *m, size_t n)
{
    double t0, t1;
    int64_t r = 0;
    unsigned k = c->k;
    switch (m->op) {
    case OP_INSERT: fresh_keys(c, n); break;
    case OP_CONTAINS_ABSENT: fresh_keys(c, n); break;
    case OP_CONTAINS_PRESENT: present_keys(c, n); break;
    case OP_LIMIT_RMW:
    case OP_LIMIT_READ: bf_limit_indices(c, n); break;
    case OP_LIMIT1_RMW:
    case OP_LIMIT1_READ:
        bf_limit1_indices(c, n);
        k = 1;
        break;
    case OP_HASH: fresh_keys(c, n); break;
    case OP_CALL1_RMW: fresh_keys(c, n); break;
    }
#ifdef RBF_HAVE_LIBBLOOM
    /* libbloom is reset before it passes its design entries: outside the
     * timed region when the whole chunk then fits (the default chunk always
     * does), else inside it, where the insert loop below resets it */
    if (m->op == OP_INSERT && m->impl == IMPL_LIBBLOOM && n <= (uint64_t)c->bl.entries &&
        c->bl_since_reset + n > (uint64_t)c->bl.entries) {
        bloom_reset(&c->bl);
        c->bl_since_reset = 0;
        c->bl_resets++;
    }
#endif
    const uint64_t *lw = NULL;
    if (m->impl >= IMPL_LIMIT_FIRST)
        lw = m->impl < IMPL_LIMIT_PLAIN_HUGE ? c->lim4k.w : c->limhuge.w;
    t0 = cli_wall_seconds();
    switch (m->impl) {
    case IMPL_RBF_SINGLE:
        if (m->op == OP_INSERT) {
            for (size_t i = 0; i < n; i++)
                r += rbf_insert(c->f, c->keybuf + i * KEY_LEN, KEY_LEN);
        } else {
            for (size_t i = 0; i < n; i++)
                r += rbf_contains(c->fc, c->keybuf + i * KEY_LEN, KEY_LEN);
        }
        break;
    case IMPL_RBF_BATCH:
        for (size_t i = 0; i < n; i += c->batch) {
            size_t b = n - i < c->batch ? n - i : c->batch;
            if (m->op == OP_INSERT)
                r += rbf_insert_keys(c->f, c->keyp + i, c->lens + i, b, NULL);
            else
                r += rbf_contains_keys(c->fc, c->keyp + i, c->lens + i, b, NULL);
        }
        break;
    case IMPL_RBFB_SINGLE:
        if (m->op == OP_INSERT) {
            for (size_t i = 0; i < n; i++)
                r += rbf_insert(c->fb, c->keybuf + i * KEY_LEN, KEY_LEN);
        } else {
            for (size_t i = 0; i < n; i++)
                r += rbf_contains(c->fbc, c->keybuf + i * KEY_LEN, KEY_LEN);
        }
        break;
    case IMPL_RBFB_BATCH:
        for (size_t i = 0; i < n; i += c->batch) {
            size_t b = n - i < c->batch ? n - i : c->batch;
            if (m->op == OP_INSERT)
                r += rbf_insert_keys(c->fb, c->keyp + i, c->lens + i, b, NULL);
            else
                r += rbf_contains_keys(c->fbc, c->keyp + i, c->lens + i, b, NULL);
        }
        break;
    case IMPL_HASH:
        for (size_t i = 0; i < n; i++)
            r ^= (int64_t)(rbf_hash(c->fb ? c->fb : c->f, c->keybuf + i * KEY_LEN, KEY_LEN) >> 1);
        break;
    case IMPL_LIBBLOOM:
#ifdef RBF_HAVE_LIBBLOOM
        if (m->op == OP_INSERT) {
            for (size_t i = 0; i < n;) {
                uint64_t room = (uint64_t)c->bl.entries - c->bl_since_reset;
                if (room == 0) { /* only with a chunk larger than libbloom's entries */
                    bloom_reset(&c->bl);
                    c->bl_since_reset = 0;
                    c->bl_resets++;
                    room = (uint64_t)c->bl.entries;
                }
                size_t seg = n - i < room ? n - i : (size_t)room;
                for (size_t j = i; j < i + seg; j++)
                    r += bloom_add(&c->bl, c->keybuf + j * KEY_LEN, (int)KEY_LEN);
                c->bl_since_reset += seg;
                i += seg;
            }
        } else {
            for (size_t i = 0; i < n; i++)
                r += bloom_check(&c->blc, c->keybuf + i * KEY_LEN, (int)KEY_LEN);
        }
#endif
        break;
    case IMPL_LIMIT_PLAIN_4K:
    case IMPL_LIMIT_PLAIN_HUGE:
        if (m->op == OP_CALL1_RMW) {
            const rbf *hf = c->fb ? c->fb : c->f;
            uint64_t *w = (uint64_t *)(uintptr_t)lw, lines = c->lim_words / 8;
            for (size_t i = 0; i < n; i++) {
                uint64_t h = rbf_hash(hf, c->keybuf + i * KEY_LEN, KEY_LEN);
                w[below(mix64(h + RBF_GOLDEN), lines) * 8 + (h & 7)] |= 1ULL << (h >> 58);
            }
        } else if (m->op == OP_LIMIT_RMW || m->op == OP_LIMIT1_RMW)
            bf_limit_rmw_plain((uint64_t *)(uintptr_t)lw, c->idx, n, k);
        else
            r = (int64_t)bf_limit_read_plain(lw, c->idx, n, k);
        break;
    case IMPL_LIMIT_L1_4K:
    case IMPL_LIMIT_L1_HUGE:
        if (m->op == OP_LIMIT_RMW || m->op == OP_LIMIT1_RMW)
            bf_limit_rmw_l1((uint64_t *)(uintptr_t)lw, c->idx, n, k);
        else
            r = (int64_t)bf_limit_read_l1(lw, c->idx, n, k);
        break;
    case IMPL_LIMIT_L2_4K:
    case IMPL_LIMIT_L2_HUGE:
        if (m->op == OP_LIMIT_RMW || m->op == OP_LIMIT1_RMW)
            bf_limit_rmw_l2((uint64_t *)(uintptr_t)lw, c->idx, n, k);
        else
            r = (int64_t)bf_limit_read_l2(lw, c->idx, n, k);
        break;
    }
    t1 = cli_wall_seconds();
    c->sink += (uint64_t)r;
    return (t1 - t0) * 1e9; /* ns */
}

static double run_round(ctx *c, const measure *m)
{
    double total = 0;
    for (uint64_t done = 0; done < c->keys;) {
        size_t n = c->keys - done < c->chunk ? (size_t)(c->keys - done) : c->chunk;
        total += run_chunk(c, m, n);
        done += n;
    }
    return total / (double)c->keys;
}

static void summarise(measure *m, unsigned reps)
{
    double *s = malloc(reps * sizeof *s);
    if (!s) {
        m->median = m->lo = m->hi = m->rounds[0];
        return;
    }
    memcpy(s, m->rounds, reps * sizeof *s);
    qsort(s, reps, sizeof *s, bench_cmp_double);
    m->median = reps % 2 ? s[reps / 2] : (s[reps / 2 - 1] + s[reps / 2]) / 2;
    m->lo = s[0];
    m->hi = s[reps - 1];
    free(s);
}

/* ---- setup of one size */

static int make_rbf(const ctx *c, uint64_t bits, rbf_layout layout, rbf **out)
{
    rbf_config cfg;
    rbf_config_init(&cfg);
    cfg.bits = bits;
    cfg.hashes = c->k;
    cfg.phases = c->phases;
    cfg.hashing = c->hashing;
    cfg.recycle = c->recycle;
    cfg.sigma = (c->phases == 2 ? bits / 2 : bits) / 2;
    cfg.seed = c->seed ^ 0x5eed5eed5eed5eedULL;
    cfg.layout = layout;
    return rbf_new(&cfg, out);
}

static double rbf_fill(const rbf *f)
{
    rbf_stats st;
    rbf_get_stats(f, &st);
    return (double)st.bits_set / (double)st.bits;
}

/* Prefill the insert filters with n fresh keys (the same for both
 * libraries), untimed: so that they are measured mid-cycle. */
static void prefill_insert(ctx *c, uint64_t n)
{
    for (uint64_t done = 0; done < n;) {
        size_t b = n - done < c->chunk ? (size_t)(n - done) : c->chunk;
        fresh_keys(c, b);
        if (c->f)
            rbf_insert_keys(c->f, c->keyp, c->lens, b, NULL);
        if (c->fb)
            rbf_insert_keys(c->fb, c->keyp, c->lens, b, NULL);
#ifdef RBF_HAVE_LIBBLOOM
        if (c->have_bl)
            for (size_t i = 0; i < b; i++)
                bloom_add(&c->bl, c->keybuf + i * KEY_LEN, (int)KEY_LEN);
        c->bl_since_reset += b;
#endif
        done += b;
    }
}

/* Prefill the contains filters with the same fill_keys keys. */
static void prefill(ctx *c)
{
    uint8_t key[KEY_LEN];
    for (uint64_t j = 0; j < c->fill_keys; j++) {
        make_key(key, c->fill_stream, j);
        if (c->fc)
            rbf_insert(c->fc, key, KEY_LEN);
        if (c->fbc)
            rbf_insert(c->fbc, key, KEY_LEN);
#ifdef RBF_HAVE_LIBBLOOM
        if (c->have_blc)
            bloom_add(&c->blc, key, (int)KEY_LEN);
#endif
    }
}

static void add_measure(measure *ms, size_t *n, enum op_kind op, enum impl_kind impl,
                        const char *op_name, const char *impl_name)
{
    ms[*n].op = op;
    ms[*n].impl = impl;
    ms[*n].op_name = op_name;
    ms[*n].impl_name = impl_name;
    (*n)++;
}

/* The rows of one size, in the order printed: into ms (room for 64). */
static size_t list_measures(const ctx *c, measure *ms, int bl_ok)
{
    size_t nm = 0;
    static const char *ins = "test-and-insert", *cab = "contains (absent)",
                      *cpr = "contains (present)";
    if (c->flat) {
        add_measure(ms, &nm, OP_INSERT, IMPL_RBF_SINGLE, ins, "rbf_insert");
        add_measure(ms, &nm, OP_INSERT, IMPL_RBF_BATCH, ins, "rbf_insert_keys");
    }
    if (c->blocked) {
        add_measure(ms, &nm, OP_INSERT, IMPL_RBFB_SINGLE, ins, "rbf_insert blocked");
        add_measure(ms, &nm, OP_INSERT, IMPL_RBFB_BATCH, ins, "rbf_insert_keys blocked");
    }
    if (bl_ok)
        add_measure(ms, &nm, OP_INSERT, IMPL_LIBBLOOM, ins, "libbloom bloom_add");
    static const char *const lim_rmw[] = {
        "limit: k line RMW, loop, 4K",  "limit: k line RMW, prefetch L1, 4K",
        "limit: k line RMW, prefetch L2, 4K", "limit: k line RMW, loop, huge",
        "limit: k line RMW, prefetch L1, huge", "limit: k line RMW, prefetch L2, huge"};
    static const char *const lim_read[] = {
        "limit: k line read, loop, 4K",  "limit: k line read, prefetch L1, 4K",
        "limit: k line read, prefetch L2, 4K", "limit: k line read, loop, huge",
        "limit: k line read, prefetch L1, huge", "limit: k line read, prefetch L2, huge"};
    for (int v = 0; v < 6; v++)
        add_measure(ms, &nm, OP_LIMIT_RMW, (enum impl_kind)(IMPL_LIMIT_FIRST + v), ins, lim_rmw[v]);
    static const char *const lim1_rmw[] = {
        "limit: 1 line RMW, loop, 4K",  "limit: 1 line RMW, prefetch L1, 4K",
        "limit: 1 line RMW, prefetch L2, 4K", "limit: 1 line RMW, loop, huge",
        "limit: 1 line RMW, prefetch L1, huge", "limit: 1 line RMW, prefetch L2, huge"};
    static const char *const lim1_read[] = {
        "limit: 1 line read, loop, 4K",  "limit: 1 line read, prefetch L1, 4K",
        "limit: 1 line read, prefetch L2, 4K", "limit: 1 line read, loop, huge",
        "limit: 1 line read, prefetch L1, huge", "limit: 1 line read, prefetch L2, huge"};
    if (c->blocked) {
        for (int v = 0; v < 6; v++)
            add_measure(ms, &nm, OP_LIMIT1_RMW, (enum impl_kind)(IMPL_LIMIT_FIRST + v), ins,
                        lim1_rmw[v]);
        add_measure(ms, &nm, OP_HASH, IMPL_HASH, "hash", "rbf_hash");
        add_measure(ms, &nm, OP_CALL1_RMW, IMPL_LIMIT_PLAIN_4K, ins, "floor: rbf_hash + 1 line, 4K");
        add_measure(ms, &nm, OP_CALL1_RMW, IMPL_LIMIT_PLAIN_HUGE, ins,
                    "floor: rbf_hash + 1 line, huge");
    }
    for (int pass = 0; pass < 2; pass++) {
        enum op_kind op = pass ? OP_CONTAINS_PRESENT : OP_CONTAINS_ABSENT;
        const char *nmo = pass ? cpr : cab;
        if (c->flat) {
            add_measure(ms, &nm, op, IMPL_RBF_SINGLE, nmo, "rbf_contains");
            add_measure(ms, &nm, op, IMPL_RBF_BATCH, nmo, "rbf_contains_keys");
        }
        if (c->blocked) {
            add_measure(ms, &nm, op, IMPL_RBFB_SINGLE, nmo, "rbf_contains blocked");
            add_measure(ms, &nm, op, IMPL_RBFB_BATCH, nmo, "rbf_contains_keys blocked");
        }
        if (bl_ok && !pass)
            add_measure(ms, &nm, op, IMPL_LIBBLOOM, nmo, "libbloom bloom_check");
    }
    if (bl_ok)
        add_measure(ms, &nm, OP_CONTAINS_PRESENT, IMPL_LIBBLOOM, cpr, "libbloom bloom_check");
    for (int v = 0; v < 6; v++)
        add_measure(ms, &nm, OP_LIMIT_READ, (enum impl_kind)(IMPL_LIMIT_FIRST + v), "contains",
                    lim_read[v]);
    if (c->blocked)
        for (int v = 0; v < 6; v++)
            add_measure(ms, &nm, OP_LIMIT1_READ, (enum impl_kind)(IMPL_LIMIT_FIRST + v),
                        "contains", lim1_read[v]);
    return nm;
}

/* A warm-up round of every row (which also faults in every page), then
 * the timed rounds, interleaved; or (--sequential) each row alone, warm-up
 * and rounds back to back, as a harness timing one library at a time
 * would.  Then each row's median and range. */
static void time_rounds(ctx *c, measure *ms, size_t nm)
{
    if (c->sequential) {
        for (size_t i = 0; i < nm; i++) {
            (void)run_round(c, &ms[i]);
            for (unsigned r = 0; r < c->reps; r++)
                ms[i].rounds[r] = run_round(c, &ms[i]);
        }
    } else {
        for (size_t i = 0; i < nm; i++)
            (void)run_round(c, &ms[i]);
        for (unsigned r = 0; r < c->reps; r++)
            for (size_t i = 0; i < nm; i++)
                ms[i].rounds[r] = run_round(c, &ms[i]);
    }
    for (size_t i = 0; i < nm; i++)
        summarise(&ms[i], c->reps);
}

/* The insert filters' state after the rounds. */
static void end_stats(ctx *c, size_result *sr)
{
    rbf_stats st;
    if (c->f) {
        rbf_get_stats(c->f, &st);
        sr->rbf_cycles = st.cycles;
        sr->ins_fill_rbf = rbf_fill(c->f);
    }
    if (c->fb) {
        rbf_get_stats(c->fb, &st);
        sr->rbfb_cycles = st.cycles;
        sr->ins_fill_rbfb = rbf_fill(c->fb);
    }
    sr->ins_fill_bloom = -1;
#ifdef RBF_HAVE_LIBBLOOM
    if (c->have_bl)
        sr->ins_fill_bloom = bf_bloom_fill(&c->bl);
#endif
#ifdef RBF_HAVE_LIBBLOOM
    sr->bloom_resets = c->bl_resets;
#endif
}

static int run_size(ctx *c, size_result *sr)
{
    uint64_t bits = c->bytes * 8;
    int rc = 0;
    memset(sr, 0, sizeof *sr);
    sr->bytes = c->bytes;
    c->f = c->fc = c->fb = c->fbc = NULL;
    if ((c->flat && (make_rbf(c, bits, RBF_LAYOUT_FLAT, &c->f) != RBF_OK ||
                     make_rbf(c, bits, RBF_LAYOUT_FLAT, &c->fc) != RBF_OK)) ||
        (c->blocked && (make_rbf(c, bits, RBF_LAYOUT_BLOCKED, &c->fb) != RBF_OK ||
                        make_rbf(c, bits, RBF_LAYOUT_BLOCKED, &c->fbc) != RBF_OK))) {
        rc = cli_fail(CMD, "cannot create a %llu-bit rbf filter", (unsigned long long)bits);
        goto out;
    }
    rbf_config cfg;
    rbf_get_config(c->f ? c->f : c->fb, &cfg);
    sr->rbf_bits = cfg.bits;
    sr->rbf_sigma = cfg.sigma;
    sr->path_flat = c->f ? rbf_path(c->f) : "";
    sr->path_blocked = c->fb ? rbf_path(c->fb) : "";
    c->lim_words = c->bytes / 8;
    if (bf_limit_alloc(&c->lim4k, (size_t)c->bytes, 0) || bf_limit_alloc(&c->limhuge, (size_t)c->bytes, 1)) {
        rc = cli_fail(CMD, "cannot allocate %llu bytes for the limit kernels",
                      (unsigned long long)c->bytes);
        goto out;
    }
    sr->huge_ok = c->limhuge.huge;
    /* the contains filters hold half of libbloom's design entries (capped) */
    c->fill_keys = (uint64_t)((double)bits / ((double)c->k / log(2.0)) / 2);
#ifdef RBF_HAVE_LIBBLOOM
    c->have_bl = c->have_blc = 0;
    c->bl_since_reset = c->bl_resets = 0;
    if (bits <= 2147483647ULL && bf_bloom_make(&c->bl, bits, c->k) == 0) {
        c->have_bl = 1;
        if (bf_bloom_make(&c->blc, bits, c->k) == 0)
            c->have_blc = 1;
    }
    if (c->have_bl) {
        sr->bloom_bits = c->bl.bits;
        sr->bloom_hashes = c->bl.hashes;
        sr->bloom_entries = c->bl.entries;
        c->fill_keys = (uint64_t)c->bl.entries / 2;
        if ((unsigned)c->bl.hashes != c->k) {
            rc = cli_fail(CMD, "libbloom chose %d hashes, not %u", c->bl.hashes, c->k);
            goto out;
        }
    } else {
        sr->bloom_bits = sr->bloom_hashes = sr->bloom_entries = -1;
    }
#else
    sr->bloom_bits = sr->bloom_hashes = sr->bloom_entries = -1;
#endif
    if (c->fill_keys > c->fill_cap)
        c->fill_keys = c->fill_cap;
    if (c->fill_keys == 0)
        c->fill_keys = 1;
    sr->fill_keys = c->fill_keys;
    prefill(c);
    {
        double entries = (double)bits / (((double)c->k - 0.5) / log(2.0));
#ifdef RBF_HAVE_LIBBLOOM
        if (c->have_bl)
            entries = c->bl.entries;
#endif
        sr->prefill_keys = (uint64_t)(c->prefill * entries);
        prefill_insert(c, sr->prefill_keys);
    }
    sr->fill_rbf = c->fc ? rbf_fill(c->fc) : -1;
    sr->fill_rbfb = c->fbc ? rbf_fill(c->fbc) : -1;
    sr->fill_bloom = -1;
#ifdef RBF_HAVE_LIBBLOOM
    if (c->have_blc)
        sr->fill_bloom = bf_bloom_fill(&c->blc);
#endif

    measure *ms = calloc(64, sizeof *ms);
    size_t nm = 0;
    if (!ms) {
        rc = cli_fail(CMD, "out of memory");
        goto out;
    }
    int bl_ok = 0;
#ifdef RBF_HAVE_LIBBLOOM
    bl_ok = c->have_bl && c->have_blc;
#endif
    nm = list_measures(c, ms, bl_ok);
    sr->ms = ms;
    sr->nms = nm;
    for (size_t i = 0; i < nm; i++) {
        ms[i].rounds = calloc(c->reps, sizeof(double));
        if (!ms[i].rounds) {
            rc = cli_fail(CMD, "out of memory");
            goto out;
        }
    }
    time_rounds(c, ms, nm);
    end_stats(c, sr);
out:
    rbf_free(c->f);
    rbf_free(c->fc);
    rbf_free(c->fb);
    rbf_free(c->fbc);
    c->f = c->fc = c->fb = c->fbc = NULL;
#ifdef RBF_HAVE_LIBBLOOM
    if (c->have_bl)
        bloom_free(&c->bl);
    if (c->have_blc)
        bloom_free(&c->blc);
    c->have_bl = c->have_blc = 0;
#endif
    bf_limit_free(&c->lim4k);
    bf_limit_free(&c->limhuge);
    return rc;
}

/* --threads: the shared-filter benchmark (bench_threads.c). */
static int run_threads(const ctx *c, bf_args *a)
{
    if (!a->sizes_given) {
        a->sizes[0] = 4u << 20;
        a->nsz = 1;
    }
    for (size_t s = 0; s < a->nsz; s++)
        if (c->phases == 2 && a->sizes[s] * 8 / 2 <= 2 * (uint64_t)c->k)
            return cli_usage(CMD, "--sizes: %llu bytes is too small for two phases",
                             (unsigned long long)a->sizes[s]);
    bench_threads_opts to = {.threads = a->threads, .sizes = a->sizes, .nsizes = a->nsz,
                             .keys = a->keys_given ? c->keys : (1u << 19), .reps = c->reps,
                             .k = c->k, .phases = c->phases, .hashing = c->hashing,
                             .recycle = c->recycle, .seed = c->seed, .json = c->json};
    return bench_threads_run(&to);
}

/* The measurements of every size, then the table or the JSON. */
static int run_sizes(ctx *c, const bf_args *a)
{
    int rc;
    c->fresh_stream = mix64(c->seed ^ 0xf7e5a11ce0000001ULL);
    c->fill_stream = mix64(c->seed ^ 0x0f111ed000000002ULL);
    c->rng = mix64(c->seed ^ 0x7a11d0e000000003ULL);
    c->keybuf = malloc(c->chunk * KEY_LEN);
    c->keyp = malloc(c->chunk * sizeof *c->keyp);
    c->lens = malloc(c->chunk * sizeof *c->lens);
    c->idx = malloc(c->chunk * c->k * sizeof *c->idx);
    size_result *srs = calloc(a->nsz, sizeof *srs);
    rc = 0;
    if (!c->keybuf || !c->keyp || !c->lens || !c->idx || !srs) {
        rc = cli_fail(CMD, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < c->chunk; i++) {
        c->keyp[i] = c->keybuf + i * KEY_LEN;
        c->lens[i] = KEY_LEN;
    }
    double load0, load1;
    load0 = bench_load();
    for (size_t s = 0; s < a->nsz && rc == 0; s++) {
        c->bytes = a->sizes[s];
        rc = run_size(c, &srs[s]);
    }
    load1 = bench_load();
    if (rc == 0) {
        if (c->json)
            bf_print_json(c, srs, a->nsz, load0, load1);
        else
            bf_print_table(c, srs, a->nsz, load0, load1);
        rc = cli_finish_stdout(CMD);
    }
done:
    if (srs)
        for (size_t s = 0; s < a->nsz; s++) {
            for (size_t i = 0; i < srs[s].nms; i++)
                free(srs[s].ms[i].rounds);
            free(srs[s].ms);
        }
    free(srs);
    free(c->keybuf);
    free(c->keyp);
    free(c->lens);
    free(c->idx);
    return rc;
}

int bench_filter_main(int argc, char **argv)
{
    ctx c;
    memset(&c, 0, sizeof c);
    c.keys = 1u << 20;
    c.reps = 5;
    c.batch = 256;
    c.k = 7;
    c.seed = 1;
    c.phases = 1;
    c.hashing = RBF_COLLIDING;
    c.recycle = RBF_NON_RETAINING;
    c.fill_cap = 4u << 20;
    c.chunk = CHUNK;
    c.flat = c.blocked = 1;

    bf_args a = {.sizes = {128u << 10, 4u << 20, 128u << 20}, .nsz = 3};
    int rc = bf_parse_options(argc, argv, &c, &a);
    if (rc || a.help)
        return rc;
    if (a.threads)
        return run_threads(&c, &a);
    if ((rc = bf_check_options(&c, &a)))
        return rc;
    return run_sizes(&c, &a);
}
