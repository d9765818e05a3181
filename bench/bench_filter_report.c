/*
 * bench_filter_report.c -- what `rbf bench filter` prints: the table (the
 * rows against the machine's limit and libbloom, the processor, the load)
 * and the same as one JSON document.
 */
#include "bench_filter.h"

/* ---- reporting */

/* A reference row (a limit kernel or the hash alone), not a filter. */
static int is_limit(const measure *m)
{
    return m->impl >= IMPL_LIMIT_FIRST || m->op == OP_HASH || m->op == OP_CALL1_RMW;
}

static int is_blocked(const measure *m)
{
    return m->impl == IMPL_RBFB_SINGLE || m->impl == IMPL_RBFB_BATCH;
}

/* The fastest limit kernel for op (median ns/op), or 0. */
static double best_limit(const size_result *sr, enum op_kind op, const measure **which)
{
    double best = 0;
    for (size_t i = 0; i < sr->nms; i++) {
        const measure *m = &sr->ms[i];
        if (m->op == op && (best == 0 || m->median < best)) {
            best = m->median;
            if (which)
                *which = m;
        }
    }
    return best;
}

/* libbloom's median for the same operation, or 0. */
static double bloom_ref(const size_result *sr, enum op_kind op)
{
    for (size_t i = 0; i < sr->nms; i++)
        if (sr->ms[i].op == op && sr->ms[i].impl == IMPL_LIBBLOOM)
            return sr->ms[i].median;
    return 0;
}

static enum op_kind limit_of(enum op_kind op)
{
    return op == OP_INSERT || op == OP_LIMIT_RMW ? OP_LIMIT_RMW : OP_LIMIT_READ;
}

/* The limit a row is compared with: k random lines for flat rbf and
 * libbloom; for the blocked layout, one random line plus the measured cost
 * of hashing the key (rbf_hash alone), since a blocked message touches one
 * line and hashes once.  The limit rows are compared with themselves. */
static double row_limit(const size_result *sr, const measure *m)
{
    if (m->op == OP_LIMIT1_RMW || m->op == OP_LIMIT1_READ || m->op == OP_HASH)
        return best_limit(sr, m->op, NULL);
    if (is_blocked(m))
        return best_limit(sr, m->op == OP_INSERT ? OP_LIMIT1_RMW : OP_LIMIT1_READ, NULL) +
               best_limit(sr, OP_HASH, NULL);
    return best_limit(sr, limit_of(m->op), NULL);
}

/* For a blocked row, the flat row of the same operation and kind (single
 * or batched), or 0. */
static double flat_ref(const size_result *sr, const measure *m)
{
    if (!is_blocked(m))
        return 0;
    enum impl_kind want = m->impl == IMPL_RBFB_SINGLE ? IMPL_RBF_SINGLE : IMPL_RBF_BATCH;
    for (size_t i = 0; i < sr->nms; i++)
        if (sr->ms[i].op == m->op && sr->ms[i].impl == want)
            return sr->ms[i].median;
    return 0;
}

static const char *size_label(uint64_t bytes, char *buf, size_t cap)
{
    if (bytes % (1ULL << 30) == 0)
        snprintf(buf, cap, "%llu GiB", (unsigned long long)(bytes >> 30));
    else if (bytes % (1ULL << 20) == 0)
        snprintf(buf, cap, "%llu MiB", (unsigned long long)(bytes >> 20));
    else if (bytes % 1024 == 0)
        snprintf(buf, cap, "%llu KiB", (unsigned long long)(bytes >> 10));
    else
        snprintf(buf, cap, "%llu B", (unsigned long long)bytes);
    return buf;
}

/* ---- the processor: its model name and the flags of /proc/cpuinfo that
 * choose a path (Linux; empty elsewhere) */

static const char *const CPU_FLAGS[] = {"sse4_2", "popcnt", "bmi2", "avx2", "avx512f", "avx512dq",
                                        "avx512cd", "avx512vl", "avx512_vpopcntdq", "asimd", "sve", "vx"};

typedef struct cpu_info {
    char model[128];
    char flags[256]; /* those of CPU_FLAGS present, space-separated */
} cpu_info;

static void cpu_read(cpu_info *ci)
{
    ci->model[0] = ci->flags[0] = 0;
    FILE *fp = fopen("/proc/cpuinfo", "r");
    if (!fp)
        return;
    char line[8192], vendor[64] = "";
    int have_flags = 0;
    while (fgets(line, sizeof line, fp)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        size_t klen = (size_t)(colon - line);
        while (klen && (line[klen - 1] == ' ' || line[klen - 1] == '\t'))
            klen--;
        char *val = colon + 1;
        while (*val == ' ')
            val++;
        val[strcspn(val, "\n")] = 0;
        /* x86: "model name"; ARM64: "CPU part" (no name); s390x:
         * "vendor_id" alone */
        if (!ci->model[0] && ((klen == 10 && !strncmp(line, "model name", 10)) ||
                              (klen == 8 && !strncmp(line, "CPU part", 8))))
            snprintf(ci->model, sizeof ci->model, "%s", val);
        if (!vendor[0] && klen == 9 && !strncmp(line, "vendor_id", 9))
            snprintf(vendor, sizeof vendor, "%s", val);
        /* x86: "flags"; ARM64: "Features"; s390x: "features" */
        if (!have_flags && ((klen == 5 && !strncmp(line, "flags", 5)) ||
                            (klen == 8 && (!strncmp(line, "Features", 8) ||
                                           !strncmp(line, "features", 8))))) {
            have_flags = 1;
            for (size_t i = 0; i < sizeof CPU_FLAGS / sizeof CPU_FLAGS[0]; i++) {
                size_t n = strlen(CPU_FLAGS[i]);
                for (const char *p = val; (p = strstr(p, CPU_FLAGS[i])) != NULL; p += n)
                    if ((p == val || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0)) {
                        size_t used = strlen(ci->flags);
                        snprintf(ci->flags + used, sizeof ci->flags - used, "%s%s",
                                 used ? " " : "", CPU_FLAGS[i]);
                        break;
                    }
            }
        }
    }
    fclose(fp);
    if (!ci->model[0])
        snprintf(ci->model, sizeof ci->model, "%s", vendor);
}

/* The switches of the paths set in the environment, space-separated. */
static void path_env(char *buf, size_t cap)
{
    static const char *const vars[] = {"RBF_NO_SIMD", "RBF_NO_AVX2", "RBF_NO_AVX512"};
    buf[0] = 0;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i])) {
            size_t used = strlen(buf);
            snprintf(buf + used, cap - used, "%s%s=%s", used ? " " : "", vars[i], getenv(vars[i]));
        }
}

/* The path of a row: the filter's for rbf's rows, "C" for libbloom (as
 * Debian builds it), "-" for the reference rows. */
static const char *row_path(const size_result *sr, const measure *m)
{
    switch (m->impl) {
    case IMPL_RBF_SINGLE:
    case IMPL_RBF_BATCH: return sr->path_flat;
    case IMPL_RBFB_SINGLE:
    case IMPL_RBFB_BATCH: return sr->path_blocked;
    case IMPL_LIBBLOOM: return "C";
    default: return "-";
    }
}

void bf_print_table(const ctx *c, const size_result *srs, size_t nsz, double load0, double load1)
{
    printf("rbf bench filter: k = %u, %u-byte random keys, %llu operations per round, "
           "median of %u rounds after 1 warm-up (%s), batch %zu, keys generated per chunk of %zu\n",
           c->k, KEY_LEN, (unsigned long long)c->keys, c->reps,
           c->sequential ? "each row's rounds back to back" : "rounds of all rows interleaved",
           c->batch, c->chunk);
    printf("rbf: %s, %s, %s, %u phase%s, sigma = bits per filter / 2; load average %.2f at start, "
           "%.2f at end\n",
           c->flat && c->blocked ? "flat and blocked layouts" : c->flat ? "flat layout" : "blocked layout",
           cli_hashing_name(c->hashing == RBF_NON_COLLIDING),
           cli_recycle_name(c->recycle == RBF_RETAINING), c->phases,
           c->phases == 2 ? "s" : "", load0, load1);
    cpu_info ci;
    cpu_read(&ci);
    char env[160];
    path_env(env, sizeof env);
    printf("cpu: %s; flags: %s; paths (rbf_path): flat %s, blocked %s%s%s\n",
           ci.model[0] ? ci.model : "unknown", ci.flags[0] ? ci.flags : "none of interest",
           nsz && c->flat ? srs[0].path_flat : "-", nsz && c->blocked ? srs[0].path_blocked : "-",
           env[0] ? "; set: " : "", env);
#ifndef RBF_HAVE_LIBBLOOM
    printf("libbloom: not found at build time, its rows are missing\n");
#endif
    for (size_t s = 0; s < nsz; s++) {
        const size_result *sr = &srs[s];
        char lb[32];
        printf("\n%s: rbf %llu bits (sigma %llu, %llu recycles", size_label(sr->bytes, lb, sizeof lb),
               (unsigned long long)sr->rbf_bits, (unsigned long long)sr->rbf_sigma,
               (unsigned long long)(c->flat ? sr->rbf_cycles : sr->rbfb_cycles));
        if (c->flat && c->blocked)
            printf(", blocked %llu", (unsigned long long)sr->rbfb_cycles);
        printf(")");
        if (sr->bloom_bits >= 0)
            printf(", libbloom %lld bits k=%lld (%llu resets)", (long long)sr->bloom_bits,
                   (long long)sr->bloom_hashes, (unsigned long long)sr->bloom_resets);
        printf("\n  insert filters: %llu keys before timing, fill at the end",
               (unsigned long long)sr->prefill_keys);
        if (c->flat)
            printf(" rbf %.3f", sr->ins_fill_rbf);
        if (c->blocked)
            printf("%s blocked %.3f", c->flat ? "," : "", sr->ins_fill_rbfb);
        if (sr->ins_fill_bloom >= 0)
            printf(", libbloom %.3f", sr->ins_fill_bloom);
        printf("; contains filters: %llu keys, fill", (unsigned long long)sr->fill_keys);
        if (c->flat)
            printf(" rbf %.3f", sr->fill_rbf);
        if (c->blocked)
            printf("%s blocked %.3f", c->flat ? "," : "", sr->fill_rbfb);
        if (sr->fill_bloom >= 0)
            printf(", libbloom %.3f", sr->fill_bloom);
        printf("\n");
        printf("  %-19s %-26s %-9s %9s %9s %12s %9s %9s\n", "operation", "implementation",
               "path", "ns/op", "Mops/s", "vs libbloom", "vs limit", "vs flat");
        for (size_t i = 0; i < sr->nms; i++) {
            const measure *m = &sr->ms[i];
            if (is_limit(m))
                continue;
            double bref = bloom_ref(sr, m->op);
            double lim = row_limit(sr, m);
            double fref = flat_ref(sr, m);
            printf("  %-19s %-26s %-9s %9.2f %9.1f ", m->op_name, m->impl_name, row_path(sr, m),
                   m->median, 1e3 / m->median);
            if (bref > 0)
                printf("%11.2fx ", bref / m->median);
            else
                printf("%12s ", "-");
            printf("%9.2f", m->median / lim);
            if (fref > 0)
                printf(" %8.2fx", fref / m->median);
            printf("\n");
            /* the limit rows go after the libbloom row of their operation */
            int last_of_op = i + 1 == sr->nms || sr->ms[i + 1].op != m->op;
            if (last_of_op && (m->op == OP_INSERT || m->op == OP_CONTAINS_PRESENT)) {
                const measure *w = NULL;
                int ins = m->op == OP_INSERT;
                double l = best_limit(sr, limit_of(m->op), &w);
                if (c->flat || sr->bloom_bits >= 0)
                    printf("  %-19s %-26s %-9s %9.2f %9.1f %12s %9.2f   (%s)\n", m->op_name,
                           ins ? "limit: k line RMW" : "limit: k line reads", "-", l, 1e3 / l, "",
                           1.0, w ? w->impl_name + 7 : "");
                if (c->blocked) {
                    const measure *w1 = NULL;
                    double l1 = best_limit(sr, ins ? OP_LIMIT1_RMW : OP_LIMIT1_READ, &w1);
                    double hc = best_limit(sr, OP_HASH, NULL);
                    printf("  %-19s %-26s %-9s %9.2f %9.1f %12s %9s   (%s)\n", m->op_name,
                           ins ? "limit: 1 line RMW" : "limit: 1 line read", "-", l1, 1e3 / l1, "",
                           "", w1 ? w1->impl_name + 7 : "");
                    printf("  %-19s %-26s %-9s %9.2f %9.1f %12s %9s   (rbf_hash alone)\n",
                           m->op_name, "hash: 16-byte key", "-", hc, 1e3 / hc, "", "");
                    printf("  %-19s %-26s %-9s %9.2f %9.1f %12s %9.2f   (the blocked rows' limit)\n",
                           m->op_name, ins ? "limit: 1 line RMW + hash" : "limit: 1 line read + hash",
                           "-", l1 + hc, 1e3 / (l1 + hc), "", 1.0);
                    if (ins) {
                        const measure *wf = NULL;
                        double fl = best_limit(sr, OP_CALL1_RMW, &wf);
                        printf("  %-19s %-26s %-9s %9.2f %9.1f %12s %9s   (%s; one call per key)\n",
                               m->op_name, "floor: rbf_hash + 1 line", "-", fl, 1e3 / fl, "", "",
                               wf ? (wf->impl == IMPL_LIMIT_PLAIN_HUGE ? "huge" : "4K") : "");
                    }
                }
            }
        }
    }
}

void bf_print_json(const ctx *c, const size_result *srs, size_t nsz, double load0, double load1)
{
    printf("{\"benchmark\":\"filter\",\"rbf_version\":");
    cli_json_string(stdout, rbf_version());
    printf(",\"prefill\":");
    cli_json_double(stdout, c->prefill);
    printf(",\"order\":");
    cli_json_string(stdout, c->sequential ? "sequential" : "interleaved");
    printf(",\"hashes\":%u,\"key_bytes\":%u,\"keys_per_round\":%llu,\"reps\":%u,\"warmup_rounds\":1,"
           "\"batch\":%zu,\"chunk\":%u,\"seed\":%llu,\"phases\":%u,\"hashing\":",
           c->k, KEY_LEN, (unsigned long long)c->keys, c->reps, c->batch, (unsigned)c->chunk,
           (unsigned long long)c->seed, c->phases);
    cli_json_string(stdout, cli_hashing_name(c->hashing == RBF_NON_COLLIDING));
    printf(",\"recycle\":");
    cli_json_string(stdout, cli_recycle_name(c->recycle == RBF_RETAINING));
    printf(",\"layouts\":");
    cli_json_string(stdout, c->flat && c->blocked ? "both" : c->flat ? "flat" : "blocked");
    printf(",\"libbloom\":%s,\"load_start\":",
#ifdef RBF_HAVE_LIBBLOOM
           "true"
#else
           "false"
#endif
    );
    cli_json_double(stdout, load0);
    printf(",\"load_end\":");
    cli_json_double(stdout, load1);
    cpu_info ci;
    cpu_read(&ci);
    char env[160];
    path_env(env, sizeof env);
    printf(",\"cpu_model\":");
    cli_json_string(stdout, ci.model);
    printf(",\"cpu_flags\":[");
    for (const char *p = ci.flags; *p;) {
        size_t n = strcspn(p, " ");
        char fl[32];
        snprintf(fl, sizeof fl, "%.*s", (int)(n < sizeof fl ? n : sizeof fl - 1), p);
        printf("%s", p == ci.flags ? "" : ",");
        cli_json_string(stdout, fl);
        p += n;
        while (*p == ' ')
            p++;
    }
    printf("],\"path_switches\":");
    cli_json_string(stdout, env);
    printf(",\"sizes\":[");
    for (size_t s = 0; s < nsz; s++) {
        const size_result *sr = &srs[s];
        printf("%s{\"bytes\":%llu,\"rbf_bits\":%llu,\"rbf_sigma\":%llu,\"rbf_recycles\":%llu,"
               "\"libbloom_bits\":%lld,\"libbloom_hashes\":%lld,\"libbloom_entries\":%lld,"
               "\"libbloom_resets\":%llu,\"prefill_keys\":%llu,\"contains_keys\":%llu,"
               "\"contains_fill_rbf\":",
               s ? "," : "", (unsigned long long)sr->bytes, (unsigned long long)sr->rbf_bits,
               (unsigned long long)sr->rbf_sigma, (unsigned long long)sr->rbf_cycles,
               (long long)sr->bloom_bits, (long long)sr->bloom_hashes, (long long)sr->bloom_entries,
               (unsigned long long)sr->bloom_resets, (unsigned long long)sr->prefill_keys,
               (unsigned long long)sr->fill_keys);
        cli_json_double(stdout, sr->fill_rbf);
        printf(",\"contains_fill_libbloom\":");
        if (sr->fill_bloom >= 0)
            cli_json_double(stdout, sr->fill_bloom);
        else
            printf("null");
        printf(",\"insert_fill_rbf\":");
        cli_json_double(stdout, sr->ins_fill_rbf);
        printf(",\"insert_fill_libbloom\":");
        if (sr->ins_fill_bloom >= 0)
            cli_json_double(stdout, sr->ins_fill_bloom);
        else
            printf("null");
        printf(",\"huge_pages_advised\":%s,\"limit_rmw_ns\":", sr->huge_ok ? "true" : "false");
        cli_json_double(stdout, best_limit(sr, OP_LIMIT_RMW, NULL));
        printf(",\"limit_read_ns\":");
        cli_json_double(stdout, best_limit(sr, OP_LIMIT_READ, NULL));
        printf(",\"limit_1line_rmw_ns\":");
        cli_json_double(stdout, best_limit(sr, OP_LIMIT1_RMW, NULL));
        printf(",\"limit_1line_read_ns\":");
        cli_json_double(stdout, best_limit(sr, OP_LIMIT1_READ, NULL));
        printf(",\"hash_ns\":");
        cli_json_double(stdout, best_limit(sr, OP_HASH, NULL));
        printf(",\"floor_call_1line_rmw_ns\":");
        if (c->blocked)
            cli_json_double(stdout, best_limit(sr, OP_CALL1_RMW, NULL));
        else
            printf("null");
        printf(",\"path_flat\":");
        cli_json_string(stdout, sr->path_flat);
        printf(",\"path_blocked\":");
        cli_json_string(stdout, sr->path_blocked);
        printf(",\"results\":[");
        for (size_t i = 0; i < sr->nms; i++) {
            const measure *m = &sr->ms[i];
            double bref = bloom_ref(sr, m->op);
            double lim = row_limit(sr, m);
            double fref = flat_ref(sr, m);
            printf("%s{\"operation\":", i ? "," : "");
            cli_json_string(stdout, m->op_name);
            printf(",\"implementation\":");
            cli_json_string(stdout, m->impl_name);
            printf(",\"path\":");
            cli_json_string(stdout, row_path(sr, m));
            printf(",\"ns_per_op\":");
            cli_json_double(stdout, m->median);
            printf(",\"ns_min\":");
            cli_json_double(stdout, m->lo);
            printf(",\"ns_max\":");
            cli_json_double(stdout, m->hi);
            printf(",\"mops\":");
            cli_json_double(stdout, 1e3 / m->median);
            printf(",\"speedup_vs_libbloom\":");
            if (bref > 0 && !is_limit(m))
                cli_json_double(stdout, bref / m->median);
            else
                printf("null");
            printf(",\"ratio_to_limit\":");
            cli_json_double(stdout, m->median / lim);
            printf(",\"layout\":");
            cli_json_string(stdout, is_limit(m) || m->impl == IMPL_LIBBLOOM ? ""
                                    : is_blocked(m)                          ? "blocked"
                                                                             : "flat");
            printf(",\"speedup_vs_flat\":");
            if (fref > 0)
                cli_json_double(stdout, fref / m->median);
            else
                printf("null");
            printf(",\"rounds_ns_per_op\":[");
            for (unsigned r = 0; r < c->reps; r++) {
                if (r)
                    putchar(',');
                cli_json_double(stdout, m->rounds[r]);
            }
            printf("]}");
        }
        printf("]}");
    }
    printf("]}\n");
}
